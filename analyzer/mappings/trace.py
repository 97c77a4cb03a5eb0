"""Follow a request through a call graph *and* across the process bridges the mappings name.

A call graph stops at a process boundary: `AsyncMPClient.add_request_async` sends a
message on a ZMQ socket and nothing in the code calls the receiving side. A bridge
in a mapping says where the message lands, so a path that reaches a bridge's
`source` may continue at its `target`. The search is breadth-first (shortest path
in hops, a bridge counting as one hop).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from analyzer.mappings.models import Bridge, ConceptMapping


class CallGraphLike(Protocol):
    """What the search needs of a call graph (networkx or the cached compact graph)."""

    def __contains__(self, node: object) -> bool: ...
    def successors(self, node: str) -> Iterable[str]: ...


@dataclass(frozen=True, slots=True)
class TraceStep:
    caller: str
    callee: str
    via: str  # "call", or "bridge <name> (<transport>)"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bridges_for(concepts: Iterable[ConceptMapping], project: str, version: str | None) -> dict[str, list[Bridge]]:
    """source symbol -> bridges leaving it, from every concept's mapping of `project`."""
    out: dict[str, list[Bridge]] = {}
    seen: set[tuple[str, str]] = set()
    for concept in concepts:
        for bridge in concept.side(project).bridges_for(version):
            if (bridge.source, bridge.target) not in seen:
                seen.add((bridge.source, bridge.target))
                out.setdefault(bridge.source, []).append(bridge)
    return out


def trace_path(
    graph: CallGraphLike,
    source: str,
    target: str,
    bridges: dict[str, list[Bridge]],
    *,
    max_length: int = 16,
) -> list[TraceStep] | None:
    """The shortest call/bridge path from `source` to `target`, or None."""
    parent: dict[str, TraceStep | None] = {source: None}
    depth = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        if node == target:
            break
        if depth[node] >= max_length:
            continue
        hops = [(n, "call") for n in sorted(graph.successors(node))] if node in graph else []
        hops += [(b.target, f"bridge {b.name} ({b.transport})") for b in bridges.get(node, [])]
        for nxt, via in hops:
            if nxt not in parent:
                parent[nxt] = TraceStep(node, nxt, via)
                depth[nxt] = depth[node] + 1
                queue.append(nxt)
    if target not in parent:
        return None
    steps: list[TraceStep] = []
    step = parent[target]
    while step is not None:
        steps.append(step)
        step = parent[step.caller]
    return steps[::-1]


def step_nodes(graph: CallGraphLike, name: str) -> list[str]:
    """A step's symbol as call-graph nodes: a function / method itself; a class
    through its methods (a request reaches and leaves a class through them)."""
    if name not in graph:
        return []
    kind = graph.nodes[name].get("kind") if hasattr(graph, "nodes") else None  # type: ignore[attr-defined]
    if kind != "class":
        return [name]
    prefix = name + "."
    return [name, *sorted(n for n in graph if str(n).startswith(prefix) and "." not in str(n)[len(prefix):])]


def trace_between(
    graph: CallGraphLike,
    sources: Iterable[str],
    targets: Iterable[str],
    bridges: dict[str, list[Bridge]],
    *,
    max_length: int = 16,
) -> list[TraceStep] | None:
    """The shortest call/bridge path from any of `sources` to any of `targets`
    ([] when they share a node), or None."""
    goal = set(targets)
    parent: dict[str, TraceStep | None] = {}
    depth: dict[str, int] = {}
    queue: deque[str] = deque()
    for s in sources:
        if s not in parent:
            parent[s], depth[s] = None, 0
            queue.append(s)
    found = None
    while queue:
        node = queue.popleft()
        if node in goal:
            found = node
            break
        if depth[node] >= max_length:
            continue
        hops = [(n, "call") for n in sorted(graph.successors(node))] if node in graph else []
        hops += [(b.target, f"bridge {b.name} ({b.transport})") for b in bridges.get(node, [])]
        for nxt, via in hops:
            if nxt not in parent:
                parent[nxt] = TraceStep(node, nxt, via)
                depth[nxt] = depth[node] + 1
                queue.append(nxt)
    if found is None:
        return None
    steps: list[TraceStep] = []
    step = parent[found]
    while step is not None:
        steps.append(step)
        step = parent[step.caller]
    return steps[::-1]


@dataclass(frozen=True, slots=True)
class StepLink:
    """How step `index` of one side is reached: from step `source` (the previous
    one written for that side, or an earlier one it branches from) along `path`."""

    index: int  # 1-based step number
    source: int | None  # the step it is reached from; None for the first, or when broken
    path: tuple[TraceStep, ...] = ()
    broken: str = ""  # why the chain breaks here, in words

    @property
    def bridges(self) -> list[TraceStep]:
        return [s for s in self.path if s.via != "call"]

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "source": self.source, "path": [s.to_dict() for s in self.path],
                "broken": self.broken}


def chain_steps(
    graph: CallGraphLike,
    steps: list[tuple[int, list[str]]],
    bridges: dict[str, list[Bridge]],
    *,
    max_length: int = 16,
) -> list[StepLink]:
    """Check that consecutive steps of one side are connected.

    `steps` is (step number, the step's symbols) for the steps this side names.
    Step k must be reached from step k-1 by calls and bridges; if not, from an
    earlier step (siblings called by one driver, e.g. `schedule` calling
    `_schedule_running` then `_admit`); otherwise the chain is broken at k.
    A step none of whose symbols is in the call graph breaks the chain too."""
    links: list[StepLink] = []
    earlier: list[tuple[int, list[str]]] = []
    for index, names in steps:
        nodes = [n for name in names for n in step_nodes(graph, name)]
        if not nodes:
            links.append(StepLink(index, None, broken=f"none of {', '.join(names)} is in the call graph"))
            continue
        if not earlier:
            links.append(StepLink(index, None))
            earlier.append((index, nodes))
            continue
        link = None
        for source, source_nodes in reversed(earlier):
            path = trace_between(graph, source_nodes, nodes, bridges, max_length=max_length)
            if path is not None:
                link = StepLink(index, source, tuple(path))
                break
        if link is None:
            prev = earlier[-1][0]
            link = StepLink(index, None, broken=(
                f"not reached from step {prev} (nor any earlier step) by calls or bridges within {max_length} hops"))
        links.append(link)
        earlier.append((index, nodes))
    return links
