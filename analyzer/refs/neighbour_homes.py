"""A gone file's new home from what the document writes around it, checked against the pin.

- The names it lists under the file (`triton_ops/decode_attention.py`, then `_fwd_kernel_stage1`
  and `_decode_att_m_fwd` on the next lines) still resolve, in a file of the same name elsewhere
  (`kernels/ops/attention/decode_attention.py`): that file is the one the text describes. Only
  names written after the path and before the document's next path, a few lines at most.
- A folder moves as a whole: once one gone file of a folder has a confident new home with the
  same file name, another gone file of that folder (`triton_ops/extend_attention.py`) is looked
  for in the same new folder.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.refs.models import BROKEN, OK, PATH, SYMBOL, Finding, Suggestion
from analyzer.refs.pinview import PinView
from analyzer.refs.suggest import _write_path as write_path

# How many lines after the path its listed names may sit.
_SPAN = 12
_CONFIDENT = 0.75


def _file(resolved_at: str | None) -> str | None:
    return resolved_at.split(":", 1)[0] if resolved_at else None


def _base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _folder(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[0] if "/" in path.rstrip("/") else ""


def _gone_module(f: Finding) -> bool:
    return f.ref.kind == PATH and f.status == BROKEN and f.ref.origin != "link" and f.ref.target.endswith(".py") and "/" in f.ref.target


def _confident(f: Finding) -> bool:
    return f.best is not None and f.best.confidence >= _CONFIDENT


def neighbour_homes(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    groups: dict[tuple[str, str | None], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.ref.file, f.pin), []).append(f)
    for (_, pin_name), group in groups.items():
        pin = by_pin.get(pin_name or "")
        if pin is None:
            continue
        path_lines = sorted({f.ref.line for f in group if f.ref.kind == PATH})
        for f in group:
            if _gone_module(f) and not _confident(f):
                _from_listed_names(f, group, path_lines, pin)
        for f in group:
            if _gone_module(f) and not _confident(f):
                _from_moved_folder(f, group, pin)
    return findings


def _from_listed_names(path: Finding, group: list[Finding], path_lines: list[int], pin: PinView) -> None:
    line = path.ref.line
    end = min([n for n in path_lines if n > line] + [line + _SPAN + 1])
    base = _base(path.ref.target)
    named = [
        f for f in group
        if f.ref.kind == SYMBOL and f.status == OK and line < f.ref.line < end and (_file(f.resolved_at) or "").endswith("/" + base)
    ]
    files = {_file(f.resolved_at) for f in named}
    if len(files) != 1:
        return
    (new,) = files
    assert new is not None
    names = ", ".join(sorted({f"`{f.ref.target}`" for f in named}))
    why = f"the file of that name that defines {names}, which the text lists under it"
    path.suggestions = [Suggestion(write_path(path.ref, new, pin), 0.8, why, new), *path.suggestions]


def _from_moved_folder(path: Finding, group: list[Finding], pin: PinView) -> None:
    old_folder = _folder(path.ref.target)
    base = _base(path.ref.target)
    if not old_folder:
        return
    homes: set[str] = set()
    for other in group:
        best = other.best
        if other is path or not _gone_module(other) or best is None or best.confidence < 0.8 or best.location is None:
            continue
        new_file = _file(best.location) or ""
        if _base(new_file) != _base(other.ref.target):
            continue  # renamed, not only moved: says nothing of the folder
        folder = _folder(other.ref.target)
        if folder == old_folder or folder.endswith("/" + old_folder) or old_folder.endswith("/" + folder):
            candidate = f"{_folder(new_file)}/{base}"
            if pin.has_path(candidate):
                homes.add(candidate)
    if len(homes) != 1:
        return
    (new,) = homes
    why = f"its folder moved to {_folder(new)}/ with the text's other files"
    path.suggestions = [Suggestion(write_path(path.ref, new, pin), _CONFIDENT, why, new), *path.suggestions]
