"""Static "what is this expression" for call resolution.

Evaluates the expression texts of the facts to a `Value` (an instance of a
project class, a class, a function, a module, an external name, ...) using
parameter / field / return annotations, constructor assignments
(`self.kv_cache_manager = KVCacheManager(...)`), module-level instances,
`functools.partial`, `typing.cast` and `super()`. Unknown stays None: guessing
is the call resolver's job, and it says so.
"""

from __future__ import annotations

import ast
import builtins
import re

from analyzer.index.models import Assignment, CallSite, Class, ModuleFacts
from analyzer.resolve.annotations import CONTEXT_MANAGER_TYPES, annotation_types
from analyzer.resolve.exprs import dotted_name
from analyzer.resolve.models import Value, immutable, merge_classes, no_builtin_attribute
from analyzer.resolve.project import (
    BUILTIN_NAMES,
    MODULE_SCOPE,
    FuncDef,
    Project,
    Scope,
    Symbol,
)

_MAX_DEPTH = 12
_OPERATOR_METHODS: dict[type, str] = {
    ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.MatMult: "__matmul__", ast.Div: "__truediv__",
    ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__", ast.Pow: "__pow__", ast.BitOr: "__or__", ast.BitAnd: "__and__",
    ast.BitXor: "__xor__", ast.LShift: "__lshift__", ast.RShift: "__rshift__",
    ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__",
}
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_LITERAL_START = frozenset("'\"[{(0123456789-")
_BUILTIN_TYPES = frozenset({"list", "dict", "set", "frozenset", "tuple", "str", "bytes", "bytearray"})
# Methods of `str` that return a `str` (`name.format(...).lower()` is a str's `lower`).
_STR_TO_STR = frozenset({
    "format", "format_map", "lower", "upper", "casefold", "capitalize", "title", "swapcase", "strip", "lstrip",
    "rstrip", "replace", "join", "removeprefix", "removesuffix", "center", "ljust", "rjust", "zfill",
    "expandtabs", "translate",
})
_CALLER_LIMIT = 32  # calls of one name looked at for a parameter's value
# A dotted name read as a value (not called): its last part.
_VALUE_WORD = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\s*\.\s*)*([A-Za-z_]\w*)\b(?!\s*\()")
_MIXIN_LIMIT = 16  # subclasses searched for state a mixin uses but does not set
_PARTIAL = {"functools.partial", "functools.partialmethod"}
_CAST = {"typing.cast", "typing_extensions.cast"}
_SELF_TYPES = {"Self", "typing.Self", "typing_extensions.Self"}
# Via kinds whose target is known for sure (the receiver is `self`/`cls` or a named symbol).
_FROM_ASSIGNMENT = {"local", "return", "symbol", "self"}


# (kind, scope, qualname, function, its Scope): one scope `_name_plan` looks through
_Frame = tuple[str, str, str, "FuncDef | None", "Scope | None"]


@immutable
class _Binding:
    """One step of a name's plan (`Inferrer.name`): a class body to look in
    (then go on), or where the name is bound: a parameter, a local's
    assignments, a loop's iterables, a symbol, or a value known outright."""

    kind: str  # "class" | "param" | "local" | "loop" | "caught" | "symbol" | "value"
    scope: str = ""
    fd: FuncDef | None = None
    index: int = 0
    annotation: str | None = None
    asgs: tuple[Assignment, ...] = ()
    texts: tuple[str, ...] = ()
    symbol: Symbol | None = None
    value: Value | None = None


@immutable
class Ctx:
    module: str
    scope: str  # module-relative qualname of the innermost function/class body, or <module>
    line: int = 0


class Inferrer:
    def __init__(self, project: Project) -> None:
        self.p = project
        self._attr_memo: dict[tuple[str, str], Value | None] = {}
        self._overrides_memo: dict[tuple[str, str], tuple[str, ...]] = {}
        self._var_memo: dict[str, Value | None] = {}
        self._return_memo: dict[str, Value | None] = {}
        self._text_memo: dict[tuple[str, str, str], Value | None] = {}
        self._local_memo: dict[tuple[str, str, str], Value | None] = {}
        # Lambda qualname -> its parameter names (set by the flow stage): they hide
        # outer names of the same spelling and have no annotation to go by.
        self.lambda_params: dict[str, frozenset[str]] = {}
        # `with cm as x` bindings, (module, scope, line, x) -> `__enter__` (`__aenter__`
        # for `async with`), set by the flow stage, which reads the source: x holds
        # what that method of the object returns.
        self.entered: dict[tuple[str, str, int, str], str] = {}
        # `except T as e` (`except (A, B) as e`), set by the flow stage, which reads the
        # source: (module, scope, e) -> "T" ("A | B"; every handler of the scope binding
        # that name): e holds an instance of T, or of a subclass, read like `e: T`.
        self.caught: dict[tuple[str, str, str], str] = {}
        # Evaluations cut off at _MAX_DEPTH so far: an answer of None reached
        # through a cut-off is memoised with the depth it was asked at, and
        # worked out again only when asked from a shallower depth (with more
        # room below it); otherwise the first asker's depth decides the answer.
        self._cuts = 0
        self._cut_at: dict[object, int] = {}
        self._returns_by_module: dict[str, dict[str, list[tuple[int, str]]]] = {}
        self._loops_by_module: dict[str, dict[tuple[str, str], list[str]]] = {}
        self._element_memo: dict[tuple[str, str, str, bool], Value | None] = {}
        # Annotations read only names (lookups whose memos are written once), no
        # inferred values, so an answer never depends on what was asked before.
        self._annotation_memo: dict[tuple[str, str, str, str, int], Value | None] = {}
        self._name_plans: dict[tuple[str, str, str], tuple[_Binding, ...]] = {}
        self._frames: dict[tuple[str, str], tuple[_Frame, ...]] = {}  # `_scope_frames`
        self._bindings_by_class: dict[str, dict[str, list[Assignment]]] = {}
        self._lambda_sources_by_module: dict[str, dict[tuple[str, str], tuple[str, str]]] = {}
        self._overloads_by_module: dict[str, dict[str, list[FuncDef]]] = {}
        # Type unannotated parameters from their callers' arguments (`_from_callers`): where the
        # flow stage runs too (it costs seconds on the largest trees, like the flow stage).
        self.follow_callers = True
        self._caller_memo: dict[tuple[str, int], Value | None] = {}
        self._sites: dict[str, list[tuple[ModuleFacts, CallSite]]] | None = None
        self._values: frozenset[str] | None = None
        self._helpers: frozenset[str] | None = None  # `_body_helpers`
        self._passed: dict[str, frozenset[str]] = {}  # always_passed, per function

    # -- entry points -------------------------------------------------------

    def eval_text(self, text: str | None, ctx: Ctx) -> Value | None:
        """Memoised per (module, scope, text): the same receivers recur all over a
        function. The line is left out of the key, so a name rebound to another
        type within one function keeps its first answer."""
        key = (ctx.module, ctx.scope, text or "")
        try:
            return self._text_memo[key]
        except KeyError:
            pass
        node = self.p.parser.parse(text)
        value = None if node is None else self.eval(node, ctx)
        self._text_memo[key] = value
        return value

    def eval(self, node: ast.expr, ctx: Ctx, depth: int = 0) -> Value | None:
        if depth > _MAX_DEPTH:
            self._cuts += 1
            return None
        d = depth + 1
        if isinstance(node, ast.Name):
            return self.name(node.id, ctx, d)
        if isinstance(node, ast.Attribute):
            if _is_super_call(node.value):
                cls = self.super_class(node.value, ctx, d)  # type: ignore[arg-type]
                return None if cls is None else self.super_member(cls, node.attr)
            return self.attribute(self.eval(node.value, ctx, d), node.attr, d)
        if isinstance(node, ast.Call):
            return self.call_result(node, ctx, d)
        if isinstance(node, ast.Subscript):
            base = self.eval(node.value, ctx, d)
            # `Ruler[T]`: a generic class parameterised is still the class.
            if base is not None and base.kind in ("callables", "class"):
                return base
            if base is not None and base.kind == "instance":
                # `md["block"]`: what the class's `__getitem__` returns for that key.
                return self._item(base, node.slice, ctx, d)
            if isinstance(node.value, ast.Dict):
                return self._dict_item(node.value, node.slice, ctx, d)
            # `self.layers[i]`, `table[k]`: an element of an annotated (or built) container.
            if (base is None or base.kind == "external") and isinstance(node.value, ast.Name | ast.Attribute):
                return self._element(node.value, ctx, d, item=True)
            if base is None and isinstance(node.value, ast.Subscript) and isinstance(node.value.value, ast.Name | ast.Attribute):
                # `self._body[i][1]` with `_body: list[tuple[Key, Item]]`: a tuple element's slot.
                return self._tuple_slot(node.value.value, node.slice, ctx, d)
            return None
        if isinstance(node, ast.Lambda):
            return Value("lambda", "<lambda>", "local")
        if isinstance(node, ast.Dict | ast.List | ast.Tuple | ast.Set):
            elts = node.values if isinstance(node, ast.Dict) else node.elts
            items = tuple(
                v for e in elts if e is not None
                for v in [self.eval(e, ctx, d)]
                if v is not None and v.kind in ("function", "class")
            )
            if items:
                return Value("callables", "<container>", "local", items)
            return Value("external", f"builtins.{type(node).__name__.lower()}", "local")
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp):
            return Value("external", f"builtins.{type(node).__name__[:-4].lower()}", "local")
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return Value("external", "builtins.str", "local")
        if isinstance(node, ast.IfExp):
            # `A(...) if c else B(...)`: either class.
            body, orelse = self.eval(node.body, ctx, d), self.eval(node.orelse, ctx, d)
            if body is not None and orelse is not None and body.kind == orelse.kind and body.kind in ("instance", "class", "function") and body.bound == orelse.bound:
                return merge_classes([body, orelse])
            return body or orelse
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                found = self.eval(value, ctx, d)
                if found is not None:
                    return found
            return None
        if isinstance(node, ast.Await | ast.NamedExpr):
            return self.eval(node.value, ctx, d)
        if isinstance(node, ast.BinOp | ast.UnaryOp):
            # `a + b`, `-a` on a project class: what its special method returns.
            operand = node.left if isinstance(node, ast.BinOp) else node.operand
            method = _OPERATOR_METHODS.get(type(node.op))
            base = self.eval(operand, ctx, d) if method else None
            if base is not None and base.kind == "instance":
                sym = self.p.member(Symbol("class", base.name), method)  # type: ignore[arg-type]
                if sym is not None and sym.kind == "function":
                    return self.returns(sym.name)
            return None
        return None

    # -- names --------------------------------------------------------------

    def name(self, name: str, ctx: Ctx, depth: int) -> Value | None:
        # Where the name is bound is worked out once per (module, scope, name);
        # what it holds is evaluated (and memoised) per binding below.
        key = (ctx.module, ctx.scope, name)
        plan = self._name_plans.get(key)
        if plan is None:
            plan = self._name_plans[key] = self._name_plan(name, ctx.module, ctx.scope)
        for step in plan:
            kind = step.kind
            if kind == "class":
                found = self._class_body_name(step.scope, name, depth)
                if found is not None:
                    return found
            elif kind == "param" and step.fd is not None:
                return self._param(step.fd, step.index, step.annotation, depth)
            elif kind == "local":
                # Memoised per local name, whatever the line: big functions rebind and
                # chain locals (`x = layer(x)`), and evaluating every binding from every
                # use is exponential. The latest binding that gives a type wins.
                sc, asgs = step.scope, list(step.asgs)
                memo_key = (ctx.module, sc, name)
                if memo_key not in self._local_memo or self._cut_at.get(memo_key, -1) > depth:
                    self._local_memo[memo_key] = None  # cycle guard: `x = x.next()`
                    self._cut_at.pop(memo_key, None)
                    cuts = self._cuts
                    found = self._local_memo[memo_key] = self._from_assignments(asgs, ctx.module, sc, depth)
                    self._note_cut(memo_key, found, cuts, depth)
                return self._local_memo[memo_key]
            elif kind == "loop":
                # `for node in self.nodes` (a comprehension clause too): the
                # element type the iterable's annotation states.
                for text in step.texts:
                    node = self.p.parser.parse(text)
                    found = self._element(node, Ctx(ctx.module, step.scope), depth) if node is not None else None
                    if found is not None:
                        return found
                return None
            elif kind == "caught":
                # `except T as e`: an exception the handler matched is an instance of T
                return self.annotation(step.annotation or "", ctx.module, step.scope, "annotation")
            elif kind == "symbol":
                return self.symbol_value(step.symbol, depth)
            else:  # "value": a nested definition, a builtin, or nothing
                return step.value
        return None

    def _name_plan(self, name: str, module: str, scope: str) -> tuple[_Binding, ...]:
        """The binding of `name` as seen from `scope`: steps tried in order, each
        but a class body's final (see `name`)."""
        p = self.p
        steps: list[_Binding] = []
        frames = self._frames.get((module, scope))
        if frames is None:
            frames = self._frames[(module, scope)] = self._scope_frames(module, scope)
        for kind, sc, qual, fd, sc_facts in frames:
            if kind == "lambda":
                if name in self.lambda_params[qual]:
                    # (`map(lambda n: n.visit(), nodes)`: an element of what it is mapped over)
                    src = self._lambda_sources(module).get((qual, name))
                    if src is not None:
                        return (*steps, _Binding("loop", src[0], texts=(src[1],)))
                    return (*steps, _Binding("value"))
                continue
            if kind == "class":
                steps.append(_Binding("class", qual))
                continue
            assert fd is not None and sc_facts is not None
            for i, prm in enumerate(fd.fact.params):
                if prm.name == name:
                    return (*steps, _Binding("param", sc, fd=fd, index=i, annotation=prm.annotation))
            asgs = sc_facts.assignments.get(name)
            if asgs:
                return (*steps, _Binding("local", sc, asgs=tuple(asgs)))
            loops = self._loops(module).get((sc, name))
            if loops:
                return (*steps, _Binding("loop", sc, texts=tuple(loops)))
            caught = self.caught.get((module, sc, name)) if self.caught else None
            if caught is not None:
                return (*steps, _Binding("caught", sc, annotation=caught))
            target = sc_facts.imports.get(name)
            if target is not None:
                return (*steps, _Binding("symbol", sc, symbol=p.lookup_import(target)))
            nested = f"{qual}.{name}"
            if nested in p.functions:
                return (*steps, _Binding("value", sc, value=Value("function", nested)))
            if nested in p.classes:
                return (*steps, _Binding("value", sc, value=Value("class", nested)))
        sym = p.lookup_in_module(module, name)
        if sym is not None:
            return (*steps, _Binding("symbol", symbol=sym))
        if name in BUILTIN_NAMES:
            return (*steps, _Binding("value", value=Value("external", f"builtins.{name}")))
        return (*steps, _Binding("value"))

    def _scope_frames(self, module: str, scope: str) -> tuple[_Frame, ...]:
        """The scopes `_name_plan` looks through from `scope`, innermost first, with
        what it reads of each, worked out once per scope rather than once per name:
        ("function", scope, qualname, its FuncDef, its Scope), ("lambda", scope,
        qualname, None, None), ("class", ...) for the innermost scope's class body
        only (methods do not see their class's names)."""
        p = self.p
        frames: list[_Frame] = []
        for index, sc in enumerate(p.chain(scope)):
            if sc == MODULE_SCOPE:
                break
            qual = f"{module}.{sc}"
            fd = p.functions.get(qual)
            if fd is None and qual in self.lambda_params:
                frames.append(("lambda", sc, qual, None, None))
            elif fd is None:
                if index == 0 and qual in p.classes:
                    frames.append(("class", sc, qual, None, None))
            else:
                frames.append(("function", sc, qual, fd, p.scope(module, sc)))
        return tuple(frames)

    def _class_body_name(self, cls: str, name: str, depth: int) -> Value | None:
        qual = f"{cls}.{name}"
        if qual in self.p.functions:
            return Value("function", qual)
        if qual in self.p.classes:
            return Value("class", qual)
        cd = self.p.classes[cls]
        for asg in cd.fact.class_attributes:
            if asg.target == name:
                return self._assignment(asg, cd.module, cd.fact.qualname, depth)
        return None

    def _param(self, fd: FuncDef, index: int, annotation: str | None, depth: int) -> Value | None:
        fn = fd.fact
        if index == 0 and fn.is_method and not fn.is_staticmethod and fd.name not in self._body_helpers():
            cls = fd.name.rpartition(".")[0]
            if cls in self.p.classes:
                is_cls = fn.is_classmethod or fn.name in ("__new__", "__init_subclass__")
                return Value("class" if is_cls else "instance", cls, "self")
        found = self.annotation(annotation, fd.module, _parent(fn.qualname), "annotation") if annotation else None
        default = fn.params[index].default
        if default and self.follow_callers and fn.params[index].name in self.always_passed(fd):
            # every call names the parameter, its default never arrives (only where the
            # flow stage carries the arguments in: without it the default is all there is)
            default = None
        if (found is None or found.kind == "external") and default and _DOTTED.fullmatch(default):
            # `renderer_cls: Callable[..., R] = RendererHTML`: the annotation names no
            # project type; the default is one value the parameter really holds.
            node = self.p.parser.parse(default)
            value = self.eval(node, Ctx(fd.module, _parent(fn.qualname)), depth + 1) if node is not None else None
            if value is not None and value.kind in ("class", "function", "instance"):
                return value.with_via("local")
        if found is None and not annotation and self.follow_callers:
            return self._from_callers(fd, index, depth)
        return found

    def _from_callers(self, fd: FuncDef, index: int, depth: int) -> Value | None:
        """An unannotated parameter holds what its callers pass: the arguments of
        every call that reaches the function (`B(self.c)` for `B.__init__(self, c)`,
        `run(Job())`), where all of them are known and agree in kind. None where a
        caller is unknown: the function is handed around as a value, decorated, or
        a same-named call's callee cannot be told."""
        key = (fd.name, index)
        if key in self._caller_memo:
            return self._caller_memo[key]
        self._caller_memo[key] = None  # cycle guard
        found = self._caller_memo[key] = self._caller_args(fd, index, depth)
        return found

    def _caller_args(self, fd: FuncDef, index: int, depth: int) -> Value | None:
        fn = fd.fact
        prm = fn.params[index]
        if fn.decorators or prm.kind not in ("positional_only", "positional", "keyword_only"):
            return None
        cls = fd.name.rpartition(".")[0] if fn.is_method else None
        is_init = cls is not None and fn.name == "__init__" and cls in self.p.classes
        names = [fn.name] + ([cls.rpartition(".")[2]] if is_init and cls is not None else [])
        if any(n in self._value_words() for n in names):
            return None  # passed or stored as a value somewhere: called from where we cannot see
        sites = [hit for n in names for hit in self._sites_by_name().get(n, ())]
        if not sites or len(sites) > _CALLER_LIMIT:
            return None
        values: list[Value] = []
        for facts, site in sites:
            if "**" in site.keywords or any(a.startswith("*") for a in site.args):
                return None
            ctx = Ctx(facts.module, site.scope, site.line)
            node = self.p.parser.parse(site.callee)
            callee = self.eval(node, ctx, depth + 1) if node is not None else None
            if callee is None:
                return None  # a same-named call whose target is unknown may be this one
            if callee.kind == "class" and is_init:
                init = self.p.member(Symbol("class", callee.name), "__init__")
                if init is None or init.name != fd.name:
                    continue
                skip = 1
            elif callee.kind == "function" and (callee.name == fd.name or self._overridden_by(callee.name, fd)):
                skip = 1 if callee.bound or (fn.is_method and callee.via == "super") else 0
            else:
                continue
            text: str | None = None
            if prm.kind != "keyword_only" and 0 <= index - skip < len(site.args):
                text = site.args[index - skip]
            for k, v in zip(site.keywords, site.keyword_values, strict=False):
                if k == prm.name:
                    text = v
            if text is None:
                return None  # the default (or an error): not a caller's value
            arg = self.p.parser.parse(text)
            value = self.eval(arg, ctx, depth + 1) if arg is not None else None
            if value is None or value.kind not in ("instance", "class", "external"):
                return None
            values.extend(value.each())
        kinds = {v.kind for v in values}
        if len(kinds) != 1:
            return None
        if kinds == {"external"}:
            return values[0].with_via("local") if len({v.name for v in values}) == 1 else None
        merged = merge_classes([v.with_via("local") for v in values])
        return merged

    def _overridden_by(self, method: str, fd: FuncDef) -> bool:
        """`method` is the same-named method of a base of fd's class: a call of it may dispatch to fd."""
        owner, _, name = method.rpartition(".")
        cls = fd.name.rpartition(".")[0]
        return name == fd.fact.name and cls in self.p.classes and owner in self.p.hierarchy.mro(cls)

    def _body_helpers(self) -> frozenset[str]:
        """Functions written in a class body and called by bare name in that body
        (`def indent(level): ...` then `RULES = [indent(1)]`): the call runs while the
        class is built, before any instance exists, so the first parameter there is the
        argument, not `self`. Its value comes from the callers like any plain function's."""
        if self._helpers is None:
            found: set[str] = set()
            for facts in self.p.modules.values():
                for site in facts.calls:
                    if not site.callee.isidentifier() or f"{facts.module}.{site.scope}" not in self.p.classes:
                        continue
                    fd = self.p.functions.get(f"{facts.module}.{site.scope}.{site.callee}")
                    if fd is not None and not fd.fact.decorators:
                        found.add(fd.name)
            self._helpers = frozenset(found)
        return self._helpers

    def _sites_by_name(self) -> dict[str, list[tuple[ModuleFacts, CallSite]]]:
        if self._sites is None:
            self._sites = {}
            for facts in self.p.modules.values():
                for site in facts.calls:
                    last = site.callee.rpartition(".")[2]
                    if last.isidentifier():
                        self._sites.setdefault(last, []).append((facts, site))
        return self._sites

    def always_passed(self, fd: FuncDef) -> frozenset[str]:
        """Parameters every call of `fd` names, so that its default never flows in
        (`def run(step=warmup)` always called as `run(step=main)` calls only `main`).

        Closed world, as FlowGraph.handed_receiver: the calls are those this stage sees, found by
        the callee's last name (over-counting sites is safe). A function read anywhere as
        a value (`value_words`), decorated, never called here (outside code may omit the
        argument), or called with `*args` / `**kwargs` keeps all its defaults; so does an
        `__init__` whose class has subclasses, is handed around, or is made as `cls(...)`.
        """
        found = self._passed.get(fd.name)
        if found is None:
            found = self._passed[fd.name] = self._always_passed(fd)
        return found

    def _always_passed(self, fd: FuncDef) -> frozenset[str]:
        fn = fd.fact
        if fn.decorators and not (fn.is_classmethod or fn.is_staticmethod):
            return frozenset()
        values = self.value_words()
        cls_name = cls_qual = ""
        if fn.is_method:
            cls_qual = fn.qualname.rpartition(".")[0]
            cd = self.p.classes.get(f"{fd.module}.{cls_qual}")
            if cd is None:
                return frozenset()
            cls_name = cd.fact.name
        if fn.name == "__init__" and cls_name:
            if cls_name in values or self.p.hierarchy.children().get(f"{fd.module}.{cls_qual}"):
                return frozenset()
            # `cls(...)` / `self.__class__(...)` in its own methods make one with any arguments
            own = (s for n in ("cls", "__class__") for f, s in self._sites_by_name().get(n, ()) if f.module == fd.module)
            if any(s.scope.startswith(f"{cls_qual}.") for s in own):
                return frozenset()
            names = {cls_name, "__init__"}
        elif fn.name in values:
            return frozenset()
        else:
            names = {fn.name}
        params = [prm for prm in fn.params if prm.kind not in ("var_positional", "var_keyword")]
        positional = [prm.name for prm in params if prm.kind in ("positional_only", "positional")]
        passed = {prm.name for prm in params if prm.default}
        seen = False
        for site in (site for n in names for _, site in self._sites_by_name().get(n, ())):
            head, _, last = site.callee.rpartition(".")
            if any(a.startswith("*") for a in site.args) or "**" in site.keywords:
                return frozenset()
            if not fn.is_method or fn.is_staticmethod:
                bound = 0
            elif fn.is_classmethod or (fn.name == "__init__" and last != "__init__"):
                bound = 1
            else:  # `obj.m(x)` binds self; `Cls.m(obj, x)` and `super().__init__(x)` differ
                bound = 0 if head.rpartition(".")[2] == cls_name else 1
                if head.startswith("super()"):
                    bound = 1
            given = set(positional[: max(0, len(site.args) + bound)]) | set(site.keywords)
            passed &= given
            seen = True
        return frozenset(passed) if seen else frozenset()

    def value_words(self) -> frozenset[str]:
        return self._value_words()

    def _value_words(self) -> frozenset[str]:
        """Names read somewhere as a value, not called there (`f` in `run(f)`, `self.m`
        in `x = self.m`, a class handed to a factory): the last part of each."""
        if self._values is None:
            words: set[str] = set()
            for facts in self.p.modules.values():
                texts: list[str | None] = [a.value for a in (*facts.assignments, *facts.module_attributes)]
                texts += [fl.value for fl in facts.flows]
                for site in facts.calls:
                    texts += site.args
                    texts += site.keyword_values
                    if "." in site.callee or "(" in site.callee:
                        texts.append(site.callee.rpartition(".")[0])
                for cls in facts.classes:
                    texts += [a.value for a in (*cls.class_attributes, *cls.fields, *cls.instance_attributes)]
                for fn in facts.functions:
                    texts += fn.decorators
                    texts += [prm.default for prm in fn.params]
                for text in texts:
                    if text:
                        words.update(m.group(1) for m in _VALUE_WORD.finditer(text))
                # `from m import f as g`: calls of `g` are calls of `f` under another name
                words.update(imp.name for imp in facts.imports if imp.name and imp.asname and imp.asname != imp.name)
            self._values = frozenset(words)
        return self._values

    def _from_assignments(self, asgs: list[Assignment], module: str, scope: str, depth: int) -> Value | None:
        for asg in sorted(asgs, key=lambda a: -a.line):
            found = self._assignment(asg, module, scope, depth)
            if found is not None:
                return found
        return None

    def _assignment(self, asg: Assignment, module: str, scope: str, depth: int) -> Value | None:
        declared = None
        if asg.annotation:
            declared = self.annotation(asg.annotation, module, scope, "annotation")
            if declared is not None and declared.kind != "external":
                return declared
            if declared is not None and declared.name in _UNTYPED:
                declared = None  # (`Optional[Any]` states nothing: what is assigned does)
        if asg.value:
            node = self.p.parser.parse(asg.value)
            if node is not None:
                ctx = Ctx(module, scope, asg.line)
                found = self.eval(node, ctx, depth + 1)
                method = self.entered.get((module, scope, asg.line, asg.target)) if self.entered else None
                if method is not None:
                    found = self.entered_value(found, node, ctx, method, depth + 1)
                # `cache: MutableMapping[...] = LRUCache(50)`: a project object assigned
                # where an outside type is declared is a subtype of it, and says more.
                if declared is None or (found is not None and found.kind == "instance"):
                    return found
        return declared

    def entered_value(self, obj: Value | None, node: ast.expr, ctx: Ctx, method: str, depth: int) -> Value | None:
        """What `with node as x` binds x to, `obj` being node's value: for each class
        of a project instance, what its `method` (`__enter__`) returns (the object
        itself for `return self`, or where the method is not the project's)."""
        if obj is None or obj.kind != "instance" or self.already_entered(node, ctx, depth):
            return obj
        found: list[Value] = []
        for v in obj.each():
            enter = self.enter_method(v.name, method)
            value = v if enter is None else self.returns(enter)
            if value is not None:
                found.append(value)
        if len(found) > 1 and all(v.kind == "instance" for v in found):
            return merge_classes(found)
        return found[0] if found else None

    def enter_method(self, cls: str, method: str) -> str | None:
        """The project `method` (`__enter__`) an instance of `cls` runs, unless it returns
        the instance itself (`return self`: then the object entered is what `as` binds)."""
        sym = self.p.member(Symbol("class", cls), method)
        if sym is None or sym.kind != "function" or sym.name not in self.p.functions:
            return None
        fd = self.p.functions[sym.name]
        params = fd.fact.params
        returned = self._returned(fd)
        if params and returned and all(text == params[0].name for text in returned):
            return None
        return sym.name

    def already_entered(self, node: ast.expr, ctx: Ctx, depth: int) -> bool:
        """`with cm() as x` where the call's value already stands for what is entered:
        a `@contextmanager` function's (what it yields) or one annotated as a context
        manager of X (`-> ContextManager[X]`, read as an X)."""
        if not isinstance(node, ast.Call):
            return False
        func = self.eval(node.func, ctx, depth + 1)
        fd = self.p.functions.get(func.name) if func is not None and func.kind == "function" else None
        if fd is None:
            return False
        if any(d.rpartition(".")[2] in _CONTEXT_MANAGERS for d in fd.fact.decorators):
            return True
        head = fd.fact.returns.partition("[")[0].rpartition(".")[2] if fd.fact.returns else ""
        return head in CONTEXT_MANAGER_TYPES

    # -- symbols, annotations, returns ----------------------------------------

    def _note_cut(self, key: object, found: Value | None, cuts: int, depth: int) -> None:
        if found is None and cuts != self._cuts:
            self._cut_at[key] = depth
        else:
            self._cut_at.pop(key, None)

    def symbol_value(self, sym: Symbol | None, depth: int = 0) -> Value | None:
        if sym is None:
            return None
        if sym.kind in ("function", "class", "module", "external"):
            return Value(sym.kind, sym.name)
        if sym.kind == "variable":
            if sym.name not in self._var_memo or self._cut_at.get(sym.name, -1) > depth:
                self._var_memo[sym.name] = None  # cycle guard
                self._cut_at.pop(sym.name, None)
                module, _, var = sym.name.rpartition(".")
                asgs = self.p.module_attrs(module).get(var, [])
                cuts = self._cuts
                found = self._var_memo[sym.name] = self._from_assignments(asgs, module, MODULE_SCOPE, depth)
                self._note_cut(sym.name, found, cuts, depth)
            return self._var_memo[sym.name]
        return None

    def annotation(self, text: str, module: str, scope: str, via: str, alias_depth: int = 0) -> Value | None:
        """The project class(es) an annotation names (`A | B`: A, with B as an
        alternative; a module-level alias `Base = BaseV1`, `Either = A | B`
        stands for what it names), else its first external type."""
        key = (text, module, scope, via, alias_depth)
        try:
            return self._annotation_memo[key]
        except KeyError:
            pass
        found = self._annotation_memo[key] = self._annotation(text, module, scope, via, alias_depth)
        return found

    def _annotation(self, text: str, module: str, scope: str, via: str, alias_depth: int) -> Value | None:
        external: Value | None = None
        found: list[Value] = []
        for ref in annotation_types(text, self.p.parser):
            if ref.name in _SELF_TYPES:
                cls = self.class_of_scope(module, scope)
                if cls is not None:
                    found.append(Value("instance", cls, via))
                continue
            sym = self.p.resolve_in_scope(module, scope, ref.name)
            if sym is None:
                continue
            if sym.kind == "class":
                found.append(Value("class" if ref.is_class else "instance", sym.name, via))
            if sym.kind == "variable" and alias_depth < 3:
                alias = self._type_alias(sym.name, via, alias_depth)
                if alias is not None and alias.kind == "instance":
                    found += [Value("class", v.name, via) if ref.is_class else v for v in alias.each()]
            if sym.kind == "external" and external is None:
                external = Value("external", sym.name, via)
        return merge_classes(found) or external

    def _entered(self, fd: FuncDef) -> Value | None:
        """A `@contextmanager` generator's call stands for what it yields (what
        `with f() as x` binds; the manager object itself has only
        `__enter__`/`__exit__`): its annotation's element, else its yields' values."""
        scope = _parent(fd.fact.qualname)
        inner = _element_annotation(self.p.parser.parse(fd.fact.returns)) if fd.fact.returns else None
        found = self.annotation(inner, fd.module, scope, "return") if inner else None
        if found is not None and found.kind != "external":
            return found
        values = [v.with_via("return") for fl in self.p.modules[fd.module].flows
                  if fl.kind == "yield" and fl.scope == fd.fact.qualname and fl.value
                  for v in [self.eval_text(fl.value, Ctx(fd.module, fd.fact.qualname))]
                  if v is not None and v.kind == "instance"]
        return merge_classes(values) or found

    def _type_alias(self, name: str, via: str, alias_depth: int) -> Value | None:
        """A module variable used as a type: what its one assignment names
        (`KVConnectorBase = KVConnectorBase_V1`); a call or literal names nothing."""
        module, _, var = name.rpartition(".")
        asgs = self.p.module_attrs(module).get(var, [])
        if len(asgs) != 1 or not asgs[0].value:
            return None
        return self.annotation(asgs[0].value, module, MODULE_SCOPE, via, alias_depth + 1)

    def returns(self, func: str) -> Value | None:
        if func not in self._return_memo:
            fd = self.p.functions[func]
            if fd.fact.is_property:
                fd = self.getter(fd)
            self._return_memo[func] = None
            found = None
            if any(d.rpartition(".")[2] in _CONTEXT_MANAGERS for d in fd.fact.decorators):
                found = self._entered(fd)
            elif fd.fact.returns:
                found = self.annotation(fd.fact.returns, fd.module, _parent(fd.fact.qualname), "return")
            if found is None or found.kind == "external":
                # No project type in the annotation (`MutableMapping`, none at all):
                # what its `return` statements build (`return LRUCache(size)`).
                built: list[Value] = []
                # Outside objects every other `return` gives (`return paramiko.Transport(sock)`),
                # None when some return is anything else (a literal, an unknown value).
                outside: set[Value] | None = set()
                for text in self._returned(fd):
                    if (text[:1] in _LITERAL_START and not (text[:1] in "{[" and text.endswith("]"))) or text in ("None", "True", "False"):
                        if text != "None":
                            outside = None
                        continue  # (but `{"a": self.a, ...}[key]`: a literal subscripted)
                    node = self.p.parser.parse(text)
                    value = self.eval(node, Ctx(fd.module, fd.fact.qualname)) if node is not None else None
                    if value is not None and value.kind in ("instance", "class", "function"):
                        if built and value.kind != built[0].kind:
                            continue
                        built.append(value.with_via("return"))
                        if value.kind == "function":
                            break
                    elif outside is not None and value is not None and value.kind == "external" and value.via == "instance":
                        outside.add(value)
                    else:
                        outside = None
                # (each class a `return` builds: `return A()` in one branch, `B()` in another)
                found = merge_classes(built) or found
                if found is None and outside is not None and len(outside) == 1:
                    # One outside type for every return: calls on the result are its methods,
                    # not every project method of that name.
                    found = outside.pop()
            self._return_memo[func] = found
        return self._return_memo[func]

    def _instance_bindings(self, cls: str, fact: Class) -> dict[str, list[Assignment]]:
        """A class's `self.x = ...` bindings by attribute name, indexed once."""
        found = self._bindings_by_class.get(cls)
        if found is None:
            found = self._bindings_by_class[cls] = {}
            for a in fact.instance_attributes:
                found.setdefault(_attr_name(a.target), []).append(a)
        return found

    def _lambda_sources(self, module: str) -> dict[tuple[str, str], tuple[str, str]]:
        """(lambda, parameter) -> (scope, iterable text) for a lambda written as the
        argument of a builtin that calls it on an iterable's elements (`map`,
        `filter`, `sorted(key=)`, `functools.reduce`, ...): the parameter is bound
        like a loop variable over that iterable."""
        found = self._lambda_sources_by_module.get(module)
        if found is not None:
            return found
        found = self._lambda_sources_by_module[module] = {}  # (re-entry sees it empty)
        facts = self.p.modules[module]
        lambdas: dict[tuple[str, str], list[str]] = {}
        for fl in facts.flows:
            if fl.kind == "lambda" and fl.target and fl.value:
                node = self.p.parser.parse(fl.value)
                if isinstance(node, ast.Lambda):
                    lambdas.setdefault((fl.scope, ast.unparse(node)), []).append(f"{module}.{fl.target}")
        if not lambdas:
            return found
        for site in facts.calls:
            if site.callee.rpartition(".")[2] not in _ELEMENT_CALLER_NAMES:
                continue
            callee = self.eval_text(site.callee, Ctx(module, site.scope))
            spec = _ELEMENT_CALLERS.get(callee.name) if callee is not None and callee.kind == "external" else None
            if spec is None or (callee.name in ("builtins.min", "builtins.max") and len(site.args) != 1):  # type: ignore[union-attr]
                continue
            fpos, ipos, param = spec
            if isinstance(fpos, str):
                ftext = next((v for k, v in zip(site.keywords, site.keyword_values, strict=False) if k == fpos), None)
            else:
                ftext = site.args[fpos] if len(site.args) > fpos else None
            itext = site.args[ipos] if len(site.args) > ipos else None
            if ftext is None or itext is None or itext.startswith("*"):
                continue
            fnode = self.p.parser.parse(ftext)
            if not isinstance(fnode, ast.Lambda):
                continue
            names = lambdas.get((site.scope, ast.unparse(fnode)), [])
            positional = [*fnode.args.posonlyargs, *fnode.args.args]
            if len(names) != 1 or len(positional) <= param:
                continue
            found[(names[0], positional[param].arg)] = (site.scope, itext)
            if param == 1 and len(site.args) == 2:  # `reduce(f, xs)`: the first element starts the fold
                found[(names[0], positional[0].arg)] = (site.scope, itext)
        return found

    def forget_name_plans(self) -> None:
        """Called once `lambda_params` is filled (a lambda's parameters hide outer names)."""
        self._name_plans.clear()
        self._frames.clear()

    def is_loop_variable(self, module: str, scope: str, name: str) -> bool:
        """`name` is bound by a `for` (or comprehension clause) of `scope`."""
        return (scope, name) in self._loops(module)

    def _loops(self, module: str) -> dict[tuple[str, str], list[str]]:
        """(scope, loop variable) -> the iterables it is bound from (plain names only)."""
        found = self._loops_by_module.get(module)
        if found is None:
            found = self._loops_by_module[module] = {}
            for fl in self.p.modules[module].flows:
                if fl.kind == "for" and fl.target and fl.value and fl.target.isidentifier():
                    found.setdefault((fl.scope, fl.target), []).append(fl.value)
                elif fl.kind == "for" and fl.target and fl.value and fl.value.startswith(("zip(", "enumerate(")):
                    for name, text in self._unpacked(fl.target, fl.value):
                        found.setdefault((fl.scope, name), []).append(text)
                elif fl.kind == "for" and fl.target and fl.value and fl.value.endswith(".items()"):
                    for name, text in self._items(fl.target, fl.value):
                        found.setdefault((fl.scope, name), []).append(text)
        return found

    def _unpacked(self, target: str, value: str) -> list[tuple[str, str]]:
        """`for a, b in zip(xs, ys)`: (a, xs), (b, ys); `for i, x in enumerate(xs)`: (x, xs)."""
        t, v = self.p.parser.parse(target), self.p.parser.parse(value)
        if not isinstance(t, ast.Tuple) or not isinstance(v, ast.Call) or not isinstance(v.func, ast.Name):
            return []
        names = [e.id if isinstance(e, ast.Name) else None for e in t.elts]
        args = [a for a in v.args if not isinstance(a, ast.Starred)]
        if len(args) != len(v.args):
            return []
        if v.func.id == "zip" and len(args) == len(names):
            pairs = zip(names, args, strict=True)
        elif v.func.id == "enumerate" and len(names) == 2 and args:
            pairs = zip(names[1:], args[:1], strict=True)
        else:
            return []
        return [(n, ast.unparse(a)) for n, a in pairs if n is not None]

    def _items(self, target: str, value: str) -> list[tuple[str, str]]:
        """`for k, v in d.items()`: (k, `d.keys()`), (v, `d.values()`), each bound
        as a loop over that view."""
        t, v = self.p.parser.parse(target), self.p.parser.parse(value)
        if not (isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(v, ast.Call)
                and isinstance(v.func, ast.Attribute) and not v.args and not v.keywords):
            return []
        owner = ast.unparse(v.func.value)
        views = (f"{owner}.keys()", f"{owner}.values()")
        return [(e.id, view) for e, view in zip(t.elts, views, strict=True) if isinstance(e, ast.Name)]

    def _element(self, node: ast.expr, ctx: Ctx, depth: int, *, item: bool = False) -> Value | None:
        """`_element_of`, memoised per (module, scope, dotted name): subscripts recur."""
        text = dotted_name(node)
        if text is None:
            return self._element_of(node, ctx, depth, item=item)
        key = (ctx.module, ctx.scope, text, item)
        if key in self._element_memo and self._cut_at.get(key, -1) <= depth:
            return self._element_memo[key]
        self._element_memo[key] = None  # cycle guard
        self._cut_at.pop(key, None)
        cuts = self._cuts
        found = self._element_memo[key] = self._element_of(node, ctx, depth, item=item)
        self._note_cut(key, found, cuts, depth)
        return found

    def _tuple_slot(self, node: ast.expr, index: ast.expr, ctx: Ctx, depth: int) -> Value | None:
        """The `index`-th slot of the tuples the container `node` holds, where its annotation says
        each element is a `tuple[A, B, ...]` of fixed length and `index` is a constant."""
        if not (isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool)):
            return None
        for annotation, module, scope in self._element_sources(node, ctx, depth)[0]:
            inner = _element_annotation(self.p.parser.parse(annotation), item=True)
            slot = _tuple_arg(self.p.parser.parse(inner) if inner else None, index.value)
            if slot is not None:
                found = self.annotation(slot, module, scope, "annotation")
                if found is not None and found.kind == "instance":
                    return found
        return None

    def _element_sources(self, node: ast.expr, ctx: Ctx, depth: int) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        """What declares the container `node` (a parameter or local, an attribute of the instance
        it is read on): (annotation, module, scope it is written in) of each annotation, and, where
        none is written, (value, module, scope) of what it is assigned (an attribute's, the first
        class in the MRO that binds it; a local's, for the copies `_element_of` follows)."""
        where: list[tuple[str, str, str]] = []
        built: list[tuple[str, str, str]] = []
        if isinstance(node, ast.Name):
            for sc in self.p.chain(ctx.scope):
                fd = self.p.functions.get(f"{ctx.module}.{sc}")
                if fd is None:
                    continue
                where += [(prm.annotation, fd.module, _parent(fd.fact.qualname)) for prm in fd.fact.params
                          if prm.name == node.id and prm.annotation]
                local = self.p.scope(ctx.module, sc).assignments.get(node.id, [])
                where += [(a.annotation, ctx.module, sc) for a in local if a.annotation]
                if not where:
                    built += [(a.value, ctx.module, sc) for a in local if a.value]
                break
        elif isinstance(node, ast.Attribute):
            base = self.eval(node.value, ctx, depth + 1)
            if base is not None and base.kind == "instance":
                for owner in self.p.hierarchy.mro(base.name):
                    cd = self.p.classes.get(owner)
                    if cd is None:
                        continue
                    where += [(a.annotation, cd.module, cd.fact.qualname) for a in cd.fact.fields
                              if a.target == node.attr and a.annotation]
                    bound = self._instance_bindings(cd.name, cd.fact).get(node.attr, ())
                    where += [(a.annotation, cd.module, a.scope) for a in bound if a.annotation]
                    built += [(a.value, cd.module, a.scope) for a in bound if not a.annotation and a.value]
                    if where or built:
                        break
        return where, built

    def _element_of(self, node: ast.expr, ctx: Ctx, depth: int, *, item: bool = False) -> Value | None:
        """An element of the iterable `node`, from the annotation of what it
        names: a parameter or local, an attribute, or a call's return; for an
        attribute with no annotation, the elements of the list it is built from
        (`nn.ModuleList([Layer(...) for ...])`). `item`: what `node[k]`,
        `node.pop()`, `node.get(k)` give (a mapping's values, not its keys)."""
        if depth > _MAX_DEPTH:
            return None
        where: list[tuple[str, str, str]] = []  # (annotation, module, scope it is written in)
        built: list[tuple[str, str, str]] = []  # (value, module, scope) of unannotated attributes
        if isinstance(node, ast.Name):
            where, assigned = self._element_sources(node, ctx, depth)
            for text, module, scope in assigned:
                # `ordered = sorted(stages)`: the elements of what it copies.
                value = self.p.parser.parse(text)
                if isinstance(value, ast.Call) and self._copies_elements(value, Ctx(module, scope), depth):
                    found = self._element(value.args[0], Ctx(module, scope), depth + 1, item=item)
                    if found is not None:
                        return found
        elif isinstance(node, ast.Attribute):
            where, built = self._element_sources(node, ctx, depth)
        elif isinstance(node, ast.Call):
            if self._copies_elements(node, ctx, depth):
                return self._element(node.args[0], ctx, depth + 1, item=item)
            if (isinstance(node.func, ast.Attribute) and node.func.attr in ("keys", "values")
                    and not node.args and not node.keywords):
                # `d.values()` / `d.keys()`: the mapping's values / keys, as its annotation states
                return self._element(node.func.value, ctx, depth + 1, item=node.func.attr == "values")
            func = self.eval(node.func, ctx, depth + 1)
            if func is not None and func.kind == "function":
                fd = self.p.functions[func.name]
                if fd.fact.returns:
                    where.append((fd.fact.returns, fd.module, _parent(fd.fact.qualname)))
        for annotation, module, scope in where:
            inner = _element_annotation(self.p.parser.parse(annotation), item=item)
            if inner is not None:
                found = self.annotation(inner, module, scope, "annotation")
                if found is not None and found.kind == "instance":
                    return found
        for text, module, scope in built:
            found = self._built_element(self.p.parser.parse(text), Ctx(module, scope), depth + 1)
            if found is not None:
                return found
        return None

    def _copies_elements(self, node: ast.Call, ctx: Ctx, depth: int) -> bool:
        """`sorted(xs)`, `list(xs)`, `reversed(xs)`: a builtin whose result holds xs's elements."""
        if len(node.args) != 1 or isinstance(node.args[0], ast.Starred) or not isinstance(node.func, ast.Name):
            return False
        if node.func.id not in _ELEMENT_COPIES:
            return False
        func = self.eval(node.func, ctx, depth + 1)
        return func is not None and func.kind == "external" and func.name == f"builtins.{node.func.id}"

    def _built_element(self, node: ast.expr | None, ctx: Ctx, depth: int) -> Value | None:
        """The elements of `[X(...) for ...]`, `[X(...), Y(...)]`, or either wrapped
        in a sequence constructor (`nn.ModuleList(...)`, `list(...)`): the
        classes they build."""
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            head = dotted_name(node.func)
            if head is None or head.rpartition(".")[2] not in _SEQUENCE_BUILDERS:
                return None
            node = node.args[0]
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            elts = [node.elt]
        elif isinstance(node, ast.List | ast.Tuple):
            elts = list(node.elts)
        else:
            return None
        found = [v for e in elts[:8] for v in [self.eval(e, ctx, depth)]
                 if v is not None and v.kind == "instance"]
        return merge_classes(found) if len(found) == len(elts[:8]) else None

    def _returned(self, fd: FuncDef) -> list[str]:
        """The values of a function's `return` statements, as source text (of the
        one definition `fd` names where several share its name: a property's
        getter and setter)."""
        by_scope = self._returns_by_module.get(fd.module)
        if by_scope is None:
            by_scope = self._returns_by_module[fd.module] = {}
            for fl in self.p.modules[fd.module].flows:
                if fl.kind == "return" and fl.value:
                    by_scope.setdefault(fl.scope, []).append((fl.line, fl.value))
        found = by_scope.get(fd.fact.qualname, [])
        if fd.fact.is_property:
            found = [f for f in found if fd.fact.line <= f[0] <= fd.fact.end_line]
        return [value for _, value in found]

    def getter(self, fd: FuncDef) -> FuncDef:
        """A property's getter: reading the attribute runs it, and only its return is
        the value (`@x.setter`'s return, often `self`, is discarded by Python); the
        project keeps the last of the definitions sharing the name."""
        for fn in self.p.modules[fd.module].functions:
            if fn.qualname == fd.fact.qualname and not any(
                d.endswith((".setter", ".deleter")) for d in fn.decorators
            ):
                return fd if fn is fd.fact else FuncDef(fd.module, fn, fd.path, fd.name)
        return fd

    # -- attributes ---------------------------------------------------------

    def attribute(self, base: Value | None, attr: str, depth: int = 0) -> Value | None:
        if base is None:
            return None
        p = self.p
        if base.kind == "module":
            return self.symbol_value(p.lookup_in_module(base.name, attr), depth)
        if base.kind == "external":
            if no_builtin_attribute(base.name, attr):
                return None  # `None.log`: the value is one this analysis did not see
            return Value("external", f"{base.name}.{attr}", "local" if base.via == "instance" else base.via)
        if base.kind == "class":
            sym = p.member(Symbol("class", base.name), attr)
            if sym is not None:
                return Value(sym.kind, sym.name, base.via)
            return self.class_attr(base.name, attr, depth)
        if base.kind == "instance":
            sym = p.member(Symbol("class", base.name), attr)
            if sym is not None and sym.kind == "function":
                if p.functions[sym.name].fact.is_property:
                    return self.returns(sym.name)
                if base.via != "self":
                    # `obj.m` taken as a value is the method of obj's own class: the
                    # overrides on the declared class's subclasses too, as for `obj.m()`.
                    # (`self.m`: left as the class's own, the resolver's `self` rules
                    # apply to calls only.)
                    subs = self.bound_overrides(base.name, attr, sym.name)
                    if subs:
                        return Value("function", sym.name, base.via, bound=True, alts=subs)
                return Value("function", sym.name, base.via, bound=True)
            if sym is not None:
                return Value(sym.kind, sym.name, base.via)
            return self.instance_attr(base.name, attr, depth)
        return None

    def bound_overrides(self, cls: str, attr: str, own: str) -> tuple[str, ...]:
        """The methods `attr` resolves to on `cls`'s project subclasses, each by its own
        MRO, other than `own` (at most 64, as for a call's overrides)."""
        key = (cls, f"<overrides>{attr}")
        found = self._overrides_memo.get(key)
        if found is None:
            out: list[str] = []
            for sub in self.p.hierarchy.descendants(cls)[:64]:
                sym = self.p.member(Symbol("class", sub), attr)
                if sym is None or sym.kind != "function" or sym.name not in self.p.functions:
                    continue
                if sym.name != own and sym.name not in out and not self.p.functions[sym.name].fact.is_property:
                    out.append(sym.name)
            found = self._overrides_memo[key] = tuple(out)
        return found

    def instance_attr(self, cls: str, attr: str, depth: int = 0) -> Value | None:
        """Type of `obj.attr` for an instance of project class `cls`."""
        key = (cls, attr)
        if key in self._attr_memo and self._cut_at.get(key, -1) <= depth:
            return self._attr_memo[key]
        self._attr_memo[key] = None  # cycle guard
        self._cut_at.pop(key, None)
        cuts = self._cuts
        result: Value | None = None
        for owner in self.p.hierarchy.mro(cls):
            cd = self.p.classes.get(owner)
            if cd is None:
                continue
            result = self._own_attr(cd.module, cd.fact, attr, depth)
            if result is not None:
                break
        if result is None:
            # A mixin uses state its subclasses set up (`self.tree_cache` in a
            # scheduler mixin): look there, as the instance really is one of them,
            # in each of them (what one subclass stores, another may store differently).
            found: list[Value] = []
            for sub in self.p.hierarchy.descendants(cls)[:_MIXIN_LIMIT]:
                cd = self.p.classes[sub]
                one = self._own_attr(cd.module, cd.fact, attr, depth)
                if one is not None:
                    found.append(one)
            kinds = {v.kind for v in found}
            result = merge_classes(found) if len(kinds) == 1 and kinds <= {"instance", "class", "function"} else (
                found[0] if found else None
            )
        self._attr_memo[key] = result
        self._note_cut(key, result, cuts, depth)
        return result

    def _own_attr(self, module: str, fact: Class, attr: str, depth: int) -> Value | None:
        scope = fact.qualname
        for asg in fact.fields:
            if asg.target == attr:
                found = self._assignment(asg, module, scope, depth)
                if found is not None:
                    return _as_attribute(found)
        annotated = list(self._instance_bindings(f"{module}.{fact.qualname}", fact).get(attr, ()))
        # Annotated bindings state the intended type; try them before inferred ones,
        # and constructor-time bindings (`__init__`) before later rebinding.
        annotated.sort(key=lambda a: (a.annotation is None, not a.scope.endswith("__init__"), a.line))
        placeholder: Value | None = None
        for asg in annotated:
            found = self._assignment(asg, module, asg.scope, depth)
            if found is not None and found.kind == "external" and found.name == "builtins.None":
                placeholder = placeholder or found  # `self.cache = None` until it is set: look further
                continue
            if found is not None:
                return _as_attribute(found)
        if placeholder is not None:
            return _as_attribute(placeholder)
        for asg in fact.class_attributes:
            if asg.target == attr:
                found = self._assignment(asg, module, scope, depth)
                if found is not None:
                    return _as_attribute(found)
        return None

    def class_attr(self, cls: str, attr: str, depth: int = 0) -> Value | None:
        for owner in self.p.hierarchy.mro(cls):
            cd = self.p.classes.get(owner)
            if cd is None:
                continue
            for asg in [*cd.fact.class_attributes, *cd.fact.fields]:
                if asg.target == attr:
                    found = self._assignment(asg, cd.module, cd.fact.qualname, depth)
                    if found is not None:
                        return found
        return None

    # -- calls and super ----------------------------------------------------

    def call_result(self, node: ast.Call, ctx: Ctx, depth: int) -> Value | None:
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            cls = self.super_class(node, ctx, depth)
            return None if cls is None else Value("super", cls, "self")
        func = self.eval(node.func, ctx, depth)
        if func is None:
            return None
        if func.kind == "class":
            return Value("instance", func.name, "local", alts=func.alts)  # (`impl_class()(...)`: either class)
        if func.kind == "function":
            if node.args and self._overloads(func.name):
                skip = 1 if func.bound else 0
                chosen = self._overload_return(func.name, node.args, skip)
                if chosen is not None:
                    return chosen
            return self.returns(func.name)
        if func.kind == "external":
            if isinstance(node.func, ast.Attribute) and node.func.attr in _ELEMENT_METHODS:
                # `self.queue.popleft()`, `table.get(k)`: an element of the container.
                found = self._element(node.func.value, ctx, depth, item=True)
                if found is not None:
                    return found
            if func.name in _PARTIAL and node.args:
                inner = self.eval(node.args[0], ctx, depth)
                if inner is not None and inner.kind == "function":
                    return Value("function", inner.name, "partial", bound=inner.bound)
                return None
            if func.name in _CAST and node.args:
                text = ast.unparse(node.args[0])
                return self.annotation(text, ctx.module, ctx.scope, "annotation")
            if func.name == "builtins.type" and len(node.args) == 1:
                inner = self.eval(node.args[0], ctx, depth)
                if inner is not None and inner.kind == "instance":
                    return Value("class", inner.name, inner.via)
            head, _, last = func.name.rpartition(".")
            if head == "builtins" and last in _BUILTIN_TYPES:
                return Value("external", func.name, "local")
            if head == "builtins.str" and last in _STR_TO_STR:
                return Value("external", "builtins.str", "local")
            if head and head != "builtins" and last[:1].isupper() and func.via != "instance":
                # `Client()` of an external package: by convention a class, so
                # `c.fetch()` is that class's method (`ext.Client.fetch`).
                return Value("external", func.name, "instance")
            return None
        if func.kind == "instance":
            call = self.p.member(Symbol("class", func.name), "__call__")
            if call is not None and call.kind == "function":
                return self.returns(call.name)
        return None

    def _item(self, base: Value, key: ast.expr, ctx: Ctx, depth: int) -> Value | None:
        """`obj[key]` calls `type(obj).__getitem__(obj, key)`: the `@overload` whose
        `Literal[...]` parameter admits a constant key, else what it returns."""
        found: list[Value] = []
        for cls in base.each():
            sym = self.p.member(Symbol("class", cls.name), "__getitem__")
            if sym is None or sym.kind != "function":
                continue
            value = self._overload_return(sym.name, [key], 1) if self._overloads(sym.name) else None
            value = value or self.returns(sym.name)
            if value is not None and value.kind == "instance":
                found.append(value)
        return merge_classes(found)

    def _dict_item(self, mapping: ast.Dict, key: ast.expr, ctx: Ctx, depth: int) -> Value | None:
        """`{"a": A(), "b": self.b}[k]`: the value at a constant key, else any of them."""
        if isinstance(key, ast.Constant):
            for k, v in zip(mapping.keys, mapping.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == key.value:
                    return self.eval(v, ctx, depth)
            if all(isinstance(k, ast.Constant) for k in mapping.keys):
                return None  # (a KeyError)
        found = [v for e in mapping.values for v in [self.eval(e, ctx, depth)] if v is not None and v.kind == "instance"]
        return merge_classes(found) if len(found) == len(mapping.values) else None

    def _overloads(self, func: str) -> list[FuncDef]:
        """The `@typing.overload` signatures declared for `func`, in source order."""
        fd = self.p.functions.get(func)
        if fd is None:
            return []
        by_name = self._overloads_by_module.get(fd.module)
        if by_name is None:
            by_name = self._overloads_by_module[fd.module] = {}
            for fn in self.p.modules[fd.module].functions:
                if fn.decorators and any(d.endswith("overload") for d in fn.decorators):
                    by_name.setdefault(fn.qualname, []).append(FuncDef(fd.module, fn, fd.path, f"{fd.module}.{fn.qualname}"))
        found = by_name.get(fd.fact.qualname)
        return [ov for ov in found if ov.fact is not fd.fact] if found else []

    def _overload_return(self, func: str, args: list[ast.expr], skip: int) -> Value | None:
        """The return type of the first overload the arguments match, judged by
        the constant arguments against `Literal[...]` parameters (others match)."""
        for ov in self._overloads(func):
            params = [p for p in ov.fact.params if p.kind in ("positional_only", "positional")][skip:]
            fits, decided = True, False
            for arg, prm in zip(args, params, strict=False):
                allowed = _literal_values(self.p.parser.parse(prm.annotation) if prm.annotation else None)
                if allowed is None:
                    continue
                if not isinstance(arg, ast.Constant):
                    return None  # a Literal parameter and a key not known: the overloads cannot choose
                decided = True
                fits = fits and arg.value in allowed
            if fits and ov.fact.returns:
                if not decided:
                    return None  # (the catch-all overload: as good as the implementation)
                return self.annotation(ov.fact.returns, ov.module, _parent(ov.fact.qualname), "return")
        return None

    def super_class(self, node: ast.Call, ctx: Ctx, depth: int) -> str | None:
        """The class whose MRO `super()` continues from."""
        if node.args:
            first = self.eval(node.args[0], ctx, depth)
            return first.name if first is not None and first.kind == "class" else None
        return self.class_of_scope(ctx.module, ctx.scope)

    def super_member(self, cls: str, attr: str) -> Value | None:
        passed: str | None = None
        for owner in self.p.hierarchy.mro(cls)[1:]:
            if owner not in self.p.classes:
                if _builtin_lacks(owner, attr):
                    # `class String(str, Item)`: `super().__init__` is Item's (str has none)
                    passed = passed or owner
                    continue
                return Value("external", f"{owner}.{attr}", "super")
            qual = f"{owner}.{attr}"
            if qual in self.p.functions:
                return Value("function", qual, "super", bound=True)
        # (nothing after it has the name: `object`'s, reached through the builtin base)
        return Value("external", f"{passed}.{attr}", "super") if passed is not None else None

    def class_of_scope(self, module: str, scope: str) -> str | None:
        for sc in self.p.chain(scope):
            qual = f"{module}.{sc}"
            cls = self.p.enclosing_class(qual)
            if cls is not None:
                return cls
            if qual in self.p.classes:
                return qual
        return None


# Generic containers whose iteration yields their first type argument.
_GENERICS_TEXT = (
    "List list Sequence MutableSequence Iterable Iterator Collection Set set FrozenSet frozenset AbstractSet "
    "MutableSet Deque deque Generator AsyncIterator AsyncIterable AsyncGenerator Reversible KeysView "
    "Dict dict Mapping MutableMapping OrderedDict DefaultDict defaultdict Counter Tuple tuple"
)
_ITERABLE_GENERICS = frozenset(_GENERICS_TEXT.split())


_UNTYPED = frozenset({"typing.Any", "typing_extensions.Any", "builtins.object"})
_CONTEXT_MANAGERS = frozenset({"contextmanager", "asynccontextmanager"})
_MAPPINGS = frozenset(["Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict"])
# Methods of builtin containers that return one element (a mapping's value).
_ELEMENT_METHODS = frozenset({"pop", "popleft", "get", "setdefault"})
# Calls that build a sequence from the list they are given.
_SEQUENCE_BUILDERS = frozenset({"ModuleList", "Sequential", "list", "tuple", "deque"})
# Builtins that call a function argument on the elements of an iterable argument:
# name -> (the function's position or keyword, the iterable's position, the
# parameter that receives each element). `reduce(f, xs)` calls `f(acc, x)`.
_ELEMENT_CALLERS: dict[str, tuple[int | str, int, int]] = {
    "builtins.map": (0, 1, 0), "builtins.filter": (0, 1, 0), "itertools.filterfalse": (0, 1, 0),
    "itertools.takewhile": (0, 1, 0), "itertools.dropwhile": (0, 1, 0), "functools.reduce": (0, 1, 1),
    "builtins.sorted": ("key", 0, 0), "builtins.min": ("key", 0, 0), "builtins.max": ("key", 0, 0),
    "heapq.nsmallest": ("key", 1, 0), "heapq.nlargest": ("key", 1, 0),
}
_ELEMENT_COPIES = frozenset({"sorted", "list", "tuple", "reversed", "set", "frozenset", "iter"})
_ELEMENT_CALLER_NAMES = frozenset(n.rpartition(".")[2] for n in _ELEMENT_CALLERS)


def _element_annotation(node: ast.expr | None, depth: int = 0, *, item: bool = False) -> str | None:
    """`list[Req]`, `Optional[Sequence["Req"]]`, `tuple[Req, ...]` -> `Req`
    (a mapping's keys, or with `item` its values; a tuple only when it is homogeneous)."""
    if node is None or depth > 4:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _element_annotation(ast.parse(node.value, mode="eval").body, depth + 1, item=item)
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [n for n in (node.left, node.right) if not (isinstance(n, ast.Constant) and n.value is None)]
        return _element_annotation(sides[0], depth + 1, item=item) if len(sides) == 1 else None
    if not isinstance(node, ast.Subscript):
        return None
    head = dotted_name(node.value)
    last = head.rpartition(".")[2] if head else ""
    args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if last == "Optional" and args:
        return _element_annotation(args[0], depth + 1, item=item)
    if last not in _ITERABLE_GENERICS or not args:
        return None
    if last in ("Tuple", "tuple") and not (len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis):
        return None
    if item and last in ("Counter", "Generator", "Iterator", "Iterable", "AsyncIterator", "AsyncIterable", "AsyncGenerator"):
        return None  # a count, or no subscript at all
    if item and last in _MAPPINGS:
        return ast.unparse(args[1]) if len(args) == 2 else None
    return ast.unparse(args[0])


def _tuple_arg(node: ast.expr | None, index: int) -> str | None:
    """`tuple[Key | None, Item]`, index 1 -> `Item`; None for a tuple of any length (`tuple[X, ...]`)
    or an index out of its range."""
    if not isinstance(node, ast.Subscript) or (dotted_name(node.value) or "").rpartition(".")[2] not in ("tuple", "Tuple"):
        return None
    args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if any(isinstance(a, ast.Constant) and a.value is Ellipsis for a in args) or not -len(args) <= index < len(args):
        return None
    return ast.unparse(args[index])


def _literal_values(node: ast.expr | None) -> list[object] | None:
    """The constants of a `Literal[...]` annotation (`typing.Literal["a", "b"]`), else None."""
    if not isinstance(node, ast.Subscript) or (dotted_name(node.value) or "").rpartition(".")[2] != "Literal":
        return None
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return [e.value for e in elts if isinstance(e, ast.Constant)]


def _builtin_lacks(owner: str, attr: str) -> bool:
    """`owner` is a builtin type (`builtins.str`) that defines no `attr` short of
    `object` (read off the running interpreter's type and its bases: ValueError
    has BaseException's `__str__`): an MRO lookup goes past it to the bases after."""
    head, _, name = owner.rpartition(".")
    typ = getattr(builtins, name, None) if head == "builtins" else None
    return isinstance(typ, type) and typ is not object and not any(attr in vars(t) for t in typ.__mro__[:-1])


def _is_super_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and dotted_name(node.func) == "super"


def _parent(qualname: str) -> str:
    return qualname.rpartition(".")[0] or MODULE_SCOPE


def _attr_name(target: str) -> str:
    return target.rpartition(".")[2]


def _as_attribute(value: Value) -> Value:
    """A type learned from an assignment to the attribute (not its annotation)."""
    return value.with_via("attribute") if value.via in _FROM_ASSIGNMENT else value
