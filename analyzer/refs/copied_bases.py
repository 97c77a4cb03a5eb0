"""A gone base class, found by the class a copy derives from it (issue 12 §3). A note quotes
`class OpenAIServingChat(OpenAIServing):`; the pin still has `OpenAIServingChat`, now deriving
from `GenerateBaseServing`, and no `OpenAIServing`: the class the copy named as the base is the
one the pin's class derives from now. Every broken citation of that base in the document gets
that home, unless a surer one was found. Plain findings in, the same findings out (homes only:
the verdicts were made without this).

Owned by `check.check_references`, which runs it after the other home rules."""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.refs.models import BROKEN, SYMBOL, Finding, Suggestion
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import find_symbol

_CONFIDENCE = 0.7
_SURE = 0.5  # a home at or above this stays first
# Bases that say what a class can do, not what it is (`ABC`, `Generic[T]`, `...Mixin`).
_NOT_A_LINEAGE = ("Mixin", "ABC", "Generic", "Protocol", "object")


def _base_now(derived: str, pin: PinView) -> SymbolEntry | None:
    """The one project class the pin's class `derived` derives from, mixins aside."""
    classes = [e for e in pin.find_symbol(derived) if e.kind == "class" and e.last == derived]
    if len(classes) != 1:
        return None
    bases = [b.rsplit(".", 1)[-1].split("[", 1)[0] for b in classes[0].bases]
    lineage = [b for b in bases if not b.endswith(_NOT_A_LINEAGE)]
    found = [e for b in lineage for e in pin.find_symbol(b) if e.kind == "class" and e.last == b]
    return found[0] if len(found) == 1 else None


def homes_from_copied_bases(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    homes: dict[tuple[str, str | None, str], Suggestion] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or f.status != BROKEN or f.ref.kind != SYMBOL or not f.ref.base_of or "." in f.ref.target:
            continue
        if f.ref.target.startswith(f.ref.base_of):
            continue  # `class RayDistributedExecutor(RayDistributedExecutorV0)`: its own old version, no successor
        base = _base_now(f.ref.base_of, pin)
        if base is None or base.last == f.ref.target:
            continue
        why = f"the class `{f.ref.base_of}` derives from at {pin.pin} (the text's `class {f.ref.base_of}({f.ref.target})`)"
        # (In full, as the other homes of a gone class are: where to import it from.)
        homes.setdefault((f.ref.file, f.pin, f.ref.target), Suggestion(base.full, _CONFIDENCE, why, base.location))
    for f in findings:
        cls, _, member = f.ref.target.partition(".")
        home = homes.get((f.ref.file, f.pin, cls))
        pin = by_pin.get(f.pin or "")
        if home is None or pin is None or f.status != BROKEN or (f.best is not None and f.best.confidence >= _SURE):
            continue
        if member:
            # `OpenAIServing._check_model()`: the member where the new base has it, its own or inherited.
            owner = _owner_of(member, home.replacement, pin) if "." not in member else None
            if owner is None:
                continue
            home = Suggestion(f"{owner}.{member}", _CONFIDENCE, f"`{member}` of {home.reason}", None)
        f.suggestions = [home, *(s for s in f.suggestions if s.replacement != home.replacement)][:5]
    return findings


def _owner_of(member: str, cls: str, pin: PinView) -> str | None:
    """The class, `cls` or one of its bases, that defines `member` at the pin (`resolve.find_symbol`
    follows the bases)."""
    hits, _ = find_symbol(f"{cls}.{member}", pin)
    owners = {e.full.rsplit(".", 2)[-2] for e in hits if e.parent and any(c.kind == "class" for c in pin.table.named(e.parent))}
    return owners.pop() if len(owners) == 1 else None
