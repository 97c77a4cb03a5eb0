"""A gone class found by the members the document lists for it (issue 12 §3: a renamed class
keeps its signature). When the text gives a gone class at least three members (`HiRadixCache`:
`reset`, `writing_check`, `loading_check`, `evict_host`, `load_back`, ...), the pin's class named
like it (the same last word) that defines a third of them or more, twice the weight of any other
class (a member few classes define weighs more), is its new name; the listed members it defines
are suggested on that class."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from analyzer.refs.models import BROKEN, SYMBOL, Finding, Suggestion
from analyzer.refs.namesakes import snake
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import short_name

_MIN_MEMBERS = 3
_SHARE = 1 / 3  # of the listed members the new class must define (a rename drops some)
_LEAD = 2  # times the weight of the members any other class defines
_CONFIDENCE = 0.75


def _class_like(name: str) -> bool:
    return name[:1].isupper() and "." not in name and not name.isupper()


def _successor(name: str, members: set[str], pin: PinView) -> SymbolEntry | None:
    counts: Counter[str] = Counter()
    # A member many classes define (`reset`, inherited or common) says little; one only the new
    # class defines (`writing_check`) says much: each member weighs 1 / the classes defining it.
    scores: dict[str, float] = {}
    for member in members:
        owners = {e.parent for e in pin.table.ending_with(member) if e.kind in {"function", "attribute"} and e.path.endswith(".py") and "." in short_name(e, pin)}
        for owner in owners:
            if name.endswith(owner.rsplit(".", 1)[-1]):
                continue  # `RadixCache` for `HiRadixCache`: the class it extended, not its new name
            counts[owner] += 1
            scores[owner] = scores.get(owner, 0.0) + 1 / len(owners)
    ranked = sorted(scores, key=lambda o: -scores[o])[:2]
    if not ranked:
        return None
    best = ranked[0]
    if counts[best] < max(_MIN_MEMBERS, _SHARE * len(members)) or (len(ranked) > 1 and scores[best] < _LEAD * scores[ranked[1]]):
        return None
    entry = next((e for e in pin.table.named(best) if e.kind == "class"), None)
    if entry is None or entry.last == name or snake(entry.last).rsplit("_", 1)[-1] != snake(name).rsplit("_", 1)[-1]:
        return None
    return entry


def renamed_classes(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    groups: dict[tuple[str, str | None], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.ref.file, f.pin), []).append(f)
    for (_, pin_name), group in groups.items():
        pin = by_pin.get(pin_name or "")
        if pin is None:
            continue
        gone = {f.ref.target for f in group if f.ref.kind == SYMBOL and f.status == BROKEN and _class_like(f.ref.target)}
        for name in sorted(gone):
            listed = [f for f in group if f.ref.owner == name and f.ref.kind == SYMBOL and "." not in f.ref.target]
            members = {f.ref.target for f in listed}
            if len(members) < _MIN_MEMBERS:
                continue
            new = _successor(name, members, pin)
            if new is None:
                continue
            held = {e.last for e in pin.table.members(new.full)}
            listed_ids = {id(f) for f in listed}
            why = f"defines most of the members the text lists for `{name}`"
            for f in group:
                if f.status != BROKEN:
                    continue
                if f.ref.target == name and f.ref.owner is None:
                    f.suggestions = [Suggestion(new.last, _CONFIDENCE, f"`{new.last}` {why}", new.location), *f.suggestions]
                elif id(f) in listed_ids and f.ref.target in held:
                    f.suggestions = [Suggestion(f"{new.last}.{f.ref.target}", _CONFIDENCE, f"on `{new.last}`, which {why}", new.location), *f.suggestions]
    return findings
