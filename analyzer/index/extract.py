"""Extract `ModuleFacts` from one file: a libcst parse and one hand-rolled walk.

The walk keeps its own scope stack (no ScopeProvider) and gets positions and
source text from a `Locator` (see locate.py): normally the cheap ast pairing,
and libcst's PositionProvider only for a file where that pairing fails.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import libcst as cst

from analyzer.index.cstwalk import FIELDS, LEAVES
from analyzer.index.locate import AstLocator, CstLocator, Locator, PairingError
from analyzer.index.models import (
    Assignment,
    AttributeAccess,
    CallSite,
    Class,
    Flow,
    Function,
    Import,
    ModuleFacts,
    Param,
)
from analyzer.index.source import SourceError, decode_source, sha256_of

# Bumped whenever extraction output changes: cached facts of older versions are ignored.
EXTRACTOR_VERSION = "2"

# Methods that change the receiver in place (lists, dicts, sets, deques).
MUTATING_METHODS = frozenset(
    {
        "append", "pop", "extend", "clear", "update", "add", "remove", "popleft",
        "appendleft", "insert", "setdefault", "discard", "sort", "popitem", "reverse",
        "difference_update", "intersection_update", "symmetric_difference_update", "extendleft",
        "rotate",
    }
)
# Functions that mutate their first argument: `heapq.heappush(self.waiting, item)`.
FIRST_ARG_MUTATORS: dict[str, str] = {
    f"{prefix}{name}": name
    for name, prefixes in {
        "heappush": ("heapq.", ""),
        "heappop": ("heapq.", ""),
        "heapify": ("heapq.", ""),
        "heappushpop": ("heapq.", ""),
        "heapreplace": ("heapq.", ""),
        "insort": ("bisect.", ""),
        "insort_left": ("bisect.", ""),
        "insort_right": ("bisect.", ""),
    }.items()
    for prefix in prefixes
}
_COMPS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_FLOW_NODES = frozenset({cst.Lambda, cst.Yield, *_COMPS})
_STORE_TARGETS = (cst.Subscript, cst.Attribute, cst.Tuple, cst.List)
_PROPERTY_DECORATORS = frozenset(
    {"property", "cached_property", "functools.cached_property", "abc.abstractproperty"}
)


@dataclass(slots=True)
class _Ctx:
    scope: str  # "<module>" or the qualname of the innermost class/function
    prefix: str  # qualname prefix for definitions nested here
    kind: str  # "module" | "class" | "function"
    cls: Class | None  # class whose body, or one of whose methods, we are in
    self_name: str | None  # the method's first parameter, for `self.x = ...`
    type_checking: bool = False


def module_name(path: str) -> str:
    """`vllm/v1/core/sched/scheduler.py` -> `vllm.v1.core.sched.scheduler`; a package's `__init__` -> the package."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    raise SourceError(f"unexpected dotted-name node {type(node).__name__}")


def _head(decorator_text: str) -> str:
    return decorator_text.split("(", 1)[0].strip()


def _string_literal(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


class _Extractor:
    def __init__(self, module: cst.Module, loc: Locator, path: str, sha: str, lines: int) -> None:
        self.loc = loc
        self.facts = ModuleFacts(
            path=path,
            module=module_name(path),
            sha256=sha,
            lines=lines,
            docstring=module.get_docstring(clean=True),
        )
        self._all: list[str] | None = None
        self._all_known = True
        self._module = module
        self._lambdas: dict[str, int] = {}  # scope -> lambdas numbered so far

    def _flow(self, kind: str, node: cst.CSTNode, ctx: _Ctx, target: str | None, value: str | None) -> None:
        self.facts.flows.append(Flow(kind, self.loc.line(node), ctx.scope, target, value))

    def run(self) -> ModuleFacts:
        ctx = _Ctx(scope="<module>", prefix="", kind="module", cls=None, self_name=None)
        self._stmts(self._module.body, ctx)
        self.loc.finish()
        if self._all is not None and self._all_known:
            self.facts.all_names = self._all
        return self.facts

    # -- statements --------------------------------------------------------
    def _stmts(self, stmts: Sequence[cst.CSTNode], ctx: _Ctx) -> None:
        for stmt in stmts:
            t = type(stmt)
            if t is cst.SimpleStatementLine:
                for small in stmt.body:  # type: ignore[attr-defined]
                    self._small(small, ctx)
            elif t is cst.FunctionDef:
                self._function(stmt, ctx)  # type: ignore[arg-type]
            elif t is cst.ClassDef:
                self._class(stmt, ctx)  # type: ignore[arg-type]
            elif t is cst.If:
                self._if(stmt, ctx)  # type: ignore[arg-type]
            elif t is cst.For:
                self.loc.pair(stmt)
                text = self.loc.text
                self._flow("for", stmt, ctx, text(stmt.target), text(stmt.iter))  # type: ignore[attr-defined]
                self._expr(stmt.target, ctx, "assign")  # type: ignore[attr-defined]
                self._expr(stmt.iter, ctx)  # type: ignore[attr-defined]
                self._suite(stmt.body, ctx)  # type: ignore[attr-defined]
                self._suite(stmt.orelse, ctx)  # type: ignore[attr-defined]
            elif t is cst.While:
                self._expr(stmt.test, ctx)  # type: ignore[attr-defined]
                self._suite(stmt.body, ctx)  # type: ignore[attr-defined]
                self._suite(stmt.orelse, ctx)  # type: ignore[attr-defined]
            elif t is cst.With:
                self._with(stmt, ctx)  # type: ignore[arg-type]
            elif t is cst.Try or t is cst.TryStar:
                self._suite(stmt.body, ctx)  # type: ignore[attr-defined]
                for handler in stmt.handlers:  # type: ignore[attr-defined]
                    if handler.type is not None:
                        self._expr(handler.type, ctx)
                    self._suite(handler.body, ctx)
                self._suite(stmt.orelse, ctx)  # type: ignore[attr-defined]
                self._suite(stmt.finalbody, ctx)  # type: ignore[attr-defined]
            elif t is cst.Match:
                self._expr(stmt.subject, ctx)  # type: ignore[attr-defined]
                for case in stmt.cases:  # type: ignore[attr-defined]
                    self._expr(case.pattern, ctx)
                    if case.guard is not None:
                        self._expr(case.guard, ctx)
                    self._suite(case.body, ctx)
            else:  # anything newer (e.g. `type X = ...`): walk it generically
                self._expr(stmt, ctx)

    def _suite(self, suite: cst.CSTNode | None, ctx: _Ctx) -> None:
        if suite is None:
            return
        t = type(suite)
        if t is cst.IndentedBlock or t is cst.SimpleStatementSuite:
            body = suite.body  # type: ignore[attr-defined]
            if t is cst.SimpleStatementSuite:
                for small in body:
                    self._small(small, ctx)
            else:
                self._stmts(body, ctx)
        elif t is cst.If:
            self._if(suite, ctx)  # type: ignore[arg-type]
        else:  # Else / Finally wrap a block
            self._suite(suite.body, ctx)  # type: ignore[attr-defined]

    def _if(self, node: cst.If, ctx: _Ctx) -> None:
        self._expr(node.test, ctx)
        test = node.test
        guarded = (isinstance(test, cst.Name) and test.value == "TYPE_CHECKING") or (
            isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING"
        )
        self._suite(node.body, replace(ctx, type_checking=True) if guarded else ctx)
        self._suite(node.orelse, ctx)

    def _small(self, node: cst.CSTNode, ctx: _Ctx) -> None:
        t = type(node)
        loc = self.loc
        if t is cst.Expr:
            value = node.value  # type: ignore[attr-defined]
            self._expr(value, ctx)
            if ctx.kind == "module":
                self._all_call(value)
        elif t is cst.Assign:
            loc.pair(node)
            for target in node.targets:  # type: ignore[attr-defined]
                self._expr(target.target, ctx, "assign")
            self._expr(node.value, ctx)  # type: ignore[attr-defined]
            line = loc.line(node)
            for target in node.targets:  # type: ignore[attr-defined]
                self._bind(target.target, node.value, None, ctx, line)  # type: ignore[attr-defined]
                if isinstance(target.target, _STORE_TARGETS):
                    self._flow("store", node, ctx, loc.text(target.target), loc.text(node.value))  # type: ignore[attr-defined]
        elif t is cst.AnnAssign:
            loc.pair(node)
            self._expr(node.target, ctx, "assign")  # type: ignore[attr-defined]
            self._expr(node.annotation.annotation, ctx)  # type: ignore[attr-defined]
            if node.value is not None:  # type: ignore[attr-defined]
                self._expr(node.value, ctx)  # type: ignore[attr-defined]
            self._bind(node.target, node.value, node.annotation.annotation, ctx, loc.line(node))  # type: ignore[attr-defined]
            if node.value is not None and isinstance(node.target, _STORE_TARGETS):  # type: ignore[attr-defined]
                self._flow("store", node, ctx, loc.text(node.target), loc.text(node.value))  # type: ignore[attr-defined]
        elif t is cst.AugAssign:
            loc.pair(node)
            self._expr(node.target, ctx, "augassign")  # type: ignore[attr-defined]
            self._expr(node.value, ctx)  # type: ignore[attr-defined]
            target = node.target  # type: ignore[attr-defined]
            if ctx.kind == "module" and isinstance(target, cst.Name) and target.value == "__all__":
                self._all_extend(node.value)  # type: ignore[attr-defined]
        elif t is cst.Del:
            self._expr(node.target, ctx, "del")  # type: ignore[attr-defined]
        elif t is cst.Import or t is cst.ImportFrom:
            self._import(node, ctx)  # type: ignore[arg-type]
        elif t in LEAVES:
            return
        else:  # Return, Raise, Assert, ...
            if t is cst.Return or t is cst.Raise:
                loc.pair(node)
                value = node.value if t is cst.Return else node.exc  # type: ignore[attr-defined]
                if value is not None:
                    self._flow("return" if t is cst.Return else "raise", node, ctx, None, loc.text(value))
            self._expr(node, ctx)

    def _with(self, node: cst.With, ctx: _Ctx) -> None:
        self.loc.pair(node)
        for item in node.items:
            self._expr(item.item, ctx)
            if item.asname is not None:
                target = item.asname.name
                self._expr(target, ctx, "assign")
                self._bind(target, item.item, None, ctx, self.loc.line(node))
        self._suite(node.body, ctx)

    def _import(self, node: cst.Import | cst.ImportFrom, ctx: _Ctx) -> None:
        self.loc.pair(node)
        line = self.loc.line(node)
        out = self.facts.imports
        if isinstance(node, cst.Import):
            for alias in node.names:
                asname = alias.asname.name.value if alias.asname is not None else None  # type: ignore[union-attr]
                out.append(Import(_dotted(alias.name), None, asname, 0, line, ctx.scope, ctx.type_checking))
            return
        module = _dotted(node.module) if node.module is not None else ""
        level = len(node.relative)
        if isinstance(node.names, cst.ImportStar):
            out.append(Import(module, "*", None, level, line, ctx.scope, ctx.type_checking))
            return
        for alias in node.names:
            asname = alias.asname.name.value if alias.asname is not None else None  # type: ignore[union-attr]
            out.append(Import(module, _dotted(alias.name), asname, level, line, ctx.scope, ctx.type_checking))

    # -- definitions ---------------------------------------------------------
    def _class(self, node: cst.ClassDef, ctx: _Ctx) -> None:
        loc = self.loc
        loc.pair(node)
        for d in node.decorators:
            self._expr(d.decorator, ctx)
        for b in node.bases:
            self._expr(b.value, ctx)
        for k in node.keywords:
            self._expr(k.value, ctx)
        decorators = [loc.text(d.decorator) for d in node.decorators]
        bases = [b.star + loc.text(b.value) for b in node.bases]
        keywords = [
            f"{k.keyword.value}={loc.text(k.value)}" if k.keyword is not None else k.star + loc.text(k.value)
            for k in node.keywords
        ]
        qualname = ctx.prefix + node.name.value
        cls = Class(
            qualname=qualname,
            name=node.name.value,
            line=loc.line(node),
            end_line=loc.end_line(node),
            bases=bases,
            keywords=keywords,
            decorators=decorators,
            docstring=node.get_docstring(clean=True),
            is_dataclass=any(_head(d).endswith("dataclass") for d in decorators),
        )
        self.facts.classes.append(cls)
        inner = _Ctx(qualname, qualname + ".", "class", cls, None, ctx.type_checking)
        self._suite(node.body, inner)

    def _function(self, node: cst.FunctionDef, ctx: _Ctx) -> None:
        loc = self.loc
        loc.pair(node)
        for d in node.decorators:
            self._expr(d.decorator, ctx)
        self._expr(node.params, ctx)
        if node.returns is not None:
            self._expr(node.returns.annotation, ctx)
        decorators = [loc.text(d.decorator) for d in node.decorators]
        heads = {_head(d) for d in decorators}
        params = self._params(node.params)
        is_method = ctx.kind == "class"
        is_static = "staticmethod" in heads
        is_classmethod = "classmethod" in heads
        qualname = ctx.prefix + node.name.value
        self.facts.functions.append(
            Function(
                qualname=qualname,
                name=node.name.value,
                line=loc.line(node),
                end_line=loc.end_line(node),
                is_async=node.asynchronous is not None,
                is_method=is_method,
                decorators=decorators,
                params=params,
                returns=loc.text(node.returns.annotation) if node.returns is not None else None,
                docstring=node.get_docstring(clean=True),
                is_property=bool(heads & _PROPERTY_DECORATORS)
                or any(h.endswith((".setter", ".getter", ".deleter")) for h in heads),
                is_classmethod=is_classmethod,
                is_staticmethod=is_static,
            )
        )
        names = {p.name for p in params}
        if is_method and not is_static and not is_classmethod:
            positional = [p for p in params if p.kind in ("positional_only", "positional")]
            self_name = positional[0].name if positional else None
            cls = ctx.cls
        elif ctx.self_name is not None and ctx.self_name not in names:
            self_name, cls = ctx.self_name, ctx.cls  # a closure inside a method still sees `self`
        else:
            self_name, cls = None, None
        inner = _Ctx(qualname, qualname + ".", "function", cls, self_name, ctx.type_checking)
        self._suite(node.body, inner)

    def _params(self, p: cst.Parameters) -> list[Param]:
        text = self.loc.text
        out: list[Param] = []

        def add(param: cst.Param, kind: str) -> None:
            out.append(
                Param(
                    name=param.name.value,
                    kind=kind,
                    annotation=text(param.annotation.annotation) if param.annotation is not None else None,
                    default=text(param.default) if param.default is not None else None,
                )
            )

        for param in p.posonly_params:
            add(param, "positional_only")
        for param in p.params:
            add(param, "positional")
        if isinstance(p.star_arg, cst.Param):
            add(p.star_arg, "var_positional")
        for param in p.kwonly_params:
            add(param, "keyword_only")
        if p.star_kwarg is not None:
            add(p.star_kwarg, "var_keyword")
        return out

    # -- bindings ----------------------------------------------------------------
    def _bind(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression | None,
        annotation: cst.BaseExpression | None,
        ctx: _Ctx,
        line: int,
    ) -> None:
        t = type(target)
        if t is cst.Tuple or t is cst.List:
            elements = target.elements  # type: ignore[attr-defined]
            values = value.elements if type(value) in (cst.Tuple, cst.List) else None  # type: ignore[union-attr]
            if values is not None and len(values) != len(elements):
                values = None
            for i, el in enumerate(elements):
                # `a, b = f()`: the value of each name is unknown, so say nothing.
                self._bind(el.value, values[i].value if values is not None else None, None, ctx, line)
            return
        if t is cst.StarredElement:
            self._bind(target.value, None, None, ctx, line)  # type: ignore[attr-defined]
            return
        text = self.loc.text
        if t is cst.Name:
            name = target.value  # type: ignore[attr-defined]
            fact = Assignment(
                target=name,
                line=line,
                scope=ctx.scope,
                value=text(value) if value is not None else None,
                annotation=text(annotation) if annotation is not None else None,
            )
            if ctx.kind == "function":
                self.facts.assignments.append(fact)
            elif ctx.kind == "class":
                assert ctx.cls is not None
                (ctx.cls.fields if annotation is not None else ctx.cls.class_attributes).append(fact)
            else:
                self.facts.module_attributes.append(fact)
                if name == "__all__" and value is not None:
                    self._all = []
                    self._all_extend(value)
            return
        if (
            t is cst.Attribute
            and ctx.kind == "function"
            and ctx.cls is not None
            and isinstance(target.value, cst.Name)  # type: ignore[attr-defined]
            and target.value.value == ctx.self_name  # type: ignore[attr-defined]
        ):
            ctx.cls.instance_attributes.append(
                Assignment(
                    target=text(target),
                    line=line,
                    scope=ctx.scope,
                    value=text(value) if value is not None else None,
                    annotation=text(annotation) if annotation is not None else None,
                )
            )

    # -- __all__ -------------------------------------------------------------------
    def _all_extend(self, value: cst.BaseExpression) -> None:
        if self._all is None:
            self._all = []
        if isinstance(value, cst.List | cst.Tuple):
            for el in value.elements:
                name = _string_literal(el.value) if isinstance(el, cst.Element) else None
                if name is None:
                    self._all_known = False
                else:
                    self._all.append(name)
        else:
            self._all_known = False  # built dynamically: not statically known

    def _all_call(self, value: cst.BaseExpression) -> None:
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
            return
        func = value.func
        if not (isinstance(func.value, cst.Name) and func.value.value == "__all__"):
            return
        if func.attr.value == "extend" and len(value.args) == 1:
            self._all_extend(value.args[0].value)
        elif func.attr.value == "append" and len(value.args) == 1:
            name = _string_literal(value.args[0].value)
            if name is None or self._all is None:
                self._all_known = False
            else:
                self._all.append(name)

    # -- expressions -----------------------------------------------------------------
    def _expr(self, node: cst.CSTNode, ctx: _Ctx, role: str | None = None, method: str | None = None) -> None:
        t = type(node)
        if t in LEAVES:
            return
        if t is cst.Attribute:
            self._attribute(node, ctx, role, method)  # type: ignore[arg-type]
            return
        if t is cst.Call:
            self._call(node, ctx)  # type: ignore[arg-type]
            return
        if role is not None:
            if t is cst.Subscript:
                # `self.x[k] = v` writes into self.x; `self.x[k].append(v)` mutates it.
                if role in ("del", "item_del"):
                    inner = "item_del"
                elif role == "mutating_call":
                    inner = role
                else:  # assign, augassign, item_assign
                    inner = "item_assign"
                self._expr(node.value, ctx, inner, method)  # type: ignore[attr-defined]
                for el in node.slice:  # type: ignore[attr-defined]
                    self._expr(el, ctx)
                return
            if t is cst.Tuple or t is cst.List:
                for el in node.elements:  # type: ignore[attr-defined]
                    self._expr(el.value, ctx, role, method)
                return
            if t is cst.StarredElement:
                self._expr(node.value, ctx, role, method)  # type: ignore[attr-defined]
                return
        if t in _FLOW_NODES and self._flow_expr(node, ctx):
            return
        if t is cst.NamedExpr:
            self.loc.pair(node)
            self._expr(node.value, ctx)  # type: ignore[attr-defined]
            self._bind(node.target, node.value, None, ctx, self.loc.line(node))  # type: ignore[attr-defined]
            return
        fields = FIELDS
        for name in fields[t]:
            child = getattr(node, name)
            ct = type(child)
            # Membership in FIELDS stands in for isinstance(CSTNode): ABC checks are slow.
            if ct is tuple or ct is list:
                for c in child:
                    if type(c) in fields:
                        self._expr(c, ctx)
            elif ct in fields:
                self._expr(child, ctx)

    def _flow_expr(self, node: cst.CSTNode, ctx: _Ctx) -> bool:
        """Lambdas, yields and comprehension clauses; True when the node was walked here."""
        loc = self.loc
        loc.pair(node)
        t = type(node)
        if t is cst.Lambda:
            n = self._lambdas[ctx.scope] = self._lambdas.get(ctx.scope, 0) + 1
            qual = f"{ctx.prefix}<lambda{n}>"
            self._flow("lambda", node, ctx, qual, loc.text(node))
            self._expr(node.params, ctx)  # type: ignore[attr-defined]
            names = {p.name.value for p in (*node.params.params, *node.params.posonly_params, *node.params.kwonly_params)}  # type: ignore[attr-defined]
            shadowed = ctx.self_name in names
            inner = _Ctx(
                qual, qual + ".", "function", None if shadowed else ctx.cls,
                None if shadowed else ctx.self_name, ctx.type_checking,
            )
            self._expr(node.body, inner)  # type: ignore[attr-defined]
            return True
        if t is cst.Yield:
            value = node.value  # type: ignore[attr-defined]
            if isinstance(value, cst.From):
                self._flow("yield_from", node, ctx, None, loc.text(value.item))
            elif value is not None:
                self._flow("yield", node, ctx, None, loc.text(value))
            return False
        clause = node.for_in  # type: ignore[attr-defined]
        while clause is not None:
            # The clause's own line: an ast generator argument starts at the call's `(`.
            self._flow("for", clause.iter, ctx, loc.text(clause.target), loc.text(clause.iter))
            clause = clause.inner_for_in
        return False

    def _attribute(self, node: cst.Attribute, ctx: _Ctx, role: str | None, method: str | None) -> None:
        loc = self.loc
        loc.pair(node)
        self.facts.accesses.append(
            AttributeAccess(
                base=loc.text(node.value),
                attr=node.attr.value,
                kind=role if role is not None else "read",
                line=loc.line(node),
                scope=ctx.scope,
                method=method,
            )
        )
        self._expr(node.value, ctx)

    def _call(self, node: cst.Call, ctx: _Ctx) -> None:
        loc = self.loc
        loc.pair(node)
        text = loc.text
        func = node.func
        callee = text(func)
        args: list[str] = []
        keywords: list[str] = []
        values: list[str] = []
        for a in node.args:
            if a.keyword is not None:
                keywords.append(a.keyword.value)
                values.append(text(a.value))
            elif a.star == "**":
                keywords.append("**")
                values.append(text(a.value))
            else:
                args.append(a.star + text(a.value))
        self.facts.calls.append(CallSite(callee, loc.line(node), loc.col(node), ctx.scope, args, keywords, values))
        if type(func) is cst.Attribute and func.attr.value in MUTATING_METHODS:
            loc.pair(func)  # `x.append` itself is no read worth recording; x is mutated
            self._expr(func.value, ctx, "mutating_call", func.attr.value)
        else:
            self._expr(func, ctx)
        first_arg_mutator = FIRST_ARG_MUTATORS.get(callee)
        for i, a in enumerate(node.args):
            if i == 0 and first_arg_mutator is not None and a.keyword is None and not a.star:
                self._expr(a.value, ctx, "mutating_call", first_arg_mutator)
            else:
                self._expr(a.value, ctx)


def _count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def extract_text(text: str, path: str, sha: str, *, fast: bool = True) -> ModuleFacts:
    """Facts of one decoded file. Raises SourceError when libcst cannot parse it."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise SourceError(
            f"ParserSyntaxError at {exc.raw_line}:{exc.raw_column}: {exc.message}"
        ) from None
    except RecursionError:
        raise SourceError("RecursionError: nesting too deep for libcst") from None
    lines = _count_lines(text)
    if fast:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):  # syntax newer than this interpreter: slow path
            tree = None
        if tree is not None:
            try:
                return _Extractor(module, AstLocator(text, tree), path, sha, lines).run()
            except PairingError:
                pass
    return _Extractor(module, CstLocator(module), path, sha, lines).run()


def extract_file(data: bytes, path: str, *, fast: bool = True) -> ModuleFacts:
    """Facts of one file's bytes. Raises SourceError (decode or parse failure)."""
    return extract_text(decode_source(data), path, sha256_of(data), fast=fast)


def _skip(self: cst.CSTNode) -> None:
    return None


@contextmanager
def fast_parsing() -> Iterator[None]:
    """Run the block with two costs of a libcst parse switched off, then restore them.

    - Node validation: every node libcst's parser builds re-checks itself in
      `__post_init__` (~8% of a parse); libcst's own comment there notes this is
      only needed for hand-built trees. The extractor never builds nodes except
      in the slow fallback, whose `with_changes` copies stay valid anyway.
    - The cyclic GC: CSTs and ast trees hold no reference cycles, so collections
      only rescan millions of live nodes (~10% of a parse).
    """
    post_init = cst.CSTNode.__post_init__
    gc_was_enabled = gc.isenabled()
    init_worker()
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = post_init  # type: ignore[method-assign]
        if gc_was_enabled:
            gc.enable()


def init_worker() -> None:
    """Initializer of index worker processes (which only ever run the extractor):
    the settings of `fast_parsing`, for the life of the process."""
    cst.CSTNode.__post_init__ = _skip  # type: ignore[method-assign]
    gc.disable()
