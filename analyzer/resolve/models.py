"""Plain data produced by resolution."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True)
def immutable(cls: type[T]) -> type[T]:
    """A value class: a slots dataclass the type checker holds frozen (no field is
    assigned after construction), with field-wise equality and hashing as
    `frozen=True` gives, but a plain `__init__`. A frozen dataclass sets each field
    through `object.__setattr__`, about 4x the cost, and a graph build makes some
    two million of these (values, contexts, symbols, edges)."""
    return dataclass(slots=True, unsafe_hash=True)(cls)

# Edge kinds and confidences, as the graphs stage exposes them.
KINDS = (
    "direct",
    "method",
    "constructor",
    "inherited",
    "super",
    "via-attribute-type",
    "via-annotation",
    "dynamic",
)
CONFIDENCES = ("certain", "inferred", "guess")


@immutable
class Value:
    """What an expression evaluates to, statically.

    kind: "instance" (of project class `name`), "class", "function", "module",
    "external" (a dotted name outside the project, e.g. `torch.cat`),
    "callables" (a dict/list literal holding `items`), "lambda", "super".
    via: how the value was obtained, which decides the edge kind: "self",
    "symbol", "annotation", "attribute", "local", "return", "partial".
    """

    kind: str
    name: str
    via: str = "symbol"
    items: tuple[Value, ...] = ()
    bound: bool = False  # a method reached through an instance
    # Other classes an "instance"/"class" value may be (`A | B`, a function
    # returning either, `A() if c else B()`), or other functions a "function"
    # value may be (`f if c else g`): same kind, `via` and `bound` as this one.
    alts: tuple[str, ...] = ()

    def with_via(self, via: str) -> Value:
        return Value(self.kind, self.name, via, self.items, self.bound, self.alts)

    def each(self) -> tuple[Value, ...]:
        """This value and one value per alternative class."""
        if not self.alts:
            return (self,)
        return (self.without_alts(), *(Value(self.kind, a, self.via, bound=self.bound) for a in self.alts))

    def without_alts(self) -> Value:
        return Value(self.kind, self.name, self.via, self.items, self.bound) if self.alts else self


def merge_classes(values: list[Value]) -> Value | None:
    """One value for several of the same kind ("instance" or "class"): the first,
    with the others' classes as alternatives; None when there are none."""
    if not values:
        return None
    first = values[0]
    names: list[str] = []
    for v in values:
        for n in (v.name, *v.alts):
            if n != first.name and n not in names and v.kind == first.kind:
                names.append(n)
    if not names:
        return first
    return Value(first.kind, first.name, first.via, first.items, first.bound, tuple(names))


@immutable
class CallEdge:
    caller: str  # global qualified name: `vllm.v1.core.sched.scheduler.Scheduler.schedule`
    callee: str
    kind: str
    confidence: str
    path: str
    line: int
    candidates: tuple[str, ...] = ()  # for name-only guesses: every same-named method


@dataclass(slots=True)
class CallRecord:
    """Everything one call site resolved to. A site with no edges and no external
    target carries `unresolved` (the reason) so it is never silently dropped."""

    caller: str
    expr: str
    path: str
    line: int
    edges: list[CallEdge] = field(default_factory=list)
    external: list[str] = field(default_factory=list)  # `torch.cat`, `builtins.print`
    unresolved: str | None = None
    candidates: tuple[str, ...] = ()  # name-only candidates not linked (too many)


def builtin_without(owner: str, attr: str) -> bool:
    """`owner` is a builtin type (`object`, `builtins.dict`, `builtins.None` for
    NoneType) with no `attr` anywhere on its MRO, read off the running interpreter."""
    head, _, name = owner.rpartition(".")
    typ = (type(None) if name == "None" else getattr(builtins, name, None)) if head in ("", "builtins") else None
    return isinstance(typ, type) and not any(attr in vars(t) for t in typ.__mro__)


def no_builtin_attribute(owner: str, attr: str) -> bool:
    """Neither a value of builtin type `owner` nor the type itself (`type`'s own
    attributes: `__name__`, `mro`) has `attr`: `None.log`, `(host, port).connect`."""
    return builtin_without(owner, attr) and not hasattr(type, attr)
