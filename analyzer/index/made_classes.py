"""Classes a call builds at import time, read statically from a module's facts.

`ServerArgs = msgspec.defstruct("ServerArgs", [...])`, `make_dataclass`, `namedtuple`,
`typing.NamedTuple("X", [...])`, the functional `Enum("X", "A B")`, `type("X", bases, ns)`
and pydantic's `create_model`: no class statement holds the members, so an index of class
bodies alone says `X.field` is undefined. The field list is followed through the module's
own top-level bindings (literal lists, strings and dicts, comprehensions over them, a class's
`__annotations__` and the reassignments of it, unions of dicts) down to names or to the
classes whose annotated fields it collects (`collect_input_fields([Model, Schedule, ...])`),
which a later stage looks up across modules (`member_fields`). Whatever cannot be followed
(a call's result with no classes in its arguments, a name bound elsewhere) is kept as the
reason the class's members are not checkable, never guessed at.

Nothing here executes or imports upstream code: the input is the index's facts (module-level
assignments and stores with their source text), parsed with `ast`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from analyzer.index.models import Class, Import, ModuleFacts

# Callees (their last dotted part) that return a new class, and where its field list is:
# positional index of the field argument, or None when the fields are keywords.
_FACTORIES: dict[str, int | None] = {
    "defstruct": 1,  # msgspec.defstruct(name, fields, *, bases=..., namespace=...)
    "make_dataclass": 1,  # dataclasses.make_dataclass(cls_name, fields, *, bases=..., namespace=...)
    "namedtuple": 1,  # collections.namedtuple(typename, field_names)
    "NamedTuple": 1,  # typing.NamedTuple(typename, [(name, type), ...])
    "Enum": 1, "IntEnum": 1, "StrEnum": 1, "Flag": 1, "IntFlag": 1,  # Enum("Color", "RED GREEN")
    "type": 2,  # type(name, bases, namespace)
    "create_model": None,  # pydantic.create_model(name, __base__=..., field=(type, default), ...)
}
# Calls that give a class's own annotated fields: `get_type_hints(C)`, `dataclasses.fields(C)`.
_FIELDS_OF = frozenset({"get_type_hints", "fields", "get_annotations", "signature"})
# Attributes of a class that list its fields.
_FIELD_ATTRS = frozenset({"__annotations__", "__fields__", "model_fields", "__dataclass_fields__", "_fields", "__struct_fields__"})
# Calls that pass a collection's keys through: `list(x)`, `sorted(x)`, `x.items()`.
_PASS_THROUGH = frozenset({"list", "tuple", "set", "sorted", "dict", "frozenset", "reversed", "OrderedDict"})
_KEY_METHODS = frozenset({"items", "keys", "copy"})
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_DEPTH = 12


@dataclass(frozen=True, slots=True)
class MadeClass:
    """One class a module-level call builds. `fields`: names read from literals;
    `field_classes`: dotted names of the classes whose annotated fields it also takes
    (`sglang.srt.arg_groups.fields.schedule.Schedule`); `unknown`: why the field list could
    not be followed in full (its members are then not checkable), None when it was."""

    name: str  # the module-level name the call is bound to
    line: int
    factory: str  # the callee as written: `msgspec.defstruct`
    fields: tuple[str, ...] = ()
    field_classes: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()
    unknown: str | None = None


@dataclass(slots=True)
class _Value:
    names: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)  # as written in the module: `Model`, `m.Schedule`
    unknown: str | None = None

    def add(self, other: _Value) -> _Value:
        self.names += [n for n in other.names if n not in self.names]
        self.classes += [c for c in other.classes if c not in self.classes]
        self.unknown = self.unknown or other.unknown
        return self


def _parse(text: str | None) -> ast.expr | None:
    if not text:
        return None
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _callee(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _callee(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


class _Module:
    """A module's top-level bindings in source order, to follow a name to its value."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        # name or `X.__annotations__` -> [(line, value text)], by line
        self.bindings: dict[str, list[tuple[int, str]]] = {}
        for attr in facts.module_attributes:
            if attr.value:
                self.bindings.setdefault(attr.target, []).append((attr.line, attr.value))
        for flow in facts.flows:
            if flow.scope != "<module>" or flow.kind != "store" or not flow.target or not flow.value:
                continue
            targets = [t.strip() for t in flow.target.strip("()[] ").split(",")]
            for t in targets:
                if t:  # each name of a tuple unpacking gets the whole call (`a, b = f(x)`)
                    self.bindings.setdefault(t, []).append((flow.line, flow.value))
        for values in self.bindings.values():
            values.sort()
        self.classes: dict[str, Class] = {c.qualname: c for c in facts.classes}

    def bound(self, name: str, before: int) -> tuple[int, str] | None:
        """The last binding of `name` above line `before`."""
        hits = [b for b in self.bindings.get(name, ()) if b[0] < before]
        return hits[-1] if hits else None


def _evaluate(mod: _Module, node: ast.expr, before: int, depth: int = 0) -> _Value:
    """The field names (and classes whose fields join them) a field-list expression yields."""
    if depth > _MAX_DEPTH:
        return _Value(unknown="the field list is nested too deep to follow")
    text = ast.unparse(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        # namedtuple's and Enum's "a b" / "a, b"
        return _Value(names=[n for n in re.split(r"[,\s]+", node.value) if _NAME_RE.fullmatch(n)])
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        value = _Value()
        for elt in node.elts:
            value.add(_entry(mod, elt, before, depth))
        return value
    if isinstance(node, ast.Dict):
        value = _Value()
        for key, val in zip(node.keys, node.values, strict=True):
            if key is None:  # `{**other}`
                value.add(_evaluate(mod, val, before, depth + 1))
            elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                value.names.append(key.value)
            else:
                value.unknown = value.unknown or f"a key written `{ast.unparse(key)}`"
        return value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr | ast.Add):
        return _evaluate(mod, node.left, before, depth + 1).add(_evaluate(mod, node.right, before, depth + 1))
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        return _comprehension(mod, node, before, depth)
    if isinstance(node, ast.Name):
        bound = mod.bound(node.id, before)
        if bound is None:
            return _Value(unknown=f"`{node.id}` is not bound at the top of {mod.facts.module}")
        parsed = _parse(bound[1])
        if parsed is None:
            return _Value(unknown=f"`{node.id}` is bound to something unreadable")
        return _evaluate(mod, parsed, bound[0], depth + 1)
    if isinstance(node, ast.Attribute) and node.attr in _FIELD_ATTRS:
        owner = _callee(node.value)
        if owner is None:
            return _Value(unknown=f"the fields of `{ast.unparse(node.value)}`")
        if node.attr == "__annotations__":
            bound = mod.bound(f"{owner}.__annotations__", before)
            if bound is not None and (parsed := _parse(bound[1])) is not None:
                # `X.__annotations__ = {**collected, **X.__annotations__}`: the reassignment's value,
                # in which `X.__annotations__` is the one before it
                return _evaluate(mod, parsed, bound[0], depth + 1)
        return _Value(classes=[owner])
    if isinstance(node, ast.Call):
        return _call(mod, node, before, depth)
    return _Value(unknown=f"the fields come from `{text[:80]}`")


def _entry(mod: _Module, elt: ast.expr, before: int, depth: int) -> _Value:
    """One item of a field list: `"x"`, `("x", int)`, `("x", int, 0)`, `*more`."""
    if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
        return _Value(names=[elt.value])
    if isinstance(elt, ast.Tuple | ast.List) and elt.elts:
        first = elt.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return _Value(names=[first.value])
    if isinstance(elt, ast.Starred):
        return _evaluate(mod, elt.value, before, depth + 1)
    return _Value(unknown=f"an entry written `{ast.unparse(elt)[:60]}`")


def _keyed_by(elt: ast.expr, name: str) -> bool:
    """Whether a comprehension's item is keyed by its loop variable: `n`, `(n, ann)`, `(n, ann) if .. else (n, ..)`."""
    if isinstance(elt, ast.IfExp):
        return _keyed_by(elt.body, name) and _keyed_by(elt.orelse, name)
    if isinstance(elt, ast.Name):
        return elt.id == name
    if isinstance(elt, ast.Tuple | ast.List) and elt.elts:
        return _keyed_by(elt.elts[0], name)
    return False


def _comprehension(mod: _Module, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, before: int, depth: int) -> _Value:
    if len(node.generators) != 1:
        return _Value(unknown="a comprehension over more than one loop")
    gen = node.generators[0]
    target = gen.target.elts[0] if isinstance(gen.target, ast.Tuple) and gen.target.elts else gen.target
    elt = node.key if isinstance(node, ast.DictComp) else node.elt
    if not isinstance(target, ast.Name) or not _keyed_by(elt, target.id):
        return _Value(unknown=f"a comprehension whose items are not the names it iterates (`{ast.unparse(elt)[:60]}`)")
    value = _evaluate(mod, gen.iter, before, depth + 1)
    if gen.ifs:
        # The names are a superset: which of them the condition drops is not known statically.
        value.unknown = value.unknown or f"the names are filtered by `{ast.unparse(gen.ifs[0])[:60]}`"
    return value


def _class_list(mod: _Module, node: ast.expr, before: int, depth: int = 0) -> list[str] | None:
    """`[Model, Schedule]` (or a name bound to it): the class names it lists, else None."""
    if isinstance(node, ast.Name) and depth < _MAX_DEPTH:
        bound = mod.bound(node.id, before)
        parsed = _parse(bound[1]) if bound else None
        return _class_list(mod, parsed, bound[0], depth + 1) if parsed is not None and bound else None
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        names = [_callee(e) for e in node.elts]
        if all(n is not None and n.rsplit(".", 1)[-1][:1].isupper() for n in names):
            return [n for n in names if n]
    return None


def _call(mod: _Module, node: ast.Call, before: int, depth: int) -> _Value:
    callee = _callee(node.func) or ast.unparse(node.func)[:60]
    last = callee.rsplit(".", 1)[-1]
    if isinstance(node.func, ast.Attribute) and node.func.attr in _KEY_METHODS and not node.args:
        return _evaluate(mod, node.func.value, before, depth + 1)  # `x.items()`
    if last in _PASS_THROUGH and len(node.args) == 1 and not node.keywords:
        return _evaluate(mod, node.args[0], before, depth + 1)
    if last == "dict" and not node.args:
        value = _Value()
        for kw in node.keywords:
            if kw.arg is None:
                value.add(_evaluate(mod, kw.value, before, depth + 1))
            else:
                value.names.append(kw.arg)
        return value
    if last in _FIELDS_OF and len(node.args) >= 1 and (owner := _callee(node.args[0])) is not None:
        return _Value(classes=[owner])
    # A helper handed a list of classes (`collect_input_fields([Model, Schedule])`): what it
    # returns is read as their annotated fields, the one thing such a list can give a field list.
    for arg in node.args:
        classes = _class_list(mod, arg, before)
        if classes:
            return _Value(classes=classes)
    return _Value(unknown=f"the fields are what `{callee}(...)` returns")


def _factory(node: ast.expr) -> tuple[ast.Call, str, int | None] | None:
    if not isinstance(node, ast.Call):
        return None
    callee = _callee(node.func)
    if callee is None:
        return None
    last = callee.rsplit(".", 1)[-1]
    if last not in _FACTORIES:
        return None
    index = _FACTORIES[last]
    if last == "type" and len(node.args) != 3:
        return None  # `type(x)`: the class of an object, not a new one
    if not node.args or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
        return None  # the new class's name comes first, as a string
    return node, callee, index


def read_made_classes(facts: ModuleFacts) -> list[MadeClass]:
    """The module's top-level `X = factory("X", ...)` classes, with their fields followed."""
    candidates = [a for a in facts.module_attributes if a.value and "(" in a.value and a.target.isidentifier()]
    if not candidates:
        return []
    mod: _Module | None = None
    out: list[MadeClass] = []
    for attr in candidates:
        head = attr.value.split("(", 1)[0].strip().rsplit(".", 1)[-1] if attr.value else ""
        if head not in _FACTORIES:
            continue  # cheap test before parsing
        made = _factory(_parse(attr.value) or ast.Constant(None))
        if made is None:
            continue
        mod = mod or _Module(facts)
        node, callee, index = made
        value = _Value()
        if index is None:  # create_model: keywords (but not `__base__` and friends) are fields
            value.names = [kw.arg for kw in node.keywords if kw.arg and not kw.arg.startswith("__")]
            if any(kw.arg is None for kw in node.keywords):
                value.unknown = "fields passed as `**` keywords"
        elif index < len(node.args):
            fields_arg = node.args[index]
            if index == 2 and isinstance(fields_arg, ast.Call) and _callee(fields_arg.func) == "dict":
                value = _call(mod, fields_arg, attr.line, 0)
            else:
                value = _evaluate(mod, fields_arg, attr.line)
        else:
            named = next((kw.value for kw in node.keywords if kw.arg in {"fields", "field_names", "names"}), None)
            if named is not None:
                value = _evaluate(mod, named, attr.line)
            elif callee.rsplit(".", 1)[-1] == "NamedTuple":
                value.names = [kw.arg for kw in node.keywords if kw.arg]  # NamedTuple("X", a=int)
        out.append(
            MadeClass(
                name=attr.target,
                line=attr.line,
                factory=callee,
                fields=tuple(value.names),
                field_classes=tuple(resolve_local(facts, c) for c in value.classes),
                bases=_bases(node),
                unknown=value.unknown,
            )
        )
    return out


def _bases(node: ast.Call) -> tuple[str, ...]:
    """`bases=(A, B)`, `type(name, (A,), ...)`, `__base__=A`, and for a namespace copied from
    a class (`namespace=vars(C)`, `{k: v for k, v in vars(C).items()}`) that class too."""
    out: list[str] = []
    exprs = [kw.value for kw in node.keywords if kw.arg in {"bases", "__base__"}]
    callee = _callee(node.func) or ""
    if callee.rsplit(".", 1)[-1] == "type" and len(node.args) == 3:
        exprs.append(node.args[1])
    for expr in exprs:
        items = expr.elts if isinstance(expr, ast.Tuple | ast.List) else [expr]
        out += [n for n in (_callee(i) for i in items) if n]
    name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
    for kw in node.keywords:
        if kw.arg == "namespace":
            for sub in ast.walk(kw.value):
                if isinstance(sub, ast.Call) and _callee(sub.func) == "vars" and sub.args:
                    copied = _callee(sub.args[0])
                    if copied and copied != name:  # `vars(ServerArgs)` rebinding itself adds nothing new
                        out.append(copied)
    return tuple(dict.fromkeys(out))


def _absolute(facts: ModuleFacts, imp: Import) -> str:
    if imp.level == 0:
        return imp.module
    package = facts.module.split(".")
    if not facts.path.endswith("__init__.py"):
        package = package[:-1]
    base = package[: len(package) - (imp.level - 1)] if imp.level > 1 else package
    return ".".join([*base, imp.module] if imp.module else base)


def resolve_local(facts: ModuleFacts, name: str) -> str:
    """A name as written in the module -> its dotted name, through the module's top-level
    imports (`Schedule` from `from .fields.schedule import Schedule`); a class the module
    defines gets the module's prefix; anything else is returned as written."""
    head, _, rest = name.partition(".")
    for imp in facts.imports:
        if imp.scope != "<module>":
            continue
        if imp.name is not None and (imp.asname or imp.name) == head:
            full = f"{_absolute(facts, imp)}.{imp.name}"
            return f"{full}.{rest}" if rest else full
        if imp.name is None and (imp.asname or imp.module.split(".", 1)[0]) == head:
            module = imp.module if imp.asname else imp.module.split(".", 1)[0]
            return f"{module}.{rest}" if rest else module
    if any(c.qualname == name for c in facts.classes):
        return f"{facts.module}.{name}"
    return name


def member_fields(
    dotted: str, modules: Mapping[str, ModuleFacts], depth: int = 0
) -> list[tuple[str, ModuleFacts, int]] | None:
    """The annotated fields of the class `dotted` names, with its bases' (as a Struct or a
    dataclass inherits them): (field, the module declaring it, line). Follows a package's
    re-export of the class; None when no indexed module defines it."""
    if depth > 4:
        return None
    module, _, name = dotted.rpartition(".")
    facts = modules.get(module)
    while facts is None and "." in module:  # `pkg.mod.Outer.Inner`
        module, _, outer = module.rpartition(".")
        name = f"{outer}.{name}"
        facts = modules.get(module)
    if facts is None:
        return None
    cls = next((c for c in facts.classes if c.qualname == name), None)
    if cls is None:
        again = resolve_local(facts, name)
        return member_fields(again, modules, depth + 1) if again != name and "." in again else None
    out = [(f.target, facts, f.line) for f in cls.fields if f.target.isidentifier()]
    for base in cls.bases:
        inherited = member_fields(resolve_local(facts, base.split("[", 1)[0]), modules, depth + 1)
        out += inherited or []
    return out

