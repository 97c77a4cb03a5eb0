"""Facts the indexer extracts from one Python file: plain, serialisable data.

The index stage produces these; resolve / graphs / refs consume them and never
re-parse source. Everything here is JSON-friendly (`to_dict` / `from_dict`) so a
file's facts can be cached by content hash. Expressions are kept as source text
(e.g. `self.kv_cache_manager.allocate_slots`), positions as 1-based lines and
0-based columns.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

T = TypeVar("T")


def _build(cls: type[T], data: dict[str, Any]) -> T:
    """Rebuild a dataclass from `asdict` output, recursing into nested fact lists."""
    kwargs: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            continue
        value = data[f.name]
        nested = _NESTED.get((cls.__name__, f.name))
        if nested is not None and value is not None:
            value = [_build(nested, v) for v in value]
        elif isinstance(value, list):
            value = tuple(value) if f.type.startswith("tuple") else value
        kwargs[f.name] = value
    return cls(**kwargs)


@dataclass(slots=True)
class Span:
    line: int
    end_line: int


@dataclass(slots=True)
class Param:
    name: str
    kind: str  # "positional_only" | "positional" | "var_positional" | "keyword_only" | "var_keyword"
    annotation: str | None = None
    default: str | None = None


@dataclass(slots=True)
class CallSite:
    """A call expression. `scope` is the qualified name (module-relative, e.g.
    `Scheduler.schedule` or `<module>`) of the innermost function/class body it sits in."""

    callee: str  # source text of the called expression: `self.pool.free`, `Foo`, `f(x).g`
    line: int
    col: int
    scope: str
    args: list[str] = field(default_factory=list)  # positional argument source texts
    keywords: list[str] = field(default_factory=list)  # keyword names (`**` for **kwargs)
    keyword_values: list[str] = field(default_factory=list)  # source text of each keyword's value


@dataclass(slots=True)
class AttributeAccess:
    """`<base>.<attr>` read or written inside a scope (for the state-ownership graph).

    kind: "read" | "assign" | "augassign" | "del" | "item_assign" | "item_del" |
    "mutating_call" (e.g. `.append(...)`, `heapq.heappush(self.x, ...)`; `method` says which).
    """

    base: str  # source text of the object: `self`, `scheduler`, `self.kv_cache_manager`
    attr: str
    kind: str
    line: int
    scope: str
    method: str | None = None


@dataclass(slots=True)
class Assignment:
    """A name bound in a scope: `x = Foo()`, `self.x: Pool = make()`, class attributes.

    target is the source text (`x`, `self.block_pool`); value/annotation are source text."""

    target: str
    line: int
    scope: str
    value: str | None = None
    annotation: str | None = None


@dataclass(slots=True)
class Flow:
    """Where a value goes, for the call graph's function-value flow.

    kind: "return" | "yield" | "yield_from" | "raise" (value only);
    "for" (`for target in value`, comprehension clauses too);
    "store" (`target = value` where target is a subscript, an attribute or a tuple);
    "lambda" (target: the lambda's qualname `f.<lambda1>`, value: its source text;
    calls in its body have that qualname as their scope)."""

    kind: str
    line: int
    scope: str
    target: str | None = None
    value: str | None = None


@dataclass(slots=True)
class Import:
    """`import a.b as c` -> module="a.b", name=None, asname="c";
    `from ..x import y as z` -> module="x", level=2, name="y", asname="z"."""

    module: str
    name: str | None
    asname: str | None
    level: int
    line: int
    scope: str
    type_checking: bool = False  # inside `if TYPE_CHECKING:`


@dataclass(slots=True)
class Function:
    qualname: str  # module-relative: `Scheduler.schedule`, `outer.<locals>.inner` style not used: `outer.inner`
    name: str
    line: int
    end_line: int
    is_async: bool = False
    is_method: bool = False
    decorators: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    returns: str | None = None
    docstring: str | None = None
    is_property: bool = False
    is_classmethod: bool = False
    is_staticmethod: bool = False


@dataclass(slots=True)
class Class:
    qualname: str
    name: str
    line: int
    end_line: int
    bases: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)  # `metaclass=ABCMeta` as source text
    decorators: list[str] = field(default_factory=list)
    docstring: str | None = None
    is_dataclass: bool = False
    # Dataclass-style fields: annotated class-level names (also pydantic / NamedTuple bodies).
    fields: list[Assignment] = field(default_factory=list)
    class_attributes: list[Assignment] = field(default_factory=list)  # unannotated class-level names
    instance_attributes: list[Assignment] = field(default_factory=list)  # `self.x = ...` in methods


@dataclass(slots=True)
class ModuleFacts:
    """Everything the index knows about one file."""

    path: str  # package-relative POSIX path: `vllm/v1/core/sched/scheduler.py`
    module: str  # dotted name: `vllm.v1.core.sched.scheduler` (`pkg` for `pkg/__init__.py`)
    sha256: str
    lines: int
    docstring: str | None = None
    all_names: list[str] | None = None  # `__all__` when statically known
    imports: list[Import] = field(default_factory=list)
    classes: list[Class] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)  # all defs, incl. methods and nested
    module_attributes: list[Assignment] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)  # local bindings inside functions
    calls: list[CallSite] = field(default_factory=list)
    accesses: list[AttributeAccess] = field(default_factory=list)
    flows: list[Flow] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModuleFacts:
        return _build(cls, data)


@dataclass(slots=True)
class FileError:
    path: str
    reason: str  # e.g. "UnicodeDecodeError: ...", "ParserSyntaxError at 12:4: ..."


_NESTED: dict[tuple[str, str], type] = {
    ("ModuleFacts", "imports"): Import,
    ("ModuleFacts", "classes"): Class,
    ("ModuleFacts", "functions"): Function,
    ("ModuleFacts", "module_attributes"): Assignment,
    ("ModuleFacts", "assignments"): Assignment,
    ("ModuleFacts", "calls"): CallSite,
    ("ModuleFacts", "accesses"): AttributeAccess,
    ("ModuleFacts", "flows"): Flow,
    ("Class", "fields"): Assignment,
    ("Class", "class_attributes"): Assignment,
    ("Class", "instance_attributes"): Assignment,
    ("Function", "params"): Param,
}
