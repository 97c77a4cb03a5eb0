"""A method quoted on its own from a class that only past releases had.

`def schedule(self)` copied from V0's `vllm.core.scheduler.Scheduler`, calling `self._schedule()`,
`self._allow_async_output_proc(...)` and `self.next_cache_id`: the pins' V1 `Scheduler` defines a
`schedule` too, so the snippet fails the vote on whether it quotes the pin's class
(`check._mirrors`) and its missing members would pass for the author's own code. Where one class
of the past releases, gone from the pin, defined the quoted method and at least two of the other
names the snippet calls on `self` (more than any other such class), the snippet is that class's
code: what it names on `self` that the pin's classes lack is gone with it.

Asked by `check._mirrors`; holds no state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from analyzer.refs.lineage import Lineage, PastName
from analyzer.refs.pinview import PinView

# So many of the snippet's other `self` names the past class defined, at least: one shared name
# is what any two classes of a family have (`forward`, `__init__`).
_CALLED_HELD = 2


@dataclass(frozen=True, slots=True)
class GoneClass:
    method: PastName  # the quoted method, where the past class defined it
    held: frozenset[str]  # the snippet's other `self` names that class defined

    @property
    def name(self) -> str:
        return self.method.full.rsplit(".", 2)[-2]


def gone_class_of_fragment(method: str, called: Iterable[str], pin: PinView, lineages: Mapping[str, Lineage]) -> GoneClass | None:
    """The one past class, gone from `pin`, that defined `method` and the most of `called` (at
    least two, and more than any other gone class); None where no class stands out."""
    lineage = lineages.get(pin.project, {})
    names = set(called) - {method}
    scored: list[GoneClass] = []
    for past in lineage.get(method, ()):
        cls = past.full.rsplit(".", 1)[0]
        if past.kind != "function" or not cls.rsplit(".", 1)[-1][:1].isupper():
            continue  # a module's function, not a method
        if any(e.full == cls for e in pin.find_symbol(cls.rsplit(".", 1)[-1])):
            continue  # the pin still has that class: the vote judged the snippet against it
        held = frozenset(n for n in names if any(p.full == f"{cls}.{n}" for p in lineage.get(n, ())))
        scored.append(GoneClass(past, held))
    scored.sort(key=lambda g: -len(g.held))
    if not scored or len(scored[0].held) < _CALLED_HELD or (len(scored) > 1 and len(scored[1].held) == len(scored[0].held)):
        return None
    return scored[0]
