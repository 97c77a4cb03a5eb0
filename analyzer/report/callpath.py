"""The life of a request: the call path from a mapped entry point to the concept's code.

A breadth-first search over the call graph, extended with the mapping's
bridges (a path reaching a bridge's sender continues at its receiver in the
other process), finds the shortest route to any of the concept's symbols.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from analyzer.graphs.queries import Graph, match_nodes
from analyzer.mappings import Bridge
from analyzer.report.models import CallPathView, PathStep

MAX_DEPTH = 25  # longer "paths" are graph noise, not a story a reader can follow
MAX_ROUTES = 6  # mapped symbols drawn per entry point; a drawing with more is unreadable
_CALLABLE = ("function", "method", "module", "class")


def resolve_node(graph: Graph, name: str) -> tuple[str | None, str]:
    """A mapped name -> one call-graph node, or (None, why not)."""
    found = match_nodes(graph, name, _CALLABLE)
    if not found:
        return None, f"{name} is not in this release's call graph"
    if len(found) > 1:
        return None, f"{name} is ambiguous here ({len(found)} matches)"
    return found[0], ""


def with_methods(graph: Graph, node: str) -> list[str]:
    """A class stands for its methods too: a request reaches (and leaves) a class
    through them, not through its constructor alone."""
    if graph.nodes[node].get("kind") != "class":
        return [node]
    prefix = node + "."
    return [node, *sorted(n for n in graph if n.startswith(prefix) and graph.nodes[n].get("kind") == "method")]


def target_nodes(graph: Graph, names: list[str]) -> set[str]:
    """The mapped symbols as call-graph nodes (classes with their methods)."""
    out: set[str] = set()
    for name in names:
        node, _ = resolve_node(graph, name)
        if node is not None:
            out.update(with_methods(graph, node))
    return out


def find_call_path(
    graph: Graph,
    entry: str,
    targets: set[str],
    bridges: list[Bridge],
    link: Callable[[str], str | None] = lambda site: None,
    max_routes: int = MAX_ROUTES,
) -> CallPathView:
    view = CallPathView(entry=entry)
    start, problem = resolve_node(graph, entry)
    if start is None:
        view.problem = problem
        return view
    view.start = start
    starts = with_methods(graph, start)
    targets = targets - set(starts)  # an entry point that is itself mapped leads on to the others
    if not targets:
        view.problem = "no other mapped symbol of this concept is in this release's call graph"
        return view
    hops: dict[str, list[tuple[str, Bridge]]] = {}
    for bridge in bridges:
        src, _ = resolve_node(graph, bridge.source)
        dst, _ = resolve_node(graph, bridge.target)
        if src is not None and dst is not None:
            hops.setdefault(src, []).append((dst, bridge))
    # A BFS tree from the entry: parent[node] = (previous node, the bridge taken or None).
    # Steps are only materialised for the routes shown (the tree spans thousands of nodes).
    parent: dict[str, tuple[str, Bridge | None] | None] = dict.fromkeys(starts)
    reached: list[str] = []
    depth = dict.fromkeys(starts, 0)
    queue = deque(starts)
    while queue:
        node = queue.popleft()
        if depth[node] >= MAX_DEPTH:
            continue
        nexts: list[tuple[str, Bridge | None]] = [(dst, bridge) for dst, bridge in hops.get(node, ())]
        nexts += [(callee, None) for callee in sorted(graph.successors(node))]
        for dst, taken in nexts:
            if dst in parent:
                continue
            parent[dst] = (node, taken)
            depth[dst] = depth[node] + 1
            if dst in targets:
                reached.append(dst)
            queue.append(dst)
    if not reached:
        view.problem = f"no call path from {start} to the concept's other symbols (within {MAX_DEPTH} calls)"
        return view
    routes = {end: _route(graph, parent, end, link) for end in reached}
    view.routes = pick_routes(list(routes.values()), max_routes)
    on_routes = {s.callee for route in view.routes for s in route}
    view.marked = [n for n in reached if n in on_routes]
    return view


def _route(
    graph: Graph, parent: dict[str, tuple[str, Bridge | None] | None], end: str, link: Callable[[str], str | None]
) -> list[PathStep]:
    steps: list[PathStep] = []
    node = end
    while (back := parent[node]) is not None:
        prev, bridge = back
        if bridge is not None:
            steps.append(PathStep(prev, node, "bridge", "mapped", f"{bridge.transport}: {bridge.name}"))
        else:
            data = graph.edges[prev, node]
            site = data.get("site", "")
            steps.append(PathStep(prev, node, data.get("kind", "call"), data.get("confidence", ""), site, link(site)))
        node = prev
    return steps[::-1]


def pick_routes(routes: list[list[PathStep]], limit: int) -> list[list[PathStep]]:
    """The routes that tell the most: those crossing a bridge, then the longest.
    A route ending where another passes through adds nothing to the drawing."""
    inner = {s.caller for route in routes for s in route}
    leaves = [r for r in routes if r[-1].callee not in inner]
    leaves.sort(key=lambda r: (not any(s.kind == "bridge" for s in r), -len(r)))
    return sorted(leaves[:limit], key=len)
