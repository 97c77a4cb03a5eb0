"""Resolve each call site of the facts to call edges, external targets, or an
explicit `unresolved` record.

Edge kinds: direct, method, constructor, inherited, super, via-attribute-type,
via-annotation, dynamic. Confidence: `certain` when the receiver is `self`/`cls`,
a module or a class named in the source; `inferred` when a type had to be
inferred (annotations, assignments, overrides in subclasses); `guess` for a
name-only match, which carries every candidate.
"""

from __future__ import annotations

import ast
import contextlib
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from analyzer.index.models import AttributeAccess, CallSite, ModuleFacts
from analyzer.resolve.annotations import annotation_types
from analyzer.resolve.decorators import Decorators
from analyzer.resolve.evaluated import EVALUATING, literal_calls
from analyzer.resolve.exprs import dotted_name
from analyzer.resolve.fields import FieldDef, FieldWalker, parse_function
from analyzer.resolve.flow import FlowGraph, flow_enabled
from analyzer.resolve.infer import Ctx, Inferrer
from analyzer.resolve.models import (
    CallEdge,
    CallRecord,
    Value,
    builtin_without,
    merge_classes,
    no_builtin_attribute,
)
from analyzer.resolve.project import MODULE_SCOPE, FuncDef, Project, Symbol, import_target
from analyzer.resolve.reaching import (
    OTHER,
    Key,
    SlotDef,
    alias_site,
    decorator_site,
    import_line,
    module_reaching_bindings,
    reaching_bindings,
    slot_path,
    slot_reaching,
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A name-only match links at most this many same-named methods (as guesses);
# beyond it the candidates are listed on the unresolved record instead.
GUESS_LINK_LIMIT = 4
# A value call none of whose candidates can bind its arguments keeps them as callees
# (PyCG does too; False drops them, as an arity filter alone would: README, call-graph accuracy).
ARITY_KEEPS_ONLY_CALLEE = True
# Overrides in subclasses linked for one virtual call (class-hierarchy analysis).
OVERRIDE_LIMIT = 64
# Method names of builtin containers / strings: an unknown receiver calling these
# is almost always a builtin object, so no name-only guess is made.
_BUILTIN_METHODS = _words(
    "append extend insert pop popleft appendleft remove clear copy update add discard "
    "get items keys values setdefault index count sort reverse split rsplit join strip "
    "lstrip rstrip startswith endswith replace format lower upper encode decode find "
    "rfind partition rpartition splitlines read write readline readlines close flush "
    "put put_nowait get_nowait qsize empty full wait set is_set acquire release "
    "result done cancel exception add_done_callback item tolist numpy cpu cuda to "
    "size dim view reshape contiguous float half long int bool sum mean max min "
    "group match fullmatch search sub"
)
_VIA_KIND = {"annotation": "via-annotation", "attribute": "via-attribute-type"}
# Builtins that call the function they are given: its position, or its `key=`.
_HIGHER_ORDER_POS = frozenset(
    {"builtins.map", "builtins.filter", "functools.reduce", "itertools.starmap", "itertools.filterfalse",
     "itertools.takewhile", "itertools.dropwhile"}
)
_HIGHER_ORDER_KEY = frozenset(
    {"builtins.sorted", "builtins.min", "builtins.max", "heapq.nsmallest", "heapq.nlargest", "itertools.groupby",
     "builtins.list.sort", "bisect.bisect_left", "bisect.bisect_right", "bisect.bisect", "bisect.insort_left",
     "bisect.insort_right", "bisect.insort"}
)

# Builtins that call a special method of their argument: the first of these the
# argument's class defines runs (`bool(x)` falls back to `__len__`).
_DUNDER_BUILTINS = {
    "builtins.next": ("__next__",), "builtins.iter": ("__iter__",), "builtins.len": ("__len__",),
    "builtins.bool": ("__bool__", "__len__"), "builtins.str": ("__str__", "__repr__"),
    "builtins.repr": ("__repr__",), "builtins.hash": ("__hash__",), "builtins.reversed": ("__reversed__",),
    "builtins.abs": ("__abs__",), "builtins.format": ("__format__",), "builtins.round": ("__round__",),
    "builtins.int": ("__int__", "__index__"), "builtins.float": ("__float__",),
    "builtins.setattr": ("__setattr__",), "builtins.delattr": ("__delattr__",),
}
# Builtins that iterate over their (first) argument: `__iter__`/`__next__`, a generator's body.
_ITERATING_BUILTINS = frozenset(
    f"builtins.{n}" for n in ("list", "tuple", "set", "frozenset", "sorted", "sum", "any", "all", "min", "max", "enumerate", "zip", "dict")
)
_SPECIAL_BUILTINS = frozenset(_DUNDER_BUILTINS) | _ITERATING_BUILTINS
# Builtins that presize their result by the argument's length hint (CPython's `list_extend`
# and `PySequence_Tuple` call `PyObject_LengthHint`): `__len__`, else `__length_hint__`, runs
# as well as `__iter__` (`tuple(index)`, `list(self)`; `set`, `dict` and the reducers do not).
_LENGTH_HINT_BUILTINS = frozenset({"builtins.list", "builtins.tuple", "builtins.sorted"})
_LENGTH_HINT = ("__len__", "__length_hint__")
_HIGHER_ORDER = _HIGHER_ORDER_POS | _HIGHER_ORDER_KEY

_BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift",
    ast.BitOr: "or", ast.BitXor: "xor", ast.BitAnd: "and",
}
_COMPARE = {
    ast.Eq: ("__eq__",), ast.NotEq: ("__ne__", "__eq__"), ast.Lt: ("__lt__",), ast.LtE: ("__le__",),
    ast.Gt: ("__gt__",), ast.GtE: ("__ge__",),
}
_UNARY = {ast.USub: ("__neg__",), ast.UAdd: ("__pos__",), ast.Invert: ("__invert__",), ast.Not: ("__bool__", "__len__")}
_TRUTH = ("__bool__", "__len__")
# The special methods an operator runs on its operand (arithmetic, comparison,
# `in`, unary arithmetic): where the operand is a call or another operator's
# result, its value's class decides them as a name's would (`Expr() + b`).
_OPERATOR_SPECIALS = frozenset(
    {f"__{op}__" for op in _BINOPS.values()} | {n for names in _COMPARE.values() for n in names}
    | {"__neg__", "__pos__", "__invert__", "__contains__"}
)
_FORMAT = {-1: ("__format__", "__str__", "__repr__"), ord("s"): ("__str__", "__repr__"),
           ord("r"): ("__repr__",), ord("a"): ("__repr__",)}


_CONTEXT = frozenset({"__enter__", "__exit__", "__aenter__", "__aexit__"})

# Special method names Python's data model gives meaning to (those of the builtin
# types, and the protocols no builtin type carries): a Protocol of these alone
# fits nearly every class. A name only spelt like one (a library's own protocol,
# rich's `__rich_console__`) is a method like any other.
_PYTHON_SPECIAL = frozenset(
    n
    for t in (object, type, int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset,
              range, slice, memoryview, property, classmethod, staticmethod, BaseException, type(_CONTEXT.__len__),
              type(lambda: None))
    for n in dir(t)
    if n.startswith("__") and n.endswith("__")
) | frozenset({
    "__enter__", "__exit__", "__aenter__", "__aexit__", "__get__", "__set__", "__delete__", "__set_name__",
    "__missing__", "__length_hint__", "__fspath__", "__index__", "__await__", "__aiter__", "__anext__",
    "__buffer__", "__release_buffer__", "__class_getitem__", "__mro_entries__", "__prepare__",
    "__instancecheck__", "__subclasscheck__", "__init_subclass__", "__copy__", "__deepcopy__", "__getstate__",
    "__setstate__", "__getnewargs__", "__getnewargs_ex__", "__post_init__", "__bytes__", "__round__",
    "__trunc__", "__floor__", "__ceil__", "__complex__", "__call__", "__getattr__", "__iter__", "__next__",
    "__reversed__", "__contains__", "__len__", "__bool__", "__del__", "__dir__",
})


def _operator_sites(
    func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module,
) -> Iterator[tuple[ast.expr, tuple[str, ...], int]]:
    """(operand, special methods it may run, first one defined wins, line) for
    the operators, subscripts, truth tests and `with` blocks of a function's (or
    a module's) own body (nested functions, classes and lambdas are scopes of
    their own)."""
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Subscript):
            method = {ast.Load: "__getitem__", ast.Store: "__setitem__", ast.Del: "__delitem__"}[type(node.ctx)]
            yield node.value, (method,), line
        elif isinstance(node, ast.AugAssign):
            op = _BINOPS.get(type(node.op))
            if isinstance(node.target, ast.Subscript):
                yield node.target.value, ("__getitem__",), line
            if op is not None and not isinstance(node.target, ast.Subscript):
                yield node.target, (f"__i{op}__", f"__{op}__"), line
        elif isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is not None:
                yield node.left, (f"__{op}__",), line
        elif isinstance(node, ast.Compare):
            left = node.left
            for cmp, right in zip(node.ops, node.comparators, strict=False):
                if isinstance(cmp, ast.In | ast.NotIn):
                    yield right, ("__contains__",), line
                elif type(cmp) in _COMPARE:
                    yield left, _COMPARE[type(cmp)], line
                left = right
        elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            yield node.operand, _UNARY[type(node.op)], line
        elif isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            yield node.test, _TRUTH, line
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                yield value, _TRUTH, line
        elif isinstance(node, ast.With | ast.AsyncWith):
            names = ("__aenter__", "__aexit__") if isinstance(node, ast.AsyncWith) else ("__enter__", "__exit__")
            for item in node.items:
                for name in names:
                    yield item.context_expr, (name,), line
        elif isinstance(node, ast.FormattedValue):
            # `f"{x}"` is `format(x, spec)`: object's `__format__` runs `str(x)`; `!r`, `!a` run `__repr__`.
            yield node.value, _FORMAT.get(node.conversion, _FORMAT[-1]), line
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            # `obj.x = v` / `del obj.x` run the class's `__setattr__` / `__delattr__`.
            yield node.value, ("__setattr__" if isinstance(node.ctx, ast.Store) else "__delattr__",), line
        todo.extend(ast.iter_child_nodes(node))


_DOTTED_TEXT = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_DESCRIPTOR_VALUE = re.compile(r"[A-Za-z_][\w.]*\s*\(")  # `_Bit(0)`: an object made in the class body


def _is_dotted(node: ast.expr) -> bool:
    """`dotted_name(node) is not None`, without joining the name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


class SourceSegments(Protocol):
    """Where function bodies come from (graphs.state_source.SourceReader is one)."""

    def segment(self, facts: ModuleFacts, fd: FuncDef) -> str | None: ...

    def module_text(self, facts: ModuleFacts) -> str | None: ...


# `type.__call__` as a metaclass reaches it (`ABCMeta` keeps type's): it runs the class's
# `__new__` and `__init__`. (`EnumMeta.__call__` looks a member up instead: not here.)
_TYPE_BASES = frozenset({"type", "builtins.type", "abc.ABCMeta"})
_TYPE_CALL = frozenset({"builtins.type.__call__", "abc.ABCMeta.__call__"})


class CallResolver:
    def __init__(self, project: Project, source: SourceSegments | None = None) -> None:
        self.p = project
        # Function bodies (`segment(facts, fd)`), for per-site bindings of a local
        # name bound several times; None: every site of a name sees all its bindings.
        self.source = source
        self._bound_twice: dict[str, dict[str, dict[str, dict[int, str]]]] = {}  # module -> scope -> rebound names
        self._reaching: dict[tuple[str, str, str], dict[tuple[int, int], set[int]] | None] = {}
        self._slots: dict[tuple[str, str, str, tuple[Key, ...]], dict[tuple[int, int], set[SlotDef]] | None] = {}
        # module-level field stores (fields.FieldWalker): (module, name, attr) -> call site -> stores
        self._fields: dict[tuple[str, str, str], dict[tuple[int, int], frozenset[FieldDef]]] = {}
        self._field_names: dict[str, frozenset[str]] = {}  # module -> names bound to a call at top level
        self._module_trees: dict[str, ast.Module | None] = {}
        self._function_trees: dict[str, ast.FunctionDef | None] = {}
        self._bound_names: dict[str, dict[str, int]] = {}
        self.infer = Inferrer(project)
        self.infer.follow_callers = flow_enabled(len(project.modules))
        self._caller_memo: dict[tuple[str, str], str] = {}
        self.decorators = Decorators(project)
        self._candidates: dict[str, tuple[str, ...]] = {}
        self._site_memo: dict[tuple[object, ...], CallRecord] = {}
        self._site: CallSite | None = None  # the call site being resolved
        self._flow: FlowGraph | None = None
        self._owner_memo: dict[tuple[str, str], str] = {}
        self._annotated: dict[tuple[str, str], list[str] | None] = {}
        self._special: frozenset[str] | None = None  # special method names project classes define
        self._protocols: dict[str, tuple[str, ...]] = {}  # Protocol class -> the methods it declares
        self._implementer_classes: dict[str, list[str]] = {}  # Protocol class -> classes implementing it
        self._sub_members: dict[tuple[str, str], list[str]] = {}
        self._defers_memo: dict[str, bool] = {}
        self._abstract_memo: dict[str, bool] = {}  # method -> whether no object can run it  # function -> whether it may call a base's method of its name  # (class, attr) -> what its subclasses resolve attr to
        self._methods_of: dict[str, list[str]] | None = None
        self._descriptor_attrs: dict[tuple[str, str], str] | None = None  # (class, attr) -> descriptor class
        self._descriptor_attr_names: frozenset[str] = frozenset()
        self._protocol_fields: dict[str, tuple[str, ...]] = {}  # Protocol class -> the attributes it declares
        self._guards: dict[str, dict[str, list[_Guard]]] = {}  # module -> name -> its isinstance guards
        self._classes_named: dict[str, list[str]] | None = None  # `token` -> the classes named `Token`
        self._module_imports: dict[str, frozenset[str]] = {}  # module -> what its imports bind
        # A metaclass's project `__call__` -> the classes the project's resolved calls make through it
        self._meta_called: dict[str, set[str]] = {}
        self._meta_pass: bool | None = None  # None: not run; False: running; True: done
        self._meta_classes: dict[str, list[str]] | None = None  # metaclass -> the project classes it makes

    @property
    def flow(self) -> FlowGraph:
        """Function-value flow over the whole project, solved on first use."""
        if self._flow is None:
            self._flow = FlowGraph(
                self.p, self.infer, enabled=flow_enabled(len(self.p.modules)), source=self.source,
                implementers=self.implementer_classes,
            )
            self._flow.solve()
        return self._flow

    @property
    def lambdas(self) -> dict[str, object]:
        return self.flow.lambdas  # type: ignore[return-value]

    def owner_of(self, module: str, scope: str) -> str:
        """The call-graph node a scope's calls belong to: the innermost function or
        lambda (class bodies run in their enclosing function, or the module)."""
        key = (module, scope)
        found = self._owner_memo.get(key)
        if found is None:
            found = module
            lambdas = self.flow.lambdas
            for sc in self.p.chain(scope):
                qual = f"{module}.{sc}"
                if sc != MODULE_SCOPE and (qual in self.p.functions or qual in lambdas):
                    found = qual
                    break
            self._owner_memo[key] = found
        return found

    # -- public -------------------------------------------------------------

    def caller_of(self, module: str, scope: str) -> str:
        """The function a scope's code runs in: class bodies run in their enclosing
        function, or the module."""
        key = (module, scope)
        found = self._caller_memo.get(key)
        if found is None:
            found = module
            for sc in self.p.chain(scope):
                if sc != MODULE_SCOPE and f"{module}.{sc}" in self.p.functions:
                    found = f"{module}.{sc}"
                    break
            self._caller_memo[key] = found
        return found

    def resolve_module(self, facts: ModuleFacts) -> list[CallRecord]:
        if self.p.modules.get(facts.module) is not facts:
            return []  # a duplicate module path the project ignored
        records = [self.resolve(facts, site) for site in facts.calls]
        records.extend(self.property_reads(facts))
        records.extend(self.implicit_calls(facts))
        return records

    def module_sites(self, facts: ModuleFacts) -> list[tuple[CallRecord, str]]:
        """`resolve_module`'s records, each with its site (`path:line`), for a caller
        that reads them only: a call whose callee text was resolved at an earlier
        site of the scope comes as that site's record (its edges' lines are the
        earlier site's; the site given is this one), not as a re-stamped copy.
        (A list, not a generator: one resumption per site of the tree saved.)"""
        if self.p.modules.get(facts.module) is not facts:
            return []
        path, resolve = facts.path, self._resolve_site
        out = [(resolve(facts, site)[0], f"{path}:{site.line}") for site in facts.calls]
        out += [(rec, f"{rec.path}:{rec.line}") for rec in (*self.property_reads(facts), *self.implicit_calls(facts))]
        return out

    def resolve(self, facts: ModuleFacts, site: CallSite) -> CallRecord:
        rec, shared = self._resolve_site(facts, site)
        return self._restamp(rec, facts, site) if shared else rec

    def site_record(self, facts: ModuleFacts, site: CallSite) -> CallRecord:
        """`resolve` for a reader of the callees only (their kinds and confidences):
        a record resolved at an earlier site of the scope comes as it is, its edges
        carrying that site's line, instead of as a copy re-stamped with this one."""
        return self._resolve_site(facts, site)[0]

    def _resolve_site(self, facts: ModuleFacts, site: CallSite) -> tuple[CallRecord, bool]:
        """The site's record, and whether it is one resolved at an earlier site (whose
        line it carries). The same callee text in the same scope resolves the same
        way (`len(...)`, `self.step()` called twice): resolved once, re-stamped by `resolve`
        (with the arguments' shape: a function value is only the callee of calls it can bind)."""
        key: tuple[object, ...] = (facts.module, site.scope, site.callee)
        if site.callee == "type" and len(site.args) == 3:
            key = (*key, site.args[1])  # (`type(name, bases, ns)`: what it runs depends on the bases)
        # (`_flow` read directly once solved: the property costs a call per site)
        if (self._flow if self._flow is not None else self.flow).enabled:
            key = (*key, len(site.args), tuple(site.keywords))
            if self.source is not None and (
                site.callee in (rebound := self._rebound(facts, site.scope))
                or (site.callee.partition(".")[0] in rebound)  # `x.method()` with x rebound
                or (site.callee.endswith("]") and slot_path_text(self.p.parser.parse(site.callee)))
                or (site.scope == MODULE_SCOPE and self._field_sites(facts.module, site.callee) is not None)
                or self._guard_at(facts, site.callee.partition(".")[0], site.line) is not None  # isinstance narrowing
            ):
                key = (*key, site.line, site.col)  # each site sees its own bindings (or slot stores)
        done = self._site_memo.get(key)
        fresh = done is None
        if done is None:
            self._site = site
            done = self._site_memo[key] = self._resolve(facts, site)
            self._site = None
        external = done.external
        if not external:  # (no builtin among the callees: nothing below applies)
            return done, not fresh
        special = bool(site.args) and not _SPECIAL_BUILTINS.isdisjoint(external)
        evaluates = bool(site.args) and not EVALUATING.isdisjoint(external)
        if not special and not evaluates and _HIGHER_ORDER.isdisjoint(external):
            return done, not fresh
        rec = self._restamp(done, facts, site)
        self._higher_order(rec, facts, site)
        if special:
            self._special_methods(rec, facts, site)
        if evaluates:
            self._evaluated(rec, facts, site)
        return rec, False

    def _evaluated(self, rec: CallRecord, facts: ModuleFacts, site: CallSite) -> None:
        """`eval("func()")`: the calls the constant string spells are the caller's (evaluated.py)."""
        have = {e.callee for e in rec.edges}
        for name in [n for n in rec.external if n in EVALUATING]:
            for inner in literal_calls(site, name):
                self._site = inner
                sub = self._resolve(facts, inner)
                self._site = None
                for e in sub.edges:
                    if e.callee not in have:
                        have.add(e.callee)
                        rec.edges.append(CallEdge(rec.caller, e.callee, e.kind, e.confidence, facts.path, site.line, e.candidates))
                rec.external.extend(n for n in sub.external if n not in rec.external)

    def _special_methods(self, rec: CallRecord, facts: ModuleFacts, site: CallSite) -> None:
        """`next(stream)`, `len(x)`, `list(gen())`: the builtin calls a special
        method of its argument's class (or its overrides below it), or resumes
        the generator the argument may be."""
        text = site.args[0]
        dotted = bool(_DOTTED_TEXT.fullmatch(text))
        if not dotted and not self.flow.enabled:
            return  # `len(f(x))`: an object's class is rarely known (a generator only by the flow stage)
        hinted = any(n in _LENGTH_HINT_BUILTINS for n in rec.external)
        if self._special is None:
            self._special = frozenset(n for n in self.p.methods_by_name if n.startswith("__") and n.endswith("__"))
        wanted = {m for name in rec.external for m in _DUNDER_BUILTINS.get(name, ())}
        if name_iterates := any(n in _ITERATING_BUILTINS for n in rec.external):
            wanted |= {"__iter__"}
        if hinted:
            wanted |= set(_LENGTH_HINT)
        if not self._special.intersection(wanted) and not (self.flow.enabled and (name_iterates or "__next__" in wanted)):
            return  # no project class defines them, and no generator is tracked
        node = self.p.parser.parse(text)
        if node is None or isinstance(node, ast.Starred):
            return
        m, scope = facts.module, site.scope
        have = {e.callee for e in rec.edges}
        # The argument's class decides as for a name's where it is a call's or an operator's
        # result whose class the flow stage or the inferrer knows (`str(cls.parse(s))`,
        # `tuple(spec._get_ranges())`), as `operator_calls` takes `Expr() + b`.
        typed = dotted or (self.flow.enabled and isinstance(node, ast.Call | ast.BinOp | ast.UnaryOp))

        def add(target: str, base: Value | None = None) -> None:
            if target in have:
                return
            have.add(target)
            if base is None:
                self._edge(rec, target, "method", "inferred")
            else:
                self._method_edges(rec, base, target, "method")

        for name in rec.external:
            if name in _ITERATING_BUILTINS:
                for target in self.flow.iteration_calls(node, m, scope, text) if typed else self.flow.generator_bodies(node, m, scope):
                    add(target)
                if name not in _LENGTH_HINT_BUILTINS:
                    continue
                methods: tuple[str, ...] | None = _LENGTH_HINT
            else:
                methods = _DUNDER_BUILTINS.get(name)
            if not methods:
                continue
            if name == "builtins.next":
                for target in self.flow.generator_bodies(node, m, scope):
                    add(target)
            for base in self.flow.instances(node, m, scope, text) if typed else ():
                for method in methods:
                    sym = self.p.member(Symbol("class", base.name), method)
                    if sym is not None and sym.kind == "function":
                        add(sym.name, base)
                        break
        if rec.edges:
            rec.unresolved = None

    def _restamp(self, done: CallRecord, facts: ModuleFacts, site: CallSite) -> CallRecord:
        rec = CallRecord(done.caller, done.expr, facts.path, site.line)
        rec.edges = [
            CallEdge(e.caller, e.callee, e.kind, e.confidence, facts.path, site.line, e.candidates)
            for e in done.edges
        ]
        rec.external = list(done.external)
        rec.unresolved = done.unresolved
        rec.candidates = done.candidates
        return rec

    def _higher_order(self, rec: CallRecord, facts: ModuleFacts, site: CallSite) -> bool:
        """`map(f, xs)`, `sorted(xs, key=f)`, `functools.reduce(f, xs)`: the builtin
        calls f, so the caller does (the PyCG convention). Returns whether any was found."""
        texts: list[str] = []
        for name in rec.external:
            if name in _HIGHER_ORDER_POS and site.args:
                texts.append(site.args[0])
            if name in _HIGHER_ORDER_KEY:
                texts += [v for k, v in zip(site.keywords, site.keyword_values, strict=False) if k == "key"]
        found = False
        for text in texts:
            node = self.p.parser.parse(text)
            if node is None:
                continue
            for value in self.flow.callees(node, facts.module, site.scope):
                if value.kind in ("function", "lambda", "class", "instance"):
                    self._value_call(rec, value.with_via("local"), "dynamic")
                    found = True
        if found:
            rec.unresolved = None
        return found

    def _resolve(self, facts: ModuleFacts, site: CallSite) -> CallRecord:
        caller = self._owner_memo.get((facts.module, site.scope)) or self.owner_of(facts.module, site.scope)
        rec = CallRecord(caller, site.callee, facts.path, site.line)
        node = self.p.parser.parse(site.callee)
        if node is None:
            rec.unresolved = "callee expression could not be read"
            return rec
        ctx = Ctx(facts.module, site.scope, site.line)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Call) and dotted_name(node.value.func) == "super":
                self._super_call(rec, node, ctx)
            else:
                receiver = site.callee.rpartition(".")[0] if _is_dotted(node) else None
                base = self._site_receiver(node.value, ctx)
                if base is None:
                    base = self.infer.eval_text(receiver, ctx) if receiver else self.infer.eval(node.value, ctx)
                if base is None and isinstance(node.value, ast.Name):
                    # a parameter of a function called through a value: the objects passed there
                    base = merge_classes(self.flow.handed_receiver(node.value.id, facts.module, site.scope))
                if isinstance(node.value, ast.Name):
                    base = self._narrowed(node.value.id, base, facts, ctx)
                if (self._flow if self._flow is not None else self.flow).enabled and (
                    self._field_values(node, ctx, self._site) is not None
                ):
                    self._flow_call(rec, node, ctx)  # (only the field's last store reaches this site)
                    return rec
                self._attribute_call(rec, base, node.attr, ctx)
                if (self._flow if self._flow is not None else self.flow).enabled:
                    self._undecorate(rec)
                    if not rec.edges or any(e.kind == "via-attribute-type" for e in rec.edges):
                        self._flow_call(rec, node, ctx)
        else:
            flow = (self._flow if self._flow is not None else self.flow).enabled
            per_site = (
                flow and isinstance(node, ast.Name) and self._site is not None
                and self._site_values(node, ctx, self._site) is not None
            )
            if not isinstance(node, ast.Lambda) and not (flow and isinstance(node, ast.Subscript)) and not per_site:
                # (a rebound local's own bindings at this site replace the inferrer's one guess)
                # (with the flow stage on, it knows container slots better)
                self._value_call(rec, self.infer.eval(node, ctx), "direct")
                if "builtins.type" in rec.external and len(site.args) == 3:
                    self._type_made(rec, site.args[1], ctx)
                if flow:
                    self._undecorate(rec)
            if isinstance(node, ast.Lambda) or (
                flow and (not isinstance(node, ast.Name) or self._flows_name(node.id, ctx))
            ):
                self._flow_call(rec, node, ctx)
            if flow and isinstance(node, ast.Subscript) and not rec.edges and not rec.external:
                # (no container slot the flow stage tracks: an annotated or built container's element)
                rec.unresolved = None
                self._value_call(rec, self.infer.eval(node, ctx), "direct")
        if site.callee.endswith(".__call__") and not _TYPE_CALL.isdisjoint(rec.external):
            self._inside_metaclass_call(rec, facts, site)
        if not rec.edges and not rec.external and rec.unresolved is None:
            rec.unresolved = "callee could not be resolved"
        return rec

    def _flows_name(self, name: str, ctx: Ctx) -> bool:
        """A name whose value the flow stage knows better than one binding: a
        parameter or local of a function or lambda, or a module variable."""
        if self.flow.has_locals(ctx.module, ctx.scope, name):
            return True
        sym = self.p.lookup_in_module(ctx.module, name)
        return sym is not None and sym.kind in ("variable", "function")

    def _flow_call(self, rec: CallRecord, node: ast.expr, ctx: Ctx) -> None:
        """Add every callable the flow stage says `node` may hold."""
        have = {e.callee for e in rec.edges}
        added = False
        site = self._site
        starred = site is None or "**" in site.keywords or any(a.startswith("*") for a in site.args)
        values = self._site_values(node, ctx, site) if isinstance(node, ast.Name) and site is not None else None
        if isinstance(node, ast.Subscript) and site is not None:
            values = self._slot_values(node, ctx, site)
        if isinstance(node, ast.Attribute) and site is not None:
            values = self._field_values(node, ctx, site)
        if values is None:
            values = self.flow.callees(node, ctx.module, ctx.scope, site.line if site is not None else 0)
        unfit: set[Value] = set()
        if not starred:
            assert site is not None
            code = [v for v in values if v.kind in ("function", "lambda", "class") and self._types_fit(v, site, ctx)]
            unfit = {v for v in values if v.kind in ("function", "lambda", "class")} - set(code)
            bindable = [v for v in code if self.flow.accepts(v, len(site.args), site.keywords)]
            if bindable or not ARITY_KEEPS_ONLY_CALLEE:
                unfit |= set(code) - set(bindable)
            # else: no candidate can bind these arguments, yet the call still targets
            # them (Python finds the callee, then raises TypeError while binding):
            # arity prunes among alternatives, it does not delete a call's only callees.
        # A bound method's abstract declaration that its subclasses replace is no
        # object's method (see `_abstract_only`), where an override of it is among the
        # values or already this call's callee (the inferrer's `obj.m` has them).
        for v in values:
            if v.kind == "function" and v.bound and self._abstract_only(v.name):
                name = "." + v.name.rpartition(".")[2]
                if any(c != v.name and c.endswith(name) for c in have) or any(
                    w.kind == "function" and w.bound and w.name != v.name and w.name.endswith(name) for w in values
                ):
                    unfit.add(v)
        for value in sorted(values, key=lambda v: (v.kind, v.name)):
            if value in unfit:
                continue
            if value.kind == "lambda":
                if value.name not in have:
                    self._edge(rec, value.name, "dynamic", "inferred")
                    added = True
            elif value.kind in ("function", "class"):
                targets = self._constructors(value.name) if value.kind == "class" else [value.name]
                for target in targets:
                    if target not in have:
                        kind = "constructor" if value.kind == "class" else "dynamic"
                        self._edge(rec, target, kind, "inferred")
                        have.add(target)
                        added = True
            elif value.kind == "instance" and not rec.edges:
                self._value_call(rec, value.with_via("local"), "dynamic")
                added = bool(rec.edges)
            elif value.kind == "external" and not rec.edges and value.name not in rec.external:
                rec.external.append(value.name)
                added = True
        if added:
            rec.unresolved = None

    def _types_fit(self, value: Value, site: CallSite, ctx: Ctx) -> bool:
        """Whether the arguments' classes may meet the parameters' annotated
        classes of the function `value` holds: an argument known to be an
        instance of project class A cannot go to a parameter annotated with a
        project class P unrelated to A (neither a base nor a subclass of the
        other), so that function is not this call's callee (one container or
        field may hold functions for several kinds of argument). Anything not
        known for sure (no annotation, a union with a non-project type, a
        Protocol, an argument of unknown type) fits."""
        target, skip = self.flow._code_of(value)
        fd = self.p.functions.get(target) if target is not None else None
        if fd is None:
            return True
        params = [prm for prm in fd.fact.params if prm.kind in ("positional_only", "positional")][skip:]
        by_name = {prm.name: prm for prm in fd.fact.params if prm.kind != "positional_only"}
        pairs = [(text, params[i]) for i, text in enumerate(site.args) if i < len(params)]
        pairs += [(text, by_name[k]) for k, text in zip(site.keywords, site.keyword_values, strict=False) if k in by_name]
        for text, prm in pairs:
            if not prm.annotation:
                continue
            arg = self.infer.eval_text(text, ctx)
            if arg is None or arg.kind != "instance":
                continue
            wanted = self._annotated_classes(fd, prm.annotation)
            if wanted is not None and not any(self._related(arg.name, cls) for cls in wanted):
                return False
        return True

    def _annotated_classes(self, fd: FuncDef, annotation: str) -> list[str] | None:
        """The project classes a parameter's annotation admits, or None when it
        admits anything else too (external types, `type[X]`, a Protocol)."""
        key = (fd.name, annotation)
        if key in self._annotated:
            return self._annotated[key]
        out: list[str] = []
        scope = fd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
        for ref in annotation_types(annotation, self.p.parser):
            sym = self.p.resolve_in_scope(fd.module, scope, ref.name)
            if ref.is_class or sym is None or sym.kind != "class" or any(
                c not in self.p.classes and c.rpartition(".")[2] == "Protocol" for c in self.p.hierarchy.mro(sym.name)
            ):
                out = []
                break
            out.append(sym.name)
        found = self._annotated[key] = out or None
        return found

    def _related(self, a: str, b: str) -> bool:
        return b in self.p.hierarchy.mro(a) or a in self.p.hierarchy.mro(b)

    def _rebound(self, facts: ModuleFacts, scope: str) -> dict[str, dict[int, str]]:
        """Names a function body (or the module's top level) binds more than once
        with a plain assignment, or with one and an import: name -> {line: value
        text} of its assignments."""
        module = self._bound_twice.get(facts.module)
        if module is None:  # one pass over the module's assignments, every scope at once
            scopes: dict[str, dict[str, dict[int, str]]] = {}
            for asg in (*facts.assignments, *facts.module_attributes):
                if asg.value:
                    scopes.setdefault(asg.scope, {}).setdefault(asg.target, {})[asg.line] = asg.value
            imported: set[tuple[str, str]] = set()
            for imp in facts.imports:
                bound = import_target(imp, facts)
                if bound is not None and not imp.type_checking:
                    imported.add((imp.scope, bound[0]))
            module = self._bound_twice[facts.module] = {
                sc: {n: v for n, v in names.items() if len(v) > 1 or (sc, n) in imported}
                for sc, names in scopes.items()
            }
            # `alias = name` with name rebound: the alias holds name's binding at that line.
            for sc, names in scopes.items():
                rebound = module[sc]
                for n, v in names.items():
                    text = next(iter(v.values()))
                    if len(v) == 1 and n not in rebound and text != n and text in rebound:
                        rebound[n] = v
        if scope != MODULE_SCOPE and f"{facts.module}.{scope}" not in self.p.functions:
            return {}
        return module.get(scope, {})

    def _site_values(
        self, node: ast.Name, ctx: Ctx, site: CallSite, at: tuple[int, int] | None = None, depth: int = 0
    ) -> set[Value] | None:
        """The values of a rebound local (or module variable, at the module's top
        level) at this call, or at `at` (a decorator: reaching.decorator_site): only
        the assignments that reach it (reaching.py). None: not known per site (use
        the name's whole set)."""
        facts = self.p.modules[ctx.module]
        bindings = self._rebound(facts, ctx.scope).get(node.id)
        if not bindings or self.source is None:
            return None
        key = (ctx.module, ctx.scope, node.id)
        if key not in self._reaching:
            if ctx.scope == MODULE_SCOPE:
                text = self.source.module_text(facts)
                self._reaching[key] = None if text is None else module_reaching_bindings(text, node.id)
            else:
                fd = self.p.functions[f"{ctx.module}.{ctx.scope}"]
                text = self.source.segment(facts, fd)
                params = {prm.name for prm in fd.fact.params}
                self._reaching[key] = None if text is None else reaching_bindings(text, fd.fact.line, node.id, params)
        sites = self._reaching[key]
        lines = sites.get(at or (site.line, site.col)) if sites is not None else None
        if lines is None or OTHER in lines:
            return None
        out: set[Value] = set()
        for line in lines:
            imp_line = import_line(line)
            if imp_line is not None:  # `from m import name` rebinding it: what the import binds
                found = self._imported_value(facts, ctx.scope, node.id, imp_line)
                if found is None:
                    return None
                out.add(found)
            elif line in bindings:
                text = bindings[line]
                # `alias = name` (name rebound): name's bindings that reach that line.
                inner = (
                    self._site_values(ast.Name(id=text, ctx=ast.Load()), ctx, site, alias_site(line), depth + 1)
                    if depth < 3 and text != node.id and text in self._rebound(facts, ctx.scope)
                    else None
                )
                if inner is None:
                    inner = self.flow.callees(self.p.parser.parse(text), ctx.module, ctx.scope)  # type: ignore[arg-type]
                out |= inner
            else:
                return None
        return out

    def _site_receiver(self, node: ast.expr, ctx: Ctx) -> Value | None:
        """`x.method()` with x a rebound local (or module variable): the instances
        the assignments reaching this call make, together (`x = A()` then, in the
        two arms of an `if`, `x = B()` / `x = C()`: B or C, where the inferrer's one
        guess is the last). None: not known per site, or not all instances."""
        site = self._site
        if not (self._flow if self._flow is not None else self.flow).enabled or not isinstance(node, ast.Name) \
                or site is None or self.source is None:
            return None
        facts = self.p.modules[ctx.module]
        bindings = self._rebound(facts, ctx.scope).get(node.id)
        if not bindings or self._site_values(node, ctx, site) is None:
            return None  # (fills self._reaching; None where an OTHER binding or an import reaches)
        lines = (self._reaching.get((ctx.module, ctx.scope, node.id)) or {}).get((site.line, site.col))
        if not lines or any(line not in bindings for line in lines):
            return None
        found: list[Value] = []
        for line in sorted(lines):
            parsed = self.p.parser.parse(bindings[line])
            value = self.infer.eval(parsed, Ctx(ctx.module, ctx.scope, line)) if parsed is not None else None
            if value is None or value.kind != "instance":
                return None
            found.append(value)
        return merge_classes(found)

    def _narrowed(self, name: str, base: Value | None, facts: ModuleFacts, ctx: Ctx) -> Value | None:
        """`x.m()` inside `if isinstance(x, C):` (an `elif`, or one operand of an `and`),
        with nothing stored to x in that body: x is a C there. Of the classes x may
        be, those that are C or subclass it; else C itself (`sock` a tuple or a
        socket, `token` any Token). Per site, so only where the flow stage runs."""
        site = self._site
        if site is None or not (self._flow if self._flow is not None else self.flow).enabled:
            return base
        guard = self._guard_at(facts, name, site.line)
        if guard is None:
            return base
        types = [self.infer.eval_text(t, ctx) for t in guard.types]
        if all(t is not None and t.kind == "class" and not self._is_protocol(t.name) for t in types):
            # (a runtime-checkable Protocol matches by structure, not by the MRO: left as is)
            names = [t.name for t in types if t is not None]
            kept = [one for one in (base.each() if base is not None else ())
                    if one.kind == "instance" and any(n in self.p.hierarchy.mro(one.name) for n in names)]
            return merge_classes(kept or [Value("instance", n, "isinstance") for n in names])
        if len(types) == 1 and types[0] is not None and types[0].kind == "external":
            return Value("external", types[0].name, "instance")
        return base

    def _guard_at(self, facts: ModuleFacts, name: str, line: int) -> _Guard | None:
        """The innermost `if isinstance(name, ...):` body holding `line` (source read once per module)."""
        if self.source is None:
            return None
        guards = self._guards.get(facts.module)
        if guards is None:
            text = self.source.module_text(facts)
            guards = self._guards[facts.module] = _isinstance_guards(text) if text and "isinstance(" in text else {}
        inside = [g for g in guards.get(name, ()) if g.first <= line <= g.last]
        return max(inside, key=lambda g: g.first) if inside else None

    def _imported_value(self, facts: ModuleFacts, scope: str, name: str, line: int) -> Value | None:
        """The function or class value the import of `name` on `line` binds (None: not known)."""
        for imp in facts.imports:
            bound = import_target(imp, facts) if imp.line == line and imp.scope == scope else None
            if bound is None or bound[0] != name:
                continue
            sym = self.p.lookup_import(bound[1])
            if sym is not None and sym.kind in ("function", "class"):
                return Value(sym.kind, sym.name)
            value = self.infer.symbol_value(sym) if sym is not None and sym.kind == "variable" else None
            return value if value is not None and value.kind in ("function", "class") else None
        return None

    def _module_tree(self, module: str) -> ast.Module | None:
        if module not in self._module_trees:
            facts = self.p.modules.get(module)
            text = self.source.module_text(facts) if facts is not None and self.source is not None else None
            try:
                self._module_trees[module] = ast.parse(text) if text is not None else None
            except (SyntaxError, ValueError, RecursionError):
                self._module_trees[module] = None
        return self._module_trees[module]

    def _function_tree(self, fd: FuncDef) -> ast.FunctionDef | None:
        if fd.name not in self._function_trees:
            facts = self.p.modules.get(fd.module)
            text = self.source.segment(facts, fd) if facts is not None and self.source is not None else None
            self._function_trees[fd.name] = parse_function(text)
        return self._function_trees[fd.name]

    def _field_sites(self, module: str, callee: str) -> dict[tuple[int, int], frozenset[FieldDef]] | None:
        """For a module-level call `name.attr(...)`, where `name` is bound at the module's top level
        to a call: the sites of such calls where the field's last store is known (None: none)."""
        name, dot, attr = callee.partition(".")
        if not dot or "." in attr or not name.isidentifier() or not attr.isidentifier() or self.source is None:
            return None
        names = self._field_names.get(module)
        if names is None:
            tree = self._module_tree(module)
            names = self._field_names[module] = frozenset(
                t.id
                for s in (tree.body if tree is not None else ())
                if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
                for t in s.targets
                if isinstance(t, ast.Name)
            )
        if name not in names:
            return None
        key = (module, name, attr)
        if key not in self._fields:
            walker = FieldWalker(self.p, module, name, attr, self._module_tree, self._function_tree, self._bound_names)
            self._fields[key] = walker.walk()
        return self._fields[key] or None

    def _field_values(self, node: ast.Attribute, ctx: Ctx, site: CallSite | None) -> set[Value] | None:
        """`c.f()` at module level where the field's last store is known (fields.FieldWalker):
        what that store put there. None: not known at this site."""
        if site is None or ctx.scope != MODULE_SCOPE or not isinstance(node.value, ast.Name):
            return None
        sites = self._field_sites(ctx.module, site.callee)
        defs = sites.get((site.line, site.col)) if sites is not None else None
        if defs is None:
            return None
        out: set[Value] = set()
        for d in defs:
            parsed = self.p.parser.parse(ast.unparse(d.value))
            if parsed is None:
                return None
            out |= self.flow.callees(parsed, d.module, d.scope)
        return out

    def _slot_values(self, node: ast.Subscript, ctx: Ctx, site: CallSite) -> set[Value] | None:
        """`d["k"]()` on a container local to its scope: only what the stores that
        reach this call put in that slot (a store replaces the slot's value:
        `d = {"k": f}; d["k"] = g; d["k"]()` calls g). None: not known per site."""
        found = slot_path(node)
        if found is None or self.source is None:
            return None
        name, path = found
        key = (ctx.module, ctx.scope, name, path)
        if key not in self._slots:
            facts = self.p.modules[ctx.module]
            fd = self.p.functions.get(f"{ctx.module}.{ctx.scope}")
            if ctx.scope == MODULE_SCOPE:
                text = self.source.module_text(facts)
                self._slots[key] = None if text is None else slot_reaching(text, 1, name, path, module=True)
            elif fd is not None:
                text = self.source.segment(facts, fd)
                self._slots[key] = None if text is None else slot_reaching(text, fd.fact.line, name, path)
            else:
                self._slots[key] = None
        sites = self._slots[key]
        defs = sites.get((site.line, site.col)) if sites is not None else None
        if defs is None:
            return None
        out: set[Value] = set()
        for d in defs:
            value: ast.expr | None = d.value
            rest = list(d.rest)
            while rest and isinstance(value, ast.Dict | ast.List | ast.Tuple):
                value = _literal_slot(value, rest.pop(0))
                if value is _UNKNOWN_SLOT:
                    return None
            if value is None:
                continue  # not in the literal: the lookup raises
            text = ast.unparse(value) + "".join(f"[{k!r}]" for _, k in rest)
            parsed = self.p.parser.parse(text)
            if parsed is None:
                return None
            out |= self.flow.callees(parsed, ctx.module, ctx.scope)
        return out

    def _undecorate(self, rec: CallRecord) -> None:
        """A name bound by a project decorator holds what the decorator returned:
        the call reaches that (the wrapper), and through it the original."""
        out: list[CallEdge] = []
        changed = False
        for edge in rec.edges:
            values = self.flow.decorated_values(edge.callee) if edge.callee in self.p.functions else None
            if not values or any(v.name == edge.callee for v in values):
                out.append(edge)
                continue
            changed = True
            for v in values:
                if v.kind in ("function", "lambda"):
                    out.append(CallEdge(edge.caller, v.name, "dynamic", "inferred", edge.path, edge.line))
        if changed:
            seen: set[str] = set()
            rec.edges = [e for e in out if not (e.callee in seen or seen.add(e.callee))]  # type: ignore[func-returns-value]

    def implicit_calls(self, facts: ModuleFacts) -> list[CallRecord]:
        """Calls no call expression shows: applying a decorator, `for x in obj`
        and `yield from obj` (`__iter__`, `__next__`, a generator's body) and
        `raise Err` with a bare class."""
        out: list[CallRecord] = []
        m = facts.module
        flow = self.flow
        for fl in facts.flows:
            if fl.kind not in ("for", "yield_from", "raise"):
                continue
            node = self.p.parser.parse(fl.value)
            if node is None:
                continue
            rec = CallRecord(self.owner_of(m, fl.scope), fl.value or "", facts.path, fl.line)
            if fl.kind in ("for", "yield_from"):  # `yield from obj` iterates obj as `for` does
                for target in flow.iteration_calls(node, m, fl.scope):
                    self._edge(rec, target, "method", "inferred")
                if flow.enabled and isinstance(node, ast.Call):
                    self._returned_generators(rec, facts, fl.scope, fl.line, node)
            elif not isinstance(node, ast.Call):
                value = self.infer.eval(node, Ctx(m, fl.scope, fl.line))
                if value is not None and value.kind == "class":
                    init = self.p.member(Symbol("class", value.name), "__init__")
                    if init is not None and init.kind == "function":
                        self._edge(rec, init.name, "constructor", "certain" if value.via == "symbol" else "inferred")
            if rec.edges:
                out.append(rec)
        for fn in facts.functions:
            if not fn.decorators:
                continue
            scope = fn.qualname.rpartition(".")[0] or MODULE_SCOPE
            rec = CallRecord(self.owner_of(m, scope), "@decorator", facts.path, fn.line)
            for i, text in enumerate(fn.decorators):
                node = self.p.parser.parse(text)
                if node is None:
                    continue
                values = None
                if flow.enabled and isinstance(node, ast.Name):  # `@name` where name is rebound: the binding here
                    here = CallSite(text, fn.line, 0, scope)
                    values = self._site_values(node, Ctx(m, scope, fn.line), here, decorator_site(fn.line, i))
                if values is None:
                    values = flow.static_callees(node, m, scope) if not flow.enabled else flow.callees(node, m, scope)
                for value in values:
                    if value.kind in ("function", "lambda"):
                        self._edge(rec, value.name, "direct", "inferred")
                    elif value.kind == "external" and not value.name.startswith("builtins.") and not isinstance(node, ast.Call):
                        rec.external.append(value.name)
            if rec.edges or rec.external:
                out.append(rec)
        for cls in facts.classes:
            hooks = self._metaclass_hooks(f"{m}.{cls.qualname}")
            if hooks:
                scope = cls.qualname.rpartition(".")[0] or MODULE_SCOPE
                rec = CallRecord(self.owner_of(m, scope), "<class>", facts.path, cls.line)
                for target in hooks:
                    self._edge(rec, target, "constructor", "certain")
                out.append(rec)
        if flow.enabled and self.source is not None:
            out.extend(self.operator_calls(facts))
        return out

    def _type_made(self, rec: CallRecord, bases: str, ctx: Ctx) -> None:
        """`type(name, (B, ...), ns)` makes a class as a class statement does: where a base's
        metaclass is a project class, its `__new__` / `__init__` run (`type.__new__` hands
        the call to the most derived metaclass of the bases)."""
        node = self.p.parser.parse(bases)
        if not isinstance(node, ast.Tuple):
            return
        have = {e.callee for e in rec.edges}
        for elt in node.elts:
            base = self.infer.eval(elt, ctx) if not isinstance(elt, ast.Starred) else None
            for one in base.each() if base is not None and base.kind == "class" else ():
                for hook in self._metaclass_hooks(one.name):
                    if hook not in have:
                        have.add(hook)
                        self._edge(rec, hook, "constructor", "inferred")

    def _metaclass_hooks(self, cls: str) -> list[str]:
        """What a class statement calls, from the scope that runs it: the project
        `__new__` and `__init__` of the class's metaclass (`type.__call__` runs both
        once the body has run)."""
        meta = self._metaclass(cls)
        if meta is None:
            return []
        hooks = (self.p.member(Symbol("class", meta), name) for name in ("__new__", "__init__"))
        return [sym.name for sym in hooks if sym is not None and sym.kind == "function"]

    def _metaclass_call(self, cls: str) -> str | None:
        """The project `__call__` of the class's project metaclass (its own or a base
        metaclass's), which calling the class runs; None where `type`'s runs."""
        meta = self._metaclass(cls)
        call = self.p.member(Symbol("class", meta), "__call__") if meta is not None else None
        return call.name if call is not None and call.kind == "function" and call.name in self.p.functions else None

    def _inside_metaclass_call(self, rec: CallRecord, facts: ModuleFacts, site: CallSite) -> None:
        """`type.__call__(cls, ...)` / `super().__call__(...)` in a metaclass's `__call__`
        makes the object: the `__new__` / `__init__` of the class called. `cls` is bound
        as the flow stage binds a parameter, from the project's calls: the classes its
        resolved calls make through this `__call__` (or a metaclass's below it that
        defers here); where none does (the classes are made by outside callers only),
        every project class the metaclass, or one below it, makes."""
        if ".<locals>" in site.scope or not self._in_metaclass_call(facts.module, site.scope):
            return
        meta = self.p.enclosing_class(f"{facts.module}.{site.scope}")
        if meta is None:
            return
        node = self.p.parser.parse(site.callee)
        if not isinstance(node, ast.Attribute):
            return
        through_type = isinstance(node.value, ast.Name) and node.value.id == "type"
        if not through_type and not (isinstance(node.value, ast.Call) and dotted_name(node.value.func) == "super"):
            return
        if self._meta_pass is None:  # every call resolved once, so the classes called are all known
            self._meta_pass, outer = False, self._site
            for mod in list(self.p.modules.values()):
                for one in mod.calls:
                    if not self._in_metaclass_call(mod.module, one.scope):
                        self._resolve_site(mod, one)
            self._meta_pass, self._site = True, outer
        mro = self.p.hierarchy.mro
        called = sorted(
            cls for call, made in self._meta_called.items() if meta in mro(call.rpartition(".")[0]) for cls in made
        )
        if not called:
            called = sorted(cls for m, made in self._classes_by_metaclass().items() if meta in mro(m) for cls in made)
        have = {e.callee for e in rec.edges}
        for cls in called:
            for target in self._own_constructors(cls):
                if target not in have and target in self.p.functions:
                    have.add(target)
                    self._edge(rec, target, "constructor", "inferred")

    def _in_metaclass_call(self, module: str, scope: str) -> bool:
        """Whether the scope is (inside) a metaclass's `__call__`, whose sites wait for the others."""
        head = scope.split(".<locals>", 1)[0]
        if head.rpartition(".")[2] != "__call__":
            return False
        cls = self.p.enclosing_class(f"{module}.{head}")
        return cls is not None and not _TYPE_BASES.isdisjoint(self.p.hierarchy.mro(cls))

    def _classes_by_metaclass(self) -> dict[str, list[str]]:
        if self._meta_classes is None:
            self._meta_classes = {}
            for cls in sorted(self.p.classes):
                meta = self._metaclass(cls)
                if meta is not None:
                    self._meta_classes.setdefault(meta, []).append(cls)
        return self._meta_classes

    def _metaclass(self, cls: str) -> str | None:
        """The project metaclass of a project class: the one its statement names
        (`metaclass=M`), else the first one a class of its MRO names (a subclass
        is made by its base's metaclass). None where that is not a project class."""
        for owner in self.p.hierarchy.mro(cls):
            cd = self.p.classes.get(owner)
            if cd is None:  # an outside base: its metaclass is not read
                continue
            for keyword in cd.fact.keywords:
                key, eq, text = keyword.partition("=")
                if not eq or key.strip() != "metaclass":
                    continue
                node = self.p.parser.parse(text.strip())
                name = dotted_name(node) if node is not None else None
                scope = cd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
                sym = self.p.resolve_in_scope(cd.module, scope, name) if name is not None else None
                return sym.name if sym is not None and sym.kind == "class" else None
        return None

    def _returned_generators(self, rec: CallRecord, facts: ModuleFacts, scope: str, line: int, node: ast.Call) -> None:
        """`for x in f(...)` / `yield from f(...)`: the generators f returns run here, where
        they are iterated, with f as the call resolver found it (a method of an untyped
        receiver guessed by name too, at the guess's confidence)."""
        func = ast.unparse(node.func).replace(" ", "")
        site = next(
            (s for s in facts.calls if s.line == line and s.scope == scope and s.callee.replace(" ", "") == func), None
        )
        if site is None:
            return
        have = {e.callee for e in rec.edges}
        for call in self.site_record(facts, site).edges:
            for body in self.flow.returned_generators(call.callee):
                if body not in have:
                    have.add(body)
                    self._edge(rec, body, "method", call.confidence)

    def operator_calls(self, facts: ModuleFacts) -> list[CallRecord]:
        """Special methods that operators, subscripts, truth tests and `with`
        run (`cache[k] = v` runs `__setitem__`, `a != b` `__ne__` or else
        `__eq__`), where the operand is a name or attribute of a known project
        class. Reads the function bodies, so only where the flow stage runs."""
        if self._special is None:
            self._special = frozenset(n for n in self.p.methods_by_name if n.startswith("__") and n.endswith("__"))
        out: list[CallRecord] = []
        m = facts.module
        bodies: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef | ast.Module, str, int]] = []
        for fn in facts.functions:
            fd = self.p.functions.get(f"{m}.{fn.qualname}")
            text = self.source.segment(facts, fd) if fd is not None and self.source is not None else None
            if fd is None or text is None:
                continue
            try:
                tree = ast.parse(textwrap.dedent(text))
            except (SyntaxError, ValueError, RecursionError):
                continue
            found = next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
            if found is not None:
                bodies.append((found, fn.qualname, fn.line - 1))
        # The module's own top-level code runs its operators and `with` blocks too.
        text = self.source.module_text(facts) if self.source is not None else None
        if text is not None:
            with contextlib.suppress(SyntaxError, ValueError, RecursionError):
                bodies.append((ast.parse(text), MODULE_SCOPE, 0))
        for func, scope, offset in bodies:
            records: dict[int, CallRecord] = {}
            seen: set[tuple[int, str]] = set()
            for operand, methods, line in _operator_sites(func):
                if methods == ("__getitem__",) and _is_dotted(operand):
                    self._missing_key(records, operand, m, scope, facts.path, line + offset)
                if not self._special.intersection(methods):
                    continue
                # `with Lock() as f:` enters the object the call makes; other
                # operands are names and attributes (a call's class is rarely known).
                if not _is_dotted(operand) and not (isinstance(operand, ast.Call) and methods[0] in _CONTEXT) and not (
                    # an operator on a call's or another operator's result (`Expr() + b`, `(a + b) * 2`),
                    # or its truth tested (`not self._get_ranges()`: `__bool__`, else `__len__`)
                    isinstance(operand, ast.Call | ast.BinOp | ast.UnaryOp)
                    and (methods[0] in _OPERATOR_SPECIALS or methods == _TRUTH)
                ):
                    continue
                # (but a `@contextmanager` function's call stands for what it yields, which is not entered)
                if isinstance(operand, ast.Call) and self.infer.already_entered(operand, Ctx(m, scope), 0):
                    continue
                line += offset
                for base in self.flow.instances(operand, m, scope, ast.unparse(operand)):
                    for method in methods:
                        sym = self.p.member(Symbol("class", base.name), method)
                        if sym is None or sym.kind != "function":
                            continue
                        if (line, sym.name) not in seen:
                            seen.add((line, sym.name))
                            rec = records.get(line)
                            if rec is None:
                                rec = records[line] = CallRecord(self.owner_of(m, scope), f"<{method}>", facts.path, line)
                            self._method_edges(rec, base, sym.name, "method")
                        break
            out.extend(records.values())
        return out

    def _missing_key(
        self, records: dict[int, CallRecord], operand: ast.expr, m: str, scope: str, path: str, line: int
    ) -> None:
        """`d[k]` on a `defaultdict(factory)`: a missing key calls the factory."""
        for factory in self.flow.missing_factories(operand, m, scope):
            rec = records.get(line)
            if rec is None:
                rec = records[line] = CallRecord(self.owner_of(m, scope), "<__missing__>", path, line)
            if any(e.callee == factory.name for e in rec.edges):
                continue
            if factory.kind == "class":
                self._value_call(rec, factory, "constructor")
            else:
                self._edge(rec, factory.name, "dynamic", "inferred")

    def property_reads(self, facts: ModuleFacts) -> list[CallRecord]:
        """Reading a property runs its getter: `self.num_free_blocks` is a call."""
        out: list[CallRecord] = []
        names = self.p.properties_by_name
        called: set[tuple[int, str]] | None = None
        descriptors = self._descriptor_names()
        for acc in facts.accesses:
            if not (acc.kind == "read" and acc.attr in names) and not (
                acc.kind in ("read", "assign", "augassign") and acc.attr in descriptors
            ):
                continue
            if called is None:
                called = {(c.line, c.callee) for c in facts.calls}
            if (acc.line, f"{acc.base}.{acc.attr}") in called:
                continue  # `obj.size()` calls a method; it is not a getter read
            if not _DOTTED_TEXT.fullmatch(acc.base):
                continue  # `f(x).prop`, `a[i].prop`: the object's class is rarely known
            rec = self._property_read(facts, acc) if acc.kind == "read" and acc.attr in names else None
            if rec is None and acc.attr in descriptors:
                rec = self._descriptor_access(facts, acc)
            if rec is not None:
                out.append(rec)
        return out

    def _descriptor_names(self) -> frozenset[str]:
        """Names of class attributes whose value is an object of a project class with
        `__get__` (a descriptor: `bold = _Bit(0)`)."""
        if self._descriptor_attrs is None:
            found: dict[tuple[str, str], str] = {}
            for cls, cd in self.p.classes.items():
                for a in (*cd.fact.class_attributes, *cd.fact.fields):
                    if a.value is None or not _DESCRIPTOR_VALUE.match(a.value):
                        continue
                    name = a.target.rpartition(".")[2]
                    made = self.infer.eval_text(a.value.partition("(")[0].strip(), Ctx(cd.module, a.scope, a.line))
                    if made is None or made.kind != "class" or made.alts:
                        continue
                    get = self.p.member(Symbol("class", made.name), "__get__")
                    if get is not None and get.kind == "function":
                        found[(cls, name)] = made.name
            self._descriptor_attrs = found
            self._descriptor_attr_names = frozenset(n for _, n in found)
        return self._descriptor_attr_names

    def _descriptor_of(self, cls: str, attr: str) -> str | None:
        """The descriptor class whose object `attr` names on `cls` (the first class on
        its MRO that binds `attr`), where reading `obj.attr` runs its `__get__`: a data
        descriptor (`__set__` / `__delete__`) always; another only where no method of
        the hierarchy stores `self.attr` (an instance value would hide it)."""
        assert self._descriptor_attrs is not None
        for owner in self.p.hierarchy.mro(cls):
            cd = self.p.classes.get(owner)
            if cd is None:
                continue
            if f"{owner}.{attr}" in self.p.functions or f"{owner}.{attr}" in self.p.classes:
                return None
            made = self._descriptor_attrs.get((owner, attr))
            if made is None:
                if any(a.target.rpartition(".")[2] == attr for a in (*cd.fact.class_attributes, *cd.fact.fields)):
                    return None  # bound to something else first
                continue
            data = any(self.p.member_function(made, h) for h in ("__set__", "__delete__"))
            if not data and any(
                a.target.rpartition(".")[2] == attr
                for o in self.p.hierarchy.mro(cls) if o in self.p.classes
                for a in self.p.classes[o].fact.instance_attributes
            ):
                return None
            return made
        return None

    def _descriptor_access(self, facts: ModuleFacts, acc: AttributeAccess) -> CallRecord | None:
        """`obj.attr` (or `Cls.attr`) where `attr` names a descriptor object on obj's class:
        reading it calls the descriptor's `__get__`; storing to it on an instance, its
        `__set__` (a data descriptor; a store hides a plain one, and calls nothing)."""
        base = self.infer.eval_text(acc.base, Ctx(facts.module, acc.scope, acc.line))
        if base is None or base.kind not in ("instance", "class"):
            return None
        hooks = {"read": ("__get__",), "assign": ("__set__",), "augassign": ("__get__", "__set__")}[acc.kind]
        rec = CallRecord(self.caller_of(facts.module, acc.scope), f"{acc.base}.{acc.attr}", facts.path, acc.line)
        for one in base.each():
            made = self._descriptor_of(one.name, acc.attr)
            if made is None:
                continue
            for hook in hooks:
                if hook == "__set__" and one.kind != "instance":
                    continue  # `Cls.attr = v` rebinds the class attribute
                found = self.p.member(Symbol("class", made), hook)
                if found is not None and found.kind == "function" and all(e.callee != found.name for e in rec.edges):
                    self._edge(rec, found.name, "method", "inferred")
        return rec if rec.edges else None

    # -- cases --------------------------------------------------------------

    def _property_read(self, facts: ModuleFacts, acc: AttributeAccess) -> CallRecord | None:
        ctx = Ctx(facts.module, acc.scope, acc.line)
        base = self.infer.eval_text(acc.base, ctx)
        if base is None:
            # Unknown object (a loop variable, say): a getter with this name may run.
            cands = tuple(sorted(self.p.properties_by_name.get(acc.attr, ())))
            if not cands or len(cands) > GUESS_LINK_LIMIT or acc.attr in self.p.plain_attr_names:
                return None
            rec = CallRecord(self.caller_of(facts.module, acc.scope), f"{acc.base}.{acc.attr}", facts.path, acc.line)
            for cand in cands:
                self._edge(rec, cand, "dynamic", "guess", cands)
            return rec
        if base.kind != "instance":
            return None
        rec = CallRecord(self.caller_of(facts.module, acc.scope), f"{acc.base}.{acc.attr}", facts.path, acc.line)
        for one in base.each():  # (`A | B`: either class's getter)
            sym = self.p.member(Symbol("class", one.name), acc.attr)
            if sym is None or sym.kind != "function" or not self.p.functions[sym.name].fact.is_property:
                continue
            self._method_edges(rec, one, sym.name, bound_kind=self._receiver_kind(one, sym.name))
        return rec if rec.edges else None

    def _super_call(self, rec: CallRecord, node: ast.Attribute, ctx: Ctx) -> None:
        cls = self.infer.super_class(node.value, ctx, 0)  # type: ignore[arg-type]
        if cls is None:
            rec.unresolved = "super() outside a known class"
            return
        target = self.infer.super_member(cls, node.attr)
        if target is None:
            rec.unresolved = f"no {node.attr!r} above {cls} in its MRO"
        elif target.kind == "external":
            rec.external.append(target.name)
        else:
            self._edge(rec, target.name, "super", "certain")

    def _each(self, rec: CallRecord, base: Value, resolve: Callable[[CallRecord, Value], None]) -> None:
        """Resolve a call once per class a value may be (`A | B`), into `rec`."""
        have = {e.callee for e in rec.edges}
        reasons: list[str] = []
        for one in base.each():
            sub = CallRecord(rec.caller, rec.expr, rec.path, rec.line)
            resolve(sub, one)
            for edge in sub.edges:
                if edge.callee not in have:
                    have.add(edge.callee)
                    rec.edges.append(edge)
            rec.external.extend(n for n in sub.external if n not in rec.external)
            if sub.unresolved:
                reasons.append(sub.unresolved)
                rec.candidates = rec.candidates or sub.candidates
        if not rec.edges and not rec.external and reasons:
            rec.unresolved = reasons[0]

    def _attribute_call(self, rec: CallRecord, base: Value | None, attr: str, ctx: Ctx) -> None:
        p = self.p
        if base is not None and base.alts:
            self._each(rec, base, lambda r, one: self._attribute_call(r, one, attr, ctx))
            return
        if base is None:
            self._guess(rec, attr)
            return
        if base.kind == "module":
            self._value_call(rec, self.infer.symbol_value(p.lookup_in_module(base.name, attr)), "direct")
            if not rec.edges and not rec.external:
                rec.unresolved = f"{base.name} has no attribute {attr!r}"
            return
        if base.kind == "external":
            if no_builtin_attribute(base.name, attr):
                # `self.logger.log()` with `logger = None` the one binding seen, `sock.connect()`
                # with `sock` a tuple or a socket: no value of that builtin type answers the
                # call, so the receiver is one this analysis did not see (as for a class below).
                rec.unresolved = f"{base.name} has no attribute {attr!r}"
                self._guess(rec, attr, link=False)
                return
            rec.external.append(f"{base.name}.{attr}")
            return
        if base.kind in ("instance", "class"):
            sym = p.member(Symbol("class", base.name), attr)
            if sym is not None and sym.kind == "function":
                if base.kind == "class" and base.via != "self":
                    # `Pool.create(...)`: an explicit class attribute call.
                    self._edge(rec, sym.name, "direct", self._confidence(base, sym.name))
                    if base.via == "annotation":
                        # `reader: type[Reader]`: the class or any subclass, so their overrides too.
                        self._class_overrides(rec, base.name, sym.name, "direct")
                else:
                    self._method_edges(rec, base, sym.name, self._receiver_kind(base, sym.name))
                    if base.kind == "instance" and p.functions[sym.name].fact.is_property:
                        # `self.state(restore=True)`: the getter runs, then what it returns is called.
                        self._value_call(rec, self.infer.returns(sym.name), "via-attribute-type")
                return
            if sym is not None and sym.kind == "class":
                self._value_call(rec, Value("class", sym.name, base.via), "constructor")
                return
            if attr == "__class__" and base.kind == "instance":
                # `self.__class__(...)`: a new object of the receiver's own class, which
                # may be a subclass with constructors of its own.
                self._value_call(rec, Value("class", base.name, base.via), "constructor")
                have = {e.callee for e in rec.edges}
                for special in ("__new__", "__init__"):
                    for qual in self._subclass_members(base.name, special):
                        if qual not in have:
                            self._edge(rec, qual, "constructor", "inferred")
                return
            held = (
                self.infer.instance_attr(base.name, attr)
                if base.kind == "instance"
                else self.infer.class_attr(base.name, attr)
            )
            if held is not None:
                # An attribute holding a function / class / callable object.
                self._value_call(rec, held, _VIA_KIND.get(held.via, "via-attribute-type"))
                return
            if base.kind == "instance" and self._mixin_call(rec, base, attr):
                return
            # A builtin base without the name (`class Path(object)`) does not own it: it
            # is set on the instance at run time, as for a class with no base written.
            external = next(
                (c for c in p.hierarchy.mro(base.name) if c not in p.classes and not builtin_without(c, attr)), None
            )
            if external is not None:
                rec.external.append(f"{external}.{attr}")
                return
            rec.unresolved = f"{base.name} has no attribute {attr!r}"
            self._guess(rec, attr, link=False)
            return
        if base.kind == "super":
            target = self.infer.super_member(base.name, attr)
            if target is not None and target.kind == "function":
                self._edge(rec, target.name, "super", "certain")
            elif target is not None:
                rec.external.append(target.name)
            return
        rec.unresolved = f"attribute {attr!r} of a {base.kind}"

    def _value_call(self, rec: CallRecord, value: Value | None, kind: str) -> None:
        p = self.p
        if value is None:
            return
        if value.kind == "function" and value.bound and value.alts:
            # A bound method and its overrides (`get = self._theme.get_style`): an abstract
            # declaration that its subclasses replace is no object's method (see `_abstract_only`).
            names = [n for n in (value.name, *value.alts) if not self._abstract_only(n)]
            if names and len(names) < 1 + len(value.alts):
                value = Value("function", names[0], value.via, value.items, value.bound, tuple(names[1:]))
        if value.alts:
            self._each(rec, value, lambda r, one: self._value_call(r, one, kind))
            return
        if value.kind == "function":
            if value.bound and kind == "direct":
                kind = _VIA_KIND.get(value.via, "method")
            if value.via == "partial":
                kind = "dynamic"
            self._edge(rec, value.name, kind, self._confidence(value, value.name))
        elif value.kind == "class" and self._is_protocol(value.name):
            for name in self._constructors(value.name):
                self._edge(rec, name, "constructor", "inferred")
            if not rec.edges:
                rec.unresolved = f"constructs a class typed by the protocol {value.name}"
        elif value.kind == "class":
            *new, target = self._constructors(value.name)
            conf = "certain" if value.via in ("symbol", "self") else "inferred"
            for name in new:
                self._edge(rec, name, "constructor", conf)
            self._edge(rec, target, "constructor", conf)
            if target == value.name:
                # No project `__init__`: an external base class's constructor runs.
                external = next((c for c in p.hierarchy.mro(value.name) if c not in p.classes), None)
                if external is not None and external not in ("object", "builtins.object"):
                    rec.external.append(f"{external}.__init__")
        elif value.kind == "instance":
            call = p.member(Symbol("class", value.name), "__call__")
            if call is not None and call.kind == "function":
                if self._protocol_only(call.name):
                    # A callable Protocol types the value; what runs is whatever was
                    # assigned there (the flow stage may know), never the protocol's stub.
                    rec.unresolved = f"calls a value typed by the protocol {value.name}"
                    return
                self._edge(rec, call.name, _VIA_KIND.get(value.via, "method"), "inferred")
                return
            forward = p.member(Symbol("class", value.name), "forward")
            externals = [c for c in p.hierarchy.mro(value.name) if c not in p.classes]
            if forward is not None and forward.kind == "function" and externals:
                # nn.Module.__call__ runs `forward`: the edge a reader expects.
                self._edge(rec, forward.name, _VIA_KIND.get(value.via, "method"), "inferred")
            elif externals:
                rec.external.append(f"{externals[0]}.__call__")
            else:
                rec.unresolved = f"instance of {value.name} is not callable"
        elif value.kind == "external":
            rec.external.append(f"{value.name}.__call__" if value.via == "instance" else value.name)
        elif value.kind == "callables":
            for item in value.items:
                self._value_call(rec, item.with_via("local"), "dynamic")
        elif value.kind == "lambda" and value.name != "<lambda>":
            self._edge(rec, value.name, "dynamic", "inferred")
        elif value.kind == "lambda":
            rec.unresolved = "calls a lambda the index did not record"
        else:
            rec.unresolved = f"calls a {value.kind}"

    def _constructors(self, cls: str) -> list[str]:
        """What calling the class runs: its metaclass's project `__call__` where it has
        one; else its project `__new__` if any, then its
        `__init__` (the class itself when no project `__init__` is found).
        A protocol is not instantiated: `cls(...)` with `cls: type[P]` makes an
        object of a class implementing P, so those classes' project constructors
        (none where none is known)."""
        if self._is_protocol(cls):
            return [n for impl in self.implementer_classes(cls) for n in self._constructors(impl) if n in self.p.functions]
        call = self._metaclass_call(cls)
        if call is not None:
            # `type.__call__` hands the call to the metaclass's `__call__`; the class's own
            # `__new__` / `__init__` run from there (`_inside_metaclass_call`), if it defers.
            self._meta_called.setdefault(call, set()).add(cls)
            return [call]
        return self._own_constructors(cls)

    def _own_constructors(self, cls: str) -> list[str]:
        """What `type.__call__(cls, ...)` runs: the project `__new__`, then `__init__`."""
        out: list[str] = []
        new = self.p.member(Symbol("class", cls), "__new__")
        if new is not None and new.kind == "function":
            out.append(new.name)
        init = self.p.member(Symbol("class", cls), "__init__")
        out.append(init.name if init is not None and init.kind == "function" else cls)
        return out

    def _method_edges(self, rec: CallRecord, base: Value, target: str, bound_kind: str) -> None:
        abstract = base.kind == "instance" and self._abstract_only(target)
        stub = abstract or (base.kind == "instance" and self._protocol_only(target))
        before = len(rec.edges)
        if not stub:
            self._edge(rec, target, bound_kind, self._confidence(base, target))
        if base.kind == "class" and base.via == "self":
            # `cls.m()` in a class method: `cls` may be any subclass it is called through.
            self._class_overrides(rec, base.name, target, "method" if bound_kind in ("method", "inherited") else bound_kind)
        if base.kind != "instance":
            return
        # Virtual dispatch: overrides in subclasses may run instead, including
        # one a subclass inherits from a mixin listed before the receiver's class.
        attr = target.rpartition(".")[2]
        kind = "method" if bound_kind in ("method", "inherited") else bound_kind
        overrides = self._subclass_members(base.name, attr)
        if base.via == "self":
            overrides = self._self_subclass_members(base.name, attr, rec.caller)
        for qual in overrides:
            if qual != target:
                self._edge(rec, qual, kind, "inferred")
        # A Protocol: the project classes that implement it structurally.
        have = {e.callee for e in rec.edges}
        for impl in self._implementers(base.name, attr):
            if impl not in have:
                self._edge(rec, impl, kind, "inferred")
        if abstract and len(rec.edges) == before and not self._replaced_here(base, attr, rec.caller):
            # No project class whose objects can be here replaces it (`self` in a method
            # every such class replaces): the objects' classes are outside code, and the
            # declaration stays the edge, as for any method.
            self._edge(rec, target, bound_kind, self._confidence(base, target))
        if stub and not rec.edges:
            # An object a Protocol types runs its own class's method, never the
            # protocol's body (a protocol is not instantiated, nothing inherits it).
            rec.unresolved = (
                f"calls {target}, abstract: every class the object may have replaces it" if abstract
                else f"calls a method of an object typed by the protocol {base.name}"
            )

    def _class_overrides(self, rec: CallRecord, cls: str, target: str, kind: str) -> None:
        """A method looked up on a class object that may be a subclass of `cls` (`cls`
        in a class method, a value typed `type[cls]`): each subclass's own version.
        The declaration stays an edge even where it is abstract: a class object, unlike
        an instance, may be the abstract class itself."""
        have = {e.callee for e in rec.edges}
        for qual in self._subclass_members(cls, target.rpartition(".")[2]):
            if qual != target and qual not in have:
                self._edge(rec, qual, kind, "inferred")

    def _abstract_only(self, method: str) -> bool:
        """`method` is an `abc.abstractmethod` (not a class or static method) of a class
        that ABCMeta makes (`abc.ABC` a base, or `metaclass=` ABCMeta or a subclass of it on
        its MRO), replaced below it in the project: no object of a class that still has it
        can be made, so calling it on an object never runs it; only `super().m()` or
        `Base.m(self)` do. Where no project subclass replaces it, the objects' classes are
        outside code and the declaration stays the edge, as for any method."""
        found = self._abstract_memo.get(method)
        if found is None:
            fd = self.p.functions.get(method)
            found = (
                fd is not None
                and not (fd.fact.is_staticmethod or fd.fact.is_classmethod)
                and any(d.rpartition(".")[2] in ("abstractmethod", "abstractproperty") for d in fd.fact.decorators)
                and self._made_by_abcmeta(method.rpartition(".")[0])
                and self._replaced_below(*method.rpartition(".")[::2])
            )
            self._abstract_memo[method] = found
        return found

    def _replaced_here(self, base: Value, name: str, caller: str) -> bool:
        """Some project class whose objects may be `base` at this call replaces the
        abstract `name` (a method or a class attribute): its subclasses, those that may
        run `caller` where `base` is `self` there (see `_self_subclass_members`)."""
        subs = self.p.hierarchy.descendants(base.name)[:OVERRIDE_LIMIT]
        owner, _, method = caller.rpartition(".")
        if base.via == "self" and owner == base.name and caller in self.p.functions:
            subs = [sub for sub in subs if self._runs_with(sub, base.name, method, caller)]
        return any(self._defines(sub, name) for sub in subs)

    def _defines(self, cls: str, name: str) -> bool:
        """`cls`'s own body defines `name`: a method, or a class attribute with a value."""
        cd = self.p.classes.get(cls)
        return f"{cls}.{name}" in self.p.functions or (cd is not None and any(
            a.target == name and a.value is not None for a in (*cd.fact.class_attributes, *cd.fact.fields)
        ))

    def _replaced_below(self, cls: str, name: str) -> bool:
        """Some project subclass of `cls` defines `name` (a method or a class attribute)."""
        return any(self._defines(sub, name) for sub in self.p.hierarchy.descendants(cls))

    def _made_by_abcmeta(self, cls: str) -> bool:
        mro = self.p.hierarchy.mro(cls)
        if any(c.rpartition(".")[2] == "ABC" and c not in self.p.classes for c in mro):
            return True
        for owner in mro:
            cd = self.p.classes.get(owner)
            for keyword in cd.fact.keywords if cd is not None else ():
                key, eq, text = keyword.partition("=")
                if eq and key.strip() == "metaclass":
                    meta = self._metaclass(owner)
                    names = self.p.hierarchy.mro(meta) if meta is not None else [text.strip()]
                    return any(n.rpartition(".")[2] == "ABCMeta" for n in names)
        return False

    def _is_protocol(self, cls: str) -> bool:
        return any(b not in self.p.classes and b.rpartition(".")[2] == "Protocol" for b in self.p.hierarchy.bases_of(cls))

    def _protocol_only(self, method: str) -> bool:
        """`method` belongs to a `typing.Protocol` class that no project class
        inherits it from (every nominal subclass defines its own): calling an
        object the protocol types cannot run it (a protocol is not instantiated)."""
        owner, _, attr = method.rpartition(".")
        if owner not in self.p.classes or not self._is_protocol(owner):
            return False
        for sub in self.p.hierarchy.descendants(owner):
            found = self.p.member(Symbol("class", sub), attr)
            if found is not None and found.name == method and not self._is_protocol(sub):
                return False
        return True

    def implementer_classes(self, cls: str) -> list[str]:
        """For a `typing.Protocol` class, the project classes that implement it
        structurally (every method and attribute it declares), nominal subclasses
        left out; none for any other class or a protocol of Python's special methods only."""
        found = self._implementer_classes.get(cls)
        if found is None:
            if not self._is_protocol(cls):
                found = []
            else:
                self._implementers(cls, "")  # fills the protocol's members
                members = self._protocols.get(cls, ())
                found = [q.rpartition(".")[0] for q in self._implementers(cls, members[0])] if members else []
            self._implementer_classes[cls] = found
        return found

    def _implementers(self, cls: str, attr: str) -> list[str]:
        """For a `typing.Protocol` class, the `attr` methods of the project
        classes that define every method the protocol declares (not through
        the protocol itself); none for any other class, or for a protocol of
        Python's special methods only (`__call__`: too many classes fit; a name
        only spelt like one, `__rich_console__`, counts as any method)."""
        members = self._protocols.get(cls)
        if members is None:
            members = ()
            if any(b not in self.p.classes and b.rpartition(".")[2] == "Protocol" for b in self.p.hierarchy.bases_of(cls)):
                self._protocol_fields[cls] = tuple(a.target for a in self.p.classes[cls].fact.fields)
                if self._methods_of is None:  # class -> its own method names, built once
                    self._methods_of = {}
                    for quals in self.p.methods_by_name.values():
                        for q in quals:
                            owner, _, n = q.rpartition(".")
                            self._methods_of.setdefault(owner, []).append(n)
                own = self._methods_of.get(cls, [])
                members = tuple(n for n in own if n not in _PYTHON_SPECIAL)
            self._protocols[cls] = members
        if attr not in members:
            return []
        out: list[str] = []
        fields = self._protocol_fields.get(cls, ())
        for qual in self.p.methods_by_name.get(attr, ()):
            owner = qual.rpartition(".")[0]
            if owner == cls or self.p.hierarchy.is_subclass(owner, cls):
                continue  # the protocol itself, or nominal subclasses (virtual dispatch has them)
            if all(self._same_member(cls, owner, n) for n in members) and all(
                self._has_attribute(owner, f) for f in fields
            ):
                out.append(qual)
                if len(out) >= OVERRIDE_LIMIT:
                    break
        return out

    def _same_member(self, protocol: str, owner: str, name: str) -> bool:
        """`owner` has a method `name` of the protocol's kind (a property for a property)."""
        sym = self.p.member(Symbol("class", owner), name)
        if sym is None or sym.kind != "function":
            return False
        return self.p.functions[sym.name].fact.is_property == self.p.functions[f"{protocol}.{name}"].fact.is_property

    def _has_attribute(self, cls: str, name: str) -> bool:
        """`cls` (or a project base) declares or sets the attribute `name`."""
        for owner in self.p.hierarchy.mro(cls):
            cd = self.p.classes.get(owner)
            if cd is None:
                continue
            if f"{owner}.{name}" in self.p.functions or any(
                a.target.rpartition(".")[2] == name
                for a in (*cd.fact.fields, *cd.fact.class_attributes, *cd.fact.instance_attributes)
            ):
                return True
        return False

    def _mixin_call(self, rec: CallRecord, base: Value, attr: str) -> bool:
        """`self.method()` in a mixin whose subclasses define `method`, or inherit
        it from a sibling base they combine the mixin with."""
        found = False
        for qual in self._subclass_members(base.name, attr):
            self._edge(rec, qual, "method", "inferred")
            found = True
        return found

    def _subclass_members(self, cls: str, attr: str) -> list[str]:
        """The project methods `attr` resolves to on `cls`'s subclasses, each by
        its own MRO: one it defines, or one a base beside `cls` gives it
        (`class Loader(Reader, Scanner)`: `Scanner`'s `self.peek()` is `Reader.peek`)."""
        key = (cls, attr)
        found = self._sub_members.get(key)
        if found is None:
            found = []
            for sub in self.p.hierarchy.descendants(cls)[:OVERRIDE_LIMIT]:
                qual = f"{sub}.{attr}"
                if qual not in self.p.functions:
                    sym = self.p.member(Symbol("class", sub), attr)
                    if sym is None or sym.kind != "function" or sym.name not in self.p.functions:
                        continue
                    qual = sym.name
                if qual not in found:
                    found.append(qual)
            self._sub_members[key] = found
        return found

    def _self_subclass_members(self, cls: str, attr: str, caller: str) -> list[str]:
        """`_subclass_members` for `self.attr` in `caller`, a method of `cls`: `self` there is
        a `cls`, or an object of a subclass that inherits `caller` (a subclass whose own
        method of that name replaces it runs `caller` only through `super()` or an explicit
        `Base.name(self)`, kept where its override, or one between it and `cls`, spells
        either). All of `_subclass_members` where `caller` is not a method `cls` defines."""
        owner, _, name = caller.rpartition(".")
        fd = self.p.functions.get(caller)
        if owner != cls or fd is None or fd.fact.is_staticmethod or fd.fact.is_classmethod:
            return self._subclass_members(cls, attr)
        found: list[str] = []
        for sub in self.p.hierarchy.descendants(cls)[:OVERRIDE_LIMIT]:
            if not self._runs_with(sub, cls, name, caller):
                continue
            sym = self.p.member(Symbol("class", sub), attr)
            if sym is not None and sym.kind == "function" and sym.name in self.p.functions and sym.name not in found:
                found.append(sym.name)
        return found

    def _runs_with(self, sub: str, cls: str, name: str, method: str) -> bool:
        """Whether `method` (`cls.name`) may run with `self` an object of `sub`: `sub`
        resolves `name` to it, or some override on `sub`'s MRO before `cls` may defer
        to it (a `super()...` or `X.name(...)` call in its body; a property, whose
        `super().name` is no call, is kept as well)."""
        for owner in self.p.hierarchy.mro(sub):
            if owner == cls:
                return True
            fd = self.p.functions.get(f"{owner}.{name}")
            if fd is None:
                cd = self.p.classes.get(owner)
                if cd is not None and any(a.target == name for a in (*cd.fact.class_attributes, *cd.fact.fields)
                                          if a.value is not None):
                    return False  # a class attribute of that name replaces it (`check = None`)
                continue
            if fd.fact.is_property or self._defers(fd, name):
                continue  # it may call on up the MRO: look further
            return False
        return True  # `cls` not on its MRO as the analysis sees it: keep it

    def _defers(self, fd: FuncDef, name: str) -> bool:
        """`fd`'s body calls `super().name`, `super(...).name` or `X.name(...)` on
        anything but `self` (an explicit base), so an object of its class may run a
        base's `name`."""
        key = fd.name
        found = self._defers_memo.get(key)
        if found is None:
            found = False
            for site in self.p.modules[fd.module].calls:
                if site.scope != fd.fact.qualname and not site.scope.startswith(fd.fact.qualname + "."):
                    continue
                callee = site.callee.replace(" ", "")
                head, dot, last = callee.rpartition(".")
                if dot and last == name and not head.startswith(("self.", "cls.")) and head not in ("self", "cls"):
                    found = True
                    break
            self._defers_memo[key] = found
        return found

    def _receiver_kind(self, base: Value, target: str) -> str:
        if base.via in _VIA_KIND:
            return _VIA_KIND[base.via]
        owner = target.rpartition(".")[0]
        if base.via == "self" and owner != base.name:
            return "inherited"
        return "method"

    def _confidence(self, base: Value, target: str) -> str:
        if base.via not in ("self", "symbol", "super"):
            return "inferred"
        return "certain" if self.decorators.transparent(target) else "inferred"

    def _wrapper_call(self, rec: CallRecord, name: str, ctx: Ctx) -> None:
        """Inside a decorator's wrapper, calling the decorated parameter (`func(*a)`)
        runs whichever functions the decorator is applied to."""
        caller = rec.caller
        fd = self.p.functions[caller]
        if rec.edges or rec.external:
            return
        outer = self.p.functions.get(caller.rpartition(".")[0])
        if outer is None or not any(prm.name == name for prm in outer.fact.params):
            return
        if any(prm.name == name for prm in fd.fact.params):
            return
        for target in self.decorators.applied_to(outer.name):
            self._edge(rec, target, "dynamic", "inferred")

    def _guess(self, rec: CallRecord, attr: str, *, link: bool = True) -> None:
        if attr in _BUILTIN_METHODS:
            # `token.match(...)`: a builtin's method name, unless the receiver is named after a
            # project class that has it (sqlparse's untyped `token` parameters are `Token`s).
            named = self._named_receiver(rec, attr) if link else []
            for target in named:
                self._edge(rec, target, "dynamic", "guess", tuple(named))
            if not named:
                rec.unresolved = rec.unresolved or "receiver type unknown"
            return
        cands = self._candidates.get(attr)
        if cands is None:
            cands = self._candidates[attr] = tuple(sorted(self.p.methods_by_name.get(attr, ())))
        if link and 0 < len(cands) <= GUESS_LINK_LIMIT:
            site = self._site
            fits = cands
            if site is not None and "**" not in site.keywords and not any(a.startswith("*") for a in site.args):
                # A method this call cannot bind (too many or too few arguments) is not its callee.
                fits = tuple(c for c in cands if self.flow.accepts(
                    Value("function", c, bound=not self.p.functions[c].fact.is_staticmethod),
                    len(site.args), site.keywords,
                ))
            # (a Protocol's own method is no object's: nothing inherits it, so no call runs it)
            linked = [c for c in fits or cands if not self._protocol_only(c)]
            for cand in linked:
                self._edge(rec, cand, "dynamic", "guess", cands)
            if linked:
                return
        rec.unresolved = rec.unresolved or "receiver type unknown"
        rec.candidates = cands

    def _named_receiver(self, rec: CallRecord, attr: str) -> list[str]:
        """`token.match` on a receiver of unknown type: the method `attr` of the project classes
        the receiver's name spells (`token` -> `Token`, `token_list` -> `TokenList`; own or
        inherited, and the overrides of their subclasses), where the calling module can see the
        class (it defines it, or imports it or its module: a `tensor` far from the project's
        own `Tensor` is torch's); [] unless the receiver is a plain name."""
        receiver, dot, name = rec.expr.rpartition(".")
        if not dot or name != attr or not receiver.isidentifier() or len(receiver.strip("_")) < 3:
            return []
        if self._classes_named is None:
            self._classes_named = {}
            for cls in sorted(self.p.classes):
                self._classes_named.setdefault(cls.rpartition(".")[2].lower(), []).append(cls)
        caller = self.p.functions.get(rec.caller)
        module = caller.module if caller is not None else rec.caller
        seen = self._module_sees(module)
        out: list[str] = []
        for cls in self._classes_named.get(receiver.replace("_", "").lower(), ()):
            home = self.p.classes[cls].module
            if home != module and cls not in seen and home not in seen:
                continue
            sym = self.p.member(Symbol("class", cls), attr)
            if sym is not None and sym.kind == "function" and sym.name in self.p.functions:
                out.append(sym.name)
            out.extend(self._subclass_members(cls, attr))
        return list(dict.fromkeys(out))

    def _module_sees(self, module: str) -> frozenset[str]:
        """The dotted targets a module's imports bind (`from sqlparse import sql` -> `sqlparse.sql`)."""
        found = self._module_imports.get(module)
        if found is None:
            facts = self.p.modules.get(module)
            targets = (import_target(imp, facts) for imp in facts.imports) if facts is not None else ()
            found = self._module_imports[module] = frozenset(t[1] for t in targets if t is not None)
        return found

    def _edge(
        self, rec: CallRecord, target: str, kind: str, confidence: str, cands: tuple[str, ...] = ()
    ) -> None:
        rec.edges.append(CallEdge(rec.caller, target, kind, confidence, rec.path, rec.line, cands))


@dataclass(frozen=True, slots=True)
class _Guard:
    """An `if` body where a name passed an isinstance test: its lines, the types' texts."""

    first: int
    last: int
    types: tuple[str, ...]


def _isinstance_guards(text: str) -> dict[str, list[_Guard]]:
    """name -> the `if isinstance(name, T):` bodies of a module (T a class or a tuple of
    them; the test may be one operand of an `and`) in which nothing is stored to name."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, list[_Guard]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not node.body:
            continue
        tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) else [node.test]
        for test in tests:
            if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                    and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name)):
                continue
            name, spec = test.args[0].id, test.args[1]
            elts = spec.elts if isinstance(spec, ast.Tuple) else [spec]
            if not elts or not all(isinstance(e, ast.Name | ast.Attribute) for e in elts):
                continue
            if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                   for stmt in node.body for n in ast.walk(stmt)):
                continue
            last = max(getattr(stmt, "end_lineno", None) or stmt.lineno for stmt in node.body)
            out.setdefault(name, []).append(_Guard(node.body[0].lineno, last, tuple(ast.unparse(e) for e in elts)))
    return out


_UNKNOWN_SLOT = ast.Constant(value=None)  # a literal whose slot cannot be told (`{**a}`, `[*xs]`)


def _literal_slot(node: ast.Dict | ast.List | ast.Tuple, key: Key) -> ast.expr | None:
    """The element of a literal at a constant key: None when it has none (the
    lookup raises), `_UNKNOWN_SLOT` when it cannot be told."""
    kind, k = key
    if isinstance(node, ast.Dict):
        found: ast.expr | None = None
        for kn, v in zip(node.keys, node.values, strict=True):
            if kn is None:
                return _UNKNOWN_SLOT
            if isinstance(kn, ast.Constant) and type(kn.value).__name__ == kind and kn.value == k:
                found = v  # the last one of a repeated key wins
            elif not isinstance(kn, ast.Constant):
                return _UNKNOWN_SLOT
        return found
    if any(isinstance(e, ast.Starred) for e in node.elts) or kind != "int":
        return _UNKNOWN_SLOT
    assert isinstance(k, int)
    return node.elts[k] if -len(node.elts) <= k < len(node.elts) else None


def slot_path_text(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Subscript) and slot_path(node) is not None

