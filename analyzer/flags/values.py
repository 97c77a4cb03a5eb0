"""Abstract values the parser interpreter computes with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.flags.fields import FieldInfo
from analyzer.flags.source import Symbol


@dataclass(frozen=True, slots=True)
class Opaque:
    """A value not known statically; `src` is the expression's source text."""

    src: str


@dataclass(slots=True)
class ClassV:
    sym: Symbol

    @property
    def key(self) -> str:
        return f"{self.sym.module.name}.{self.sym.name}"


@dataclass(slots=True)
class FuncV:
    sym: Symbol
    owner: ClassV | None = None  # class the function is defined in (for super())
    bound: Any = None  # self / cls prepended on call


@dataclass(slots=True)
class ModuleV:
    sym: Symbol


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
    """A parser or an argument group: both take add_argument; `group` is the group title."""

    group: str | None


@dataclass(slots=True)
class SubparsersV:
    pass


@dataclass(slots=True)
class Builtin:
    name: str


@dataclass(slots=True)
class BoundMethod:
    obj: Any
    name: str


class FieldKwargs(dict):  # type: ignore[type-arg]
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
