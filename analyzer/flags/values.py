"""Abstract values the parser interpreter computes with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.flags.fields import FieldInfo
from analyzer.flags.source import SourceSymbol


@dataclass(frozen=True, slots=True)
class Opaque:
    """A value not known statically; `src` is the expression's source text."""

    src: str


@dataclass(slots=True)
class ClassV:
    sym: SourceSymbol

    @property
    def key(self) -> str:
        return f"{self.sym.module.name}.{self.sym.name}"


@dataclass(slots=True)
class FuncV:
    sym: SourceSymbol
    owner: ClassV | None = None  # class the function is defined in (for super())
    bound: Any = None  # self / cls prepended on call
    # The enclosing function's locals, for a function defined inside another (a local
    # `add_argument` wrapper that closes over the parser).
    closure: dict[str, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class ModuleV:
    sym: SourceSymbol


@dataclass(slots=True)
class InstanceV:
    cls: ClassV


@dataclass(slots=True)
class SuperV:
    after: ClassV  # look up past this class in the MRO
    instance_cls: ClassV
    bound: Any


@dataclass(slots=True)
class ParserV:
    """A parser or an argument group: both take add_argument; `group` is the group title.

    `registry` holds the parser's `register("action", key, value)` calls (argparse's own
    indirection from an `action=` value to the class it instantiates); argument groups
    share their parser's, as argparse's do. `cls` is the in-tree parser class, if any."""

    group: str | None
    registry: dict[str, Any] = field(default_factory=dict)
    cls: ClassV | None = None


@dataclass(slots=True)
class SubparsersV:
    parent: ParserV | None = None  # new parsers are of the parent's class (argparse's default)


@dataclass(slots=True, eq=False)
class ActionV:
    """An argparse Action: being constructed by a custom subclass's `__init__`, followed
    statically, or returned by `add_argument` to the code that called it (a parser
    subclass may change it after registration: option strings it hides from help stay
    accepted). `base` is the standard-library action it derives from
    (`BooleanOptionalAction`, `Action`, ...); `attrs` are its instance attributes."""

    cls: ClassV | None  # None: one of argparse's own actions
    base: str
    attrs: dict[str, Any] = field(default_factory=dict)
    flag: Any = None  # the Flag recorded for it, once the parser registered it
    registered: list[str] = field(default_factory=list)  # option strings the parser accepts


@dataclass(slots=True)
class StdlibInit:
    """`super().__init__` of a custom action, reaching argparse's own constructor."""

    action: ActionV


@dataclass(slots=True)
class Builtin:
    name: str


@dataclass(slots=True)
class BoundMethod:
    obj: Any
    name: str


class FieldKwargs(dict[str, Any]):
    """argparse kwargs generated from one config field; remembers the field for `field_at`."""

    def __init__(self, *args: Any, field_info: FieldInfo | None = None) -> None:
        super().__init__(*args)
        self.field_info = field_info

    def __deepcopy__(self, memo: dict[int, Any]) -> FieldKwargs:
        import copy

        return FieldKwargs({k: copy.deepcopy(v, memo) for k, v in self.items()}, field_info=self.field_info)


def is_known(value: Any) -> bool:
    """Hashable literal values usable as dict keys / set members / comparands."""
    if isinstance(value, str | int | float | bool) or value is None:
        return True
    if isinstance(value, tuple):
        return all(is_known(v) for v in value)
    return False
