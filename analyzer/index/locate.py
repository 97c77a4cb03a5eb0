"""Positions and source text for CST nodes without libcst's metadata providers.

libcst's PositionProvider costs 2-10x the parse itself. `AstLocator` gets the
same information from `ast.parse` (about a tenth of a libcst parse): nodes of
one kind appear in the same document order in both trees, so the extractor
announces each CST node of a paired kind as its walk meets it (`pair`) and the
locator hands it the next ast node of that kind. Each pairing is checked
(names, argument counts); any disagreement raises `PairingError` and the
extractor redoes that one file with `CstLocator`, the slow but exact path.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider


class PairingError(Exception):
    """The CST and ast walks disagree for this file; use the slow locator."""


class Locator(Protocol):
    def pair(self, node: cst.CSTNode) -> None: ...
    def line(self, node: cst.CSTNode) -> int: ...
    def end_line(self, node: cst.CSTNode) -> int: ...
    def col(self, node: cst.CSTNode) -> int: ...
    def text(self, node: cst.CSTNode) -> str: ...
    def finish(self) -> None: ...


# Paired kinds: CST node type -> kind key, ast node type -> same key. Several
# statement types share a key so one sorted list keeps their relative order.
_CST_KIND: dict[type, str] = {
    cst.Call: "call",
    cst.Attribute: "attr",
    cst.FunctionDef: "def",
    cst.ClassDef: "class",
    cst.Assign: "assign",
    cst.AnnAssign: "assign",
    cst.AugAssign: "assign",
    cst.Import: "import",
    cst.ImportFrom: "import",
    cst.With: "with",
    cst.NamedExpr: "walrus",
    cst.Return: "return",
    cst.Raise: "raise",
    cst.Lambda: "lambda",
    cst.Yield: "yield",
    cst.For: "for",
    cst.ListComp: "comp",
    cst.SetComp: "comp",
    cst.DictComp: "comp",
    cst.GeneratorExp: "comp",
}
_AST_KIND: dict[type, str] = {
    ast.Call: "call",
    ast.Attribute: "attr",
    ast.FunctionDef: "def",
    ast.AsyncFunctionDef: "def",
    ast.ClassDef: "class",
    ast.Assign: "assign",
    ast.AnnAssign: "assign",
    ast.AugAssign: "assign",
    ast.Import: "import",
    ast.ImportFrom: "import",
    ast.With: "with",
    ast.AsyncWith: "with",
    ast.NamedExpr: "walrus",
    ast.Return: "return",
    ast.Raise: "raise",
    ast.Lambda: "lambda",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.For: "for",
    ast.AsyncFor: "for",
    ast.ListComp: "comp",
    ast.SetComp: "comp",
    ast.DictComp: "comp",
    ast.GeneratorExp: "comp",
}
_SAME_TYPE: dict[type, tuple[type, ...]] = {
    cst.Assign: (ast.Assign,),
    cst.AnnAssign: (ast.AnnAssign,),
    cst.AugAssign: (ast.AugAssign,),
    cst.Import: (ast.Import,),
    cst.ImportFrom: (ast.ImportFrom,),
}


# ast fields that hold only strings, numbers, contexts or operators: never walked.
_AST_SCALAR = frozenset(
    {
        "ctx", "op", "ops", "id", "attr", "name", "arg", "module", "level", "asname", "kind",
        "is_async", "conversion", "type_comment", "simple", "names", "kwd_attrs", "tag",
        "lineno", "col_offset", "end_lineno", "end_col_offset", "type_ignores",
    }
)
_AST_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f for f in cls._fields if f not in _AST_SCALAR)
    for cls in vars(ast).values()
    if isinstance(cls, type) and issubclass(cls, ast.AST) and cls is not ast.Constant
}
# `names` is scalar for Global/Nonlocal but holds alias nodes for imports, which
# need no walking: aliases contain no calls or attributes.


def _doc_order(node: ast.AST) -> tuple[int, int, int, int]:
    # Pre-order: earlier start first; of two nodes starting together the enclosing
    # (longer) one first, as a CST walk meets `f(x)(y)` before `f(x)`.
    return (node.lineno, node.col_offset, -node.end_lineno, -node.end_col_offset)  # type: ignore[attr-defined]


class AstLocator:
    """Fast path: positions and text from a parallel `ast` tree."""

    def __init__(self, text: str, tree: ast.Module) -> None:
        self._lines = text.split("\n")
        self._ascii = text.isascii()
        self._blines: list[bytes] | None = None
        # Keyed by id(): valid because the caller keeps the whole CST alive meanwhile.
        self._map: dict[int, ast.AST] = {}
        lists: dict[str, list[Any]] = {k: [] for k in set(_AST_KIND.values())}
        kind_of = _AST_KIND
        child_fields = _AST_FIELDS
        # A flat stack walk over only the node-bearing fields: ~4x faster than ast.walk.
        stack: list[Any] = [tree]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            tp = type(node)
            kind = kind_of.get(tp)
            if kind is not None:
                lists[kind].append(node)
            for name in child_fields.get(tp, ()):
                value = getattr(node, name)
                if type(value) is list:
                    extend(value)
                elif value is not None:
                    push(value)
        for nodes in lists.values():
            nodes.sort(key=_doc_order)
        self._lists = lists
        self._next: dict[str, int] = dict.fromkeys(lists, 0)

    # -- pairing -----------------------------------------------------------
    def pair(self, node: cst.CSTNode) -> None:
        kind = _CST_KIND[type(node)]
        i = self._next[kind]
        nodes = self._lists[kind]
        if i >= len(nodes):
            raise PairingError(f"more {kind} nodes in the CST than in the ast")
        a = nodes[i]
        self._next[kind] = i + 1
        self._map[id(node)] = a
        register = _REGISTER.get(type(node))
        if register is not None:
            register(self, node, a)

    def _reg(self, node: cst.CSTNode | None, a: ast.AST | None) -> None:
        if node is not None and a is not None:
            self._map[id(node)] = a

    def finish(self) -> None:
        for kind, nodes in self._lists.items():
            if self._next[kind] != len(nodes):
                raise PairingError(f"{len(nodes) - self._next[kind]} {kind} nodes left unpaired")

    # -- queries -------------------------------------------------------------
    def line(self, node: cst.CSTNode) -> int:
        return self._map[id(node)].lineno  # type: ignore[attr-defined]

    def end_line(self, node: cst.CSTNode) -> int:
        return self._map[id(node)].end_lineno  # type: ignore[attr-defined]

    def col(self, node: cst.CSTNode) -> int:
        a = self._map[id(node)]
        col: int = a.col_offset  # type: ignore[attr-defined]
        if self._ascii:
            return col
        # ast columns are UTF-8 byte offsets; the fact model wants characters.
        return len(self._bytes_lines()[a.lineno - 1][:col].decode("utf-8", "replace"))  # type: ignore[attr-defined]

    def text(self, node: cst.CSTNode) -> str:
        a = self._map.get(id(node))
        if a is None:
            raise PairingError(f"no ast counterpart for a {type(node).__name__}")
        l1, c1 = a.lineno, a.col_offset  # type: ignore[attr-defined]
        l2, c2 = a.end_lineno, a.end_col_offset  # type: ignore[attr-defined]
        if self._ascii:
            lines = self._lines
            if l1 == l2:
                return lines[l1 - 1][c1:c2]
            return "\n".join([lines[l1 - 1][c1:], *lines[l1 : l2 - 1], lines[l2 - 1][:c2]])
        blines = self._bytes_lines()
        if l1 == l2:
            raw = blines[l1 - 1][c1:c2]
        else:
            raw = b"\n".join([blines[l1 - 1][c1:], *blines[l1 : l2 - 1], blines[l2 - 1][:c2]])
        return raw.decode("utf-8", "replace")

    def _bytes_lines(self) -> list[bytes]:
        if self._blines is None:
            self._blines = [line.encode("utf-8", "surrogatepass") for line in self._lines]
        return self._blines


# -- per-kind registration of child expressions whose text the extractor asks for --


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise PairingError(what)


def _reg_call(loc: AstLocator, node: cst.Call, a: ast.Call) -> None:
    _check(len(node.args) == len(a.args) + len(a.keywords), "call arity")
    loc._reg(node.func, a.func)
    positional = [arg for arg in node.args if arg.keyword is None and arg.star != "**"]
    _check(len(positional) == len(a.args), "call positional arity")
    for arg, aa in zip(positional, a.args, strict=True):
        loc._reg(arg.value, aa.value if isinstance(aa, ast.Starred) else aa)
    named = [arg for arg in node.args if arg.keyword is not None or arg.star == "**"]
    for arg, ak in zip(named, a.keywords, strict=True):
        loc._reg(arg.value, ak.value)


def _reg_attr(loc: AstLocator, node: cst.Attribute, a: ast.Attribute) -> None:
    _check(node.attr.value == a.attr, f"attribute {node.attr.value} != {a.attr}")
    loc._reg(node.value, a.value)


def _reg_def(loc: AstLocator, node: cst.FunctionDef, a: ast.FunctionDef) -> None:
    _check(node.name.value == a.name, f"def {node.name.value} != {a.name}")
    _check(len(node.decorators) == len(a.decorator_list), "decorator count")
    for d, ad in zip(node.decorators, a.decorator_list, strict=True):
        loc._reg(d.decorator, ad)
    if node.returns is not None:
        loc._reg(node.returns.annotation, a.returns)
    _reg_params(loc, node.params, a.args)


def _reg_params(loc: AstLocator, p: cst.Parameters, a: ast.arguments) -> None:
    pos = [*p.posonly_params, *p.params]
    apos = [*a.posonlyargs, *a.args]
    _check(len(pos) == len(apos) and len(p.kwonly_params) == len(a.kwonlyargs), "param count")
    for param, aa in zip(pos, apos, strict=True):
        if param.annotation is not None:
            loc._reg(param.annotation.annotation, aa.annotation)
    with_default = [param for param in pos if param.default is not None]
    _check(len(with_default) == len(a.defaults), "default count")
    for param, ad in zip(with_default, a.defaults, strict=True):
        loc._reg(param.default, ad)
    for kwonly, ak, akd in zip(p.kwonly_params, a.kwonlyargs, a.kw_defaults, strict=True):
        if kwonly.annotation is not None:
            loc._reg(kwonly.annotation.annotation, ak.annotation)
        if kwonly.default is not None:
            loc._reg(kwonly.default, akd)
    for star, astar in ((p.star_arg, a.vararg), (p.star_kwarg, a.kwarg)):
        if isinstance(star, cst.Param) and astar is not None and star.annotation is not None:
            loc._reg(star.annotation.annotation, astar.annotation)


def _reg_class(loc: AstLocator, node: cst.ClassDef, a: ast.ClassDef) -> None:
    _check(node.name.value == a.name, f"class {node.name.value} != {a.name}")
    _check(len(node.decorators) == len(a.decorator_list), "decorator count")
    for d, ad in zip(node.decorators, a.decorator_list, strict=True):
        loc._reg(d.decorator, ad)
    _check(len(node.bases) == len(a.bases) and len(node.keywords) == len(a.keywords), "bases")
    for b, ab in zip(node.bases, a.bases, strict=True):
        loc._reg(b.value, ab.value if isinstance(ab, ast.Starred) else ab)
    for k, ak in zip(node.keywords, a.keywords, strict=True):
        loc._reg(k.value, ak.value)


def _reg_assign(loc: AstLocator, node: cst.CSTNode, a: ast.AST) -> None:
    _check(isinstance(a, _SAME_TYPE[type(node)]), "statement kind")
    if isinstance(node, cst.Assign):
        assert isinstance(a, ast.Assign)
        _check(len(node.targets) == len(a.targets), "assign targets")
        for t, at in zip(node.targets, a.targets, strict=True):
            _reg_seq(loc, t.target, at)
        _reg_seq(loc, node.value, a.value)
    elif isinstance(node, cst.AnnAssign):
        assert isinstance(a, ast.AnnAssign)
        loc._reg(node.target, a.target)
        loc._reg(node.annotation.annotation, a.annotation)
        loc._reg(node.value, a.value)
    elif isinstance(node, cst.AugAssign):
        assert isinstance(a, ast.AugAssign)
        loc._reg(node.target, a.target)
        loc._reg(node.value, a.value)


def _reg_seq(loc: AstLocator, node: cst.CSTNode, a: ast.AST | None) -> None:
    """Register a target or value and, for `a, b = x, y`, each element of it."""
    loc._reg(node, a)
    if (
        isinstance(node, cst.Tuple | cst.List)
        and isinstance(a, ast.Tuple | ast.List)
        and len(node.elements) == len(a.elts)
    ):
        for el, ae in zip(node.elements, a.elts, strict=True):
            if isinstance(el, cst.StarredElement) and isinstance(ae, ast.Starred):
                loc._reg(el, ae)
                _reg_seq(loc, el.value, ae.value)
            else:
                _reg_seq(loc, el.value, ae)


def _reg_import(loc: AstLocator, node: cst.CSTNode, a: ast.AST) -> None:
    _check(isinstance(a, _SAME_TYPE[type(node)]), "import kind")


def _reg_with(loc: AstLocator, node: cst.With, a: ast.With) -> None:
    _check(len(node.items) == len(a.items), "with items")
    for item, ai in zip(node.items, a.items, strict=True):
        loc._reg(item.item, ai.context_expr)
        if item.asname is not None:
            _reg_seq(loc, item.asname.name, ai.optional_vars)


def _reg_walrus(loc: AstLocator, node: cst.NamedExpr, a: ast.NamedExpr) -> None:
    loc._reg(node.target, a.target)
    loc._reg(node.value, a.value)


def _reg_return(loc: AstLocator, node: cst.Return, a: ast.Return) -> None:
    _check(isinstance(a, ast.Return), "return")
    loc._reg(node.value, a.value)


def _reg_raise(loc: AstLocator, node: cst.Raise, a: ast.Raise) -> None:
    _check(isinstance(a, ast.Raise), "raise")
    loc._reg(node.exc, a.exc)


def _reg_lambda(loc: AstLocator, node: cst.Lambda, a: ast.Lambda) -> None:
    _check(isinstance(a, ast.Lambda), "lambda")
    loc._reg(node.body, a.body)


def _reg_yield(loc: AstLocator, node: cst.Yield, a: ast.Yield | ast.YieldFrom) -> None:
    if isinstance(node.value, cst.From):
        _check(isinstance(a, ast.YieldFrom), "yield from")
        loc._reg(node.value.item, a.value)
    else:
        _check(isinstance(a, ast.Yield), "yield")
        loc._reg(node.value, a.value)


def _reg_for(loc: AstLocator, node: cst.For, a: ast.For) -> None:
    _check(isinstance(a, ast.For | ast.AsyncFor), "for")
    _reg_seq(loc, node.target, a.target)
    loc._reg(node.iter, a.iter)


def _reg_comp(loc: AstLocator, node: cst.ListComp, a: ast.ListComp) -> None:
    clause: cst.CompFor | None = node.for_in
    gens = list(a.generators)
    while clause is not None:
        _check(bool(gens), "comprehension clauses")
        gen = gens.pop(0)
        _reg_seq(loc, clause.target, gen.target)
        loc._reg(clause.iter, gen.iter)
        clause = clause.inner_for_in
    _check(not gens, "comprehension clauses")


_REGISTER: dict[type, Any] = {
    cst.Return: _reg_return,
    cst.Raise: _reg_raise,
    cst.Lambda: _reg_lambda,
    cst.Yield: _reg_yield,
    cst.For: _reg_for,
    cst.ListComp: _reg_comp,
    cst.SetComp: _reg_comp,
    cst.DictComp: _reg_comp,
    cst.GeneratorExp: _reg_comp,
    cst.Call: _reg_call,
    cst.Attribute: _reg_attr,
    cst.FunctionDef: _reg_def,
    cst.ClassDef: _reg_class,
    cst.Assign: _reg_assign,
    cst.AnnAssign: _reg_assign,
    cst.AugAssign: _reg_assign,
    cst.Import: _reg_import,
    cst.ImportFrom: _reg_import,
    cst.With: _reg_with,
    cst.NamedExpr: _reg_walrus,
}


class CstLocator:
    """Slow, exact path: libcst's own PositionProvider and code generation."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        # The tree is ours and never mutated, so the defensive deep copy is waste.
        self._pos = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)

    def pair(self, node: cst.CSTNode) -> None:
        return None

    def finish(self) -> None:
        return None

    def line(self, node: cst.CSTNode) -> int:
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            node = node.name  # ast convention: the `def`/`class` line, not the first decorator
        return self._pos[node].start.line

    def end_line(self, node: cst.CSTNode) -> int:
        return self._pos[node].end.line

    def col(self, node: cst.CSTNode) -> int:
        return self._pos[node].start.column

    def text(self, node: cst.CSTNode) -> str:
        # ast spans exclude a node's own parentheses (except a tuple's or a
        # generator's, which ast counts as part of the node); match that.
        if getattr(node, "lpar", None) and not isinstance(node, cst.Tuple | cst.GeneratorExp):
            node = node.with_changes(lpar=(), rpar=())
        code = self._module.code_for_node(node)
        if isinstance(node, cst.GeneratorExp) and not node.lpar:
            code = f"({code})"  # `f(x for x in y)`: ast counts the call's parentheses in
        return code
