"""What the prose says a bare name belongs to: "`paged_attn.py` 的 `get_kv_cache_shape()`",
"the `forward()` method of `LlamaModel`", "`schedule()` in `scheduler.py`".

A reader takes such a name as that file's or that class's, not as any definition of the same
name elsewhere in the project: an unrelated class that happens to define a method of that name
does not make the reference current. Only the text is read here (plain data in and out); the
resolver decides against a pin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.refs.classify import CODE_FILE_EXTENSIONS

# Between the qualifier and the name only other names of the same list may stand
# ("`f.py` 的 `a()` 和 `b()`", "`a()`, `b()` and `c()` in `f.py`").
_SEP = r"\s*(?:,|、|，|和|与|及|以及|and|or|&)\s*"
_LIST = rf"(?:`[^`\n]+`{_SEP})*"
_LIST_AFTER = rf"(?:{_SEP}`[^`\n]+`)*"
# "F 的 N", "F's N", "F 中的 N", "F 里的 N".
_OF_BEFORE = r"\s*(?:的|中的|里的|内的|'s|’s)\s*"
# "N in F", "N of F", "N method of F", "N 在 F 中", "N (F)".
_KIND_WORDS = r"(?:\s*(?:methods?|functions?|members?|attributes?|fields?|方法|函数|成员|属性|字段))?"
_OF_AFTER = rf"{_KIND_WORDS}\s*(?:\bin\b|\bof\b|\binside\b|\bwithin\b|\bfrom\b|\bdefined\s+in\b|在|位于|来自)\s*(?:the\s+)?"
_IDENT_RE = re.compile(r"_*[A-Za-z][A-Za-z0-9_]*")
_CLASS_RE = re.compile(r"_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")
_FILE_RE = re.compile(r"(?P<file>[\w./-]+\.(?:" + "|".join(e.lstrip(".") for e in CODE_FILE_EXTENSIONS) + r"))(?::[\d-]+)?")


@dataclass(frozen=True, slots=True)
class Qualifier:
    kind: str  # "file" | "class"
    name: str  # `vllm/x/paged_attn.py` or `paged_attn.py` (no line suffix); `PagedAttention`


def _parse(span: str) -> Qualifier | None:
    span = span.strip()
    m = _FILE_RE.fullmatch(span)
    if m is not None:
        return Qualifier("file", m.group("file"))
    if _CLASS_RE.fullmatch(span):
        return Qualifier("class", span)
    return None


_SPAN = r"`[^`\n]+`"
# "F 的 a, b 和 N": the qualifier, then the list of names it qualifies.
_BEFORE_RE = re.compile(rf"`(?P<q>[^`\n]+)`{_OF_BEFORE}(?P<names>(?:{_SPAN}{_SEP})*{_SPAN})")
# "a, b and N in F": the list of names, then the qualifier.
_AFTER_RE = re.compile(rf"(?P<names>{_SPAN}(?:{_SEP}{_SPAN})*){_OF_AFTER}`(?P<q>[^`\n]+)`")
_NAMES_RE = re.compile(r"`([^`\n]+)`")


def qualifier(text: str, paragraph: str) -> Qualifier | None:
    """The file or class the paragraph says the bare name written as `text` belongs to, when it
    says so right next to it; None otherwise (a name merely in the same sentence as a file is
    not that file's: "the scheduler in `scheduler.py` calls `allocate_slots()`")."""
    name = text.split("(", 1)[0]
    if not paragraph or f"`{text}`" not in paragraph or not _IDENT_RE.fullmatch(name):
        return None
    for pattern in (_BEFORE_RE, _AFTER_RE):
        for m in pattern.finditer(paragraph):
            if text not in _NAMES_RE.findall(m.group("names")):
                continue
            found = _parse(m.group("q"))
            if found is not None and found.name != name:
                return found
    return None
