"""Names a text block makes its own: what it binds, and enumerated placeholders.

A fence with no language often holds pasted Python (`model_executable = self.model`, then
`model_executable(...)`) or a diagram (`seq_id -> [block_0, block_1, ...]`). The call of a
name the block itself assigns is the block's variable, and a run of numbered names is a list
of example values: neither is the project's, whatever project the document is about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# `x = ...`, `x: T = ...`, `x, y = ...` (not `==`, not a keyword argument inside a call).
_ASSIGN_RE = re.compile(rf"^\s*(?P<targets>{_IDENT}(?:\s*,\s*{_IDENT})*)\s*(?::[^=]+)?=(?!=)")
_FOR_RE = re.compile(rf"\bfor\s+(?P<targets>{_IDENT}(?:\s*,\s*{_IDENT})*)\s+in\b")
_WITH_AS_RE = re.compile(rf"\bas\s+(?P<targets>{_IDENT})\s*:")
_NUMBERED_RE = re.compile(r"^(?P<stem>[A-Za-z_][A-Za-z0-9_]*?)_(?P<n>\d+)$")


def bound_names(lines: Sequence[str]) -> set[str]:
    """Names the block binds itself: assignment targets, loop variables, `with ... as x`."""
    out: set[str] = set()
    for line in lines:
        for regex in (_ASSIGN_RE, _FOR_RE, _WITH_AS_RE):
            for m in regex.finditer(line):
                out.update(t.strip() for t in m.group("targets").split(","))
    return out


def enumerated(name: str, line: str) -> bool:
    """`block_0` on a line that also writes `block_1`: one of a run of example values."""
    m = _NUMBERED_RE.match(name)
    if m is None:
        return False
    others = re.findall(rf"(?<![A-Za-z0-9_]){re.escape(m.group('stem'))}_(\d+)(?![A-Za-z0-9_])", line)
    return any(n != m.group("n") for n in others)
