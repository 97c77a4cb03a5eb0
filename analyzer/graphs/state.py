"""State ownership: for each class, the state it owns and who reads / writes it.

Owned state is a class's dataclass-style fields, class attributes and `self.x`
instance attributes. Every attribute access of the facts whose object resolves
to an instance (or the class) of a project class is attributed to the class in
the MRO that declares the attribute; a write from a function that is not a
method of that class (or a subclass) is flagged `outside`.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import networkx as nx

from analyzer.resolve import CallResolver, Project
from analyzer.resolve.infer import Ctx

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
WRITE_KINDS = ("assign", "augassign", "del", "item_assign", "item_del", "mutating_call")


@dataclass(frozen=True, slots=True)
class Access:
    function: str  # global name of the reading / writing function (or module)
    kind: str  # read | assign | augassign | del | item_assign | item_del | mutating_call
    site: str  # path:line
    method: str | None = None  # the mutating method: append, heappush, ...
    outside: bool = False  # from a function that is not a method of the owner (or subclass)


@dataclass(slots=True)
class StateAttr:
    name: str
    origin: str  # field | class | instance | undeclared (only ever set from elsewhere)
    line: int
    annotation: str | None = None
    reads: list[Access] = field(default_factory=list)
    writes: list[Access] = field(default_factory=list)


@dataclass(slots=True)
class ClassState:
    cls: str
    path: str
    line: int
    attrs: dict[str, StateAttr] = field(default_factory=dict)

    @property
    def outside_writes(self) -> list[tuple[str, Access]]:
        return [(a.name, w) for a in self.attrs.values() for w in a.writes if w.outside]


def _declared(project: Project, cls: str) -> dict[str, StateAttr]:
    fact = project.classes[cls].fact
    out: dict[str, StateAttr] = {}
    for asg in fact.fields:
        out.setdefault(asg.target, StateAttr(asg.target, "field", asg.line, asg.annotation))
    for asg in fact.class_attributes:
        out.setdefault(asg.target, StateAttr(asg.target, "class", asg.line, asg.annotation))
    for asg in fact.instance_attributes:
        base, _, name = asg.target.rpartition(".")
        if "." in base or not name:
            continue  # `self.a.b = ...` writes a's state, not this class's
        attr = out.setdefault(name, StateAttr(name, "instance", asg.line, asg.annotation))
        if attr.annotation is None and asg.annotation:
            attr.annotation = asg.annotation
    return out


def build_state(project: Project, resolver: CallResolver | None = None) -> dict[str, ClassState]:
    resolver = resolver or CallResolver(project)
    infer = resolver.infer
    states = {
        name: ClassState(name, cd.path, cd.fact.line, _declared(project, name))
        for name, cd in project.classes.items()
    }
    owner_memo: dict[tuple[str, str], str | None] = {}
    declared = {name for st in states.values() for name in st.attrs}

    def owner_of(cls: str, attr: str) -> str | None:
        key = (cls, attr)
        if key not in owner_memo:
            found = next((c for c in project.hierarchy.mro(cls) if c in states and attr in states[c].attrs), None)
            if found is None:
                # A mixin touching state its subclass owns (`self.waiting_queue` in a
                # scheduler mixin): the subclass is the owner.
                found = next(
                    (c for c in project.hierarchy.descendants(cls) if c in states and attr in states[c].attrs),
                    None,
                )
            owner_memo[key] = found
        return owner_memo[key]

    for facts in project.modules.values():
        if project.modules.get(facts.module) is not facts:
            continue
        for acc in facts.accesses:
            if acc.kind == "read" and acc.attr not in declared:
                continue  # only declared state has readers worth listing
            if not _DOTTED.fullmatch(acc.base):
                continue  # `self.x[0].y`, `f().y`: not an object whose class we can name
            ctx = Ctx(facts.module, acc.scope, acc.line)
            base = infer.eval_text(acc.base, ctx)
            if base is None or base.kind not in ("instance", "class") or base.name not in states:
                continue
            owner = owner_of(base.name, acc.attr)
            if owner is None:
                if acc.kind == "read" or project.member_function(base.name, acc.attr):
                    continue  # a method / property, or a read of something never set
                owner = base.name
                states[owner].attrs[acc.attr] = StateAttr(acc.attr, "undeclared", acc.line)
                owner_memo[(base.name, acc.attr)] = owner
            func = resolver.caller_of(facts.module, acc.scope)
            writer_cls = infer.class_of_scope(facts.module, acc.scope)
            inside = writer_cls is not None and (
                project.hierarchy.is_subclass(writer_cls, owner) or project.hierarchy.is_subclass(owner, writer_cls)
            )
            record = Access(func, acc.kind, f"{facts.path}:{acc.line}", acc.method, not inside)
            attr = states[owner].attrs[acc.attr]
            (attr.reads if acc.kind == "read" else attr.writes).append(record)
    return states


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


class StateIndex(Mapping[str, ClassState]):
    """Class name -> ClassState for every class that owns state, each kept pickled
    until asked for: a query about one class should not unpickle thousands."""

    def __init__(self, states: dict[str, ClassState]) -> None:
        self._blobs = {
            name: pickle.dumps(st, protocol=pickle.HIGHEST_PROTOCOL) for name, st in states.items() if st.attrs
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
            found = self._cache[name] = pickle.loads(self._blobs[name])
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def __contains__(self, name: object) -> bool:
        return name in self._blobs
