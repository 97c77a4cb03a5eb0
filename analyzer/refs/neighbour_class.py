"""A gone method named bare in the prose (`self_check_during_idle()`), among the names of the methods
a passage walks through (`recv_requests()`, `get_next_batch_to_run()`, `run_batch()`, ...): the
reader takes it as a method of the class those names belong to, so its new home is looked for in
that class (a rename the class's code still comments, a member named almost alike) as for a gone
`Scheduler.self_check_during_idle`. The class is the one that defines the most of the other
methods the passage names in code font nearby (a few lines either side, at least three names,
more than any other class has); a passage about several classes names none. Plain findings in,
the same findings out (only weak suggestions of broken bare names are replaced)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from analyzer.refs.models import BROKEN, OK, SYMBOL, Finding, Reference, Suggestion
from analyzer.refs.pinview import PinView

# How far, in lines, the passage's other method names may sit from the gone one.
_REACH = 15
_VOTES = 3
# A suggestion at or above this is kept: the class context only helps a weak one.
_WEAK = 0.5


def _called_bare(ref: Reference) -> bool:
    return ref.kind == SYMBOL and ref.origin == "inline" and "." not in ref.target and ref.text.rstrip("`").endswith(")")


def passage_class(f: Finding, findings: Sequence[Finding], pin: PinView) -> str | None:
    """The class whose methods the passage around `f` names, or None."""
    votes: Counter[str] = Counter()
    seen: set[str] = set()
    for g in findings:
        ref = g.ref
        if g is f or g.pin != f.pin or ref.file != f.ref.file or abs(ref.line - f.ref.line) > _REACH:
            continue
        if g.status != OK or not _called_bare(ref) or ref.target in seen:
            continue
        seen.add(ref.target)
        owners = {e.parent for e in pin.find_symbol(ref.target) if e.kind == "function" and e.parent}
        classes = {o for o in owners if any(c.kind == "class" for c in pin.find_symbol(o))}
        votes.update(classes)
    ranked = votes.most_common(2)
    if not ranked or ranked[0][1] < _VOTES or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]


def in_the_passage_s_class(
    findings: list[Finding], pins: Sequence[PinView], suggest: Callable[[Reference, PinView], list[Suggestion]]
) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        ref = f.ref
        if pin is None or f.status != BROKEN or not _called_bare(ref) or ref.owner or ref.fragment_of:
            continue
        if f.best is not None and f.best.confidence >= _WEAK:
            continue
        cls = passage_class(f, findings, pin)
        if cls is None:
            continue
        short = cls.rsplit(".", 1)[-1]
        found = suggest(replace(ref, target=f"{short}.{ref.target}"), pin)
        better = [s for s in found if s.replacement.startswith(f"{short}.") and (f.best is None or s.confidence > f.best.confidence)]
        if better:
            why = f"the passage's other methods are `{short}`'s"
            f.suggestions = [replace(s, reason=f"{s.reason}; {why}") for s in better] + f.suggestions
    return findings
