"""The cached, query-side form of a call graph: plain dicts and tuples that
unpickle in a fraction of the time a networkx graph takes, with the small part
of the networkx API the queries use (`in`, `nodes[n]`, `edges[u, v]`,
`successors`, `predecessors`, `has_edge`). `to_nx()` rebuilds the full graph
for exports; `subgraph_between()` a pruned one for path searches.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import networkx as nx

# (kind, confidence, site, sites, candidates)
EdgeRow = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]


def _edge_dict(row: EdgeRow) -> dict:
    kind, confidence, site, sites, cands = row
    return {"kind": kind, "confidence": confidence, "site": site, "sites": list(sites), "candidates": list(cands)}


class _Nodes:
    def __init__(self, owner: CompactCallGraph) -> None:
        self._o = owner

    def __getitem__(self, node: str) -> dict:
        kind, path, line = self._o.node_rows[node]
        return {"kind": kind, "path": path, "line": line}


class _Edges:
    def __init__(self, owner: CompactCallGraph) -> None:
        self._o = owner

    def __getitem__(self, key: tuple[str, str]) -> dict:
        return _edge_dict(self._o.edge_rows[key])


class CompactCallGraph:
    def __init__(self, node_rows: dict[str, tuple[str, str, int]], edge_rows: dict[tuple[str, str], EdgeRow]) -> None:
        self.node_rows = node_rows
        self.edge_rows = edge_rows
        self._succ: dict[str, list[str]] | None = None
        self._pred: dict[str, list[str]] | None = None

    # Pickle only the rows; adjacency is rebuilt on demand (cheaper than storing it).
    def __getstate__(self) -> tuple[dict, dict]:
        return self.node_rows, self.edge_rows

    def __setstate__(self, state: tuple[dict, dict]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    @classmethod
    def from_nx(cls, graph: nx.DiGraph) -> CompactCallGraph:
        nodes = {n: (d.get("kind", ""), d.get("path", ""), d.get("line", 0)) for n, d in graph.nodes(data=True)}
        edges = {
            (u, v): (d["kind"], d["confidence"], d["site"], tuple(d["sites"]), tuple(d.get("candidates", ())))
            for u, v, d in graph.edges(data=True)
        }
        return cls(nodes, edges)

    def to_nx(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for n, (kind, path, line) in self.node_rows.items():
            g.add_node(n, kind=kind, path=path, line=line)
        for (u, v), row in self.edge_rows.items():
            g.add_edge(u, v, **_edge_dict(row))
        return g

    # -- the networkx-like surface ------------------------------------------

    def _adjacency(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        if self._succ is None or self._pred is None:
            succ: dict[str, list[str]] = {}
            pred: dict[str, list[str]] = {}
            for u, v in self.edge_rows:
                succ.setdefault(u, []).append(v)
                pred.setdefault(v, []).append(u)
            self._succ, self._pred = succ, pred
        return self._succ, self._pred

    def __contains__(self, node: object) -> bool:
        return node in self.node_rows

    def __iter__(self) -> Iterator[str]:
        return iter(self.node_rows)

    @property
    def nodes(self) -> _Nodes:
        return _Nodes(self)

    @property
    def edges(self) -> _Edges:
        return _Edges(self)

    def successors(self, node: str) -> list[str]:
        return self._adjacency()[0].get(node, [])

    def predecessors(self, node: str) -> list[str]:
        return self._adjacency()[1].get(node, [])

    def has_edge(self, u: str, v: str) -> bool:
        return (u, v) in self.edge_rows

    def number_of_edges(self) -> int:
        return len(self.edge_rows)

    def number_of_nodes(self) -> int:
        return len(self.node_rows)

    def subgraph_between(self, source: str, target: str, max_length: int) -> nx.DiGraph:
        """Only the nodes on some path of at most `max_length` calls from source
        to target: what a path search needs, a tiny part of a whole tree's graph."""
        succ, pred = self._adjacency()
        ahead = _bfs(source, succ, max_length)
        behind = _bfs(target, pred, max_length)
        keep = {n for n, d in ahead.items() if n in behind and d + behind[n] <= max_length}
        g = nx.DiGraph()
        g.add_nodes_from(keep)
        for u in keep:
            for v in succ.get(u, ()):
                if v in keep:
                    g.add_edge(u, v, **_edge_dict(self.edge_rows[u, v]))
        return g


def _bfs(start: str, adj: dict[str, list[str]], limit: int) -> dict[str, int]:
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if dist[node] >= limit:
            continue
        for nxt in adj.get(node, ()):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return dist
