"""Dataclass-style fields of a class, read statically, and what their annotations mean.

Used for vLLM's config dataclasses (`get_kwargs(ModelConfig)`) and SGLang's
msgspec namespaces alike: annotated class attributes, inherited base-first as
`dataclasses.fields()` orders them, with the attribute docstring under each.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass

from analyzer.flags.source import Module, SourceSymbol, SourceTree

BUILTIN_TYPES = {"bool", "int", "float", "str", "bytes", "list", "dict", "set", "tuple", "frozenset"}
TYPING_ALIASES = {
    "List": "list", "Sequence": "list", "MutableSequence": "list", "Iterable": "list",
    "Dict": "dict", "Mapping": "dict", "MutableMapping": "dict",
    "Set": "set", "FrozenSet": "set", "AbstractSet": "set", "Tuple": "tuple",
}
DATACLASS_DECORATORS = {"dataclass", "config", "pydantic_dataclass"}


@dataclass(slots=True)
class FieldInfo:
    name: str
    annotation: ast.expr
    module: Module  # where the annotation's names resolve
    default: ast.expr | None  # the plain default, or `field(...)`'s default / default_factory
    default_is_factory: bool
    doc: str | None
    line: int
    owner: str

    @property
    def where(self) -> str:
        return f"{self.module.path}:{self.line}"

    def default_source(self) -> str | None:
        if self.default is None:
            return None
        text = self.module.segment(self.default)
        if self.default_is_factory:
            if isinstance(self.default, ast.Lambda):
                return self.module.segment(self.default.body)
            return f"{text}()"
        return text


@dataclass(frozen=True, slots=True)
class Atom:
    """One member of a field's type union: kind is a builtin name, none, literal, dataclass, other."""

    kind: str
    detail: tuple[object, ...] = ()


def _last_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _is_classvar(ann: ast.expr) -> bool:
    target = ann.value if isinstance(ann, ast.Subscript) else ann
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.startswith(("ClassVar", "typing.ClassVar"))
    return _last_name(target) in {"ClassVar", "KW_ONLY"} if target is not None else False


def _split_default(value: ast.expr | None) -> tuple[ast.expr | None, bool]:
    """`field(default=x)` / `Field(default_factory=f)` / `msgspec.field(...)` -> (expr, is_factory)."""
    if isinstance(value, ast.Call) and _last_name(value.func) in {"field", "Field"}:
        for kw in value.keywords:
            if kw.arg == "default":
                return kw.value, False
            if kw.arg == "default_factory":
                return kw.value, True
        if value.args and _last_name(value.func) == "Field":
            return value.args[0], False
        return None, False
    return value, False


def resolve_class(tree: SourceTree, module: Module, expr: ast.expr) -> SourceSymbol | None:
    """A base-class or argument expression (`Foo`, `mod.Foo`) to its class definition."""
    if isinstance(expr, ast.Name):
        sym = tree.resolve(module, expr.id)
    elif isinstance(expr, ast.Attribute):
        owner = resolve_class(tree, module, expr.value)
        if owner is None:
            return None
        if owner.kind == "module":
            sym = tree.resolve(owner.module, expr.attr)
        else:
            return None
    else:
        return None
    return sym if sym is not None and sym.kind in {"class", "module"} else None


def class_fields(tree: SourceTree, cls: SourceSymbol, _seen: frozenset[str] = frozenset()) -> list[FieldInfo]:
    """Fields in `dataclasses.fields()` order: bases first, a redefinition keeps its slot."""
    node = cls.node
    assert isinstance(node, ast.ClassDef)
    key = f"{cls.module.name}.{node.name}"
    if key in _seen:
        return []
    ordered: dict[str, FieldInfo] = {}
    for base in reversed(node.bases):
        sym = resolve_class(tree, cls.module, base)
        if sym is not None and sym.kind == "class":
            for f in class_fields(tree, sym, _seen | {key}):
                ordered[f.name] = f
    body = node.body
    for i, stmt in enumerate(body):
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if _is_classvar(stmt.annotation):
            continue
        doc = None
        if i + 1 < len(body):
            nxt = body[i + 1]
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
                doc = inspect.cleandoc(nxt.value.value)
        default, is_factory = _split_default(stmt.value)
        info = FieldInfo(stmt.target.id, stmt.annotation, cls.module, default, is_factory, doc, stmt.lineno, node.name)
        ordered[info.name] = info
    return list(ordered.values())


def is_dataclass_def(node: ast.ClassDef) -> bool:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if _last_name(target) in DATACLASS_DECORATORS:
            return True
    return False


class TypeReader:
    """Flattens an annotation into the set of atoms vLLM's `get_type_hints` would produce."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree

    def atoms(self, expr: ast.expr, module: Module, depth: int = 0) -> set[Atom]:
        if depth > 10:
            return {Atom("other", ("<too deep>",))}
        if isinstance(expr, ast.Constant):
            if expr.value is None:
                return {Atom("none")}
            if isinstance(expr.value, str):  # a forward reference
                try:
                    parsed = ast.parse(expr.value, mode="eval").body
                except SyntaxError:
                    return {Atom("other", (expr.value,))}
                return self.atoms(parsed, module, depth + 1)
            return {Atom("other", (repr(expr.value),))}
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return self.atoms(expr.left, module, depth + 1) | self.atoms(expr.right, module, depth + 1)
        if isinstance(expr, ast.Subscript):
            return self._generic(expr, module, depth)
        name = _last_name(expr)
        if name is None:
            return {Atom("other", (ast.unparse(expr),))}
        return self._named(name, expr, module, depth)

    def _named(self, name: str, expr: ast.expr, module: Module, depth: int) -> set[Atom]:
        if name in BUILTIN_TYPES and isinstance(expr, ast.Name):
            return {Atom(name)}
        if name in TYPING_ALIASES:
            return {Atom(TYPING_ALIASES[name])}
        if name in {"Any", "object"}:
            return {Atom("other", (name,))}
        sym = None
        if isinstance(expr, ast.Name):
            sym = self.tree.resolve(module, name)
        elif isinstance(expr, ast.Attribute):
            sym = resolve_class(self.tree, module, expr)
        if sym is None:
            return {Atom(name) if name in BUILTIN_TYPES else Atom("other", (name,))}
        if sym.kind == "class" and isinstance(sym.node, ast.ClassDef):
            if is_dataclass_def(sym.node):
                return {Atom("dataclass", (name,))}
            return {Atom("other", (name,))}
        if sym.kind == "value" and isinstance(sym.node, ast.expr):
            value = sym.node
            aliasing = isinstance(value, ast.Call) and _last_name(value.func) in {"TypeAliasType", "NewType"}
            if aliasing and len(value.args) >= 2:  # type: ignore[attr-defined]
                return self.atoms(value.args[1], sym.module, depth + 1)  # type: ignore[attr-defined]
            if isinstance(value, ast.Call | ast.Dict | ast.List | ast.Lambda):
                return {Atom("other", (name,))}
            return self.atoms(value, sym.module, depth + 1)
        return {Atom("other", (name,))}

    def checking_literal(self, field: FieldInfo) -> list[object] | None:
        """The values of a `Literal` alias the field's annotation imports only for type checkers
        (vLLM's `quantization: QuantizationMethods | str | None`, with `QuantizationMethods = str`
        outside `if TYPE_CHECKING:`): argparse takes any string, the config then checks it
        against that list (plus what plugins register). None when the annotation names none."""
        names = {n.id for n in ast.walk(field.annotation) if isinstance(n, ast.Name)}
        for stmt in field.module.tree.body:
            if not (isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test)):
                continue
            for imp in stmt.body:
                if not isinstance(imp, ast.ImportFrom):
                    continue
                for alias in imp.names:
                    if (alias.asname or alias.name) not in names:
                        continue
                    base = self.tree.absolute(field.module, imp.level, imp.module)
                    sym = self.tree.resolve_qualified(base, alias.name)
                    if sym is None or sym.kind != "value" or not isinstance(sym.node, ast.expr):
                        continue
                    atoms = self.atoms(sym.node, sym.module)
                    if len(atoms) == 1 and (atom := next(iter(atoms))).kind == "literal":
                        return list(atom.detail)
        return None

    def _generic(self, expr: ast.Subscript, module: Module, depth: int) -> set[Atom]:
        base = _last_name(expr.value) or ""
        args = list(expr.slice.elts) if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        if base == "Optional":
            return self.atoms(args[0], module, depth + 1) | {Atom("none")}
        if base == "Union":
            out: set[Atom] = set()
            for a in args:
                out |= self.atoms(a, module, depth + 1)
            return out
        if base in {"Annotated", "A", "Required", "NotRequired", "Final"}:
            return self.atoms(args[0], module, depth + 1)
        if base == "Literal":
            # `Literal["auto", RunnerType]`: a Literal alias among the values is flattened into
            # them (as typing does); anything else read there leaves the choices unknown.
            values: list[object] = []
            for a in args:
                if isinstance(a, ast.Constant):
                    values.append(a.value)
                    continue
                inner = self.atoms(a, module, depth + 1)
                if not inner or any(x.kind != "literal" for x in inner):
                    return {Atom("other", (ast.unparse(expr),))}
                values.extend(v for x in sorted(inner, key=lambda x: str(x.detail)) for v in x.detail)
            return {Atom("literal", tuple(values))}
        kind = TYPING_ALIASES.get(base, base)
        if kind in {"list", "set", "tuple", "dict", "frozenset"}:
            return {Atom("set" if kind == "frozenset" else kind, tuple(ast.unparse(a) for a in args))}
        if base == "type":
            return {Atom("other", (ast.unparse(expr),))}
        if base == "Callable":
            return {Atom("other", ("Callable",))}
        return self._named(base, expr.value, module, depth)
