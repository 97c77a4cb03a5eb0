"""Where function values go: an assignment graph solved to a fixed point.

The call resolver types receivers one value at a time; this stage follows the
*callable* values a program passes around, as sets, the way PyCG-style analyses
do. Locations are local names and parameters (per function or lambda), module
variables, class/instance attributes (field-based: one slot per class and
name), return and yield slots of each function, and container slots (one per
container literal, keyed by constant index or key, plus one for unknown keys).
Values are functions (bound or not), lambdas, classes, containers and generators.

Constraints come from the index's facts: assignments and stores, `for` targets,
returns / yields, call sites (arguments to parameters, `*args` / `**kwargs`
containers, defaults), decorators (the decorated name holds what the decorator
returns), container mutation (`d[k] = f`, `lst.append(f)`, `d.update(...)`) and
higher-order builtins (`map`, `filter`, `sorted(key=)`, `functools.partial`).
A worklist re-runs a constraint only when a location it read grew, so the
solution is the least fixed point. Instances are not tracked here: where a
receiver's type matters the resolver's own inference answers (annotations,
constructor assignments), and this stage only adds what flows.

Flow-insensitive within a function: `x = f1; x(); x = f2; x()` reaches both at
both sites (sound; a site-precise answer would need an SSA form the facts lack).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from analyzer.index.models import CallSite, Flow, ModuleFacts
from analyzer.resolve.annotations import annotation_types
from analyzer.resolve.exprs import dotted_name
from analyzer.resolve.infer import Ctx, Inferrer
from analyzer.resolve.models import Value, no_builtin_attribute
from analyzer.resolve.project import BUILTIN_NAMES, MODULE_SCOPE, FuncDef, Project, Symbol
from analyzer.resolve.reaching import passed_reaching_bindings, return_site
from analyzer.resolve.suffixes import (
    as_fstring,
    bound_once,
    guarded_values,
    lowered,
    split_fstring,
    strings_of,
    type_suffix,
)

Loc = tuple[str, ...]
_ANY = "?"  # container slot written with a key that is not a constant
_ALL = "*"  # every element of a container
_MAX_DEPTH = 10
# Projects above this many modules skip the flow stage unless ATLAS_CALLGRAPH_FLOW=always:
# on vLLM (2,700 modules) it costs ~12 s of CPU, past the graphs' time budget.
FLOW_MODULE_LIMIT = 1500


def flow_enabled(modules: int) -> bool:
    mode = os.environ.get("ATLAS_CALLGRAPH_FLOW", "auto")
    if mode == "always":
        return True
    if mode == "never":
        return False
    return modules <= FLOW_MODULE_LIMIT
_EMPTY: frozenset[Value] = frozenset()
# Builtins whose result iterates over the elements of their arguments: the
# result is modelled as the argument containers themselves (aliasing, sound).
_PASS_THROUGH = frozenset(
    ["list", "tuple", "set", "frozenset", "sorted", "reversed", "iter", "enumerate", "zip", "filter", "itertools.chain", "itertools.islice", "itertools.cycle", "copy.copy", "copy.deepcopy"]
)
# Those that exhaust their argument at once, making a new container of its elements:
# a generator passed to one is spent there (its value is marked `_MATERIALISED`).
_MATERIALISING = frozenset(["list", "tuple", "set", "frozenset", "sorted"])
_MATERIALISED = "materialised"
# (callable position, iterable position) of builtins that call their argument.
_CALLS_ARG = {
    "builtins.map": 0,
    "builtins.filter": 0,
    "functools.reduce": 0,
    "itertools.starmap": 0,
    "itertools.filterfalse": 0,
    "itertools.takewhile": 0,
    "itertools.dropwhile": 0,
}
_KEY_FUNCS = frozenset({"builtins.sorted", "builtins.min", "builtins.max", "heapq.nsmallest", "heapq.nlargest"})
_PARTIAL = frozenset({"functools.partial", "functools.partialmethod"})
_ELEMENT_METHODS = frozenset({"get", "pop", "setdefault", "popitem", "popleft", "__getitem__", "__next__"})
_ALIAS_METHODS = frozenset({"values", "items", "copy", "keys", "__iter__"})
_CONTAINER_WRITES = ("append", "add", "appendleft", "insert", "setdefault", "extend", "update", "extendleft")
_CONTAINER_METHODS = frozenset(
    {*_CONTAINER_WRITES, "get", "pop", "popitem", "popleft", "values", "items", "copy", "keys", "__getitem__"}
)
_STORE_METHODS = {"append": 0, "add": 0, "appendleft": 0, "insert": 1, "setdefault": 1}
_EXTEND_METHODS = frozenset({"extend", "update", "extendleft"})
_TRACKED = frozenset({"function", "lambda", "class", "container", "generator", "mapped"})
# The values a rebound local handed on gives per site (`FlowGraph._handed_on`).
_PER_SITE = frozenset({"function", "lambda", "generator"})
_VIAS = frozenset({"raw", "partial", "local", "materialised"})  # the via kinds that change what a call means here


@dataclass(slots=True)
class LambdaDef:
    module: str
    scope: str  # where the lambda expression sits
    qualname: str  # `f.<lambda1>`
    line: int
    node: ast.Lambda

    @property
    def name(self) -> str:
        return f"{self.module}.{self.qualname}"


@dataclass(slots=True)
class _Signature:
    positional: list[str]
    keyword: set[str]
    var_positional: str | None
    var_keyword: str | None
    defaults: list[tuple[str, str | ast.expr]] = field(default_factory=list)
    all: set[str] = field(default_factory=set)


def _norm(node: ast.AST) -> str:
    return ast.unparse(node)


class FlowGraph:
    """Solve once per project (`solve()`), then ask `values(...)` at call sites."""

    def __init__(
        self,
        project: Project,
        inferrer: Inferrer,
        *,
        enabled: bool = True,
        source: Any = None,
        implementers: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.p = project
        self.enabled = enabled
        # Protocol class -> the project classes implementing it (calls.CallResolver.implementer_classes)
        self.implementers = implementers if implementers is not None else (lambda cls: [])
        # Function bodies (calls.SourceSegments), for guards around a getattr dispatch; None: not read.
        self.source = source
        self._line = 0  # the source line of the statement being evaluated (0: not known)
        self._suffix_memo: dict[tuple[str, str, int, str], frozenset[str] | None] = {}
        self.infer = inferrer
        self.pts: dict[Loc, set[Value]] = {}
        self._interned: dict[Value, Value] = {}
        self._deps: dict[Loc, set[int]] = {}
        self._constraints: list[tuple[str, ModuleFacts, object]] = []
        self._current = -1
        self._changed: list[Loc] = []
        self.runs = 0  # constraint evaluations of the solve
        self.lambdas: dict[str, LambdaDef] = {}
        self._lambda_by_text: dict[tuple[str, str, str], list[str]] = {}
        self._locals: dict[tuple[str, str], set[str]] = {}  # (module, scope) -> bound names
        self._generators: set[str] = set()
        self._sigs: dict[str, _Signature | None] = {}
        self._decorated: set[str] = set()
        self._keys: dict[str, set[str]] = {}  # container -> constant keys written
        self._slice_boxes: set[str] = set()
        self._lengths: dict[str, int] = {}  # list / tuple literal -> its length (no `*xs` in it)
        # Dicts (literals, `dict(...)`, `defaultdict(...)`): iterating one yields its keys, which
        # are not modelled, so a `for` over it yields nothing; `.values()` / `.items()` are views
        # (`via="view"`) whose iteration yields the values.
        self._mappings: set[str] = set()
        self._const_names: dict[tuple[str, str], str | None] = {}  # (module, name) -> the constant key it holds
        self._fields: dict[str, list[str]] = {}
        self._relevant: dict[str, frozenset[str]] = {}  # function -> parameters that reach a call
        self._plans: dict[tuple[str, str, str], tuple[tuple[Loc, ...], frozenset[Value]]] = {}
        self._receivers: dict[tuple[str, str, int], Value | None] = {}  # dataclass -> its fields, in `__init__` order
        # function -> parameters it returns as they came (`return fn`): a call's
        # result is then that call's argument, not every argument of every call.
        self._passthrough: dict[str, list[str]] = {}
        self._returned_names: dict[str, set[str]] = {}
        self._loop_target = False  # writing a loop's target: objects read out of a container may go there
        # The call whose arguments are being bound, (line, column): a local rebound in its
        # function and passed there gives only the bindings that reach the call (`_handed_on`).
        self._site_key: tuple[int, int] | None = None
        self._rebinds: dict[str, dict[tuple[str, str], dict[int, str] | None]] = {}  # module -> (scope, name) -> line -> value
        self._passed: dict[tuple[str, str, str], dict[tuple[int, int], set[int]] | None] = {}
        # Parameters a `for` iterates: the objects callers pass are followed there (their
        # `__iter__` runs), from every call this stage sees, through a name or a value.
        self._iterated_params: set[Loc] = set()
        self._receiver_params: set[Loc] = set()  # (a subset: see `_collect_receiver_params`)
        self._open_receivers: set[Loc] = set()  # ... that some caller passes an unknown object
        if enabled:
            self._collect()
        else:
            self._collect_lambdas()
        inferrer.forget_name_plans()  # lambda parameters hide outer names: plans made before are stale

    # -- facts -> constraints ------------------------------------------------

    def _collect(self) -> None:
        p, inferrer = self.p, self.infer
        self._fn_names = frozenset(
            {fd.fact.name for fd in p.functions.values()} | {cd.fact.name for cd in p.classes.values()}
        )
        self._returners: frozenset[str] = frozenset()
        self._attr_words = self._attribute_words()
        self._fn_names = self._fn_names | self._attr_words
        sites: list[tuple[ModuleFacts, CallSite]] = []
        self._collect_entered()
        self._collect_caught()
        iterating = self._collect_iterated_params()
        receivers = self._collect_receiver_params()
        iterating |= receivers
        classes = frozenset(cd.fact.name for cd in p.classes.values())
        for facts in p.modules.values():
            m = facts.module
            words = self._scope_words(facts)
            for fl in facts.flows:
                if fl.kind == "lambda" and fl.target:
                    node = p.parser.parse(fl.value)
                    if isinstance(node, ast.Lambda):
                        ld = LambdaDef(m, fl.scope, fl.target, fl.line, node)
                        self.lambdas[ld.name] = ld
                        self._lambda_by_text.setdefault((m, fl.scope, _norm(node)), []).append(ld.name)
                        self._constraints.append(("lambda", facts, ld))
                        a = node.args
                        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
                        inferrer.lambda_params[ld.name] = frozenset(x.arg for x in params)
                        self._relevant[ld.name] = frozenset(x.arg for x in params)
                elif fl.kind in ("yield", "yield_from"):
                    self._generators.add(f"{m}.{fl.scope}")
            for asg in facts.assignments:
                self._locals.setdefault((m, asg.scope), set()).add(asg.target)
            for fl in facts.flows:
                if fl.kind == "return" and fl.value and _HEAD.fullmatch(fl.value):
                    self._returned_names.setdefault(f"{m}:{fl.scope}", set()).add(fl.value)
            for fl in facts.flows:
                if fl.kind == "for" or (fl.kind == "store" and fl.target and fl.target[:1] not in "."):
                    names = list(_target_names(p.parser.parse(fl.target)))
                    for name in names:
                        self._locals.setdefault((m, fl.scope), set()).add(name)
                    if fl.kind == "for" and fl.scope != MODULE_SCOPE and not words.get(fl.scope, set()) & set(names):
                        continue  # loop variables nothing calls or passes on
                if fl.kind not in ("lambda", "raise") and not _inert(fl.value):  # a raise moves no value
                    self._constraints.append(("flow", facts, fl))
            seeds = self._seeds(facts)
            for asg in facts.assignments:
                # A local matters only where something calls it or hands it on,
                # and only if its value can mention a function value at all.
                if (
                    asg.value
                    and not _inert(asg.value)
                    and asg.target in words.get(asg.scope, ())
                    and _mentions(asg.value, seeds(asg.scope), self._fn_names, self._returners)
                ):
                    self._constraints.append(("assign", facts, asg))
            for asg in facts.module_attributes:
                if asg.value and not _inert(asg.value):
                    self._constraints.append(("assign", facts, asg))
            for cls in facts.classes:
                for asg in (*cls.class_attributes, *cls.fields):
                    if asg.value and not _inert(asg.value):
                        self._constraints.append(("classattr", facts, (cls.qualname, asg)))
            sites.extend(
                (facts, site)
                for site in facts.calls
                if (site.args or site.keywords)
                and (
                    any(
                        _mentions(t, seeds(site.scope), self._fn_names, self._returners)
                        for t in (*site.args, *site.keyword_values)
                    )
                    or (
                        # an object made here for a function that iterates its parameter,
                        # called by name or through a value (`pick()(Bag(xs))`)
                        (site.callee.rpartition(".")[2] in iterating or not _HEAD.fullmatch(site.callee.replace(".", "_")))
                        and any(
                            w.group(1) in classes
                            for t in (*site.args, *site.keyword_values)
                            for w in _CALL_WORD.finditer(t)
                        )
                    )
                    or (
                        # any object, for a function whose parameter's methods it calls, called
                        # by name or through a value (`for check in table: check(self, x)`)
                        receivers
                        and (site.callee.rpartition(".")[2] in receivers or self._value_call_site(m, site.scope, site.callee))
                    )
                )
            )
            for fn in facts.functions:
                fd = p.functions.get(f"{m}.{fn.qualname}")
                if fd is None:
                    continue
                self._relevant[fd.name] = frozenset(
                    prm.name for prm in fn.params
                    if prm.name in words.get(fn.qualname, ()) or ("var", m, fn.qualname, prm.name) in self._receiver_params
                )
                if fn.decorators:
                    self._decorated.add(fd.name)
                    self._constraints.append(("decorate", facts, fd.name))
                if any(prm.default for prm in fn.params):
                    self._constraints.append(("defaults", facts, fd.name))
        for fd in p.functions.values():
            # `def f` in a function that also assigns `f` (`f = bool` in an
            # except branch): both bindings reach its uses.
            parent = fd.fact.qualname.rpartition(".")[0]
            if parent and fd.fact.name in self._locals.get((fd.module, parent), ()) and f"{fd.module}.{parent}" in p.functions:
                self.write(("var", fd.module, parent, fd.fact.name), {Value("function", fd.name)})
        for func, returned in self._returned_names.items():
            module, _, qual = func.partition(":")
            for name in sorted(returned):
                self._passes_through(module, qual, name)
        self._call_constraints(sites)

    def _collect_entered(self) -> None:
        """`with cm as x` bindings (the index records them as `x = cm`), for the
        inferrer and the `assign` constraints: x holds what `cm.__enter__()` returns
        (awaited `cm.__aenter__()` for `async with`)."""
        if self.source is None:
            return
        for facts in self.p.modules.values():
            lines: list[str] | None = None
            withs: dict[tuple[int, str], tuple[str, str]] | None = None
            for asg in (*facts.assignments, *facts.module_attributes):
                if not asg.value:
                    continue
                if lines is None:
                    text = self.source.module_text(facts)
                    lines = text.splitlines() if text is not None else []
                head = lines[asg.line - 1].lstrip() if 0 < asg.line <= len(lines) else ""
                if not head.startswith(("with ", "with(", "async ")):
                    continue
                if withs is None:
                    withs = _with_bindings("\n".join(lines))
                node = self.p.parser.parse(asg.value)
                found = withs.get((asg.line, asg.target))
                if node is not None and found is not None and found[0] == _norm(node):
                    self.infer.entered[(facts.module, asg.scope, asg.line, asg.target)] = found[1]

    def _collect_caught(self) -> None:
        """`except T as e` in a function (the index does not record the binding): for
        the inferrer, e holds an instance of T (`except (A, B) as e`: of A or B)."""
        if self.source is None:
            return
        for facts in self.p.modules.values():
            text = self.source.module_text(facts)
            if text is None or _EXCEPT_AS.search(text) is None:
                continue
            for (scope, name), types in _caught_bindings(text).items():
                self.infer.caught[(facts.module, scope, name)] = " | ".join(types)

    def _collect_iterated_params(self) -> frozenset[str]:
        """Unannotated parameters a `for` loop iterates (`def walk(xs): for x in xs`): the objects
        passed to them are followed (see `write`). Returns the functions' names."""
        names: set[str] = set()
        for facts in self.p.modules.values():
            for fl in facts.flows:
                if fl.kind == "for" and fl.value and fl.value.isidentifier():
                    fd = self.p.functions.get(f"{facts.module}.{fl.scope}")
                    # (an annotated one holds what its annotation says, as for the inferrer's callers rule)
                    if fd is not None and any(prm.name == fl.value and not prm.annotation for prm in fd.fact.params):
                        self._iterated_params.add(("var", facts.module, fl.scope, fl.value))
                        names.add(fd.fact.name)
        return frozenset(names)

    def _collect_receiver_params(self) -> frozenset[str]:
        """Unannotated parameters whose methods a function calls, where the function is
        handed around as a value (`def minimum(validator, ...): validator.is_type(...)`,
        kept in a table and called through it): the inferrer's callers rule cannot see
        those calls, so the objects passed there are followed (see `write`) and type the
        receiver (`handed_receiver`). Returns the functions' names."""
        handed = self.infer.value_words()
        names: set[str] = set()
        for facts in self.p.modules.values():
            for site in facts.calls:
                head, _, attr = site.callee.partition(".")
                if not attr or "." in attr or not head.isidentifier():
                    continue
                fd = self.p.functions.get(f"{facts.module}.{site.scope}")
                # (a method may also be called through a receiver this stage does not know)
                if fd is None or fd.fact.name not in handed or fd.fact.decorators or fd.fact.is_method:
                    continue
                fn = fd.fact
                for prm in fn.params:
                    if prm.name != head or prm.annotation or prm.default or prm.kind.startswith("var"):
                        continue
                    loc = ("var", facts.module, site.scope, head)
                    self._iterated_params.add(loc)
                    self._receiver_params.add(loc)
                    names.add(fn.name)
        return frozenset(names)

    def handed_receiver(self, name: str, m: str, scope: str) -> list[Value]:
        """The objects passed to a parameter `_collect_receiver_params` follows, where
        every caller this stage sees passes a known object and none is outside code."""
        loc = ("var", m, scope, name)
        if loc not in self._receiver_params or loc in self._open_receivers:
            return []
        found = self.pts.get(loc, _EMPTY)
        if any(v.kind != "instance" for v in found):
            return []
        return sorted(found, key=lambda v: v.name)

    def _open(self, tmod: str, tqual: str, names: Iterable[str]) -> None:
        """A caller passes these parameters what this stage cannot name: they are not
        typed by their callers (`handed_receiver`)."""
        for name in names:
            loc = ("var", tmod, tqual, name)
            if loc in self._receiver_params:
                self._open_receivers.add(loc)

    def _attribute_words(self) -> frozenset[str]:
        """Attribute names that may hold a function value or a container of them
        (`self.fn = fn`, `self.cache[k] = f`, `self.rules.append(f)` with f a
        function, a parameter, a lambda or another such attribute): reading one
        (`rule.fn`) can hand a function on, as a function's own name does."""
        words: set[str] = set()
        returners: set[str] = set()  # functions that may return one: calling them counts too
        for _ in range(2):  # `self.a = self.b` where b holds one: two steps
            known = self._fn_names | words
            self._returners = frozenset(returners)
            for facts in self.p.modules.values():
                seeds = self._seeds(facts, known)
                for fl in facts.flows:
                    if fl.kind == "store" and fl.target and fl.value and "." in fl.target:
                        root = _ATTR_ROOT.search(fl.target.split("[", 1)[0])
                        if root is not None and _mentions(fl.value, seeds(fl.scope), known, self._returners):
                            words.add(root.group(1))
                for fl in facts.flows:
                    if fl.kind in ("return", "yield") and fl.value and _mentions(fl.value, seeds(fl.scope), known, self._returners):
                        returners.add(fl.scope.rpartition(".")[2])
                for site in facts.calls:
                    head, _, method = site.callee.rpartition(".")
                    if method in _STORE_METHODS or method in _EXTEND_METHODS:
                        root = _ATTR_ROOT.search(head.split("[", 1)[0])
                        if root is not None and any(
                            _mentions(a, seeds(site.scope), known, self._returners) for a in site.args
                        ):
                            words.add(root.group(1))
        self._returners = frozenset(returners)
        return frozenset(words)

    def _collect_lambdas(self) -> None:
        """Without the flow stage, lambdas are still nodes (their calls are theirs)."""
        for facts in self.p.modules.values():
            for fl in facts.flows:
                if fl.kind == "lambda" and fl.target:
                    node = self.p.parser.parse(fl.value)
                    if isinstance(node, ast.Lambda):
                        ld = LambdaDef(facts.module, fl.scope, fl.target, fl.line, node)
                        self.lambdas[ld.name] = ld
                        self._lambda_by_text.setdefault((facts.module, fl.scope, _norm(node)), []).append(ld.name)
                        a = node.args
                        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
                        self.infer.lambda_params[ld.name] = frozenset(x.arg for x in params)

    def _seeds(self, facts: ModuleFacts, fn_names: frozenset[str] | None = None) -> Callable[[str], frozenset[str]]:
        """Per scope, the names through which a function value can enter an
        expression: any project function or class name, the parameters of the
        enclosing functions (but `self` / `cls`), and locals bound from those."""
        m = facts.module
        known = self._fn_names if fn_names is None else fn_names
        memo: dict[str, frozenset[str]] = {}
        # Module variables bound from a function value (a registry, an alias) are seen everywhere.
        module_vars = {
            a.target for a in facts.module_attributes if a.value and _mentions(a.value, frozenset(), known)
        } | {a.target for a in facts.module_attributes if a.value and a.value[:1] in "[{("}
        by_scope: dict[str, list[tuple[str, str]]] = {}
        for asg in facts.assignments:
            if asg.value:
                by_scope.setdefault(asg.scope, []).append((asg.target, asg.value))
        for fl in facts.flows:
            # Loop variables and unpacked names are bindings too (`for name, rule in rules`).
            if fl.kind in ("for", "store") and fl.value and fl.target and fl.target[:1] not in ".":
                for name in _target_names(self.p.parser.parse(fl.target)):
                    by_scope.setdefault(fl.scope, []).append((name, fl.value))

        def seeds(scope: str) -> frozenset[str]:
            found = memo.get(scope)
            if found is not None:
                return found
            names: set[str] = set(module_vars)
            for sc in self.p.chain(scope):
                fd = self.p.functions.get(f"{m}.{sc}")
                if fd is not None:
                    params = fd.fact.params
                    skip = 1 if fd.fact.is_method and not fd.fact.is_staticmethod else 0
                    names.update(prm.name for prm in params[skip:])
                elif f"{m}.{sc}" in self.lambdas:
                    names.update(self.infer.lambda_params.get(f"{m}.{sc}", ()))
            for _ in range(2):  # locals bound from seeds, two steps deep
                for target, value in by_scope.get(scope, ()):
                    if target not in names and _mentions(value, names, known, self._returners):
                        names.add(target)
            memo[scope] = found = frozenset(names)
            return found

        return seeds

    def _call_constraints(self, sites: list[tuple[ModuleFacts, CallSite]]) -> None:
        """Call sites whose arguments may land somewhere that matters: a callee
        named like a project function (or class) with such a parameter, a callee
        held in a variable, a container write or a builtin that calls its argument."""
        names = set(_CONTAINER_WRITES) | {n.rpartition(".")[2] for n in _CALLS_ARG} | {"sorted", "min", "max"}
        for fn, relevant in self._relevant.items():
            if not relevant:
                continue
            fd = self.p.functions.get(fn)
            if fd is None:
                names.add("<lambda>")
                continue
            names.add(fd.fact.name)
            if fd.fact.name in ("__init__", "__call__", "__new__"):
                names.add(fn.rsplit(".", 2)[-2])
        for cd in self.p.classes.values():
            if cd.fact.is_dataclass:
                names.add(cd.fact.name)
        for facts, site in sites:
            callee = site.callee
            last = callee.rpartition(".")[2] if _HEAD.fullmatch(callee.replace(".", "_")) else None
            if last is not None and last not in names:
                head = callee.partition(".")[0]
                if self._receiver_params and self._value_call_site(facts.module, site.scope, callee):
                    pass  # it may call a function whose parameters' callers are counted (`handed_receiver`)
                elif "." in callee or not self._may_be_local(facts.module, site.scope, head):
                    continue
            self._constraints.append(("call", facts, site))

    def _value_call_site(self, m: str, scope: str, callee: str) -> bool:
        """A call that may go through a function value: a computed callee, a name bound
        here or imported under another name, an attribute that may hold a function."""
        if not _HEAD.fullmatch(callee.replace(".", "_")):
            return True
        if "." in callee:
            return callee.rpartition(".")[2] in self._attr_words
        if self._may_be_local(m, scope, callee):
            return True
        target = self.p.scope(m, MODULE_SCOPE).imports.get(callee)
        return target is not None and target.rpartition(".")[2] != callee

    def _may_be_local(self, m: str, scope: str, name: str) -> bool:
        for sc in self.p.chain(scope):
            if sc == MODULE_SCOPE:
                return name in self._locals.get((m, sc), ()) or name in self.p.module_attrs(m)
            if name in self._locals.get((m, sc), ()):
                return True
            sig = self.signature(f"{m}.{sc}")
            if sig is not None and name in sig.all:
                return True
        return False

    def _scope_words(self, facts: ModuleFacts) -> dict[str, set[str]]:
        """Per scope (with its nested scopes), the names something calls or hands
        on: callee heads and the heads of arguments, returns, stores, bindings
        and loops. A parameter or local outside this set cannot reach a call."""
        words: dict[str, set[str]] = {}

        def add(scope: str, text: str | None) -> None:
            if not text:
                return
            if text[0] in "([{":
                found = set(_WORD.findall(text))
            else:
                head = _HEAD.match(text.lstrip("*"))
                if head is None:
                    return
                found = {head.group(0)}
            for sc in self.p.chain(scope):
                words.setdefault(sc, set()).update(found)

        for site in facts.calls:
            callee = site.callee
            dotted = _HEAD.fullmatch(callee.replace(".", "_")) is not None
            # `x.view()` only reads x's attribute: x need not be followed. A bare
            # `fn()`, `make()()`, `d[k]()` or a container method call does.
            if not dotted or "." not in callee or callee.rpartition(".")[2] in _CONTAINER_METHODS:
                add(site.scope, callee)
            for a in site.args:
                add(site.scope, a)
            for v in site.keyword_values:
                add(site.scope, v)
        for fl in facts.flows:
            if fl.kind == "store" and fl.target and "[" in fl.target and fl.target[:1] not in ".([":
                # `alias[k] = f`: the container `alias` names (perhaps another name's) is written
                add(fl.scope, fl.target)
            if fl.kind != "lambda":
                add(fl.scope, fl.value)
            else:
                add(fl.scope, fl.value.partition(":")[2].strip() if fl.value else None)
        for asg in facts.assignments:
            add(asg.scope, asg.value)
        for cls in facts.classes:
            # A class body runs in its enclosing function and reads its names
            # (`def create(validators): class V: TABLE = dict(validators)`).
            for asg in (*cls.class_attributes, *cls.fields):
                add(cls.qualname, asg.value)
        return words

    def solve(self) -> None:
        # Returns and lambdas first, then decorators, bindings and calls: what a
        # name holds is then mostly known before it is copied elsewhere. In waves
        # (every pending constraint once, in that order, then those whose inputs
        # grew): a location fed by many writers is filled by all of them before
        # its readers run again, so a set of n values is not re-read n times.
        order = {"flow": 0, "lambda": 0, "decorate": 1, "defaults": 2, "classattr": 3, "assign": 3, "call": 4}
        constraints = self._constraints
        wave = sorted(range(len(constraints)), key=lambda i: order[constraints[i][0]])
        queued = set(wave)
        while wave:
            grown: list[int] = []
            for cid in wave:
                queued.discard(cid)
                self._current = cid
                self._run(cid)
                self.runs += 1
                for loc in self._changed:
                    for dep in self._deps.get(loc, ()):
                        if dep not in queued:
                            queued.add(dep)
                            grown.append(dep)
                self._changed.clear()
            wave = sorted(grown, key=lambda i: order[constraints[i][0]])
        self._current = -1

    # -- locations -----------------------------------------------------------

    def read(self, loc: Loc) -> set[Value] | frozenset[Value]:
        if self._current >= 0:
            self._deps.setdefault(loc, set()).add(self._current)
        return self.pts.get(loc, _EMPTY)

    def write(self, loc: Loc, values: Iterable[Value]) -> None:
        found = self.pts.get(loc)
        if found is not None and isinstance(values, set | frozenset | list) and found.issuperset(values):
            # Nothing new (the usual case once a location is full; a set only holds values
            # already filtered and normalised below): a C-level check, not a Python loop.
            return
        for v in values:
            if v.kind not in _TRACKED and not (
                v.kind == "instance"
                and (loc[0] == "elt" or (self._loop_target and loc[0] == "var") or loc in self._iterated_params)
            ):
                # Externals and modules are the inferrer's business (`x = x.next` grows them
                # forever); objects only where the inferrer cannot follow them: in a
                # container's slots and the locals read out of one (`for rule in self.rules`).
                continue
            if v.via not in _VIAS:
                v = Value(v.kind, v.name, "local", (), v.bound)
            if found is None:
                found = self.pts[loc] = set()
            if v not in found:
                # One object per distinct value: later set checks of copies then match by
                # identity, not through the dataclass's Python `__eq__`.
                v = self._interned.setdefault(v, v)
                found.add(v)
                if not self._changed or self._changed[-1] != loc:
                    self._changed.append(loc)

    # -- constraints ---------------------------------------------------------

    def _run(self, cid: int) -> None:
        kind, facts, raw = self._constraints[cid]
        item: Any = raw  # its shape depends on kind (see where each kind is appended)
        m = facts.module
        self._line = getattr(item, "line", 0) if kind in ("assign", "flow", "call") else 0
        if kind == "assign":
            asg = item
            node = self.p.parser.parse(asg.value)
            if node is None:
                return
            vals = self.eval(node, m, asg.scope)
            method = self.infer.entered.get((m, asg.scope, asg.line, asg.target))
            if vals and method is not None:
                vals = self._entered(vals, node, m, asg.scope, method)
            if vals:
                self.write(self._name_loc(m, asg.scope, asg.target), vals)
        elif kind == "classattr":
            qual, asg = item
            node = self.p.parser.parse(asg.value)
            if node is not None:
                vals = self.eval(node, m, qual)
                if vals:
                    self.write(("attr", f"{m}.{qual}", asg.target), vals)
                    self.write(("cattr", f"{m}.{qual}", asg.target), vals)
        elif kind == "flow":
            self._flow(facts, item)
        elif kind == "call":
            self._call(facts, item)
        elif kind == "lambda":
            ld: LambdaDef = item
            vals = self.eval(ld.node.body, m, ld.qualname)
            if vals:
                self.write(("ret", ld.name), vals)
            for name, default in self.signature(ld.name).defaults:  # type: ignore[union-attr]
                assert isinstance(default, ast.expr)
                vals = self.eval(default, m, ld.scope)
                if vals:
                    self.write(("var", m, ld.qualname, name), vals)
        elif kind == "decorate":
            self._decorate(item)
        elif kind == "defaults":
            fd = self.p.functions[item]
            scope = fd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
            passed = self.infer.always_passed(fd)
            for prm in fd.fact.params:
                if prm.name in passed:
                    continue
                node = self.p.parser.parse(prm.default)
                if node is not None:
                    vals = self.eval(node, m, scope)
                    if vals:
                        self.write(("var", m, fd.fact.qualname, prm.name), vals)

    def _entered(self, vals: set[Value], node: ast.expr, m: str, scope: str, method: str) -> set[Value]:
        """What `with node as x` binds x to, node's values being `vals`: what each
        instance's project `method` (`__enter__`) returns (see Inferrer.entered_value)."""
        if self.infer.already_entered(node, Ctx(m, scope), 0):
            return vals
        out: set[Value] = set()
        for v in vals:
            enter = self.infer.enter_method(v.name, method) if v.kind == "instance" else None
            out |= {v} if enter is None else set(self.read(("ret", enter)))
        return out

    def _flow(self, facts: ModuleFacts, fl: Flow) -> None:
        m, parser = facts.module, self.p.parser
        node = parser.parse(fl.value)
        if node is None:
            return
        if fl.kind == "return":
            if isinstance(node, ast.Name) and node.id in self._passthrough.get(f"{m}.{fl.scope}", ()):
                return  # `return fn`: each call's result is its own argument (see _handed_back)
            fd = self.p.functions.get(f"{m}.{fl.scope}")
            if fd is not None and fd.fact.is_property:
                getter = self.infer.getter(fd).fact
                if not getter.line <= fl.line <= getter.end_line:
                    return  # a setter's return: Python discards it, reading the property runs the getter
            vals = self._handed_on(node, self.eval(node, m, fl.scope), m, fl.scope, return_site(fl.line))
            if vals:
                self.write(("ret", f"{m}.{fl.scope}"), vals)
        elif fl.kind == "yield":
            vals = self.eval(node, m, fl.scope)
            if vals:
                self.write(("gen", f"{m}.{fl.scope}"), vals)
        elif fl.kind == "yield_from":
            vals = self.elements(self.eval(node, m, fl.scope), iterate=True)
            if vals:
                self.write(("gen", f"{m}.{fl.scope}"), vals)
        elif fl.kind == "for":
            target = parser.parse(fl.target)
            if target is not None:
                self._loop_target = True
                try:
                    self._assign_target(
                        target, self.elements(self.eval(node, m, fl.scope), iterate=True), m, fl.scope, fl.line
                    )
                finally:
                    self._loop_target = False
        elif fl.kind == "store":
            target = parser.parse(fl.target)
            if target is None:
                return
            if (
                isinstance(target, ast.Tuple | ast.List)
                and isinstance(node, ast.Tuple | ast.List)
                and len(target.elts) == len(node.elts)
                and not any(isinstance(e, ast.Starred) for e in target.elts)
            ):
                # `a, b = f, g`: names are bound by the assignment facts; the rest here.
                for t, v in zip(target.elts, node.elts, strict=True):
                    if not isinstance(t, ast.Name):
                        self._assign_target(t, self.eval(v, m, fl.scope), m, fl.scope, fl.line)
                return
            vals = self.eval(node, m, fl.scope)
            if isinstance(target, ast.Tuple | ast.List):
                self._unpack(target, vals, m, fl.scope, fl.line)
            elif vals:
                self._assign_target(target, vals, m, fl.scope, fl.line)

    def _assign_target(self, target: ast.expr, vals: Iterable[Value], m: str, scope: str, line: int) -> None:
        vals = set(vals)
        if isinstance(target, ast.Name):
            if vals:
                self.write(self._name_loc(m, scope, target.id), vals)
        elif isinstance(target, ast.Tuple | ast.List):
            self._unpack(target, vals, m, scope, line)
        elif isinstance(target, ast.Starred):
            box = Value("container", f"{m}:{scope}:{line}:*{_norm(target)}")
            self.write(("elt", box.name, _ALL), vals)
            self._assign_target(target.value, {box}, m, scope, line)
        elif isinstance(target, ast.Subscript) and vals:
            key = self.key_of(target.slice, m, scope)
            for c in self.eval(target.value, m, scope):
                if c.kind == "container":
                    self._store(c.name, key, vals)
        elif isinstance(target, ast.Attribute) and vals:
            for loc in self._attr_locs(target, m, scope):
                self.write(loc, vals)

    def _unpack(self, target: ast.Tuple | ast.List, vals: Iterable[Value], m: str, scope: str, line: int) -> None:
        vals = set(vals)
        n = len(target.elts)
        star = next((i for i, el in enumerate(target.elts) if isinstance(el, ast.Starred)), None)
        for i, el in enumerate(target.elts):
            if star is not None and i >= star:
                # `first, *rest, last = xs`: `rest` is a new list of the slots between, and
                # `last` counts from the end; both known only where xs's length is.
                if i == star:
                    box = Value("container", f"{m}:{scope}:{line}:{_norm(el)}")
                    self._assign_target(el.value, {box}, m, scope, line)  # type: ignore[attr-defined]
                for v in vals:
                    count = self._lengths.get(v.name) if v.kind == "container" else None
                    if count is None:
                        got = self.elements({v}, unpack=True)
                        if i == star:
                            self._store(box.name, None, got)
                        else:
                            self._assign_target(el, got, m, scope, line)
                        continue
                    self.read(("elt", v.name, _ALL))  # re-run as the source grows
                    if i == star:
                        for k in range(star, count - (n - star - 1)):
                            self._store(box.name, str(k - star), self.elements({v}, key=str(k)))
                    else:
                        self._assign_target(el, self.elements({v}, key=str(count - (n - i)), unpack=True), m, scope, line)
            else:
                self._assign_target(el, self.elements(vals, key=str(i), unpack=True), m, scope, line)

    def _store(self, container: str, key: str | None, vals: Iterable[Value]) -> None:
        if not isinstance(vals, set | frozenset | list):
            vals = list(vals)
        if not vals:
            return
        if key is not None:
            self._keys.setdefault(container, set()).add(key)
        self.write(("elt", container, key if key is not None else _ANY), vals)
        self.write(("elt", container, _ALL), vals)

    def _attr_locs(self, target: ast.Attribute, m: str, scope: str) -> list[Loc]:
        out: list[Loc] = []
        for base in self._receiver(target.value, m, scope):
            if base.kind in ("instance", "class"):
                out.append(("attr", base.name, target.attr))
                if base.kind == "class":
                    # (a store on the class: what its instances read as a method, see `_class_bound`)
                    out.append(("cattr", base.name, target.attr))
            elif base.kind == "module":
                out.append(("mod", base.name, target.attr))
        return out

    def _passes_through(self, m: str, scope: str, name: str) -> bool:
        """`return name` where name is a parameter never rebound in the function
        (nor `self`): the function hands its argument back."""
        func = f"{m}.{scope}"
        fd = self.p.functions.get(func)
        if fd is None or name in self._locals.get((m, scope), ()):
            return False
        params = fd.fact.params
        skip = 1 if fd.fact.is_method and not fd.fact.is_staticmethod else 0
        if not any(prm.name == name and prm.kind in ("positional_only", "positional", "keyword_only")
                   for prm in params[skip:]):
            return False
        found = self._passthrough.setdefault(func, [])
        if name not in found:
            found.append(name)
        return True

    def _handed_back(self, c: Value, node: ast.Call, m: str, scope: str, d: int) -> set[Value]:
        """What a call of a pass-through function returns: the arguments it passed
        for those parameters (or their defaults)."""
        names = self._passthrough.get(c.name)
        if not names:
            return set()
        sig = self.signature(c.name)
        if sig is None:
            return set()
        positional = sig.positional[1 if c.bound else 0:]
        out: set[Value] = set()
        for name in names:
            arg: ast.expr | None = None
            starred = False
            for i, a in enumerate(node.args):
                if isinstance(a, ast.Starred):
                    starred = True
                    break
                if i < len(positional) and positional[i] == name:
                    arg = a
            for kw in node.keywords:
                if kw.arg == name:
                    arg = kw.value
                elif kw.arg is None:
                    starred = True
            if arg is not None:
                out |= self.eval(arg, m, scope, d)
            elif starred:
                out |= set(self.read(("var", *self._split(c.name), name)))  # unknown: any binding
            else:
                fd = self.p.functions[c.name]
                prm = next((x for x in fd.fact.params if x.name == name), None)
                if prm is not None and prm.default:
                    home = fd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
                    out |= self.eval(self.p.parser.parse(prm.default), fd.module, home, d)
        return out

    def _call(self, facts: ModuleFacts, site: CallSite) -> None:
        m, scope, parser = facts.module, site.scope, self.p.parser
        func = parser.parse(site.callee)
        if func is None:
            return
        callees = self.eval(func, m, scope)
        if isinstance(func, ast.Attribute):
            self._container_method(func, site, m, scope)
        if not callees:
            return
        args = [parser.parse(a) for a in site.args]
        kwargs = list(zip(site.keywords, (parser.parse(v) for v in site.keyword_values), strict=False))
        if isinstance(func, ast.Attribute) and _is_super(func.value):
            # `super().__init__(tokenizer=self._tokenize)`: only what the object itself holds
            # (`self.x`: its own methods and fields) is handed on. A parameter forwarded
            # (`super().register(name, func)`) or a class named here lands in the one method
            # every subclass's call shares, so each caller's values reach all callers' calls
            # (measured in cg29: mistune and Pygments lost executed-site precision).
            # A generator this method makes itself is the exception: it belongs to this call
            # alone (`tokens = self._recovery_tokenize(tokens)` then `super().parse(tokens)`:
            # the base class's loop runs its body, parso's parser). What arrives in a
            # parameter is still not handed on (each caller's would reach every caller's
            # loop, measured in cg31: parso's diff parser's generator reached `BaseParser.parse`
            # past the wrapping that always runs there). Starred arguments: not looked into.
            args = [None if isinstance(a, ast.Starred) else a for a in args]
            only: dict[int | str, frozenset[Value]] = {
                i: self._made_here(a, m, scope) for i, a in enumerate(args) if a is not None and not _self_attribute(a)
            }
            only |= {k: self._made_here(a, m, scope) for k, a in kwargs if a is not None and not _self_attribute(a)}
        else:
            only = {}
        self._site_key = (site.line, site.col)
        try:
            for callee in callees:
                self._bind(callee, args, kwargs, m, scope, only)
        finally:
            self._site_key = None

    def _bind(
        self,
        callee: Value,
        args: list[ast.expr | None],
        kwargs: list[tuple[str, ast.expr | None]],
        m: str,
        scope: str,
        only: dict[int | str, frozenset[Value]] | None = None,
    ) -> None:
        """Hand the call's arguments to `callee`'s parameters; those in `only` (positions,
        keywords) hand on no more than the values it names for them (compared with `via`
        "symbol": how a value was reached does not matter there)."""
        only = only or {}
        if callee.kind == "external":
            if self._receiver_params:  # outside code may call a function handed to it with anything
                for arg in (*args, *(a for _, a in kwargs)):
                    for v in self.eval(arg.value if isinstance(arg, ast.Starred) else arg, m, scope) if arg is not None else ():
                        if v.kind == "function" and v.name in self.p.functions:
                            fmod, fqual = self._split(v.name)
                            self._open(fmod, fqual, (prm.name for prm in self.p.functions[v.name].fact.params))
            self._higher_order(callee.name, args, kwargs, m, scope)
            return
        target, skip = self._code_of(callee)
        if target is None:
            if callee.kind == "class":
                self._bind_fields(callee.name, args, kwargs, m, scope)
            return
        sig = self.signature(target)
        if sig is None:
            return
        tmod, tqual = self._split(target)
        if callee.via == "partial":
            return  # its leading arguments are unknown here
        positional = sig.positional[skip:]
        relevant = self._relevant.get(target, frozenset())
        if not relevant:
            return
        for i, arg in enumerate(args):
            if arg is None:
                continue
            lands = positional[i] if i < len(positional) else sig.var_positional
            if not isinstance(arg, ast.Starred) and lands not in relevant:
                continue  # the parameter it lands in never reaches a call
            if isinstance(arg, ast.Starred):
                vals = self.elements(self.eval(arg.value, m, scope))
                self._open(tmod, tqual, positional[i:])
                for name in positional[i:]:
                    self.write(("var", tmod, tqual, name), vals)
                if sig.var_positional:
                    self._star_param(tmod, tqual, sig.var_positional, vals)
                break
            vals = _only(self._handed_on(arg, self.eval(arg, m, scope), m, scope, self._site_key), only.get(i))
            if i in only and not vals:
                continue
            if i < len(positional) and not any(v.kind == "instance" for v in vals):
                self._open(tmod, tqual, positional[i : i + 1])
            if not vals:
                continue
            if i < len(positional):
                self.write(("var", tmod, tqual, positional[i]), vals)
            elif sig.var_positional:
                self._star_param(tmod, tqual, sig.var_positional, vals)
        for key, arg in kwargs:
            if arg is None or (key != "**" and key not in relevant and sig.var_keyword not in relevant):
                continue
            vals = self.eval(arg, m, scope)
            if key != "**":
                vals = self._handed_on(arg, vals, m, scope, self._site_key)
            vals = _only(vals, only.get(key))
            if key in only and not vals:
                continue
            if key == "**":
                vals = self.elements(vals)
                self._open(tmod, tqual, (*positional, *sig.keyword))
                for name in (*positional, *sig.keyword):
                    self.write(("var", tmod, tqual, name), vals)
                continue
            if not any(v.kind == "instance" for v in vals):
                self._open(tmod, tqual, (key,))
            if not vals:
                continue
            if key in positional or key in sig.keyword:
                self.write(("var", tmod, tqual, key), vals)
            elif sig.var_keyword:
                self._star_param(tmod, tqual, sig.var_keyword, vals, key)

    def _local_bindings(self, m: str, scope: str, name: str) -> dict[int, str] | None:
        """The plain assignments of `name` in `scope` (line -> value text), or None where
        one has no value text or two share a line."""
        rebinds = self._rebinds.get(m)
        if rebinds is None:
            rebinds = self._rebinds[m] = {}
            for asg in self.p.modules[m].assignments:
                slot = (asg.scope, asg.target)
                if slot in rebinds and rebinds[slot] is None:
                    continue
                known = rebinds.setdefault(slot, {})
                if known is None or not asg.value or asg.line in known:  # two bindings on one line: not told apart
                    rebinds[slot] = None
                else:
                    known[asg.line] = asg.value
        return rebinds.get((scope, name))

    def _made_here(self, node: ast.expr, m: str, scope: str) -> frozenset[Value]:
        """The generators `node` holds that this function makes itself: a call's result
        (`super().parse(self._wrap(tokens))`), or for a local name what its own plain
        assignments make (`tokens = self._wrap(tokens)`), not what arrives in a parameter."""
        if isinstance(node, ast.Name):
            if scope == MODULE_SCOPE:
                return frozenset()
            made: set[Value] = set()
            saved = self._line
            try:
                for line, text in (self._local_bindings(m, scope, node.id) or {}).items():
                    self._line = line
                    value = self.p.parser.parse(text)
                    made |= {v for v in self.eval(value, m, scope) if v.kind == "generator"} if value is not None else set()
            finally:
                self._line = saved
            return frozenset(v.without_alts().with_via("symbol") for v in made)
        return frozenset(v.without_alts().with_via("symbol") for v in self.eval(node, m, scope) if v.kind == "generator")

    def _handed_on(
        self, node: ast.expr | None, vals: set[Value], m: str, scope: str, key: tuple[int, int] | None
    ) -> set[Value]:
        """A local name of a function, bound there by more than one plain assignment (or a
        parameter rebound by one), handed on whole at `key` (a call passing it, or `return
        name`, reaching.return_site): of its values (`vals`, every binding's), the functions,
        lambdas and generators that no assignment reaching `key` makes are dropped (`source =
        wrap_a(source); source = wrap_b(source)`: wrap_b is given wrap_a's generator only).
        Where a parameter's value, a loop target, an unpacking or any other binding may reach
        `key`, or the body cannot be read, `vals` as they are."""
        if key is None or not isinstance(node, ast.Name) or self.source is None or scope == MODULE_SCOPE or not vals:
            return vals
        if not any(v.kind in _PER_SITE for v in vals):
            return vals
        fd = self.p.functions.get(f"{m}.{scope}")
        if fd is None:
            return vals
        name = node.id
        bindings = self._local_bindings(m, scope, name)
        params = {prm.name for prm in fd.fact.params}
        if not bindings or (len(bindings) < 2 and name not in params):
            return vals
        cache = (m, scope, name)
        if cache not in self._passed:
            text = self.source.segment(self.p.modules[m], fd)
            self._passed[cache] = None if text is None else passed_reaching_bindings(text, fd.fact.line, name, params)
        sites = self._passed[cache]
        reaching = sites.get(key) if sites is not None else None
        if not reaching or any(line not in bindings for line in reaching):
            return vals
        made: set[tuple[str, str, bool]] = set()
        saved = self._line
        try:
            for line in reaching:
                self._line = line
                value = self.p.parser.parse(bindings[line])
                if value is None:
                    return vals
                made |= {(v.kind, v.name, v.bound) for v in self.eval(value, m, scope)}
        finally:
            self._line = saved
        return {v for v in vals if v.kind not in _PER_SITE or (v.kind, v.name, v.bound) in made}

    def _bind_fields(
        self, cls: str, args: list[ast.expr | None], kwargs: list[tuple[str, ast.expr | None]], m: str, scope: str
    ) -> None:
        """A dataclass's generated `__init__`: arguments go to its fields, in order."""
        names = self._fields.get(cls)
        if names is None:
            names = []
            for owner in reversed(self.p.hierarchy.mro(cls)):
                cd = self.p.classes.get(owner)
                if cd is not None and cd.fact.is_dataclass:
                    names += [a.target for a in cd.fact.fields if a.target not in names]
            self._fields[cls] = names
        if not names:
            return
        for i, arg in enumerate(args):
            if arg is None or isinstance(arg, ast.Starred) or i >= len(names):
                break
            vals = self.eval(arg, m, scope)
            if vals:
                self.write(("attr", cls, names[i]), vals)
        for key, arg in kwargs:
            if arg is not None and key in names:
                vals = self.eval(arg, m, scope)
                if vals:
                    self.write(("attr", cls, key), vals)

    def _star_param(self, tmod: str, tqual: str, name: str, vals: Iterable[Value], key: str | None = None) -> None:
        box = f"{tmod}.{tqual}:{name}"
        self.write(("var", tmod, tqual, name), {Value("container", box)})
        self._store(box, key, vals)

    def _higher_order(
        self, name: str, args: list[ast.expr | None], kwargs: list[tuple[str, ast.expr | None]], m: str, scope: str
    ) -> None:
        """`map(f, xs)`: f's first parameter receives the elements of xs."""
        pos = _CALLS_ARG.get(name)
        if name == "functools.reduce":
            self._reduce(args, m, scope)
        elif pos is not None and len(args) > pos + 1 and args[pos] is not None and args[pos + 1] is not None:
            funcs = self.eval(args[pos], m, scope)
            elems = self.elements(self.eval(args[pos + 1], m, scope))
            for f in funcs:
                self._bind_first(f, elems)
        if name in _KEY_FUNCS:
            for key, arg in kwargs:
                if key == "key" and arg is not None and args and args[0] is not None:
                    elems = self.elements(self.eval(args[0], m, scope))
                    for f in self.eval(arg, m, scope):
                        self._bind_first(f, elems)

    def _reduce(self, args: list[ast.expr | None], m: str, scope: str) -> None:
        """`reduce(f, xs[, init])` calls `f(acc, x)`: x is each element; acc is the
        initial value (the first element when there is none), then f's result."""
        if len(args) < 2 or args[0] is None or args[1] is None:
            return
        elems = self.elements(self.eval(args[1], m, scope))
        init = args[2] if len(args) > 2 else None
        start = set(self.eval(init, m, scope)) if init is not None else set(elems)
        for f in self.eval(args[0], m, scope):
            target, skip = self._code_of(f)
            sig = self.signature(target) if target else None
            if sig is None or target is None or len(sig.positional) < skip + 2:
                continue
            tmod, tqual = self._split(target)
            self.write(("var", tmod, tqual, sig.positional[skip]), start | set(self.read(("ret", target))))
            self.write(("var", tmod, tqual, sig.positional[skip + 1]), elems)

    def _bind_first(self, f: Value, elems: Iterable[Value]) -> None:
        target, skip = self._code_of(f)
        sig = self.signature(target) if target else None
        if sig is not None and len(sig.positional) > skip and target is not None:
            tmod, tqual = self._split(target)
            self.write(("var", tmod, tqual, sig.positional[skip]), elems)

    def _container_method(self, func: ast.Attribute, site: CallSite, m: str, scope: str) -> None:
        """`lst.append(f)`, `d.update({...})`, `d.setdefault(k, f)`: writes into a container."""
        attr = func.attr
        if attr not in _STORE_METHODS and attr not in _EXTEND_METHODS:
            return
        containers = [c for c in self.eval(func.value, m, scope) if c.kind == "container"]
        if not containers:
            return
        parser = self.p.parser
        if attr in _STORE_METHODS:
            i = _STORE_METHODS[attr]
            if len(site.args) <= i:
                return
            vals = self.eval(parser.parse(site.args[i]), m, scope)
            key = None
            if attr == "setdefault":
                kn = parser.parse(site.args[0])
                key = _const_key(kn) if kn is not None else None
            for c in containers:
                self._store(c.name, key, vals)
            return
        for text in site.args:
            node = parser.parse(text)
            if node is None:
                continue
            for src in self.eval(node, m, scope):
                if src.kind == "container":
                    for c in containers:
                        if c.name == src.name:
                            continue  # `d.update(d)`: its slots are its own already
                        for loc_key, slot_vals in self._slots(src.name):
                            self._store(c.name, None if loc_key in (_ANY, _ALL) else loc_key, slot_vals)
        for key, text in zip(site.keywords, site.keyword_values, strict=False):
            node = parser.parse(text)
            if node is not None and key != "**":
                vals = self.eval(node, m, scope)
                for c in containers:
                    self._store(c.name, key, vals)

    def _slots(self, container: str) -> Iterator[tuple[str, set[Value] | frozenset[Value]]]:
        keys = self._keys.get(container, ())
        for key in (*keys, _ANY):
            yield key, self.read(("elt", container, key))

    def _decorate(self, func: str) -> None:
        fd = self.p.functions[func]
        m = fd.module
        scope = fd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
        vals: set[Value] = {Value("function", func, "raw")}
        for text in reversed(fd.fact.decorators):
            node = self.p.parser.parse(text)
            if node is None:
                continue
            out: set[Value] = set()
            for dec in self.eval(node, m, scope) or {Value("external", "?")}:
                target, skip = self._code_of(dec)
                if target is None or dec.kind == "class":
                    out |= vals
                    continue
                sig = self.signature(target)
                if sig is not None and len(sig.positional) > skip:
                    tmod, tqual = self._split(target)
                    self.write(("var", tmod, tqual, sig.positional[skip]), vals)
                    if sig.positional[skip] in self._passthrough.get(target, ()):
                        out |= vals  # `return fn`: this application hands back this function
                out |= set(self.read(("ret", target)))
            # An external or class decorator keeps the function; a project one
            # holds what it returns (nothing known yet: callers fall back to `func`).
            vals = out
        self.write(("dec", func), vals)

    # -- evaluation ----------------------------------------------------------

    def eval(self, node: ast.expr | None, m: str, scope: str, depth: int = 0) -> set[Value]:
        """The callable values `node` may evaluate to (empty: none known)."""
        if node is None or depth > _MAX_DEPTH:
            return set()
        d = depth + 1
        if isinstance(node, ast.Name):
            return self.resolve_decorated(self._name(node.id, m, scope, d))
        if isinstance(node, ast.Attribute):
            return self._attribute(node, m, scope, d)
        if isinstance(node, ast.Call):
            return self._call_result(node, m, scope, d)
        if isinstance(node, ast.Lambda):
            names = self._lambda_by_text.get((m, scope, _norm(node)), ())
            return {Value("lambda", n) for n in names}
        if isinstance(node, ast.Subscript):
            base = self.eval(node.value, m, scope, d)
            classes = {v for v in base if v.kind == "class"}  # `Ruler[T]`: a generic class is the class
            if isinstance(node.slice, ast.Slice):
                return classes | self._sliced(node, base)
            return classes | self.elements(base, key=self.key_of(node.slice, m, scope))
        if isinstance(node, ast.Dict | ast.List | ast.Tuple | ast.Set):
            return self._literal(node, m, scope, d)
        if isinstance(node, ast.IfExp):
            return self.eval(node.body, m, scope, d) | self.eval(node.orelse, m, scope, d)
        if isinstance(node, ast.BoolOp):
            out: set[Value] = set()
            for v in node.values:
                out |= self.eval(v, m, scope, d)
            return out
        if isinstance(node, ast.NamedExpr):
            return self.eval(node.value, m, scope, d)
        if isinstance(node, ast.Await):
            return self.eval(node.value, m, scope, d)
        if isinstance(node, ast.Starred):
            return self.eval(node.value, m, scope, d)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            vals = self.eval(node.elt, m, scope, d)
            if not vals:
                return set()
            box = Value("container", f"{m}:{scope}:{_norm(node)}")
            self._store(box.name, None, vals)
            return {box}
        if isinstance(node, ast.DictComp):
            # `{name: getattr(self, "parse_" + name) for name in rules}` (a rule table):
            # a new dict whose values, under keys not known here, are what the value
            # expression may be.
            vals = self.eval(node.value, m, scope, d)
            if not vals:
                return set()
            box = Value("container", f"{m}:{scope}:{_norm(node)}")
            self._mappings.add(box.name)
            self._store(box.name, None, vals)
            return {box}
        return set()

    def key_of(self, node: ast.expr, m: str, scope: str) -> str | None:
        """The slot a subscript's index names: a constant, or a module-level name
        bound once, to a constant, and never rebound (`KEY = 1`, imported too)."""
        key = _const_key(node)
        if key is not None or not isinstance(node, ast.Name):
            return key
        for sc in self.p.chain(scope):
            if sc != MODULE_SCOPE and self._local_here(m, sc, node.id):
                return None  # a function's own name shadows the module's
        if (m, node.id) not in self._const_names:
            self._const_names[(m, node.id)] = self._constant_of(self.p.lookup_in_module(m, node.id))
        return self._const_names[(m, node.id)]

    def _local_here(self, m: str, scope: str, name: str) -> bool:
        sig = self.signature(f"{m}.{scope}")
        return (sig is not None and name in sig.all) or name in self._locals.get((m, scope), ())

    def _constant_of(self, sym: Symbol | None) -> str | None:
        if sym is None or sym.kind != "variable":
            return None
        module, _, var = sym.name.rpartition(".")
        asgs = self.p.module_attrs(module).get(var, [])
        if len(asgs) != 1 or not asgs[0].value or var in self._locals.get((module, MODULE_SCOPE), ()):
            return None  # bound more than once (a loop, an unpacking, a second assignment)
        return _const_key(self.p.parser.parse(asgs[0].value))

    def _sliced(self, node: ast.Subscript, base: set[Value]) -> set[Value]:
        """`xs[a:b]` is a new list: slot i holds xs's slot a + i where the bounds are
        constant and xs's length is known, else any of xs's elements."""
        sl = node.slice
        assert isinstance(sl, ast.Slice)
        out: set[Value] = set()
        for v in base:
            if v.kind != "container":
                continue
            count = self._lengths.get(v.name)
            bounds = [_int_const(b) if b is not None else dflt for b, dflt in ((sl.lower, 0), (sl.upper, count))]
            lo, hi = bounds
            if count is None or sl.step is not None or lo is None or hi is None or v.name in self._slice_boxes:
                out.add(v)  # its elements, positions unknown (`xs = xs[1:]` in a loop makes no new list each round)
                continue
            box = f"{v.name}[{_norm(sl)}]"
            self._slice_boxes.add(box)  # (a slice of it aliases it: no chain of new lists)
            out.add(Value("container", box))
            self.read(("elt", v.name, _ALL))  # re-run as the source grows
            lo, hi = (b + count if b < 0 else b for b in (lo, hi))
            for k in range(max(lo, 0), min(hi, count)):
                self._store(box, str(k - max(lo, 0)), self.elements({v}, key=str(k)))
            if lo < hi:
                self._lengths[box] = min(hi, count) - max(lo, 0)
        return out

    def _literal(self, node: ast.Dict | ast.List | ast.Tuple | ast.Set, m: str, scope: str, d: int) -> set[Value]:
        box = f"{m}:{scope}:{_norm(node)}"
        found = False
        if isinstance(node, ast.Dict):
            self._mappings.add(box)
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:  # `{**other}`
                    for src in self.eval(v, m, scope, d):
                        if src.kind == "container":
                            for key, vals in self._slots(src.name):
                                self._store(box, None if key in (_ANY, _ALL) else key, vals)
                                found = found or bool(vals)
                    continue
                vals = self.eval(v, m, scope, d)
                if vals:
                    self._store(box, self.key_of(k, m, scope), vals)
                    found = True
        else:
            starred = False  # past a `*xs`, positions are unknown
            for i, e in enumerate(node.elts):
                if isinstance(e, ast.Starred):
                    vals = self.elements(self.eval(e.value, m, scope, d))
                    starred = True
                else:
                    vals = self.eval(e, m, scope, d)
                slot = str(i) if not starred and not isinstance(node, ast.Set) else None
                if vals:
                    self._store(box, slot, vals)
                    found = True
            if not starred and not isinstance(node, ast.Set):
                self._lengths[box] = len(node.elts)
        # A container that holds no callable yet may still receive some (`d = {}; d[k] = f`,
        # `slots = [None]; slots[0] = f`): a list or dict is one whatever it holds.
        return {Value("container", box)} if found or isinstance(node, ast.List | ast.Dict) else set()

    def _name(self, name: str, m: str, scope: str, d: int) -> set[Value]:
        key = (m, scope, name)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._name_plan(name, m, scope)
        locs, static = plan
        for loc in locs:
            vals = self.read(loc)
            if vals:
                return set(vals)
        return set(static)

    def _name_plan(self, name: str, m: str, scope: str) -> tuple[tuple[Loc, ...], frozenset[Value]]:
        """Where a name's value comes from, worked out once per scope: the
        locations to read, first non-empty wins, then what it is statically."""
        p = self.p
        locs: list[Loc] = []
        for index, sc in enumerate(p.chain(scope)):
            if sc == MODULE_SCOPE:
                break
            qual = f"{m}.{sc}"
            is_code = qual in p.functions or qual in self.lambdas
            if not is_code:
                if index == 0 and qual in p.classes:
                    sym = p.member(Symbol("class", qual), name)
                    if sym is not None and sym.kind in ("function", "class") and sym.name == f"{qual}.{name}":
                        return tuple(locs), frozenset({Value(sym.kind, sym.name)})
                    locs.append(("attr", qual, name))
                continue
            sig = self.signature(qual)
            if (sig is not None and name in sig.all) or name in self._locals.get((m, sc), ()):
                locs.append(("var", m, sc, name))
                v = self.infer.eval(ast.Name(id=name, ctx=ast.Load()), Ctx(m, sc))
                ok = v is not None and v.kind in ("function", "class", "instance", "external", "module")
                return tuple(locs), frozenset(v.each() if ok else ())  # type: ignore[union-attr]
            nested = f"{qual}.{name}"
            if nested in p.functions:
                return tuple(locs), frozenset({Value("function", nested)})
            if nested in p.classes:
                return tuple(locs), frozenset({Value("class", nested)})
            target = p.scope(m, sc).imports.get(name)
            if target is not None:
                return self._symbol_plan(p.lookup_import(target), locs)
        if name in p.module_attrs(m) or name in self._locals.get((m, MODULE_SCOPE), ()):
            locs.append(("mod", m, name))
        sym = p.lookup_in_module(m, name)
        if sym is not None:
            return self._symbol_plan(sym, locs)
        if name in BUILTIN_NAMES:
            return tuple(locs), frozenset({Value("external", f"builtins.{name}")})
        return tuple(locs), frozenset()

    def _symbol_plan(self, sym: Symbol | None, locs: list[Loc]) -> tuple[tuple[Loc, ...], frozenset[Value]]:
        if sym is None:
            return tuple(locs), frozenset()
        if sym.kind == "variable":
            module, _, var = sym.name.rpartition(".")
            if ("mod", module, var) not in locs:
                locs.append(("mod", module, var))
            v = self.infer.symbol_value(sym)
            return tuple(locs), frozenset(v.each() if v is not None else ())
        return tuple(locs), frozenset({Value(sym.kind, sym.name)})

    def _symbol(self, sym: Symbol | None) -> set[Value]:
        locs, static = self._symbol_plan(sym, [])
        for loc in locs:
            vals = self.read(loc)
            if vals:
                return set(vals)
        return set(static)

    def resolve_decorated(self, vals: Iterable[Value]) -> set[Value]:
        """A decorated function's name holds what its decorators returned."""
        out: set[Value] = set()
        for v in vals:
            if v.kind == "function" and v.name in self._decorated and v.via != "raw":
                dec = self.pts.get(("dec", v.name))
                if self._current >= 0:
                    self.read(("dec", v.name))
                if dec:
                    out |= {x if x.name != v.name else v.with_via("raw") for x in dec}
                    continue
            out.add(v)
        return out

    def _attribute(self, node: ast.Attribute, m: str, scope: str, d: int) -> set[Value]:
        p = self.p
        out: set[Value] = set()
        for base in self._receiver(node.value, m, scope, d):
            if base.kind == "module":
                sym = p.lookup_in_module(base.name, node.attr)
                out |= self._symbol(sym)
                if sym is None or sym.kind == "variable":
                    out |= set(self.read(("mod", base.name, node.attr)))
            elif base.kind in ("instance", "class"):
                sym = p.member(Symbol("class", base.name), node.attr)
                if sym is not None and sym.kind == "function":
                    fd = p.functions[sym.name]
                    if fd.fact.is_property and base.kind == "instance":
                        out |= set(self.read(("ret", sym.name)))
                    else:
                        bound = base.kind == "instance" and not fd.fact.is_staticmethod
                        bound = bound or fd.fact.is_classmethod
                        out.add(Value("function", sym.name, "attribute", bound=bound))
                elif sym is not None and sym.kind != "variable":
                    out.add(Value(sym.kind, sym.name))
                else:  # an attribute or a field: what was stored in it, on the class or a base
                    # (a Protocol's object is one of a class implementing it: what that class holds)
                    for cls in (base.name, *self.implementers(base.name)):
                        for owner in p.hierarchy.mro(cls):
                            if owner in p.classes:
                                held = set(self.read(("attr", owner, node.attr)))
                                if base.kind == "instance":
                                    held = self._class_bound(held, set(self.read(("cattr", owner, node.attr))))
                                out |= held
            elif base.kind == "super":
                # `super().m`: the one method the MRO finds after the class, bound to self, so
                # the arguments `_call` hands on land in that method's parameters and its
                # result flows back (as for `self.m`; no other class can answer).
                found = self.infer.super_member(base.name, node.attr)
                sup = p.functions.get(found.name) if found is not None and found.kind == "function" else None
                if sup is not None and sup.fact.is_property:
                    out |= set(self.read(("ret", sup.name)))
                elif sup is not None:
                    out.add(Value("function", sup.name, "attribute", bound=not sup.fact.is_staticmethod))
            elif base.kind == "external" and not no_builtin_attribute(base.name, node.attr):
                out.add(Value("external", f"{base.name}.{node.attr}"))
        return self.resolve_decorated(out)

    def _class_bound(self, held: set[Value], on_class: set[Value]) -> set[Value]:
        """An attribute read through an instance: a function the class itself holds
        (bound in its body, `_parse = _parse_plain`, or stored on it,
        `Element._parse = Element._parse_cached`) is bound to the instance, as
        Python binds any function found on the class (not a static or class
        method); what was stored on an instance (`self._parse = breaker`) is not."""
        out = set(held)
        for v in on_class:
            if v.kind != "function" or v.bound or v.alts:
                continue
            fd = self.p.functions.get(v.name)
            if fd is None or fd.fact.is_staticmethod or fd.fact.is_classmethod or fd.fact.is_property:
                continue
            out.discard(v)
            out.add(Value(v.kind, v.name, v.via, v.items, True, v.alts))
        return out

    def _receiver(self, node: ast.expr, m: str, scope: str, d: int = 0) -> set[Value]:
        """Values of an attribute's base: this stage's sets, else the inferrer's type."""
        vals = {v for v in self.eval(node, m, scope, d) if v.kind != "container"}
        if vals:
            return vals
        key = (m, scope, id(node))  # parsed nodes are memoised per text, so ids are stable
        if key not in self._receivers:
            self._receivers[key] = self.infer.eval(node, Ctx(m, scope))
        v = self._receivers[key]
        return set(v.each()) if v is not None else set()

    def _call_result(self, node: ast.Call, m: str, scope: str, d: int) -> set[Value]:
        func = node.func
        callees = self.eval(func, m, scope, d)
        out: set[Value] = set()
        if isinstance(func, ast.Attribute) and func.attr in _ELEMENT_METHODS | _ALIAS_METHODS:
            base = {c for c in self.eval(func.value, m, scope, d) if c.kind in ("container", "generator")}
            if base:
                if func.attr in _ALIAS_METHODS:
                    for b in base:
                        if b.name not in self._mappings or func.attr == "copy":
                            out.add(b)
                        elif func.attr in ("values", "items"):
                            out.add(b.with_via("view"))  # (`keys()`, `__iter__()`: the keys)
                else:
                    key = self.key_of(node.args[0], m, scope) if node.args and func.attr != "setdefault" else None
                    out |= set(self.elements(base, key=key))
        for c in self.resolve_decorated(callees):
            if c.kind == "function":
                if c.via == "partial":
                    out.add(c)
                elif c.name in self._generators:
                    out.add(Value("generator", c.name))
                else:
                    out |= set(self.read(("ret", c.name)))
                    if c.name in self._passthrough:
                        out |= self._handed_back(c, node, m, scope, d)
            elif c.kind == "lambda":
                out |= set(self.read(("ret", c.name)))
            elif c.kind == "class":
                out.add(Value("instance", c.name))
            elif c.kind == "instance":
                call = self.p.member(Symbol("class", c.name), "__call__")
                if call is not None and call.kind == "function":
                    out |= set(self.read(("ret", call.name)))
            elif c.kind == "external":
                out |= self._external_result(c.name, node, m, scope, d)
        return out

    def _external_result(self, name: str, node: ast.Call, m: str, scope: str, d: int) -> set[Value]:
        if name in _PARTIAL and node.args:
            return {
                Value(v.kind, v.name, "partial", bound=v.bound)
                for v in self.eval(node.args[0], m, scope, d)
                if v.kind in ("function", "lambda")
            }
        short = name.removeprefix("builtins.")
        if short in _PASS_THROUGH or name in _PASS_THROUGH:
            out: set[Value] = set()
            for arg in node.args:
                out |= {v for v in self.eval(arg, m, scope, d) if v.kind in ("container", "generator")}
            if short in _MATERIALISING:
                # `tuple(gen())` runs the generator to its end here: the result holds what it
                # yielded, and iterating the result later resumes no generator body.
                out = {v.with_via(_MATERIALISED) if v.kind == "generator" else v for v in out}
            return out
        if name == "builtins.dict":
            return self._dict_made(node, m, scope, d)
        if name == "collections.defaultdict":
            return self._defaultdict_made(node, m, scope, d)
        if name == "builtins.map" and node.args:
            return {Value("mapped", v.name) for v in self.eval(node.args[0], m, scope, d) if v.kind in ("function", "lambda")}
        if name == "builtins.next" and node.args:
            return set(self.elements(self.eval(node.args[0], m, scope, d)))
        if name == "functools.update_wrapper" and node.args:
            return {v for v in self.eval(node.args[0], m, scope, d) if v.kind in ("function", "lambda")}  # returns the wrapper
        if name == "builtins.staticmethod" and node.args:
            # `staticmethod(f)` called is f (a decorator's `return staticmethod(wrapper)`)
            return {v for v in self.eval(node.args[0], m, scope, d) if v.kind in ("function", "lambda")}
        if name == "builtins.getattr" and len(node.args) >= 2:
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str) and attr.value.isidentifier():
                return self._attribute(ast.Attribute(value=node.args[0], attr=attr.value, ctx=ast.Load()), m, scope, d)
            # A name computed at run time may be missing: the default comes back then.
            default = self.eval(node.args[2], m, scope, d) if len(node.args) >= 3 else set()
            return self._computed_getattr(node.args[0], attr, m, scope, d) | default
        return set()

    def _dict_made(self, node: ast.Call, m: str, scope: str, d: int, box: str | None = None) -> set[Value]:
        """`dict(mapping, k=v)` is a new dict: the mapping's values under their keys
        (from a list or tuple of pairs, each pair's second item, key unknown), then
        each keyword's value under its name."""
        box = box or f"{m}:{scope}:{_norm(node)}"
        self._mappings.add(box)
        sources: list[set[Value]] = [self.eval(a, m, scope, d) for a in node.args[:1]]
        for kw in node.keywords:
            if kw.arg is None:  # `dict(**other)`
                sources.append(self.eval(kw.value, m, scope, d))
            else:
                self._store(box, kw.arg, self.eval(kw.value, m, scope, d))
        for src in (v for vals in sources for v in vals if v.kind == "container"):
            self.read(("elt", src.name, _ALL))  # re-run as the source gains keys
            if src.name in self._lengths:
                self._store(box, None, self.elements(self.elements({src}), key="1"))
                continue
            for key, vals in self._slots(src.name):
                self._store(box, None if key in (_ANY, _ALL) else key, vals)
        return {Value("container", box)}

    def _defaultdict_made(self, node: ast.Call, m: str, scope: str, d: int) -> set[Value]:
        """`defaultdict(factory, mapping, k=v)`: a dict (the rest as `dict(...)`)
        whose missing keys the factory fills, so reading `d[k]` may call it
        (`missing_factories`) and any key may hold what it returns."""
        box = f"{m}:{scope}:{_norm(node)}"
        self._dict_made(ast.Call(func=node.func, args=node.args[1:], keywords=node.keywords), m, scope, d, box)
        if not node.args:
            return {Value("container", box)}
        factory = node.args[0]
        found = {v for v in self.eval(factory, m, scope, d) if v.kind in ("function", "lambda", "class")}
        if not found and isinstance(factory, ast.Attribute) and factory.attr == "__class__":
            # `defaultdict(self.__class__)`: the receiver's class
            found = {Value("class", v.name) for v in self._receiver(factory.value, m, scope, d) if v.kind == "instance"}
        self.write(("factory", box), found)
        made: set[Value] = set()
        for f in found:
            made |= {Value("instance", f.name)} if f.kind == "class" else set(self.read(("ret", f.name)))
        self._store(box, None, made)
        return {Value("container", box)}

    def missing_factories(self, node: ast.expr, m: str, scope: str) -> list[Value]:
        """The factories of the defaultdicts `node` may be: `node[k]` calls one
        when k is missing."""
        if not self.enabled:
            return []
        found: set[Value] = set()
        for v in self.eval(node, m, scope):
            if v.kind == "container":
                found |= self.pts.get(("factory", v.name), _EMPTY)
        return sorted(found, key=lambda v: (v.kind, v.name))

    def _computed_getattr(self, obj: ast.expr, attr: ast.expr, m: str, scope: str, d: int) -> set[Value]:
        """`getattr(obj, f"visit_{x}")` (or `"visit_{}".format(x)`, `"visit_%s" % x`), also
        through a local bound once to it and folded to lower case (`func_name =
        "_process_{cls}".format(cls=...)`, `getattr(self, func_name.lower(), ...)`): the
        prefix's method family."""
        inner = lowered(attr)
        spelt = as_fstring(attr if inner is None else inner)
        aliased = False
        if isinstance(spelt, ast.Name) and self.source is not None:
            fd = self.p.functions.get(f"{m}.{scope}")
            text = self.source.segment(self.p.modules[m], fd) if fd is not None else None
            value = bound_once(text, spelt.id) if text is not None else None
            if value is None:
                return set()
            spelt, aliased = as_fstring(value), True
        prefix = _fstring_prefix(spelt)
        if prefix is None:
            return set()
        # A guard is looked for around the getattr's own line, so only a name spelt there uses it.
        only = self._suffix_names(spelt, m, scope) if not aliased else self._aliased_suffix_names(spelt, m, scope)
        if inner is None:
            return self._dispatch(obj, prefix, m, scope, d, only)
        folded = None if only is None else frozenset(n.lower() for n in only)
        return {
            v for v in self._dispatch(obj, prefix.lower(), m, scope, d, folded)
            if (meth := v.name.rpartition(".")[2]) == meth.lower()
        }

    def _aliased_suffix_names(self, attr: ast.expr, m: str, scope: str) -> frozenset[str] | None:
        """`_suffix_names` for an f-string bound to a local: the type-name rule only."""
        parts = split_fstring(attr)
        if parts is None:
            return None
        prefix, part, tail = parts
        values = self._type_names(part, m, scope)
        return None if values is None else frozenset(prefix + v + tail for v in values)

    def _dispatch(
        self, obj: ast.expr, prefix: str, m: str, scope: str, d: int, only: frozenset[str] | None = None
    ) -> set[Value]:
        """`getattr(self, f"visit_{kind}")`: any method named with that prefix on
        the object's class, its bases, or (`self` may be a subclass) below it;
        `only`: the names the f-string can spell there (suffixes.py), when known."""
        out: set[Value] = set()
        hierarchy = self.p.hierarchy
        for base in self._receiver(obj, m, scope, d):
            if base.kind not in ("instance", "class"):
                continue
            owners = {*hierarchy.mro(base.name), *hierarchy.descendants(base.name)}
            for method, names in self.p.methods_by_name.items():
                if not method.startswith(prefix) or (only is not None and method not in only):
                    continue
                for fn in names:
                    if fn.rpartition(".")[0] in owners:
                        fd = self.p.functions[fn]
                        bound = (base.kind == "instance" and not fd.fact.is_staticmethod) or fd.fact.is_classmethod
                        out.add(Value("function", fn, "attribute", bound=bound))
        return out

    def _suffix_names(self, attr: ast.expr, m: str, scope: str) -> frozenset[str] | None:
        """The attribute names `getattr(obj, attr)` can ask for, when a fact of the
        code bounds the f-string's variable part (suffixes.py); None: any name
        with the prefix."""
        parts = split_fstring(attr)
        if parts is None:
            return None
        prefix, part, tail = parts
        key = (m, scope, self._line, ast.unparse(attr))
        if key in self._suffix_memo:
            return self._suffix_memo[key]
        values = self._type_names(part, m, scope)
        if values is None:
            values = self._guarded(part, m, scope)
        found = self._suffix_memo[key] = None if values is None else frozenset(prefix + v + tail for v in values)
        return found

    def _type_names(self, part: ast.expr, m: str, scope: str) -> frozenset[str] | None:
        """`type(x).__name__` with x a parameter the function never rebinds, whose
        annotation names project classes only (`Node`, `A | B`, `Optional[Node]`):
        the names of those classes and their subclasses (and `NoneType`). None
        otherwise: an unannotated parameter's callers are not a contract (code
        outside the project may pass anything), and `Node | list` may be a list."""
        obj = type_suffix(part)
        fd = self.p.functions.get(f"{m}.{scope}")
        if not isinstance(obj, ast.Name) or fd is None or obj.id in self._locals.get((m, scope), ()):
            return None
        prm = next((x for x in fd.fact.params if x.name == obj.id), None)
        if prm is None or not prm.annotation or prm.kind in ("var_positional", "var_keyword"):
            return None
        refs = annotation_types(prm.annotation, self.p.parser)
        parent = fd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
        names: set[str] = {"NoneType"}
        for ref in refs:
            sym = self.p.resolve_in_scope(m, parent, ref.name)
            if ref.is_class or sym is None or sym.kind != "class" or sym.name not in self.p.classes:
                return None
            for cls in (sym.name, *self.p.hierarchy.descendants(sym.name)):
                names.add(cls.rpartition(".")[2])
        return frozenset(names) if refs else None

    def _guarded(self, part: ast.expr, m: str, scope: str) -> frozenset[str] | None:
        """The strings a membership guard around this line's getattr allows."""
        fd = self.p.functions.get(f"{m}.{scope}")
        if self.source is None or not self._line or fd is None:
            return None
        text = self.source.segment(self.p.modules[m], fd)
        if text is None:
            return None
        return guarded_values(
            text, fd.fact.line, self._line, part,
            constant=lambda name: self._string_constant(m, name),
            no_return=lambda method: self._never_returns(fd, method),
        )

    def _string_constant(self, m: str, name: str) -> frozenset[str] | None:
        """The strings a module constant bound once to a literal of strings holds."""
        sym = self.p.lookup_in_module(m, name)
        if sym is None or sym.kind != "variable":
            return None
        module, _, var = sym.name.rpartition(".")
        bindings = self.p.module_attrs(module).get(var, []) if module in self.p.modules else []
        if len(bindings) != 1 or not bindings[0].value:
            return None
        node = self.p.parser.parse(bindings[0].value)
        return strings_of(node) if node is not None else None

    def _never_returns(self, fd: FuncDef, method: str) -> bool:
        """`self.method()` in `fd` never returns: the method and every override
        below `fd`'s class are annotated `-> NoReturn` (or `Never`)."""
        cls = fd.name.rpartition(".")[0]
        if cls not in self.p.classes:
            return False
        sym = self.p.member(Symbol("class", cls), method)
        if sym is None or sym.kind != "function":
            return False
        found = [sym.name, *(f"{sub}.{method}" for sub in self.p.hierarchy.descendants(cls))]
        for name in found:
            other = self.p.functions.get(name)
            if other is None:
                continue
            returns = (other.fact.returns or "").strip("'\"")
            if returns.rpartition(".")[2] not in ("NoReturn", "Never"):
                return False
        return True

    # -- elements ------------------------------------------------------------

    def elements(
        self, vals: Iterable[Value], key: str | None = None, *, unpack: bool = False, iterate: bool = False
    ) -> set[Value]:
        """What iterating (or indexing with `key`) over `vals` yields. `iterate`: a `for` or
        `yield from` over them, where a dict yields its keys (unmodelled), not its values."""
        out: set[Value] = set()
        for v in vals:
            if v.kind == "container":
                if iterate and key is None and v.name in self._mappings and v.via != "view":
                    continue
                if key is None:
                    out |= set(self.read(("elt", v.name, _ALL)))
                else:
                    out |= set(self.read(("elt", v.name, key)))
                    out |= set(self.read(("elt", v.name, _ANY)))
            elif v.kind == "generator":
                out |= set(self.read(("gen", v.name)))
            elif v.kind == "mapped":
                out |= set(self.read(("ret", v.name)))
            elif v.kind == "instance":
                out |= self._iterated(v.name)
            elif unpack:
                out.add(v)  # `for k, f in d.items()`: pairs are not modelled, their parts are
        return out

    def _iterated(self, cls: str) -> set[Value]:
        p = self.p
        it = p.member(Symbol("class", cls), "__iter__")
        if it is None or it.kind != "function":
            return set()
        if it.name in self._generators:
            return set(self.read(("gen", it.name)))
        out: set[Value] = set()
        for obj in self.read(("ret", it.name)) or {Value("instance", cls)}:
            if obj.kind == "instance":
                nxt = p.member(Symbol("class", obj.name), "__next__")
                if nxt is not None and nxt.kind == "function":
                    out |= set(self.read(("ret", nxt.name)))
            else:
                out |= self.elements({obj})
        return out

    def generator_bodies(self, node: ast.expr, m: str, scope: str) -> list[str]:
        """Generator functions whose generator `node` may be: their bodies run
        as the generator is iterated, not where it was made."""
        found = self.eval(node, m, scope) if self.enabled else set()
        return sorted({v.name for v in found if v.kind == "generator" and v.via != _MATERIALISED and v.name in self.p.functions})

    def returned_generators(self, func: str) -> list[str]:
        """Generator functions whose generators `func` returns (`return self.descend(...)`)."""
        found = self.pts.get(("ret", func), _EMPTY) if self.enabled else _EMPTY
        return sorted({v.name for v in found if v.kind == "generator" and v.via != _MATERIALISED and v.name in self.p.functions})

    def instances(self, node: ast.expr, m: str, scope: str, text: str | None = None) -> list[Value]:
        """Instances of project classes `node` (source `text`, when known) may be:
        this stage's sets, else the inferrer's type."""
        vals = {v for v in self.eval(node, m, scope) if v.kind == "instance"} if self.enabled else set()
        # An iterated parameter holds what this stage saw passed, and what the inferrer's
        # callers rule finds (objects this stage does not follow: `walk(self.items)`).
        if not vals or (isinstance(node, ast.Name) and self._name_loc(m, scope, node.id) in self._iterated_params):
            v = self.infer.eval_text(text, Ctx(m, scope)) if text is not None else self.infer.eval(node, Ctx(m, scope))
            if v is not None and v.kind == "instance":
                vals |= set(v.each())
        return sorted(vals, key=lambda v: v.name)

    def iteration_calls(self, node: ast.expr, m: str, scope: str, text: str | None = None) -> list[str]:
        """`for x in obj` (`obj` the source `text`, when known): the `__iter__` /
        `__next__` methods that run, and the body of a generator `obj` may be."""
        out = self.generator_bodies(node, m, scope)
        for v in self.instances(node, m, scope, text):
            it = self.p.member(Symbol("class", v.name), "__iter__")
            if it is None or it.kind != "function":
                continue
            out.append(it.name)
            if it.name in self._generators:
                continue
            for obj in self.pts.get(("ret", it.name), ()) or {Value("instance", v.name)}:
                if obj.kind == "instance":
                    nxt = self.p.member(Symbol("class", obj.name), "__next__")
                    if nxt is not None and nxt.kind == "function":
                        out.append(nxt.name)
        return out

    # -- code objects ----------------------------------------------------------

    def _code_of(self, v: Value) -> tuple[str | None, int]:
        """(function or lambda whose parameters receive the arguments, parameters to skip)."""
        if v.kind == "lambda":
            return v.name, 0
        if v.kind == "function" and v.name in self.p.functions:
            return v.name, 1 if v.bound else 0
        if v.kind == "class":
            init = self.p.member(Symbol("class", v.name), "__init__")
            if init is not None and init.kind == "function":
                return init.name, 1
        if v.kind == "instance":
            call = self.p.member(Symbol("class", v.name), "__call__")
            if call is not None and call.kind == "function":
                return call.name, 1
        return None, 0

    def _split(self, target: str) -> tuple[str, str]:
        fd = self.p.functions.get(target)
        if fd is not None:
            return fd.module, fd.fact.qualname
        ld = self.lambdas[target]
        return ld.module, ld.qualname

    def signature(self, target: str) -> _Signature | None:
        found = self._sigs.get(target, False)
        if found is not False:
            return found  # type: ignore[return-value]
        sig: _Signature | None = None
        fd = self.p.functions.get(target)
        if fd is not None:
            sig = _Signature([], set(), None, None)
            for prm in fd.fact.params:
                if prm.kind in ("positional_only", "positional"):
                    sig.positional.append(prm.name)
                elif prm.kind == "keyword_only":
                    sig.keyword.add(prm.name)
                elif prm.kind == "var_positional":
                    sig.var_positional = prm.name
                elif prm.kind == "var_keyword":
                    sig.var_keyword = prm.name
        elif target in self.lambdas:
            a = self.lambdas[target].node.args
            sig = _Signature(
                [x.arg for x in (*a.posonlyargs, *a.args)],
                {x.arg for x in a.kwonlyargs},
                a.vararg.arg if a.vararg else None,
                a.kwarg.arg if a.kwarg else None,
            )
            pos = [*a.posonlyargs, *a.args]
            sig.defaults = [(x.arg, dflt) for x, dflt in zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True)]
            sig.defaults += [(x.arg, dflt) for x, dflt in zip(a.kwonlyargs, a.kw_defaults, strict=True) if dflt is not None]
        if sig is not None:
            sig.all = {*sig.positional, *sig.keyword, *(n for n in (sig.var_positional, sig.var_keyword) if n)}
        self._sigs[target] = sig
        return sig

    def _name_loc(self, m: str, scope: str, name: str) -> Loc:
        if scope == MODULE_SCOPE:
            return ("mod", m, name)
        qual = f"{m}.{scope}"
        if qual in self.p.classes:
            return ("attr", qual, name)
        return ("var", m, scope, name)

    # -- queries after solve() ---------------------------------------------------

    def callees(self, node: ast.expr, m: str, scope: str, line: int = 0) -> set[Value]:
        """`line`: where the expression is (a guard above a getattr there can narrow it)."""
        if not self.enabled:
            return {v for v in self.eval(node, m, scope) if v.kind == "lambda"} if isinstance(node, ast.Lambda) else set()
        self._line = line
        try:
            return self.resolve_decorated(self.eval(node, m, scope))
        finally:
            self._line = 0

    def static_callees(self, node: ast.expr, m: str, scope: str) -> set[Value]:
        """What an expression names without following any flow (decorators)."""
        return self.eval(node, m, scope)

    def accepts(self, v: Value, n_pos: int, keywords: Iterable[str]) -> bool:
        """Whether the function `v` holds can take a call with `n_pos` positional
        arguments and these keywords (no `*`/`**` at the site). A value a call
        cannot bind would raise `TypeError`: it is not that call's callee (one
        list or field may hold functions of several arities)."""
        if v.via == "partial":
            return True  # its leading arguments are bound elsewhere
        target, skip = self._code_of(v)
        sig = self.signature(target) if target is not None else None
        if sig is None or target is None:
            return True
        positional = sig.positional[skip:]
        if n_pos > len(positional) and sig.var_positional is None:
            return False
        keywords = set(keywords)
        if any(k not in positional[n_pos:] and k not in sig.keyword for k in keywords) and sig.var_keyword is None:
            return False
        defaults = self._defaulted(target)
        missing = [x for x in positional[n_pos:] if x not in keywords and x not in defaults]
        missing += [x for x in sig.keyword if x not in keywords and x not in defaults]
        return not missing

    def _defaulted(self, target: str) -> set[str]:
        fd = self.p.functions.get(target)
        if fd is not None:
            return {prm.name for prm in fd.fact.params if prm.default}
        sig = self.signature(target)
        return {name for name, _ in sig.defaults} if sig is not None else set()

    def is_generator(self, func: str) -> bool:
        return func in self._generators

    def decorated_values(self, func: str) -> set[Value] | None:
        if not self.enabled or func not in self._decorated:
            return None
        return set(self.pts.get(("dec", func), ()))

    def has_locals(self, m: str, scope: str, name: str) -> bool:
        for sc in self.p.chain(scope):
            if sc == MODULE_SCOPE:
                return name in self._locals.get((m, sc), ())
            sig = self.signature(f"{m}.{sc}")
            if (sig is not None and name in sig.all) or name in self._locals.get((m, sc), ()):
                return True
        return False


_WORD = re.compile(r"[A-Za-z_]\w*")
_HEAD = re.compile(r"[A-Za-z_]\w*")
_INERT_START = frozenset("0123456789'\"-~")


_CALL_WORD = re.compile(r"([A-Za-z_]\w*)\s*\(")
_ATTR_ROOT = re.compile(r"\.\s*([A-Za-z_]\w*)\s*$")  # the last attribute of `self.cache`
# A (dotted) name read as a value: not called, not a keyword argument's name (`dtype=`).
_VALUE_WORD = re.compile(r"(?<![.\w])([A-Za-z_]\w*+)(?:\.[A-Za-z_]\w*+)*+(?!\s*(?:\(|=(?!=)))")
_VIEW_CALL = re.compile(r"(?<![.\w])([A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)*?)\.(?:items|values|copy)\s*\(")
_OPERATOR = re.compile(r"[-+*/%@<>|&^~]|==|!=|\bin\b|\bis\b")
_LOOSE = re.compile(r",|\b(?:if|lambda|or|and|await)\b|:=")
_BRACKETED = re.compile(r"[(\[{'\"]")


def _with_bindings(source: str) -> dict[tuple[int, str], tuple[str, str]]:
    """(line of the `with`, name) -> (the context expression, normalised, and the
    method whose result `as` binds) of each `with expr as name` item in a module."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    return {
        (node.lineno, item.optional_vars.id): (
            _norm(item.context_expr), "__aenter__" if isinstance(node, ast.AsyncWith) else "__enter__"
        )
        for node in ast.walk(tree)
        if isinstance(node, ast.With | ast.AsyncWith)
        for item in node.items
        if isinstance(item.optional_vars, ast.Name)
    }


_EXCEPT_AS = re.compile(r"^[ \t]*except\b[^\n]*\bas[ \t]+[A-Za-z_]\w*[ \t]*:", re.M)


def _caught_bindings(source: str) -> dict[tuple[str, str], list[str]]:
    """(function scope, name) -> the classes, as dotted names, of each `except T as
    name` / `except (A, B) as name` of a module's functions (not `except*`, which
    binds a group; a handler whose types are not all dotted names is left out)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    out: dict[tuple[str, str], list[str]] = {}

    def visit(node: ast.AST, scope: str | None, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = child.name if scope is None else f"{scope}.{child.name}"
                visit(child, inner, not isinstance(child, ast.ClassDef))
                continue
            if isinstance(child, ast.Try) and in_function and scope is not None:
                for h in child.handlers:
                    if h.name is None or h.type is None:
                        continue
                    elts = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
                    names = [dotted_name(e) for e in elts]
                    if names and all(names):
                        have = out.setdefault((scope, h.name), [])
                        have += [n for n in names if n is not None and n not in have]
            visit(child, scope, in_function)

    visit(tree, None, False)
    return out


def _only(vals: set[Value], allowed: frozenset[Value] | None) -> set[Value]:
    """`vals` less those `allowed` does not name (compared with `via` "symbol"); all of them
    where there is no such limit."""
    return vals if allowed is None else {v for v in vals if v.without_alts().with_via("symbol") in allowed}


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _self_attribute(node: ast.expr | None) -> bool:
    """`self.x`: a method or field of the object a `super()` call is made on."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _operator_only(text: str) -> bool:
    """Text with no bracket or string that is an arithmetic, comparison or unary
    expression (`a + b`, `n < m`, `-x`): `FlowGraph.eval` reads nothing of it,
    its value is never a function. Bracketed text is not looked into (a scan
    costs more than the constraints it would save)."""
    if _BRACKETED.search(text):
        return False
    top = text.strip().lstrip("*")
    return not _LOOSE.search(top) and _OPERATOR.search(top) is not None


def _mentions(
    text: str, names: frozenset[str] | set[str], more: frozenset[str] = frozenset(), calls: frozenset[str] = frozenset()
) -> bool:
    """Whether `text` may evaluate to a function value: a lambda, a name (or
    dotted name's last part) from `names` that is not being called there, or a
    call of a function in `calls` (one that may return a function value)."""
    if "lambda" in text:
        return True
    if calls and any(m.group(1) in calls for m in _CALL_WORD.finditer(text)):
        return True
    for match in _VALUE_WORD.finditer(text):
        word = match.group(0)
        last = word.rpartition(".")[2]
        if last in names or last in more or match.group(1) in names or match.group(1) in more:
            return True
    # `{k: f for k, f in table.items()}`: a view or copy of a container hands on its values.
    for match in _VIEW_CALL.finditer(text):
        chain = match.group(1).split(".")
        if chain[0] in names or chain[-1] in names or chain[-1] in more:
            return True
    return False


def _fstring_prefix(node: ast.expr) -> str | None:
    """The constant start of `f"visit_{...}"` (or `"parse_" + x`), if it names a method family."""
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant):
        text = node.left.value if isinstance(node.left.value, str) else None
    else:
        return None
    return text if text and len(text) >= 3 and text.isidentifier() else None


def _inert(text: str | None) -> bool:
    """Text that cannot evaluate to a function or container holding one."""
    if not text:
        return True
    if text[0] in _INERT_START or text in ("None", "True", "False") or text.startswith(("f'", 'f"', "not ")):
        return True
    return _operator_only(text)


def _has_elements(node: ast.Dict | ast.List | ast.Tuple | ast.Set) -> bool:
    return bool(node.keys if isinstance(node, ast.Dict) else node.elts)


def _const_key(node: ast.expr | None) -> str | None:
    """A constant key as a slot name: `1` and `"1"` are different keys (`{1: f, "1": g}`
    holds both), so a string that reads as an integer keeps its quotes."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int) and not isinstance(node.value, bool):
        return _key_text(node.value)
    return None


def _int_const(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_const(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _key_text(value: str | int) -> str:
    return repr(value) if isinstance(value, str) and _INT_TEXT.fullmatch(value) else str(value)


_INT_TEXT = re.compile(r"-?\d+")


def _target_names(node: ast.expr | None) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Tuple | ast.List):
        for el in node.elts:
            yield from _target_names(el)
    elif isinstance(node, ast.Starred):
        yield from _target_names(node.value)
