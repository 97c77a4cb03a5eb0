"""State ownership: for each class, the state it owns and who reads / writes it.

Owned state is a class's dataclass-style fields, class attributes and `self.x`
instance attributes. An attribute belongs to the most basic class in the MRO
that declares it, except that a mixin never owns state its composite sets up:
the composite does. A mixin is what the class hierarchy says, not a name: a class
with subclasses and no constructor anywhere in its MRO (SGLang's scheduler mixins);
a base name bound to several classes (a stub, and the real mixin imported on one
platform) counts as each (inheritance.py). Each read and write records the function, its site, its
kind, how the object was reached and whose code it is:

kind: assign, augassign, del, item_assign, item_del, mutating_call (`method`
names the builtin or user-defined method, or the function the object is passed
to), field_write (`self.running_batch.reqs = []` changes `running_batch`'s
object; `method` names the field), read.
via: direct (`self.x`, `obj.x`), alias (a local or a method's return value that
is the attribute's object), element (an object fetched from a container:
`self.requests[rid]`, `.get(rid)`, `for req in self.reqs`).
by: owner, subclass (an override or subclass method), mixin / base (a method of
a mixin or base class running on the owner's instances), outside (any other
function; `outside` is then True).

Writes through user-defined methods and arguments use `Mutation` (state_flow):
which functions change their receiver / a parameter, to a fixed point over the
call graph. Only functions whose own body does the change are writers: a method
calling another method of `self` that writes `x` is not listed for `x`, its callee is.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import networkx as nx

from analyzer.graphs.inheritance import Inheritance
from analyzer.graphs.state_flow import (
    EXTERNAL_ARG_MUTATORS,
    WRITE_KINDS,
    Mutation,
    Obj,
    Tracer,
    mutable_annotation,
)
from analyzer.graphs.state_source import SourceReader
from analyzer.index.extract import MUTATING_METHODS
from analyzer.index.models import ModuleFacts
from analyzer.resolve import CallResolver, Project

__all__ = ["WRITE_KINDS", "Access", "ClassState", "StateAttr", "build_state", "how", "state_graph"]

_PLACE_LIKE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# `q = self.waiting`, `q = self.a.b`, `q = self._select_queue(...)`: values that may be an attribute's
# object, for stores into the alias that only the source shows (`q[0] = r`).
_ALIAS_VALUE = re.compile(r"\w+(\.\w+)+\s*(\(.*\))?\s*$", re.S)
_MAX_OWNERS = 64  # subclasses searched for the owner of state a mixin uses


@dataclass(slots=True)
class Access:
    function: str  # global name of the reading / writing function (or module)
    kind: str  # read | assign | augassign | del | item_assign | item_del | mutating_call | field_write
    site: str  # path:line
    method: str | None = None  # mutating_call: append, add_request, calc_priority; field_write: the field
    outside: bool = False  # from a function that is not a method of the owner, a subclass or a mixin
    via: str = "direct"  # direct | alias | element
    detail: str | None = None  # how the object was reached: `q = self._select_queue()`, `for req in self.reqs`
    by: str = "owner"  # owner | subclass | mixin | base | outside
    writer_class: str | None = None  # the class whose method this is


@dataclass(slots=True)
class StateAttr:
    name: str
    origin: str  # field | class | instance | undeclared (only ever set from elsewhere)
    line: int
    annotation: str | None = None
    reads: list[Access] = field(default_factory=list)
    writes: list[Access] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # `path:line  self.x = value` of each declaration


@dataclass(slots=True)
class ClassState:
    cls: str
    path: str
    line: int
    attrs: dict[str, StateAttr] = field(default_factory=dict)
    # Attributes this class sets or uses that a base (or, for a mixin, its composite) owns.
    inherited: dict[str, list[str]] = field(default_factory=dict)

    @property
    def outside_writes(self) -> list[tuple[str, Access]]:
        return [(a.name, w) for a in self.attrs.values() for w in a.writes if w.outside]


_KIND_TEXT = {
    "assign": "assigns",
    "augassign": "augments (+=)",
    "del": "deletes",
    "item_assign": "stores an item",
    "item_del": "deletes an item",
    "field_write": "sets a field of its object",
    "mutating_call": "calls a mutating method",
    "read": "reads",
}
_VIA_TEXT = {"alias": " through a local alias", "element": " on an element fetched from a container"}


def how(access: Access) -> str:
    """How an access reads / writes, in words: `calls add_request()`, `sets .reqs`,
    `assigns on an element fetched from a container`."""
    if access.kind == "mutating_call" and access.method:
        text = f"calls {access.method}()"
    elif access.kind == "field_write" and access.method:
        text = f"sets .{access.method}"
    else:
        text = _KIND_TEXT.get(access.kind, access.kind)
    return text + _VIA_TEXT.get(access.via, "")


def _declared(project: Project, cls: str) -> dict[str, StateAttr]:
    cd = project.classes[cls]
    fact = cd.fact
    out: dict[str, StateAttr] = {}

    def created(line: int, text: str) -> str:
        return f"{cd.path}:{line}  {text}"

    for asg in fact.fields:
        attr = out.setdefault(asg.target, StateAttr(asg.target, "field", asg.line, asg.annotation))
        value = f" = {asg.value}" if asg.value else ""
        attr.created.append(created(asg.line, f"{asg.target}: {asg.annotation}{value}"))
    for asg in fact.class_attributes:
        attr = out.setdefault(asg.target, StateAttr(asg.target, "class", asg.line, asg.annotation))
        attr.created.append(created(asg.line, f"{asg.target} = {asg.value}"))
    setups: dict[str, list] = {}
    for asg in fact.instance_attributes:
        base, _, name = asg.target.rpartition(".")
        if "." in base or not name:
            continue  # `self.a.b = ...` writes a's state, not this class's
        attr = out.setdefault(name, StateAttr(name, "instance", asg.line, asg.annotation))
        if attr.annotation is None and asg.annotation:
            attr.annotation = asg.annotation
        setups.setdefault(name, []).append(asg)
    for name, asgs in setups.items():
        # Where it is created: the constructor's assignments when there are any (the
        # other methods' are among its writers), else the first few.
        init = [a for a in asgs if a.scope.rpartition(".")[2] in _CONSTRUCTORS]
        for asg in (init or asgs)[:8 - len(out[name].created)]:
            ann = f": {asg.annotation}" if asg.annotation else ""
            value = f" = {_one_line(asg.value)}" if asg.value else ""
            out[name].created.append(created(asg.line, f"{asg.target}{ann}{value}  (in {asg.scope})"))
    return out


_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__", "__attrs_post_init__"})
_CONSTANTS = frozenset({"True", "False", "None"})  # keyword values that hold no state


def _one_line(value: str, limit: int = 100) -> str:
    """A value spread over lines, on one line and cut short."""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Ownership:
    """Which class owns `attr` as used on an instance of `cls`."""

    def __init__(self, project: Project, declared: dict[str, set[str]]) -> None:
        self.p = project
        self.h = Inheritance(project)
        self.declared = declared
        self.mixins = self.h.mixins
        self._memo: dict[tuple[str, str], tuple[str, ...]] = {}
        self._relations: dict[tuple[str | None, str], str] = {}

    def owners(self, cls: str, attr: str) -> tuple[str, ...]:
        key = (cls, attr)
        found = self._memo.get(key)
        if found is not None:
            return found
        declared = self.declared
        decl = [c for c in self.h.mro(cls) if attr in declared.get(c, ())]
        solid = [c for c in decl if c not in self.mixins]
        if solid:
            found = (solid[-1],)
        else:
            # A mixin (or an abstract base) using state its subclasses set up: the
            # most basic subclasses that declare it own it.
            down = [d for d in self.h.descendants(cls)[:_MAX_OWNERS]
                    if attr in declared.get(d, ()) and d not in self.mixins]
            down = [d for d in down if not any(o != d and self.h.is_subclass(d, o) for o in down)]
            found = tuple(sorted(down)) if down else tuple(decl[-1:])
        self._memo[key] = found
        return found

    def relation(self, writer: str | None, owner: str) -> str:
        key = (writer, owner)
        found = self._relations.get(key)
        if found is None:
            found = self._relations[key] = self._relation(writer, owner)
        return found

    def _relation(self, writer: str | None, owner: str) -> str:
        if writer is None:
            return "outside"
        if writer == owner:
            return "owner"
        if self.h.is_subclass(writer, owner):
            return "subclass"
        if self.h.is_subclass(owner, writer):
            return "mixin" if writer in self.mixins else "base"
        return "outside"


class _Builder:
    def __init__(self, project: Project, resolver: CallResolver, source: SourceReader) -> None:
        self.p = project
        self.r = resolver
        self.infer = resolver.infer
        self.source = source
        self.states = {
            name: ClassState(name, cd.path, cd.fact.line, _declared(project, name))
            for name, cd in project.classes.items()
        }
        declared = {name: set(st.attrs) for name, st in self.states.items()}
        self.names = {a for attrs in declared.values() for a in attrs}
        self.own = Ownership(project, declared)
        self.tracer = Tracer(project, resolver, source)
        self.mutation = Mutation(self.tracer)
        self._seen: set[tuple] = set()
        self._aliases: set[tuple[str, str, str]] = set()  # (function, module, local name)
        self._where: dict[tuple[str, str], tuple[str, str | None]] = {}
        self._places: dict[tuple[str, str, str, bool], bool] = {}  # `_place_like` of a plain name
        self._dotted: dict[str, bool] = {}  # `_place_like` of a text whatever its scope: dotted, or no name

    def record(self, cls: str, attr: str, kind: str, facts: ModuleFacts, scope: str, line: int,
               method: str | None = None, obj: Obj | None = None, create: bool = False) -> None:
        owners = self.own._memo.get((cls, attr)) or self.own.owners(cls, attr)
        if not owners:
            if not create or kind == "read" or self.p.member_function(cls, attr):
                return  # a method / property, or a read of something never set
            self.states[cls].attrs[attr] = StateAttr(attr, "undeclared", line)
            self.own.declared.setdefault(cls, set()).add(attr)
            self.own._memo[(cls, attr)] = owners = (cls,)
        where = self._where.get((facts.module, scope))
        if where is None:
            where = self._where[(facts.module, scope)] = (
                self.r.caller_of(facts.module, scope), self.infer.class_of_scope(facts.module, scope)
            )
        func, writer = where
        site = f"{facts.path}:{line}"
        via, detail = (obj.via, obj.detail) if obj is not None else ("direct", None)
        detail = None if detail is None else str(detail)
        seen = self._seen
        for owner in owners:
            key = (owner, attr, func, kind, site, method)
            if key in seen:
                continue
            seen.add(key)
            by = self.own._relations.get((writer, owner)) or self.own.relation(writer, owner)
            if by == "outside" and writer is not None and obj is not None and obj.param == 0 \
                    and self._receiver(facts.module, scope):
                # `def f(self: Scheduler)` in a class the hierarchy does not place in
                # Scheduler's MRO: the method is declared to run on the owner's instances.
                by = "mixin"
            st = self.states[owner].attrs[attr]
            access = Access(func, kind, site, method, by == "outside", via, detail, by, writer)
            (st.reads if kind == "read" else st.writes).append(access)

    def _receiver(self, module: str, scope: str) -> bool:
        """The scope is a method whose parameter 0 is its instance (not a static method)."""
        fd = self.tracer.function_of(module, scope)
        return fd is not None and fd.fact.is_method and not fd.fact.is_staticmethod and not fd.fact.is_classmethod

    def accesses(self, facts: ModuleFacts) -> None:
        objects, memo, module = self.tracer.objects, self.tracer._memo, facts.module
        for acc in facts.accesses:
            write = acc.kind in WRITE_KINDS
            if not write and acc.attr not in self.names:
                continue  # only declared state has readers worth listing
            # (the tracer's memo read here first: most bases were traced at an earlier access)
            objs = memo.get((module, acc.scope, acc.base, True)) or objects(acc.base, module, acc.scope)
            for o in objs:
                if o.cls is not None and o.cls in self.states:
                    shown = o
                    if o.via == "direct" and o.detail is None and acc.base != "self":
                        # `node.lock_ref += 1`, `self.root_node.lock_ref = 1`: say on which object.
                        shown = Obj(o.cls, o.place, o.via, f"on {acc.base}", o.param, o.ann)
                    self.record(o.cls, acc.attr, acc.kind, facts, acc.scope, acc.line, acc.method, shown,
                                create=o.via == "direct")
                if write and o.place is not None:
                    # `self.running_batch.reqs = []` also changes running_batch's object.
                    self.record(*o.place, "field_write", facts, acc.scope, acc.line, acc.attr, o)
                if o.via == "alias" and o.place is not None:
                    self._aliases.add((self.r.caller_of(facts.module, acc.scope), facts.module, acc.base))

    def calls(self, facts: ModuleFacts) -> None:
        t, m = self.tracer, self.mutation
        objects, traced, place_like, methods = t.objects, t._memo, self._place_like, self.p.methods_by_name
        places, dotted = self._places, self._dotted  # `_place_like`'s memos, read here first: one call per argument saved
        mutated = m._memo  # `mutates`'s memo, likewise (most callees were asked about at an earlier call)
        module = facts.module
        for site in facts.calls:
            head, _, method = site.callee.rpartition(".")
            if head and head != "self" and head != "cls" and (method in MUTATING_METHODS or method in methods):
                known = dotted.get(head)
                if known is None and "." not in head:
                    known = places.get((module, site.scope, head, True))
                if known is None:
                    known = place_like(facts, site.scope, head)
                objs = (traced.get((module, site.scope, head, True)) or objects(head, module, site.scope)) if known else ()
                for o in objs:
                    if o.place is None:
                        continue
                    if o.cls is not None and self.p.member_function(o.cls, method):
                        mutating = m.method_mutates(o.cls, method)
                    else:
                        mutating = method in MUTATING_METHODS
                    if mutating:
                        self.record(*o.place, "mutating_call", facts, site.scope, site.line, method, o)
            if not site.args and not site.keywords:
                continue
            external = EXTERNAL_ARG_MUTATORS.get(site.callee)
            # Positional arguments by index, keyword arguments by name (`helper(queue=self.waiting)`).
            bound: Iterable[tuple[int | str, str]] = enumerate(site.args) if not site.keywords else [
                *enumerate(site.args),
                *((kw, value) for kw, value in zip(site.keywords, site.keyword_values, strict=False)
                  if kw != "**" and value not in _CONSTANTS)]
            for i, arg in bound:
                if arg == "self" or arg.startswith("*"):
                    continue
                known = dotted.get(arg)
                if known is None and "." not in arg:
                    known = places.get((module, site.scope, arg, False))
                if not (place_like(facts, site.scope, arg, loops=False) if known is None else known):
                    continue
                name: str | None = None
                if external is not None and i == 0:
                    name = external
                else:
                    for target, j in m.arg_targets(facts, site, i):
                        found = mutated.get((target, j))
                        if found is None:
                            found = m.mutates(target, j)
                        if found:  # the first callee that changes it names the write
                            name = target.rpartition(".")[2]
                            break
                if name is None:
                    continue
                for o in traced.get((module, site.scope, arg, False)) or objects(arg, module, site.scope, loops=False):
                    if o.place is None:
                        continue
                    obj = Obj(o.cls, o.place, o.via, o.detail or f"passed to {site.callee}()")
                    self.record(*o.place, "mutating_call", facts, site.scope, site.line, name, obj)

    def _place_like(self, facts: ModuleFacts, scope: str, text: str, loops: bool = True) -> bool:
        """An attribute (`self.x`, `a.b`), a local name bound by assignment, or a loop
        variable over a literal of attributes: only these can hold an attribute's
        object (parameters and other loop variables do not)."""
        if "." in text:
            dotted = self._dotted.get(text)
            if dotted is None:
                dotted = self._dotted[text] = _PLACE_LIKE.fullmatch(text) is not None
            return dotted
        if not text.isidentifier():
            self._dotted[text] = False  # (`f(x)`, `1`: asked again at every call that passes it)
            return False
        key = (facts.module, scope, text, loops)
        found = self._places.get(key)
        if found is None:
            found = self._places[key] = self._name_place_like(facts, scope, text, loops)
        return found

    def _name_place_like(self, facts: ModuleFacts, scope: str, text: str, loops: bool) -> bool:
        fd = self.tracer.function_of(facts.module, scope)
        if fd is None or fd.module != facts.module:
            return False
        if text in self.p.scope(facts.module, fd.fact.qualname).assignments:
            return True
        if not loops:
            return False
        # A loop variable over attributes: `for queue in (self.running, self.waiting)`.
        ff = self.tracer.functions.get(fd.name)
        return ff is not None and any(
            "(" in b.iterable or "[" in b.iterable for b in self.source.loops(ff.facts, fd, text)
        ) and any(o.place is not None for o in self.tracer.objects(text, facts.module, scope))

    def alias_stores(self) -> None:
        """`q = self.waiting; q[0] = r` / `del q[k]` / `q += ...`: only the source says."""
        t = self.tracer
        for facts in self.p.modules.values():
            for asg in facts.assignments:
                if asg.value and asg.value.startswith("self.") and _ALIAS_VALUE.match(asg.value):
                    func = self.r.caller_of(facts.module, asg.scope)
                    self._aliases.add((func, facts.module, asg.target))
        for func, module, name in sorted(self._aliases):
            ff = t.functions.get(func)
            if ff is None:
                continue
            for store in t.source.stores(ff.facts, ff.fd, name):
                for o in t.objects(name, module, ff.fd.fact.qualname):
                    if o.place is None:
                        continue
                    if store.kind == "augassign" and not mutable_annotation(o.ann.text if o.ann else None):
                        continue  # `budget = self.max_tokens; budget -= n` rebinds the local only
                    if o.place is not None:
                        self.record(*o.place, store.kind, ff.facts, ff.fd.fact.qualname, store.line, None, o)

    def inherited(self) -> None:
        """Drop from a class's table the attributes a base (or its composite) owns."""
        for name, st in self.states.items():
            for attr in list(st.attrs):
                owners = self.own.owners(name, attr)
                if owners and name not in owners and not (st.attrs[attr].reads or st.attrs[attr].writes):
                    for owner in owners:
                        if owner in self.states and attr in self.states[owner].attrs:
                            self.states[owner].attrs[attr].created.extend(
                                c for c in st.attrs[attr].created[:4]
                                if len(self.states[owner].attrs[attr].created) < 12
                            )
                    del st.attrs[attr]
                    st.inherited[attr] = list(owners)


def build_state(
    project: Project, resolver: CallResolver | None = None, source: SourceReader | None = None,
    keep: list[object] | None = None,
) -> dict[str, ClassState]:
    """`source` reads function bodies for loop bindings, returned attributes and stores
    into aliases; without it (facts only) those writers are not found. `keep`: where
    a build process that ends with os._exit parks the builder (store.py's `_PARKED`),
    whose memos would otherwise be freed object by object on return."""
    b = _Builder(project, resolver or CallResolver(project), source or SourceReader(None))
    if keep is not None:
        keep.append(b)
    for facts in project.modules.values():
        if project.modules.get(facts.module) is not facts:
            continue
        # Every function's module is the one being walked: the tracer keys on it.
        b.accesses(facts)
        b.calls(facts)
    b.alias_stores()
    b.inherited()
    return b.states


def state_graph(states: Mapping[str, ClassState]) -> nx.DiGraph:
    """The state-ownership graph as networkx: class -owns-> `Class.attr` node;
    function -reads/writes-> attribute node (with kinds, sites, `outside`)."""
    g = nx.DiGraph()
    for st in states.values():
        if not st.attrs:
            continue
        g.add_node(st.cls, kind="class", path=st.path, line=st.line)
        for attr in st.attrs.values():
            node = f"{st.cls}.{attr.name}"
            g.add_node(node, kind="state", origin=attr.origin, line=attr.line, annotation=attr.annotation)
            g.add_edge(st.cls, node, kind="owns")
            for access, relation in [(a, "reads") for a in attr.reads] + [(a, "writes") for a in attr.writes]:
                if access.function not in g:
                    g.add_node(access.function, kind="function")
                data = g.get_edge_data(access.function, node)
                if data is None:
                    g.add_edge(access.function, node, kind=relation, accesses=[], sites=[], outside=False)
                    data = g.edges[access.function, node]
                if relation == "writes":
                    data["kind"] = "writes"  # a function that reads and writes is a writer
                data["accesses"].append(access.method or access.kind)
                data["sites"].append(access.site)
                data["outside"] = data["outside"] or access.outside
    return g


def _state_row(st: ClassState) -> tuple[object, ...]:
    """A ClassState as plain tuples, fields in declaration order: pickle writes
    tuples of strings in C, where each dataclass instance costs a `__reduce_ex__`
    (about 3x the time for a tree's 200k accesses)."""
    return (st.cls, st.path, st.line, [
        (a.name, a.origin, a.line, a.annotation,
         [(x.function, x.kind, x.site, x.method, x.outside, x.via, x.detail, x.by, x.writer_class) for x in a.reads],
         [(x.function, x.kind, x.site, x.method, x.outside, x.via, x.detail, x.by, x.writer_class) for x in a.writes],
         a.created)
        for a in st.attrs.values()
    ], st.inherited)


def _state_of_row(row: tuple) -> ClassState:
    cls, path, line, attrs, inherited = row
    return ClassState(cls, path, line, {
        name: StateAttr(name, origin, at, ann, [Access(*r) for r in reads], [Access(*w) for w in writes], created)
        for name, origin, at, ann, reads, writes, created in attrs
    }, inherited)


class StateIndex(Mapping[str, ClassState]):
    """Class name -> ClassState for every class that owns state, each kept pickled
    (as `_state_row`'s tuples) until asked for: a query about one class should not
    unpickle thousands."""

    def __init__(self, states: dict[str, ClassState]) -> None:
        self._blobs = {
            name: pickle.dumps(_state_row(st), protocol=pickle.HIGHEST_PROTOCOL)
            for name, st in states.items()
            if st.attrs or st.inherited
        }
        self._cache: dict[str, ClassState] = {}

    def __getstate__(self) -> dict[str, bytes]:
        return self._blobs

    def __setstate__(self, blobs: dict[str, bytes]) -> None:
        self._blobs = blobs
        self._cache = {}

    def __getitem__(self, name: str) -> ClassState:
        found = self._cache.get(name)
        if found is None:
            found = self._cache[name] = _state_of_row(pickle.loads(self._blobs[name]))
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def __contains__(self, name: object) -> bool:
        return name in self._blobs
