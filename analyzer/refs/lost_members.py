"""A method the class the paragraph names has lost.

"`ModelRunner` ... dispatches to `forward_decode()`": SGLang's `ModelRunner` had a
`forward_decode` until its runners were split, and the pins' `ModelRunner` has none; the name
still resolves, but only because attention backends define methods of that spelling. The reader
means the named class's method, so it is broken there, with the past release as the evidence.

Judged only where every link holds: a past release defined the name as a method of a class the
same paragraph names (as `ModelRunner` or `model_runner`); the pin still has a class of that name;
no class of that name at the pin has the member, itself or through its bases; and the reference is
a bare name the text ties to nothing else (no receiver, owner, quoted class or callee). Plain
findings in, the same findings out; holds no state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from analyzer.refs.lineage import Lineage, PastName, past_names
from analyzer.refs.models import BROKEN, OK, SYMBOL, Finding
from analyzer.refs.namesakes import snake
from analyzer.refs.pinview import PinView
from analyzer.refs.suggest import inherited_members


def _past_methods(name: str, pin: PinView, lineages: Mapping[str, Lineage]) -> dict[str, PastName]:
    """Class short name -> where a past release defined `name` as that class's method (newest)."""
    out: dict[str, PastName] = {}
    for past in past_names(name, pin.project, lineages):
        owner = past.full.rsplit(".", 2)[-2]
        if past.kind == "function" and owner[:1].isupper():
            out.setdefault(owner, past)
    return out


def _named_in(paragraph: str, cls: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(cls)}(?!\w)|(?<![\w.]){re.escape(snake(cls))}(?!\w)", paragraph) is not None


def _still_has(cls: str, name: str, pin: PinView) -> bool | None:
    """Whether a class `cls` of the pin has `name` (own or inherited); None where the pin has no such class."""
    classes = [e for e in pin.find_symbol(cls) if e.kind == "class" and e.last == cls]
    if not classes:
        return None
    for c in classes:
        own = {e.full.rsplit(".", 1)[-1] for e in pin.symbols_under(c.full)}
        if name in own or name in inherited_members(c, pin, own):
            return True
    return False


def lost_by_the_named_class(findings: list[Finding], pins: Sequence[PinView], lineages: Mapping[str, Lineage]) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    for f in findings:
        ref, pin = f.ref, by_pin.get(f.pin or "")
        if pin is None or f.status != OK or ref.kind != SYMBOL or "." in ref.target or ref.origin == "link" or not ref.paragraph:
            continue
        if ref.owner or ref.receiver or ref.scope or ref.fragment_of or ref.field_of or ref.callee or ref.named_object:
            continue
        if "." in ref.text.strip("`").split("(", 1)[0].removeprefix("self."):
            continue
        for cls, past in _past_methods(ref.target, pin, lineages).items():
            if _named_in(ref.paragraph, cls) and _still_has(cls, ref.target, pin) is False:
                f.status, f.past, f.suggestions = BROKEN, past.evidence, []
                f.note = f"the paragraph names `{cls}`, which has no `{ref.target}` at {pin.pin}; {past.evidence}"
                break
    return findings
