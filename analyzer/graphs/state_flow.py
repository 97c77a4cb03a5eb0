"""Which object an expression of the facts denotes, for the state graph: its
class and, when it is the value of an attribute, which attribute (its *place*).

`self.waiting` is the value of `Scheduler.waiting` (direct); `q` after
`q = self._select_queue()` is too when `_select_queue` returns `self.waiting`
(alias); `req` after `req = self.requests[rid]`, `.get(rid)` or
`for req in self.reqs` is an element of `Scheduler.requests`, an instance of
whatever the container's annotation, constructor or stored values say (element).

`Mutation` decides, to a fixed point over the call graph, which functions change
a parameter's object (for a method, parameter 0 is the receiver: a *mutating
method* such as a queue's `add_request` or a free list's `popleft_n`), so a call
`self.waiting.add_request(r)` or `policy.sort(self.waiting_queue)` writes the
attribute that holds the object.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from analyzer.graphs.state_source import SourceReader
from analyzer.index.extract import FIRST_ARG_MUTATORS, MUTATING_METHODS
from analyzer.index.models import AttributeAccess, CallSite, ModuleFacts
from analyzer.resolve import CallResolver, Project
from analyzer.resolve.exprs import dotted_name
from analyzer.resolve.infer import Ctx
from analyzer.resolve.models import Value, immutable
from analyzer.resolve.project import MODULE_SCOPE, FuncDef, Symbol

WRITE_KINDS = frozenset({"assign", "augassign", "del", "item_assign", "item_del", "mutating_call"})
# Library functions that change their first argument in place, beyond the index's heapq / bisect.
EXTERNAL_ARG_MUTATORS = {
    **{name: name.rpartition(".")[2] for name in FIRST_ARG_MUTATORS},
    "random.shuffle": "shuffle",
    "shuffle": "shuffle",
}
# `x.get(k)`, `x.pop()`: an element of the container x.
_ELEMENT_GETTERS = frozenset({"get", "pop", "popleft", "setdefault", "__getitem__"})
# `for x in f(c)` iterates over c's elements.
_ELEMENT_PASSTHROUGH = frozenset({"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter", "deque",
                                  "collections.deque", "copy.copy"})
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "defaultdict", "OrderedDict", "DefaultDict",
                       "OrderedDictType", "WeakValueDictionary", "ChainMap", "Counter"})
_WRAPPERS = frozenset({"Optional", "Annotated", "ClassVar", "Final", "Required", "NotRequired", "ReadOnly"})
_MAX_BINDINGS = 6  # bindings of one local name followed
_MAX_DEPTH = 10
_MAX_STORES = 64  # stores of one attribute name read for what it holds
_DESCENDANTS = 64
# A binding whose value may be an attribute's object or an element of one:
# `self.x`, `a.b`, `x[k]`, `x.get(k)`, `self.m()`, `a.b.m()`.
_MAY_HOLD_STATE = re.compile(r"\bself\b|\w\.\w+\s*(\.|\[|$)|\]|\[|\w\.\w+\.\w+\s*\(|\.(get|pop|popleft|setdefault)\s*\(")
_RETURNS_ATTR = re.compile(r"\breturn\b[^\n]*\bself\.")


@immutable
class Ann:
    """An annotation text and where to resolve its names."""

    text: str
    module: str
    scope: str


@immutable
class Obj:
    """What an expression denotes. `place` is (class, attribute) when the object is
    that attribute's value; `via` how it was reached (direct, alias, element);
    `param` the enclosing function's parameter index when it is a parameter."""

    cls: str | None
    place: tuple[str, str] | None = None
    via: str = "direct"
    detail: str | _Lazy | None = None  # shown with str()
    param: int | None = None
    ann: Ann | None = None


@dataclass(slots=True)
class FunctionFacts:
    facts: ModuleFacts
    fd: FuncDef
    accesses: list[AttributeAccess]
    calls: list[CallSite]


class Tracer:
    def __init__(self, project: Project, resolver: CallResolver, source: SourceReader) -> None:
        self.p = project
        self.r = resolver
        self.infer = resolver.infer
        self.source = source
        self._memo: dict[tuple[str, str, str, bool], tuple[Obj, ...]] = {}
        self._local_memo: dict[tuple[str, str, str, bool], tuple[Obj, ...]] = {}
        # A parameter's object: its memoised inferred type and its annotation only.
        self._param_memo: dict[tuple[str, str, str], tuple[Obj, ...]] = {}
        self._function_of: dict[tuple[str, str], FuncDef | None] = {}
        self._attr_ann: dict[tuple[str, str], Ann | None] = {}
        self._class_elem: dict[str, tuple[Obj, ...]] = {}
        self._returns: dict[str, tuple[Obj, ...]] = {}
        self._stored: dict[tuple[str, str], tuple[Obj, ...]] = {}
        self.functions: dict[str, FunctionFacts] = {}
        self._appends: dict[str, list[tuple[ModuleFacts, CallSite]]] = {}
        self._attr_stores: dict[str, list[tuple[ModuleFacts, AttributeAccess]]] = {}
        self._assigned: dict[tuple[str, str], tuple[str, ...]] = {}
        for facts in project.modules.values():
            self._index_module(facts)

    # -- per-function facts --------------------------------------------------

    def _index_module(self, facts: ModuleFacts) -> None:
        p = self.p
        if p.modules.get(facts.module) is not facts:
            return

        seen: dict[str, FunctionFacts | None] = {}  # scope -> its function's facts (a module has few scopes)

        def owner(scope: str) -> FunctionFacts | None:
            if scope in seen:
                return seen[scope]
            name = self.r.caller_of(facts.module, scope)
            fd = p.functions.get(name)
            ff = None
            if fd is not None:
                ff = self.functions.get(name)
                if ff is None:
                    ff = self.functions[name] = FunctionFacts(facts, fd, [], [])
            seen[scope] = ff
            return ff

        # (`seen` read inline: these loops run once per access and call of the tree)
        for acc in facts.accesses:
            ff = seen[acc.scope] if acc.scope in seen else owner(acc.scope)
            if ff is not None:
                ff.accesses.append(acc)
            if acc.kind == "assign":
                self._attr_stores.setdefault(acc.attr, []).append((facts, acc))
        for site in facts.calls:
            ff = seen[site.scope] if site.scope in seen else owner(site.scope)
            if ff is not None:
                ff.calls.append(site)
            head, _, method = site.callee.rpartition(".")
            if method in ("append", "appendleft", "add", "insert", "put", "put_nowait") and head:
                self._appends.setdefault(head.rpartition(".")[2], []).append((facts, site))

    def function_of(self, module: str, scope: str) -> FuncDef | None:
        key = (module, scope)
        try:
            return self._function_of[key]
        except KeyError:
            found = self._function_of[key] = self.p.functions.get(self.r.caller_of(module, scope))
            return found

    # -- objects ---------------------------------------------------------------

    def objects(self, text: str, module: str, scope: str, loops: bool = True) -> tuple[Obj, ...]:
        key = (module, scope, text, loops)
        found = self._memo.get(key)
        if found is not None:
            return found
        if text.startswith("self") and (len(text) == 4 or text[4] == "."):
            # `self` and `self.a.b` mean the same in every method of a class: one answer per class.
            fd = self.function_of(module, scope)
            if fd is not None and fd.fact.is_method and fd.fact.params and fd.fact.params[0].name == "self":
                scope = fd.fact.qualname
                class_key = (module, scope.rpartition(".")[0], text, False)
                found = self._memo.get(class_key)
                if found is None:
                    self._memo[class_key] = ()
                    node = self.p.parser.parse(text)
                    found = () if node is None else self.eval(node, module, scope, False, 0)
                    self._memo[class_key] = found
                self._memo[key] = found
                return found
        if found is None:
            self._memo[key] = ()  # cycle guard
            node = self.p.parser.parse(text)
            found = () if node is None else self.eval(node, module, scope, loops, 0)
            self._memo[key] = found
        return found

    def eval(self, node: ast.expr, module: str, scope: str, loops: bool, depth: int) -> tuple[Obj, ...]:
        if depth > _MAX_DEPTH:
            return ()
        d = depth + 1
        if isinstance(node, ast.Name):
            return self._name(node.id, module, scope, loops, d)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Call) and dotted_name(node.value.func) == "super":
                return self._infer(node, module, scope)
            out: list[Obj] = []
            for o in self.eval(node.value, module, scope, loops, d):
                if o.cls is None:
                    continue
                ann = self.attr_annotation(o.cls, node.attr)
                held = self.infer.attribute(Value("instance", o.cls, "self" if o.param == 0 else "attribute"),
                                            node.attr)
                cls = held.name if held is not None and held.kind == "instance" else None
                if cls is None and ann is None:
                    # `self.leader = None` in the constructor, `group.leader = req` elsewhere:
                    # what the attribute holds is what is stored into it.
                    kinds = self.assigned(o.cls, node.attr)
                    if kinds:
                        out.extend(Obj(k, (o.cls, node.attr), o.via, o.detail, None, None) for k in kinds)
                        continue
                out.append(Obj(cls, (o.cls, node.attr), o.via, o.detail, None, ann))
            return tuple(out) or self._infer(node, module, scope)
        if isinstance(node, ast.Subscript):
            return self.elements(node.value, module, scope, loops, d, _Lazy(node))
        if isinstance(node, ast.Call):
            return self._call(node, module, scope, loops, d)
        if isinstance(node, ast.IfExp):
            return self.eval(node.body, module, scope, loops, d) + self.eval(node.orelse, module, scope, loops, d)
        if isinstance(node, ast.BoolOp):
            return tuple(o for v in node.values for o in self.eval(v, module, scope, loops, d))
        if isinstance(node, ast.Await | ast.NamedExpr):
            return self.eval(node.value, module, scope, loops, d)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # `self.running + self.swapped`: a new container holding both sides' elements.
            sides = self.eval(node.left, module, scope, loops, d) + self.eval(node.right, module, scope, loops, d)
            if sides:
                return tuple(Obj(o.cls, None, o.via, o.detail, None, o.ann) for o in sides)
        return self._infer(node, module, scope)

    def _infer(self, node: ast.expr, module: str, scope: str) -> tuple[Obj, ...]:
        value = self.infer.eval(node, Ctx(module, scope))
        if value is not None and value.kind in ("instance", "class"):
            return (Obj(value.name),)
        return ()

    def _name(self, name: str, module: str, scope: str, loops: bool, depth: int) -> tuple[Obj, ...]:
        fd = self.function_of(module, scope)
        if fd is None or fd.module != module:
            return self._infer(ast.Name(id=name, ctx=ast.Load()), module, scope)
        sc = fd.fact.qualname
        found = self._param_memo.get((module, sc, name))
        if found is not None:
            return found
        for i, prm in enumerate(fd.fact.params):
            if prm.name != name:
                continue
            value = self.infer.eval_text(name, Ctx(module, sc))
            cls = value.name if value is not None and value.kind == "instance" else None
            ann = Ann(prm.annotation, module, _parent(sc)) if prm.annotation else None
            if i == 0 and ann is not None and cls is not None:
                # `def f(self: Scheduler)` in a mixin: the instance is the composite's.
                declared = self.infer.annotation(ann.text, module, ann.scope, "annotation")
                if declared is not None and declared.kind == "instance" and declared.name != cls:
                    cls = declared.name
            found = self._param_memo[(module, sc, name)] = (Obj(cls, None, "direct", None, i, ann),)
            return found
        key = (module, sc, name, loops)
        found = self._local_memo.get(key)
        if found is not None:
            return found
        self._local_memo[key] = ()  # cycle guard: `x = x.next`
        out: list[Obj] = []
        asgs = self.p.scope(module, sc).assignments.get(name, [])
        if any(asg.value is None for asg in asgs):
            # `a, b = value`: the facts keep no value; the body says which part of what.
            out.extend(self._unpacked(name, fd, module, sc, loops, depth))
        if asgs and not any(asg.value and _MAY_HOLD_STATE.search(asg.value) for asg in asgs):
            # `x = Foo(...)`, `x = f(y)`: no attribute or element in sight, the plain type will do.
            if out:
                found = self._local_memo[key] = tuple(out)
                return found
            found = self._local_memo[key] = self._infer(ast.Name(id=name, ctx=ast.Load()), module, scope)
            return found
        for asg in sorted(asgs, key=lambda a: -a.line)[:_MAX_BINDINGS]:
            if asg.value is None:
                continue
            node = self.p.parser.parse(asg.value)
            if node is None:
                continue
            binding = f"{name} = {asg.value}"
            for o in self.eval(node, module, sc, loops, depth):
                via = "alias" if o.via == "direct" and o.place is not None else o.via
                out.append(Obj(o.cls, o.place, via, binding, None, o.ann))
            if asg.annotation and not any(o.cls for o in out):
                value = self.infer.annotation(asg.annotation, module, sc, "annotation")
                if value is not None and value.kind == "instance":
                    out.append(Obj(value.name, None, "direct", None, None, Ann(asg.annotation, module, sc)))
        if not asgs:
            # A loop variable is followed here (its container is the place), not
            # through the inferrer's element type, which says only the class.
            looped = loops and self.infer.is_loop_variable(module, sc, name)
            if not looped:
                out.extend(self._infer(ast.Name(id=name, ctx=ast.Load()), module, scope))
            ff = self.functions.get(fd.name) if loops and not out else None
            # Only a name nothing else binds can be a loop variable; the regex spares
            # parsing functions without such a loop.
            if ff is not None:
                for loop in self.source.loops(ff.facts, fd, name)[:_MAX_BINDINGS]:
                    out.extend(self._loop(loop.iterable, loop.position, module, sc, depth,
                                          f"for {name} in {loop.iterable}"))
            if looped and not out:
                out.extend(self._infer(ast.Name(id=name, ctx=ast.Load()), module, scope))
        found = self._local_memo[key] = tuple(out)
        return found

    def _unpacked(self, name: str, fd: FuncDef, module: str, scope: str, loops: bool,
                  depth: int) -> list[Obj]:
        """`a, b = self.x, self.y` (each an alias), `idx, blk = self.hits.get(rid)` with
        `hits: dict[str, tuple[int, Block]]` (blk an element: the tuple's second type)."""
        ff = self.functions.get(fd.name)
        if ff is None:
            return []
        out: list[Obj] = []
        for b in self.source.unpacks(ff.facts, fd, name)[:_MAX_BINDINGS]:
            node = self.p.parser.parse(b.iterable)
            if node is None:
                continue
            binding = f"{b.target or name} = {b.iterable}"
            for o in self.eval(node, module, scope, loops, depth):
                if b.position is None:
                    via = "alias" if o.via == "direct" and o.place is not None else o.via
                    out.append(Obj(o.cls, o.place, via, binding, None, o.ann))
                elif o.ann is not None:
                    item = self._tuple_item(o.ann, b.position)
                    if item is not None:
                        value = self.infer.annotation(item.text, item.module, item.scope, "annotation")
                        cls = value.name if value is not None and value.kind == "instance" else None
                        via = "element" if o.via == "element" or o.place is not None else o.via
                        out.append(Obj(cls, None, via, binding, None, item))
        return out

    def _tuple_item(self, ann: Ann, position: int) -> Ann | None:
        """`tuple[int, Block]` (or `Optional[...]` of it) at `position`; `tuple[X, ...]` -> X."""
        node = self.p.parser.parse(ann.text)
        for _ in range(4):
            step = _peel(node, self.p)
            if step is None:
                return None
            if isinstance(step, ast.expr):
                node = step
                continue
            head, args = step
            if head in _WRAPPERS or head in ("Optional", "Union"):
                node = args[0]
                continue
            if head not in ("tuple", "Tuple"):
                return None
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return Ann(ast.unparse(args[0]), ann.module, ann.scope)
            return Ann(ast.unparse(args[position]), ann.module, ann.scope) if position < len(args) else None
        return None

    def _loop(self, iterable: str, position: int | None, module: str, scope: str, depth: int,
              detail: str | _Lazy) -> tuple[Obj, ...]:
        node = self.p.parser.parse(iterable)
        if node is None:
            return ()
        if isinstance(node, ast.Call):
            head = dotted_name(node.func) or ""
            method = head.rpartition(".")[2]
            if head == "enumerate" and node.args:
                return self.elements(node.args[0], module, scope, True, depth, detail) if position == 1 else ()
            if head == "zip" and position is not None and position < len(node.args):
                return self.elements(node.args[position], module, scope, True, depth, detail)
            if isinstance(node.func, ast.Attribute) and method in ("items", "values"):
                if method == "items" and position != 1:
                    return ()
                return self.elements(node.func.value, module, scope, True, depth, detail, mapping_value=True)
        if position is not None:
            return ()
        return self.elements(node, module, scope, True, depth, detail)

    def _call(self, node: ast.Call, module: str, scope: str, loops: bool, depth: int) -> tuple[Obj, ...]:
        func = node.func
        text = _Lazy(node)
        if isinstance(func, ast.Attribute):
            receivers = self.eval(func.value, module, scope, loops, depth)
            out: list[Obj] = []
            for o in receivers:
                method = self.p.member(Symbol("class", o.cls), func.attr) if o.cls else None
                if method is not None and method.kind == "function":
                    out.extend(self.returned(method.name, o, text))
                elif func.attr in _ELEMENT_GETTERS:
                    out.extend(self._element_objs(o, text, mapping_value=func.attr in ("get", "setdefault")))
            if out:
                return tuple(out)
        head = dotted_name(func)
        if head in _ELEMENT_PASSTHROUGH and node.args:
            return ()  # a copy: a new object, not the attribute's
        value = self.infer.eval(func, Ctx(module, scope))
        if value is not None and value.kind == "function" and value.name in self.p.functions:
            return self.returned(value.name, None, text)
        return self._infer(node, module, scope)

    def returned(self, func: str, receiver: Obj | None, text: str | _Lazy) -> tuple[Obj, ...]:
        """What a call of project function `func` gives back: its return annotation's
        class, and the attributes it hands out (`return self.waiting`)."""
        found = self._returns.get(func)
        if found is None:
            self._returns[func] = ()  # cycle guard
            fd = self.p.functions[func]
            out: list[Obj] = []
            value = self.infer.returns(func)
            if fd.fact.returns:
                # Kept even when not a project class: `-> list[Sequence]` still types its elements.
                cls = value.name if value is not None and value.kind == "instance" else None
                out.append(Obj(cls, ann=Ann(fd.fact.returns, fd.module, _parent(fd.fact.qualname))))
            ff = self.functions.get(func)
            if ff is not None and self.source.mentions(ff.facts, fd, _RETURNS_ATTR):
                for expr in self.source.body(ff.facts, fd).returns:
                    for o in self.objects(expr, fd.module, fd.fact.qualname, loops=False):
                        if o.place is not None and o.via in ("direct", "alias"):
                            out.append(Obj(o.cls, o.place, "alias", None, None, o.ann))
            found = self._returns[func] = tuple(out)
        out2 = []
        for o in found:
            if o.place is not None:
                out2.append(Obj(o.cls, o.place, "alias", f"returned by {func.rpartition('.')[2]}()", None, o.ann))
            elif receiver is not None and receiver.place is not None:
                # `self.waiting.pop_request()`: an element handed out by the container.
                out2.append(Obj(o.cls, None, "element", text, None, o.ann))
            else:
                out2.append(o)
        return tuple(out2)

    # -- elements ----------------------------------------------------------------

    def elements(self, node: ast.expr, module: str, scope: str, loops: bool, depth: int, detail: str | _Lazy,
                 mapping_value: bool = False) -> tuple[Obj, ...]:
        if isinstance(node, ast.Call):
            head = dotted_name(node.func) or ""
            if head in _ELEMENT_PASSTHROUGH and node.args:
                return self.elements(node.args[0], module, scope, loops, depth, detail)
            if isinstance(node.func, ast.Attribute) and node.func.attr == "values":
                return self.elements(node.func.value, module, scope, loops, depth, detail, mapping_value=True)
        if isinstance(node, ast.Tuple | ast.List):
            # `for queue in (self.running, self.waiting)`: each item is itself an alias.
            items = tuple(o for el in node.elts for o in self.eval(el, module, scope, loops, depth))
            return tuple(Obj(o.cls, o.place, "alias" if o.place else o.via, detail, None, o.ann) for o in items)
        out: list[Obj] = []
        for o in self.eval(node, module, scope, loops, depth):
            out.extend(self._element_objs(o, detail, mapping_value))
        return tuple(out)

    def _element_objs(self, o: Obj, detail: str | _Lazy, mapping_value: bool = False) -> list[Obj]:
        out: list[Obj] = []
        if o.ann is not None:
            for cls, ann in self._ann_elements(o.ann):
                out.append(Obj(cls, None, "element", detail, None, ann))
        if not out and o.place is not None:
            out.extend(Obj(s.cls, None, "element", detail, None, s.ann) for s in self.stored(*o.place))
        if not out and o.cls is not None:
            out.extend(Obj(e.cls, None, "element", detail, None, e.ann) for e in self.class_elements(o.cls))
        return out

    def _ann_elements(self, ann: Ann) -> list[tuple[str | None, Ann]]:
        """`dict[str, Request]` -> Request; `list[Req]`, `Iterable[Req]`, `deque[Req]` -> Req."""
        node = self.p.parser.parse(ann.text)
        args = _container_args(node, self.p) if node is not None else None
        if not args:
            if node is not None:
                # A project class used as a container: its own element type.
                value = self.infer.annotation(ann.text, ann.module, ann.scope, "annotation")
                if value is not None and value.kind == "instance":
                    return [(e.cls, e.ann or ann) for e in self.class_elements(value.name)]
            return []
        text = ast.unparse(args)
        value = self.infer.annotation(text, ann.module, ann.scope, "annotation")
        cls = value.name if value is not None and value.kind == "instance" else None
        return [(cls, Ann(text, ann.module, ann.scope))]

    def class_elements(self, cls: str) -> tuple[Obj, ...]:
        """Elements of an instance of a project container class: from a generic base
        (`class Queue(deque[Request])`) or its `__iter__` / `__getitem__` annotation."""
        found = self._class_elem.get(cls)
        if found is not None:
            return found
        self._class_elem[cls] = ()
        out: list[Obj] = []
        for owner in self.p.hierarchy.mro(cls):
            cd = self.p.classes.get(owner)
            if cd is None:
                continue
            scope = cd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
            for base in cd.fact.bases:
                for el_cls, ann in self._ann_elements(Ann(base, cd.module, scope)):
                    out.append(Obj(el_cls, ann=ann))
            for name in ("__iter__", "__getitem__"):
                fd = self.p.functions.get(f"{owner}.{name}")
                if fd is not None and fd.fact.returns:
                    ann = Ann(fd.fact.returns, fd.module, _parent(fd.fact.qualname))
                    if name == "__getitem__":
                        value = self.infer.annotation(ann.text, ann.module, ann.scope, "annotation")
                        if value is not None and value.kind == "instance":
                            out.append(Obj(value.name, ann=ann))
                    else:
                        out.extend(Obj(c, ann=a) for c, a in self._ann_elements(ann))
            if out:
                break
        found = self._class_elem[cls] = tuple(o for o in out if o.cls is not None)
        return found

    def assigned(self, cls: str, attr: str) -> tuple[str, ...]:
        """Project classes of the values stored into `attr` of instances of `cls` (or a
        related class) anywhere: `group.leader = req` with `req: Req` -> Req. Each store's
        right-hand side is read from its source line."""
        key = (cls, attr)
        found = self._assigned.get(key)
        if found is not None:
            return found
        self._assigned[key] = ()  # cycle guard
        if not self._starts_empty(cls, attr):
            return ()  # only a placeholder (`= None`) leaves what it holds to later stores
        out: dict[str, None] = {}
        for facts, acc in self._attr_stores.get(attr, ())[:_MAX_STORES]:
            value = self.source.store_value(facts, acc.line, f"{acc.base}.{attr}")
            if value is None or value == "None":
                continue
            if not any(o.cls is not None and (o.cls == cls or self._related(o.cls, cls))
                       for o in self.objects(acc.base, facts.module, acc.scope, loops=False)):
                continue
            for o in self.objects(value, facts.module, acc.scope, loops=False):
                if o.cls is not None:
                    out[o.cls] = None
        found = self._assigned[key] = tuple(out)
        return found

    def _starts_empty(self, cls: str, attr: str) -> bool:
        """Some class in the MRO declares the attribute as `None` (`self.leader = None`,
        `leader: X | None = None` without a class the resolver can read)."""
        for owner in self.p.hierarchy.mro(cls):
            cd = self.p.classes.get(owner)
            if cd is None:
                continue
            for asg in (*cd.fact.fields, *cd.fact.class_attributes):
                if asg.target == attr and asg.value == "None":
                    return True
            for asg in cd.fact.instance_attributes:
                if asg.value == "None" and asg.target.count(".") == 1 and asg.target.endswith("." + attr):
                    return True
        return False

    def stored(self, cls: str, attr: str) -> tuple[Obj, ...]:
        """Element types of an unannotated container attribute, from what is put into it
        (`self.reqs.append(req)` with `req: Req`)."""
        key = (cls, attr)
        found = self._stored.get(key)
        if found is not None:
            return found
        self._stored[key] = ()
        out: dict[str, Obj] = {}
        for facts, site in self._appends.get(attr, ()):
            if not site.args:
                continue
            receiver = site.callee.rpartition(".")[0]
            if not any(o.place == (cls, attr) or (o.place and o.place[1] == attr and self._related(o.place[0], cls))
                       for o in self.objects(receiver, facts.module, site.scope, loops=False)):
                continue
            arg = site.args[-1] if site.callee.endswith(".insert") else site.args[0]
            for o in self.objects(arg, facts.module, site.scope, loops=False):
                if o.cls is not None:
                    out.setdefault(o.cls, Obj(o.cls, ann=o.ann))
        found = self._stored[key] = tuple(out.values())
        return found

    def _related(self, a: str, b: str) -> bool:
        h = self.p.hierarchy
        return h.is_subclass(a, b) or h.is_subclass(b, a)

    def attr_annotation(self, cls: str, attr: str) -> Ann | None:
        key = (cls, attr)
        if key in self._attr_ann:
            return self._attr_ann[key]
        self._attr_ann[key] = None
        found: Ann | None = None
        h = self.p.hierarchy
        for owner in [*h.mro(cls), *h.descendants(cls)[:_DESCENDANTS]]:
            cd = self.p.classes.get(owner)
            if cd is None:
                continue
            for asg in cd.fact.fields:
                if asg.target == attr and asg.annotation:
                    found = Ann(asg.annotation, cd.module, cd.fact.qualname)
                    break
            if found is None:
                for asg in cd.fact.instance_attributes:
                    if asg.annotation and asg.target.rpartition(".")[2] == attr and asg.target.count(".") == 1:
                        found = Ann(asg.annotation, cd.module, asg.scope)
                        break
            if found is None:
                for asg in cd.fact.instance_attributes:
                    if asg.target.count(".") == 1 and asg.target.rpartition(".")[2] == attr and asg.value:
                        found = self._value_annotation(asg.value, cd.module, asg.scope)
                        if found is not None:
                            break
            if found is not None:
                break
        self._attr_ann[key] = found
        return found

    def _value_annotation(self, value: str, module: str, scope: str) -> Ann | None:
        """`self.reqs = list(reqs)` with `reqs: list[Req]`: the parameter's annotation."""
        node = self.p.parser.parse(value)
        while isinstance(node, ast.Call) and dotted_name(node.func) in _ELEMENT_PASSTHROUGH and node.args:
            node = node.args[0]
        if isinstance(node, ast.Name):
            fd = self.p.functions.get(f"{module}.{scope}")
            if fd is not None:
                for prm in fd.fact.params:
                    if prm.name == node.id and prm.annotation:
                        return Ann(prm.annotation, module, _parent(scope))
        return None


class _Lazy:
    """An expression's source text, unparsed only when shown (most never are)."""

    __slots__ = ("_text", "node")

    def __init__(self, node: ast.expr) -> None:
        self.node = node
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            self._text = ast.unparse(self.node)
        return self._text


_MUTABLE_HEADS = ("list", "List", "set", "Set", "dict", "Dict", "deque", "Deque", "bytearray", "MutableSequence",
                  "MutableSet", "MutableMapping", "collections.deque", "typing.List", "typing.Dict", "typing.Set")


def mutable_annotation(text: str | None) -> bool:
    """An annotation naming a builtin mutable container (`list[int]`, `Optional[Dict[...]]`)."""
    if not text:
        return False
    for wrapper in ("Optional[", "typing.Optional["):
        if text.startswith(wrapper):
            text = text[len(wrapper):]
    return text.startswith(_MUTABLE_HEADS)


def _parent(qualname: str) -> str:
    return qualname.rpartition(".")[0] or MODULE_SCOPE


def _peel(node: ast.expr | None, project: Project) -> ast.expr | tuple[str, list[ast.expr]] | None:
    """One step of reading an annotation: a quoted annotation parsed, `X | None` reduced to
    X (the next node to read), or a subscript split into its head's last name and its
    arguments; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return project.parser.parse(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left = node.left
        return node.right if isinstance(left, ast.Constant) and left.value is None else left
    if not isinstance(node, ast.Subscript):
        return None
    head = (dotted_name(node.value) or "").rpartition(".")[2]
    args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return head, list(args)


def _container_args(node: ast.expr, project: Project) -> ast.expr | None:
    """The element annotation of a container annotation, or None."""
    for _ in range(6):
        step = _peel(node, project)
        if step is None:
            return None
        if isinstance(step, ast.expr):
            node = step
            continue
        head, args = step
        if head in _WRAPPERS or head == "Union":
            node = next((a for a in args if not (isinstance(a, ast.Constant) and a.value is None)
                         and dotted_name(a) not in ("None", "NoneType")), args[0])
            continue
        if head in _MAPPINGS:
            return args[-1] if len(args) >= 2 else None
        if head in ("tuple", "Tuple") and len(args) == 2 and isinstance(args[1], ast.Constant):
            return args[0]  # tuple[X, ...]
        if head in ("tuple", "Tuple"):
            return None
        return args[0]
    return None


@dataclass(slots=True)
class _Uses:
    written: set[str]  # names whose object an access writes (`n.x = v`, `n.x.append(v)`)
    receivers: dict[str, list[tuple[CallSite, str, str]]]  # name -> (site, receiver text, method)
    arguments: dict[str, list[tuple[CallSite, int | str]]]  # name -> (site, positional index or keyword)


class Mutation:
    """Which parameters a function changes in place, to a fixed point over the call
    graph: (function, i) holds when the body writes parameter i's object (an
    attribute store, an item store, a builtin mutator such as `append`, `heapq.heappush`,
    `random.shuffle`), or passes it on to a parameter that holds, or calls on it a
    method whose receiver holds (for a receiver, any override in a subclass counts).

    A question explores the (function, parameter) nodes it depends on, once each,
    then solves that part of the graph by propagating `True` backwards along the
    dependencies until nothing changes; every node explored keeps its answer."""

    def __init__(self, tracer: Tracer) -> None:
        self.t = tracer
        self.p = tracer.p
        self._memo: dict[tuple[str, int], bool] = {}
        self._names: dict[str, bool] = {}
        self._targets: dict[tuple[str, str, str], tuple[tuple[str, bool], ...]] = {}
        self._uses_memo: dict[str, _Uses] = {}

    def name_mutates(self, method: str) -> bool:
        """Some project method of this name changes its receiver (a cheap first filter)."""
        found = self._names.get(method)
        if found is None:
            targets = self.p.methods_by_name.get(method, ())
            found = self._names[method] = any(
                self._receiver_index(f) is not None and self.mutates(f, 0) for f in targets
            )
        return found

    def implementations(self, cls: str, method: str) -> list[str]:
        """`method` as it may run on an instance of `cls`: the MRO's, then overrides."""
        sym = self.p.member(Symbol("class", cls), method)
        out: list[str] = []
        if sym is not None and sym.kind == "function":
            out.append(sym.name)
        for sub in self.p.hierarchy.descendants(cls)[:_DESCENDANTS]:
            qual = f"{sub}.{method}"
            if qual in self.p.functions and qual not in out:
                out.append(qual)
        return [f for f in out if self._receiver_index(f) is not None]

    def method_mutates(self, cls: str, method: str) -> bool:
        """Calling `method` on an instance of `cls` changes the instance."""
        return any(self.mutates(f, 0) for f in self.implementations(cls, method))

    def _receiver_index(self, func: str) -> int | None:
        fd = self.p.functions.get(func)
        if fd is None or not fd.fact.is_method or fd.fact.is_staticmethod or not fd.fact.params:
            return None
        return 0

    def mutates(self, func: str, index: int) -> bool:
        key = (func, index)
        found = self._memo.get(key)
        if found is not None:
            return found
        info: dict[tuple[str, int], tuple[bool, list[tuple[str, int]]]] = {}
        stack = [key]
        while stack:
            k = stack.pop()
            if k in info or k in self._memo:
                continue
            direct, deps = self._node(*k)
            info[k] = (direct, deps)
            if not direct:
                stack.extend(d for d in deps if d not in info and d not in self._memo)
        result = {k: v[0] for k, v in info.items()}
        users: dict[tuple[str, int], list[tuple[str, int]]] = {}
        work: list[tuple[str, int]] = [k for k, v in result.items() if v]
        for k, (direct, deps) in info.items():
            if direct:
                continue
            for d in deps:
                users.setdefault(d, []).append(k)
                if self._memo.get(d):
                    work.append(d)
        while work:
            done = work.pop()
            for k in users.get(done, ()):
                if not result[k]:
                    result[k] = True
                    work.append(k)
        self._memo.update(result)
        return self._memo[key]

    def _node(self, func: str, index: int) -> tuple[bool, list[tuple[str, int]]]:
        """Whether the body changes parameter `index` itself, and which (function,
        parameter) nodes would make it change it."""
        ff = self.t.functions.get(func)
        if ff is None:
            return False, []
        params = ff.fd.fact.params
        if index >= len(params) or params[index].kind not in ("positional_only", "positional", "keyword_only"):
            return False, []
        name = params[index].name
        uses = self._uses(ff)
        if name in uses.written:
            return True, []
        deps: list[tuple[str, int]] = []
        for site, head, method in uses.receivers.get(name, ()):
            objs = self.t.objects(head, ff.facts.module, site.scope, loops=False)
            for o in objs:
                if o.cls is not None and self.p.member_function(o.cls, method):
                    deps.extend((f, 0) for f in self.implementations(o.cls, method))
                elif method in MUTATING_METHODS:
                    return True, []  # a builtin container (or a subclass of one) changed in place
            if not objs and method in MUTATING_METHODS:
                return True, []
        for site, i in uses.arguments.get(name, ()):
            if i == 0 and site.callee in EXTERNAL_ARG_MUTATORS:
                return True, []
            deps.extend(self.arg_targets(ff.facts, site, i))
        receiver = index == 0 and self._receiver_index(func) == 0
        if not receiver:
            mutable = mutable_annotation(params[index].annotation)
            # `n += 1` rebinds an int parameter; only a container's `+=` changes the object.
            if any(st.kind != "augassign" or mutable for st in self.t.source.stores(ff.facts, ff.fd, name)):
                return True, []
        return False, deps

    def _uses(self, ff: FunctionFacts) -> _Uses:
        """One pass over a function's facts, grouped by the name each expression starts with."""
        found = self._uses_memo.get(ff.fd.name)
        if found is not None:
            return found
        uses = _Uses(set(), {}, {})
        # Grouped by each text's root, `a.b[c].d` -> `a` (the text before its first `.` or `[`).
        for acc in ff.accesses:
            if acc.kind in WRITE_KINDS:
                uses.written.add(acc.base.partition(".")[0].partition("[")[0])
        for site in ff.calls:
            head, _, method = site.callee.rpartition(".")
            if head:
                uses.receivers.setdefault(head.partition(".")[0].partition("[")[0], []).append((site, head, method))
            for i, arg in enumerate(site.args):
                if not arg.startswith("*"):
                    uses.arguments.setdefault(arg.partition(".")[0].partition("[")[0], []).append((site, i))
            for kw, arg in zip(site.keywords, site.keyword_values, strict=False):
                if kw != "**":
                    uses.arguments.setdefault(arg.partition(".")[0].partition("[")[0], []).append((site, kw))
        self._uses_memo[ff.fd.name] = uses
        return uses

    def arg_targets(self, facts: ModuleFacts, site: CallSite, i: int | str) -> list[tuple[str, int]]:
        """(function, parameter index) that positional argument i (or keyword argument
        i) of a call site binds, for each callee the call graph resolved (guesses left out)."""
        if isinstance(i, int) and site.args[i].startswith("*"):
            return []
        key = (facts.module, site.scope, site.callee)
        found = self._targets.get(key)
        if found is None:
            out: list[tuple[str, bool]] = []
            for edge in self.t.r.site_record(facts, site).edges:  # (callees only: no re-stamped copy)
                if edge.confidence == "guess":
                    continue
                fd = self.p.functions.get(edge.callee)
                if fd is None:
                    continue
                fn = fd.fact
                bound = fn.is_method and not fn.is_staticmethod and (
                    edge.kind != "direct" or fn.name == "__init__" or fn.is_classmethod
                )
                out.append((edge.callee, bound))
            found = self._targets[key] = tuple(out)
        if isinstance(i, str):
            # A keyword binds the parameter of that name wherever it stands (the receiver
            # is params[0] in the facts, so the index needs no shift).
            out2: list[tuple[str, int]] = []
            for callee, _ in found:
                params = self.p.functions[callee].fact.params
                j = next((k for k, prm in enumerate(params)
                          if prm.name == i and prm.kind in ("positional", "keyword_only")), None)
                if j is not None:
                    out2.append((callee, j))
            return out2
        if not found:
            return []
        return [(callee, i + 1 if bound else i) for callee, bound in found]
