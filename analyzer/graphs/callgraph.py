"""The call graph: one networkx DiGraph per snapshot.

Nodes are project modules, classes and functions (global dotted names). An edge
u -> v says u's code calls v; it carries `kind`, `confidence` (the strongest
over its sites), `site` (`path:line` of that strongest site), `sites` (all of
them) and, for name-only guesses, `candidates`. Sites that resolve to nothing
in the project are kept apart as `Unresolved` records, never dropped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import networkx as nx

from analyzer.resolve import CallRecord, CallResolver, Project

RANK = {"certain": 0, "inferred": 1, "guess": 2}


@dataclass(frozen=True, slots=True)
class Unresolved:
    caller: str
    site: str  # path:line
    expr: str
    reason: str
    candidates: tuple[str, ...] = ()

    def __reduce__(self) -> tuple[type[Unresolved], tuple[str, str, str, str, tuple[str, ...]]]:
        # Pickled as its fields in a tuple: a tree has tens of thousands, and the default
        # for a slots dataclass runs `dataclasses.fields` per object.
        return Unresolved, (self.caller, self.site, self.expr, self.reason, self.candidates)


@dataclass(slots=True)
class CallGraphResult:
    graph: nx.DiGraph
    unresolved: list[Unresolved] = field(default_factory=list)
    external: Counter[str] = field(default_factory=Counter)  # external callee -> number of sites


def add_nodes(graph: nx.DiGraph, project: Project) -> None:
    for name, facts in project.modules.items():
        graph.add_node(name, kind="module", path=facts.path, line=1)
    for name, cd in project.classes.items():
        graph.add_node(name, kind="class", path=cd.path, line=cd.fact.line)
    for name, fd in project.functions.items():
        kind = "method" if fd.fact.is_method else "function"
        graph.add_node(name, kind=kind, path=fd.path, line=fd.fact.line)


def add_record(edges: dict[tuple[str, str], dict], rec: CallRecord, site: str | None = None) -> None:
    """Merge the record's edges into `edges` ((caller, callee) -> the edge's data).
    `site`: where the call is (`path:line`), when not the record's own line
    (`CallResolver.module_sites`); every edge of a record is at its call."""
    for edge in rec.edges:
        if site is None:
            site = f"{edge.path}:{edge.line}"
        key = (edge.caller, edge.callee)
        data = edges.get(key)
        if data is None:
            edges[key] = {
                "kind": edge.kind, "confidence": edge.confidence, "site": site, "sites": [site],
                "candidates": list(edge.candidates),
            }
            continue
        if site not in data["sites"]:
            data["sites"].append(site)
        if RANK[edge.confidence] < RANK[data["confidence"]]:
            data.update(kind=edge.kind, confidence=edge.confidence, site=site, candidates=list(edge.candidates))


def build_call_graph(project: Project, resolver: CallResolver | None = None) -> CallGraphResult:
    resolver = resolver or CallResolver(project)
    graph = nx.DiGraph()
    add_nodes(graph, project)
    for name, ld in resolver.flow.lambdas.items():
        graph.add_node(name, kind="lambda", path=project.modules[ld.module].path, line=ld.line)
    result = CallGraphResult(graph)
    # Edges are merged in a plain dict and given to the graph at the end, in the order
    # first seen (networkx's add_edge and get_edge_data cost Python calls per site).
    edges: dict[tuple[str, str], dict] = {}
    for facts in project.modules.values():
        for rec, site in resolver.module_sites(facts):
            if rec.edges:
                add_record(edges, rec, site)
            for name in rec.external:
                result.external[name] += 1
            if rec.unresolved and not rec.edges and not rec.external:
                result.unresolved.append(Unresolved(rec.caller, site, rec.expr, rec.unresolved, rec.candidates))
    graph.add_edges_from((u, v, data) for (u, v), data in edges.items())
    return result
