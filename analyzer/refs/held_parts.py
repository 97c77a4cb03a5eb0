"""Where a member of a class went when the class split a part off: into an object it now holds.

`self.sessions` gone from SGLang's `Scheduler`, whose body writes `self.session_controller =
SessionController(...)`, and `SessionController` sets `self.sessions`: the member moved into the
part the class holds (`self.grammar_queue` into `GrammarManager` the same way). Read from the pin's
text (a class body's `self.x = K(...)` and `self.x: K = ...` lines), never run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from analyzer.refs.models import Suggestion
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import find_symbol

# `self.x = K(...)`, `self.x: K = ...`, `self.x: Optional[K] = None`: the part and its class.
_HELD_RE = re.compile(
    r"\bself\.(?P<attr>[A-Za-z_]\w*)\s*(?::\s*(?:Optional\[)?(?P<ann>[A-Z]\w*)[^=\n]*)?=\s*(?:(?P<ctor>[A-Z]\w*)\s*\()?"
)


def held_parts(cls: SymbolEntry, pin: PinView) -> dict[str, str]:
    """`self.<attr>` -> the class name it is built from or annotated with, in the class's body."""
    lines = pin.read_lines(cls.path) or []
    out: dict[str, str] = {}
    for line in lines[cls.line - 1 : cls.end_line]:
        for m in _HELD_RE.finditer(line):
            name = m.group("ctor") or m.group("ann")
            if name is not None:
                out.setdefault(m.group("attr"), name)
    return out


def member_of_a_held_part(member: str, owners: Sequence[SymbolEntry], pin: PinView) -> list[Suggestion]:
    """`member`, gone from every class in `owners`, defined on the one project class that one of
    them holds as a part: that part's member. None when parts of two classes have it (no single
    home), when an owner has a member named as it with words added (renamed where it was), or
    the member is a dunder every class has."""
    if member.startswith("__") or not any(e.kind in {"function", "attribute"} for e in pin.table.ending_with(member)):
        return []  # (defined nowhere: no part has it, and no class body need be read)
    for owner in owners:
        # `EngineCore.executor` gone, `EngineCore.model_executor` there: renamed in place, not moved.
        if any(e.last.endswith(f"_{member}") or e.last.startswith(f"{member}_") for e in pin.symbols_under(owner.full)):
            return []
    found: dict[str, tuple[SymbolEntry, str, SymbolEntry, str]] = {}
    for owner in owners:
        for attr, name in held_parts(owner, pin).items():
            for part in pin.table.ending_with(name):
                if part.kind != "class" or part.full == owner.full or part.full in found:
                    continue
                hits, _ = find_symbol(f"{part.full}.{member}", pin)
                if hits or _sets_in_own_body(part, member, pin):
                    found[part.full] = (owner, attr, part, hits[0].location if hits else part.location)
    if len({part.last for _, _, part, _ in found.values()}) != 1:
        return []
    owner, attr, part, location = next(iter(found.values()))
    why = f"`{owner.last}` holds a `{part.last}` in `self.{attr}`, which has `{member}` (the member moved into that part)"
    # (Under a rename within the owner, 0.6 and up: `init_memory_pool` -> `alloc_memory_pool` in
    # `ModelRunner`, not `LoRAManager.init_memory_pool` of its held `lora_manager`.)
    return [Suggestion(f"{part.last}.{member}", 0.55, why, location)]


def _sets_in_own_body(part: SymbolEntry, member: str, pin: PinView) -> bool:
    """`self.<member> =` or `self.<member>:` in the part's own body (a read alone is no home)."""
    said = re.compile(rf"\bself\.{re.escape(member)}\s*(?::[^=\n]*)?=(?!=)")
    lines = pin.read_lines(part.path) or []
    return any(said.search(line) for line in lines[part.line - 1 : part.end_line])
