"""A member a document's class copy lists that the pin keeps on a subclass of that class.

A note's `class KVCacheSpec:` lists `num_kv_heads`, `head_dim`, `block_size`, `dtype`: at the pin
`KVCacheSpec` keeps `block_size` and its subclass `AttentionSpec` keeps `num_kv_heads` and `dtype`.
The author copied the family of classes flattened into one; the names are still the project's
code, so they say the copy is the project's class (`check._mirrors`' vote), while `head_dim`,
which no class of the family has, is stale. The member itself is not judged here (labellers hold
it neither ok nor broken: it is the subclass's).
"""

from __future__ import annotations

from analyzer.refs.pinview import PinView

# How far up from the member's own class its bases are followed to the copied class.
_DEPTH = 4


def on_a_subclass(target: str, pin: PinView) -> bool:
    """Whether `Class.member` (a copy's member the pin's `Class` lacks) is defined on a class
    that derives, directly or within a few generations, from the pin's class of that name."""
    cls, _, member = target.rpartition(".")
    if not cls or not member:
        return False
    wanted = {e.full for e in pin.find_symbol(cls) if e.kind == "class"}
    if not wanted:
        return False
    owners = {e.parent for e in pin.find_symbol(member) if e.last == member and e.parent and e.parent not in wanted}
    return any(_derives(owner, wanted, pin) for owner in owners)


def _derives(full: str, wanted: set[str], pin: PinView) -> bool:
    """Whether the class `full` has one of `wanted` among its bases (resolved by their names)."""
    seen: set[str] = set()
    layer = {full}
    for _ in range(_DEPTH):
        bases: set[str] = set()
        for name in layer:
            for entry in pin.find_symbol(name):
                if entry.kind != "class" or entry.full != name:
                    continue
                for base in entry.bases:
                    short = base.split("[", 1)[0].rsplit(".", 1)[-1]
                    bases.update(e.full for e in pin.find_symbol(short) if e.kind == "class")
        if bases & wanted:
            return True
        seen |= layer
        layer = bases - seen
        if not layer:
            return False
    return False
