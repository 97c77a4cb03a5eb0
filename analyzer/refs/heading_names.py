"""A heading that names a class and the file it lives in, as source-reading notes title their
sections: `### GPUWorker (v1/worker/gpu_worker.py)`, `##### _Communicator Class
(tokenizer_communicator_mixin.py:83-149)`, `#### Worker (`gpu_worker.py`)`. Both are citations,
though written without code font: the reader is told this class is in that file.

Plain text in, plain data out."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING_RE = re.compile(
    r"^\s*(?:\d+(?:\.\d+)*\.?\s+)?(?:[A-Z][\w ]{0,20}:\s+)?"  # `3.1 `, `Component: `
    r"`?(?P<name>[A-Za-z_]\w*)`?(?:\s+(?:[Cc]lass|类))?\s*"
    r"[(（]\s*(?P<tick>`?)(?P<path>[\w./-]+\.py(?::\d+(?:-\d+)?)?)`?\s*[)）]\s*$"
)
# Shaped like a class or function of code, not a word: `GPUWorker`, `_Communicator`, `get_output`.
_CODE_NAME_RE = re.compile(r"_+[A-Za-z]\w*|[A-Z][a-z0-9]*[A-Z]\w*|[a-z][a-z0-9]*_\w+")


@dataclass(frozen=True, slots=True)
class HeadingClass:
    name: str
    name_col: int  # in the heading's text
    path: str | None  # the file, when written out of code font (in code font the prose rules read it)
    path_col: int


def heading_class(text: str) -> HeadingClass | None:
    """The class (or function) and file a heading names, or None (see the module's docstring)."""
    m = _HEADING_RE.match(text)
    if m is None or not _CODE_NAME_RE.fullmatch(m.group("name")):
        return None
    path = None if m.group("tick") else m.group("path")
    return HeadingClass(m.group("name"), m.start("name"), path, m.start("path"))
