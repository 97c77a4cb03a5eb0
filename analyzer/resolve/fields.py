"""Which store of one instance field reaches a call `c.f(...)` at module level: a strong update
on an object the module body made and nothing else can have changed since.

The flow stage keeps one set per class and field, so `c = K(f1); c.f = f2; c.f()` reaches
both f1 and f2. Here the module's top-level statements are walked in order for one name `c`
and field `f`, and a call `c.f(...)` sees only the last store when every statement since is
understood:

- `c = K(...)`: K a project class bound once in the module, every class of its MRO a project
  class, no metaclass or class decorator, no `__setattr__` / `__getattribute__` / `__new__`,
  and nothing named `f` on the class (no property or descriptor in the way); the field then
  holds what `__init__` stores in `self.f` unconditionally;
- `c.f = value`, with a value that runs no code (names, constants, lambdas, literals of them);
- `c.m(...)` (a method of that class) or `g(...)` (a function bound once, defined in the
  project), whose body is straight-line code that runs nothing unknown: stores
  `self.f = value` / `param.f = value` / `c.f = value` (the global, in the same module),
  other plain assignments, and such calls again (four deep at most);
- statements that run no code and do not mention `c` (plain assignments of inert values,
  undecorated defs).

Anything else (a branch, a loop, a `try`, an import, any other call, `c` aliased or passed
on, a store of attribute `f` on another object, a subscript store) makes the field unknown
from there on, and the call falls back to the flow stage's set; a later direct store makes it
known again. Not modelled, as elsewhere in the analyzer: threads, monkeypatching a class from
code outside the module's straight line, `gc` / frame tricks.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from analyzer.resolve.project import FuncDef, Project, Symbol

_GIVE_UP = "give-up"
_NO_STORE = "no-store"
_DEPTH = 4
_HOOKS = ("__setattr__", "__getattribute__", "__new__", "__delattr__")


@dataclass(frozen=True, slots=True)
class FieldDef:
    """A value stored in the field: an expression of `scope` in `module`."""

    value: ast.expr
    module: str
    scope: str


def _inert(node: ast.expr | None) -> bool:
    """An expression whose evaluation runs no project or unknown code."""
    if node is None:
        return True
    if isinstance(node, ast.Name | ast.Constant | ast.Lambda):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_inert(e) and not isinstance(e, ast.Starred) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _inert(k) and _inert(v) for k, v in zip(node.keys, node.values, strict=True))
    return False


def _mentions(node: ast.AST, names: frozenset[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _is_docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)


class FieldWalker:
    """Stores of field `attr` on the module variable `name` reaching each module-level
    call `name.attr(...)`; see the module docstring."""

    def __init__(
        self,
        p: Project,
        module: str,
        name: str,
        attr: str,
        module_tree: Callable[[str], ast.Module | None],
        function_tree: Callable[[FuncDef], ast.FunctionDef | None],
        bound: dict[str, dict[str, int]],
    ) -> None:
        self.p = p
        self.module = module
        self.name = name
        self.attr = attr
        self.module_tree = module_tree
        self.function_tree = function_tree
        self.sites: dict[tuple[int, int], frozenset[FieldDef]] = {}
        self._bound = bound
        self._constructing = False

    # -- what names and classes are

    def _bindings(self, module: str) -> dict[str, int]:
        """How many times each name is bound anywhere in a module (a `global` counts twice)."""
        found = self._bound.get(module)
        if found is None:
            found = {}
            tree = self.module_tree(module)
            for n in ast.walk(tree) if tree is not None else ():
                names: list[str] = []
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                    names = [n.id]
                elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names = [n.name]
                elif isinstance(n, ast.Import | ast.ImportFrom):
                    names = [(a.asname or a.name).partition(".")[0] for a in n.names]
                elif isinstance(n, ast.Global | ast.Nonlocal):
                    names = list(n.names) * 2
                for x in names:
                    found[x] = found.get(x, 0) + 1
            self._bound[module] = found
        return found

    def _global(self, module: str, name: str) -> str | None:
        """The project function or class a module-level name bound once stands for."""
        if self._bindings(module).get(name) != 1:
            return None
        sym = self.p.lookup_in_module(module, name)
        if sym is None or sym.kind not in ("function", "class"):
            return None
        return sym.name

    def plain_class(self, cls: str) -> bool:
        p = self.p
        for owner in p.hierarchy.mro(cls):
            if owner in ("object", "builtins.object"):
                continue
            cd = p.classes.get(owner)
            if cd is None or cd.fact.keywords or cd.fact.decorators:
                return False
            names = {a.target for a in (*cd.fact.fields, *cd.fact.class_attributes)}
            if self.attr in names or any(f"{owner}.{h}" in p.functions for h in _HOOKS):
                return False
            if f"{owner}.{self.attr}" in p.functions or f"{owner}.{self.attr}" in p.classes:
                return False
        return True

    def _member(self, cls: str, attr: str) -> str | None:
        sym = self.p.member(Symbol("class", cls), attr)
        return sym.name if sym is not None else None

    def _plain_function(self, qual: str) -> tuple[FuncDef, ast.FunctionDef] | None:
        fd = self.p.functions.get(qual)
        if fd is None or fd.fact.decorators or fd.fact.is_async or fd.fact.is_staticmethod or fd.fact.is_classmethod:
            return None
        tree = self.function_tree(fd)
        if tree is None or any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await) for n in ast.walk(tree)):
            return None
        if tree.args.vararg is not None or tree.args.kwarg is not None or tree.args.kwonlyargs:
            return None
        return fd, tree

    # -- summaries of calls

    def _call(
        self, call: ast.Call, names: frozenset[str], module: str, cls: str, depth: int,
        params_here: frozenset[str] = frozenset(),
    ) -> FieldDef | str:
        """What a call statement leaves in the field: a store, `_NO_STORE`, or `_GIVE_UP`."""
        if depth > _DEPTH or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return _GIVE_UP
        func = call.func
        method = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names
        if method:
            assert isinstance(func, ast.Attribute)
            sym = self._member(cls, func.attr)
            qual = sym
        elif isinstance(func, ast.Name):
            if func.id in params_here:
                return _GIVE_UP  # a parameter of the calling function, not the global of that name
            qual = self._global(module, func.id)
            if qual is not None and qual not in self.p.functions:
                return _GIVE_UP  # a class: its constructor may do anything with what it gets
        else:
            return _GIVE_UP
        found = self._plain_function(qual) if qual is not None else None
        if found is None:
            return _GIVE_UP
        fd, tree = found
        if method and fd.fact.is_property:
            return _GIVE_UP
        params = [a.arg for a in (*tree.args.posonlyargs, *tree.args.args)]
        inner: set[str] = set()
        if method:
            if not params:
                return _GIVE_UP
            inner.add(params[0])
            params = params[1:]
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Name) and a.id in names:
                if i >= len(params):
                    return _GIVE_UP
                inner.add(params[i])
            elif not _inert(a) or _mentions(a, names):
                return _GIVE_UP
        for k in call.keywords:
            if isinstance(k.value, ast.Name) and k.value.id in names:
                if k.arg not in params:
                    return _GIVE_UP
                inner.add(k.arg)
            elif not _inert(k.value) or _mentions(k.value, names):
                return _GIVE_UP
        all_params = {a.arg for a in (*tree.args.posonlyargs, *tree.args.args)}
        if fd.module == self.module and self.name not in all_params and not self._constructing:
            inner.add(self.name)  # the module variable itself, read as a global
        # (while `c = K(...)` runs, the global `c` is still the object it held before)
        scope = fd.name[len(fd.module) + 1 :]
        return self._body(tree.body, frozenset(inner), fd.module, scope, cls, depth + 1, frozenset(all_params))

    def _body(
        self, body: list[ast.stmt], names: frozenset[str], module: str, scope: str, cls: str, depth: int,
        params: frozenset[str],
    ) -> FieldDef | str:
        out: FieldDef | str = _NO_STORE
        for i, s in enumerate(body):
            if isinstance(s, ast.Pass) or _is_docstring(s):
                continue
            if isinstance(s, ast.Return) and i == len(body) - 1 and _inert(s.value) and not (
                s.value is not None and _mentions(s.value, names)
            ):
                continue
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and _inert(s.value) and not _mentions(s.value, names):
                t = s.targets[0]
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in names:
                    if t.attr == self.attr:
                        out = FieldDef(s.value, module, scope)
                    elif self._member(cls, t.attr) is not None:
                        return _GIVE_UP  # a property's setter, say
                    continue
                if isinstance(t, ast.Name) and t.id not in names:
                    continue
                return _GIVE_UP
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
                got = self._call(s.value, names, module, cls, depth, params)
                if got == _GIVE_UP:
                    return _GIVE_UP
                if isinstance(got, FieldDef):
                    out = got
                continue
            return _GIVE_UP
        return out

    # -- the module body

    def walk(self) -> dict[tuple[int, int], frozenset[FieldDef]]:
        tree = self.module_tree(self.module)
        if tree is None:
            return self.sites
        if any(isinstance(n, ast.Global | ast.Nonlocal) and self.name in n.names for n in ast.walk(tree)):
            return self.sites
        me = frozenset({self.name})
        state: frozenset[FieldDef] | None = None
        cls: str | None = None
        for s in tree.body:
            state, cls = self._stmt(s, state, cls, me)
        return self.sites

    def _read_site(self, node: ast.expr, state: frozenset[FieldDef] | None, me: frozenset[str]) -> bool:
        """`c.f(args)` with inert arguments: records what reaches it."""
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == self.attr
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == self.name
            and all(_inert(a) and not _mentions(a, me) for a in node.args)
            and all(k.arg is not None and _inert(k.value) and not _mentions(k.value, me) for k in node.keywords)
        ):
            return False
        if state is not None:
            self.sites[(node.lineno, node.col_offset)] = state
        return True

    def _stmt(
        self, s: ast.stmt, state: frozenset[FieldDef] | None, cls: str | None, me: frozenset[str]
    ) -> tuple[frozenset[FieldDef] | None, str | None]:
        name = self.name
        if isinstance(s, ast.Pass) or _is_docstring(s):
            return state, cls
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            t = s.targets[0]
            if isinstance(t, ast.Name) and t.id == name:
                v = s.value
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and not _mentions(v, me):
                    k = self._global(self.module, v.func.id)
                    if k is not None and k in self.p.classes and self.plain_class(k):
                        init = self._member(k, "__init__")
                        if init is None:
                            return None, k
                        # the constructor with `self` the new object, the call's arguments none of it
                        self._constructing = True
                        got = self._call(ast.Call(func=ast.Attribute(value=ast.Name(id=name), attr="__init__"),
                                                  args=v.args, keywords=v.keywords), me, self.module, k, 0)
                        self._constructing = False
                        if got == _GIVE_UP:
                            return None, None  # (the constructor may have handed the object out)
                        return (frozenset({got}) if isinstance(got, FieldDef) else None), k
                return None, None
            if (
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == name
                and t.attr == self.attr and cls is not None and _inert(s.value) and not _mentions(s.value, me)
            ):
                return frozenset({FieldDef(s.value, self.module, "<module>")}), cls
            if isinstance(t, ast.Name) and _inert(s.value) and not _mentions(s.value, me):
                return state, cls
            if self._read_site(s.value, state, me) and isinstance(t, ast.Name):
                return None, cls  # the call ran the stored function: it may have changed anything
            return None, (None if _mentions(s, me) else cls)
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            if self._read_site(s.value, state, me):
                return None, cls
            if cls is not None:
                got = self._call(s.value, me, self.module, cls, 0)
                if isinstance(got, FieldDef):
                    return frozenset({got}), cls
                if got == _NO_STORE:
                    return state, cls
            return None, (None if _mentions(s, me) else cls)
        if isinstance(s, ast.FunctionDef) and not s.decorator_list:
            a = s.args
            parts = [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
            parts += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs) if x.annotation is not None]
            if s.returns is not None:
                parts.append(s.returns)
            if s.name != name and all(_inert(x) for x in parts):
                return state, cls
        return None, (None if _mentions(s, me) else cls)


def parse_function(text: str | None) -> ast.FunctionDef | None:
    if text is None:
        return None
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError):
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef) else None
