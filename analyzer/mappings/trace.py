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
