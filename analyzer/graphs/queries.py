"""Queries over built graphs: callees / callers to a depth, paths, class state."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TypeAlias

import networkx as nx

from analyzer.graphs.callgraph import RANK
from analyzer.graphs.compact import CompactCallGraph
from analyzer.graphs.state import ClassState

Graph: TypeAlias = nx.DiGraph | CompactCallGraph


class QueryError(Exception):
    """Unknown or ambiguous symbol; the message lists what would match."""


def match_nodes(graph: Graph, symbol: str, kinds: tuple[str, ...] | None = None) -> list[str]:
    """Nodes named exactly `symbol`, else those ending in `.symbol`."""
    def ok(node: str) -> bool:
        return kinds is None or graph.nodes[node].get("kind") in kinds

    if symbol in graph and ok(symbol):
        return [symbol]
    suffix = "." + symbol
    return sorted(n for n in graph if n.endswith(suffix) and ok(n))


def find_one(graph: Graph, symbol: str, kinds: tuple[str, ...] | None = None) -> str:
    found = match_nodes(graph, symbol, kinds)
    if not found:
        raise QueryError(f"no symbol matches {symbol!r}")
    if len(found) > 1:
        shown = "\n  ".join(found[:20])
        more = f"\n  ... and {len(found) - 20} more" if len(found) > 20 else ""
        raise QueryError(f"{symbol!r} is ambiguous; use a longer name:\n  {shown}{more}")
    return found[0]


@dataclass(slots=True)
class CallStep:
    depth: int
    caller: str
    callee: str
    kind: str
    confidence: str
    site: str
    sites: int
    candidates: list[str] = field(default_factory=list)


def _allowed(data: dict, min_confidence: str) -> bool:
    return RANK[data["confidence"]] <= RANK[min_confidence]


def calls_query(
    graph: Graph, root: str, *, depth: int = 1, reverse: bool = False, min_confidence: str = "guess"
) -> list[CallStep]:
    """Breadth-first callees (or callers with reverse) of `root` up to `depth`."""
    steps: list[CallStep] = []
    seen = {root}
    queue = deque([(root, 0)])
    while queue:
        node, level = queue.popleft()
        if level >= depth:
            continue
        neighbours = graph.predecessors(node) if reverse else graph.successors(node)
        for other in sorted(neighbours):
            caller, callee = (other, node) if reverse else (node, other)
            data = graph.edges[caller, callee]
            if not _allowed(data, min_confidence):
                continue
            steps.append(
                CallStep(level + 1, caller, callee, data["kind"], data["confidence"], data["site"],
                         len(data["sites"]), list(data.get("candidates", ())))
            )
            if other not in seen:
                seen.add(other)
                queue.append((other, level + 1))
    return steps


def _view(graph: nx.DiGraph, min_confidence: str) -> nx.DiGraph:
    if min_confidence == "guess":
        return graph
    return nx.subgraph_view(graph, filter_edge=lambda u, v: _allowed(graph.edges[u, v], min_confidence))


def path_query(
    graph: Graph, source: str, target: str, *, max_paths: int = 5, min_confidence: str = "guess",
    max_length: int = 12,
) -> list[list[CallStep]]:
    """Shortest call path first, then further simple paths in order of length."""
    if isinstance(graph, CompactCallGraph):
        if source not in graph or target not in graph:
            return []
        graph = graph.subgraph_between(source, target, max_length)
        if source not in graph or target not in graph:
            return []
    view = _view(graph, min_confidence)
    out: list[list[CallStep]] = []
    try:
        for nodes in itertools.islice(nx.shortest_simple_paths(view, source, target), max_paths):
            if len(nodes) - 1 > max_length:
                break
            path = []
            for i, (u, v) in enumerate(itertools.pairwise(nodes)):
                d = graph.edges[u, v]
                path.append(CallStep(i + 1, u, v, d["kind"], d["confidence"], d["site"], len(d["sites"]),
                                     list(d.get("candidates", ()))))
            out.append(path)
    except nx.NetworkXNoPath:
        pass
    return out


def state_query(states: Mapping[str, ClassState], symbol: str) -> ClassState:
    if symbol in states:
        return states[symbol]
    found = sorted(n for n in states if n.endswith("." + symbol))
    if not found:
        raise QueryError(f"no class that owns state matches {symbol!r}")
    if len(found) > 1:
        raise QueryError(f"{symbol!r} is ambiguous; use a longer name:\n  " + "\n  ".join(found[:20]))
    return states[found[0]]


def state_to_dict(state: ClassState) -> dict:
    return {
        "class": state.cls,
        "path": state.path,
        "line": state.line,
        "inherited": dict(state.inherited),
        "attributes": [
            {
                "name": a.name,
                "origin": a.origin,
                "line": a.line,
                "annotation": a.annotation,
                "readers": sorted({r.function for r in a.reads}),
                "writers": sorted({w.function for w in a.writes}),
                "writes": [asdict(w) for w in a.writes],
                "outside_writes": [asdict(w) for w in a.writes if w.outside],
                "created": list(a.created),
            }
            for a in sorted(state.attrs.values(), key=lambda a: (a.line, a.name))
        ],
    }


def attr_query(states: Mapping[str, ClassState], symbol: str, attr: str | None) -> tuple[ClassState, str]:
    """`Scheduler` + `waiting`, or `Scheduler.waiting` alone: the class and attribute."""
    if attr is None:
        cls, _, attr = symbol.rpartition(".")
        if not cls:
            raise QueryError(f"name an attribute: CLASS --attr NAME or CLASS.ATTR, not {symbol!r}")
        symbol = cls
    state = state_query(states, symbol)
    if attr not in state.attrs:
        owners = state.inherited.get(attr)
        if owners:
            raise QueryError(f"{state.cls} does not own {attr!r}; {', '.join(owners)} does")
        known = ", ".join(sorted(state.attrs)[:30])
        raise QueryError(f"{state.cls} owns no attribute {attr!r}; it owns: {known}")
    return state, attr


def attr_to_dict(state: ClassState, attr: str) -> dict:
    a = state.attrs[attr]
    return {
        "class": state.cls,
        "attribute": a.name,
        "origin": a.origin,
        "path": state.path,
        "line": a.line,
        "annotation": a.annotation,
        "created": list(a.created),
        "writers": sorted({w.function for w in a.writes}),
        "writes": [asdict(w) for w in a.writes],
        "readers": sorted({r.function for r in a.reads}),
        "reads": [asdict(r) for r in a.reads],
    }
