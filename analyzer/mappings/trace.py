"""Follow a request through a call graph *and* across the process bridges the mappings name.

A call graph stops at a process boundary: `AsyncMPClient.add_request_async` sends a
message on a ZMQ socket and nothing in the code calls the receiving side. A bridge
in a mapping says where the message lands, so a path that reaches a bridge's
`source` may continue at its `target`. The search is breadth-first (shortest path
in hops, a bridge counting as one hop).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from analyzer.mappings.models import Bridge, ConceptMapping, Dispatch, is_crossing

Link = Bridge | Dispatch  # a hop the mappings declare: across a boundary, or a run-time call


class CallGraphLike(Protocol):
    """What the search needs of a call graph (networkx or the cached compact graph)."""

    def __contains__(self, node: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def successors(self, node: str) -> Iterable[str]: ...
    def predecessors(self, node: str) -> Iterable[str]: ...


@dataclass(frozen=True, slots=True)
class TraceStep:
    caller: str
    callee: str
    via: str  # "call", "return", "bridge <name> (<transport>)" or "dispatch <call>"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bridges_for(concepts: Iterable[ConceptMapping], project: str, version: str | None) -> dict[str, list[Link]]:
    """source symbol -> bridges (and declared run-time calls) leaving it, from every concept's
    mapping of `project`."""
    out: dict[str, list[Link]] = {}
    seen: set[tuple[str, str]] = set()
    for concept in concepts:
        side = concept.side(project)
        links: list[Link] = [*side.bridges_for(version), *side.dispatches_for(version)]
        for bridge in links:
            if (bridge.source, bridge.target) not in seen:
                seen.add((bridge.source, bridge.target))
                out.setdefault(bridge.source, []).append(bridge)
    return out


def trace_path(
    graph: CallGraphLike,
    source: str,
    target: str,
    bridges: dict[str, list[Link]],
    *,
    max_length: int = 16,
) -> list[TraceStep] | None:
    """The shortest call/bridge path from `source` to `target`, or None."""
    return trace_between(graph, [source], [target], bridges, max_length=max_length)


def step_nodes(graph: CallGraphLike, name: str) -> list[str]:
    """A step's symbol as call-graph nodes: a function / method itself; a class
    through its methods (a request reaches and leaves a class through them)."""
    if name not in graph:
        return []
    nodes = getattr(graph, "nodes", None)
    kind = nodes[name].get("kind") if nodes is not None else None
    if kind != "class":
        return [name]
    prefix = name + "."
    return [name, *sorted(n for n in graph if str(n).startswith(prefix) and "." not in str(n)[len(prefix):])]


def trace_between(
    graph: CallGraphLike,
    sources: Iterable[str],
    targets: Iterable[str],
    bridges: dict[str, list[Link]],
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
        hops += [(b.target, b.via) for b in bridges.get(node, [])]
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
    inner: tuple[TraceStep, ...] = ()  # the paths between the step's own symbols (a step may cross a boundary)
    branches: tuple[TraceStep, ...] = ()  # paths to the step's other symbols from earlier steps

    @property
    def bridges(self) -> list[TraceStep]:
        """Bridges crossed to reach the step and within it."""
        return [s for s in (*self.path, *self.inner) if is_crossing(s.via)]

    @property
    def dispatches(self) -> list[TraceStep]:
        """Declared run-time calls taken to reach the step and within it (call-graph gaps)."""
        return [s for s in (*self.path, *self.inner, *self.branches) if s.via.startswith("dispatch ")]

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "source": self.source, "path": [s.to_dict() for s in self.path],
                "inner": [s.to_dict() for s in self.inner], "broken": self.broken}


def chain_steps(
    graph: CallGraphLike,
    steps: list[tuple[int, list[str]]],
    bridges: dict[str, list[Link]],
    *,
    max_length: int = 16,
) -> list[StepLink]:
    """Check that the steps of one side, and the symbols within each step, are connected.

    `steps` is (step number, the step's symbols) for the steps this side names. Every
    symbol must be reached by calls and bridges from the symbol before it (declared run-time
    calls only where no such path exists); failing that,
    from an earlier one (siblings called by one driver: `schedule` calling
    `_schedule_running`, then `_admit`). A message received across a bridge is handled
    by a loop: when the handler returns, control is back in the loop that called the
    receiving end, so that loop may continue the chain ("return" in the path).
    A symbol not in the call graph, or reached from nothing before it, breaks the chain.
    The link reported for a step is that of its first symbol; `broken` names the first
    symbol of the step that breaks it."""
    links: list[StepLink] = []
    plain: dict[str, list[Link]] = {src: [b for b in hops if not isinstance(b, Dispatch)] for src, hops in bridges.items()}
    # (step, symbol, its nodes, the loops a message it received returns to)
    earlier: list[tuple[int, str, list[str], list[str]]] = []
    for index, names in steps:
        link: StepLink | None = None
        for name in names:
            nodes = step_nodes(graph, name)
            if not nodes:
                link = link if link and link.broken else StepLink(
                    index, link.source if link else None, link.path if link else (),
                    broken=f"{name} is not in the call graph")
                continue
            # A declared run-time call is a last resort: a path by calls and bridges wins.
            found = _reach(graph, earlier, nodes, plain, max_length) or _reach(graph, earlier, nodes, bridges, max_length)
            if found is None and earlier:
                prev = earlier[-1]
                broken = (f"{name} is not reached from {prev[1]} (step {prev[0]}) nor anything before it, "
                          f"by calls or bridges within {max_length} hops")
                link = link if link and link.broken else StepLink(
                    index, link.source if link else None, link.path if link else (), broken=broken)
                earlier.append((index, name, nodes, []))
                continue
            source, path = found if found is not None else (None, [])
            if link is None:
                link = StepLink(index, source, tuple(path))
            elif source == index:
                link = replace(link, inner=(*link.inner, *path))
            else:
                link = replace(link, branches=(*link.branches, *path))
            earlier.append((index, name, nodes, _loops_after(graph, path)))
        links.append(link if link is not None else StepLink(index, None))
    return links


def _reach(
    graph: CallGraphLike,
    earlier: list[tuple[int, str, list[str], list[str]]],
    nodes: list[str],
    bridges: dict[str, list[Link]],
    max_length: int,
) -> tuple[int, list[TraceStep]] | None:
    """(the step it is reached from, the path), nearest earlier symbol first."""
    for step, name, own, loops in reversed(earlier):
        path = trace_between(graph, [*own, *loops], nodes, bridges, max_length=max_length)
        if path is not None:
            if path and path[0].caller not in own:  # it left through the receiving loop
                path = [TraceStep(name, path[0].caller, "return"), *path]
            elif not path and not set(own) & set(nodes):  # the loop itself is the next symbol
                path = [TraceStep(name, next(n for n in nodes if n in loops), "return")]
            return step, path
    return None


RECEIVER_DEPTH = 3  # how far up from a bridge's receiving end the polling loop may sit


def _loops_after(graph: CallGraphLike, path: list[TraceStep]) -> list[str]:
    """The callers of the last bridge's receiving end, up to RECEIVER_DEPTH levels (the loop
    polling the socket, e.g. event_loop -> ingest_requests -> recv_requests): a handled
    message returns there, and the loop goes on to the next step."""
    crossings = [s for s in path if is_crossing(s.via)]
    if not crossings or not hasattr(graph, "predecessors"):
        return []
    frontier, seen = [crossings[-1].callee], list[str]()
    for _ in range(RECEIVER_DEPTH):
        frontier = sorted({c for node in frontier if node in graph for c in graph.predecessors(node)} - set(seen))
        seen += frontier
    return seen
