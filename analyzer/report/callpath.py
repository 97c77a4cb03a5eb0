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
    # parent[node] = (previous node, the step that reached it): a BFS tree from the entry.
    parent: dict[str, tuple[str, PathStep] | None] = dict.fromkeys(starts)
    reached: list[str] = []
    queue = deque((s, 0) for s in starts)
    while queue and len(reached) < max_routes:
        node, depth = queue.popleft()
        if depth >= MAX_DEPTH:
            continue
        nexts: list[tuple[str, PathStep]] = []
        for dst, bridge in hops.get(node, ()):
            nexts.append((dst, PathStep(node, dst, "bridge", "mapped", f"{bridge.transport}: {bridge.name}")))
        for callee in sorted(graph.successors(node)):
            data = graph.edges[node, callee]
            site = data.get("site", "")
            nexts.append((callee, PathStep(node, callee, data.get("kind", "call"), data.get("confidence", ""),
                                           site, link(site))))
        for dst, step in nexts:
            if dst in parent:
                continue
            parent[dst] = (node, step)
            if dst in targets:
                reached.append(dst)
                if len(reached) >= max_routes:
                    break
            queue.append((dst, depth + 1))
    if not reached:
        view.problem = f"no call path from {start} to the concept's other symbols (within {MAX_DEPTH} calls)"
        return view
    for found in reached:
        steps: list[PathStep] = []
        node = found
        while (back := parent[node]) is not None:
            node, step = back
            steps.append(step)
        view.routes.append(steps[::-1])
    return view
