from __future__ import annotations

import itertools
import json
import xml.etree.ElementTree as ET

import pytest
from resolve.factkit import call, fn, module

from analyzer.graphs.callgraph import build_call_graph
from analyzer.graphs.export import to_dot, to_graphml, to_json
from analyzer.graphs.queries import QueryError, calls_query, find_one, path_query
from analyzer.graphs.store import Graphs
from analyzer.index.models import ModuleFacts
from analyzer.resolve import Project

S = "eng.core.scheduler"
KV = "eng.core.kv"


def test_edges_carry_site_kind_confidence(graphs: Graphs) -> None:
    g = graphs.calls
    data = g.edges[f"{S}.Scheduler.schedule", f"{KV}.KVCacheManager.allocate_slots"]
    assert data["site"] == "eng/core/scheduler.py:20"
    assert data["kind"] == "via-attribute-type"
    assert data["confidence"] == "inferred"
    assert g.nodes[f"{S}.Scheduler.schedule"]["kind"] == "method"


def test_strongest_site_wins_and_all_sites_are_kept() -> None:
    facts = [
        module(
            "m.py",
            functions=[fn("a"), fn("b")],
            calls=[call("b", "a", 3), call("b", "a", 7), call("nothing.here", "a", 9)],
        )
    ]
    result = build_call_graph(Project(facts))
    data = result.graph.edges["m.a", "m.b"]
    assert data["sites"] == ["m.py:3", "m.py:7"] and data["confidence"] == "certain"
    # The unknown receiver is kept as an unresolved record with its expression.
    assert [(u.caller, u.site, u.expr) for u in result.unresolved] == [("m.a", "m.py:9", "nothing.here")]


def test_unresolved_and_guess_candidates_are_recorded(facts: list[ModuleFacts]) -> None:
    result = build_call_graph(Project(facts))
    exprs = {u.expr: u for u in result.unresolved}
    assert "mystery.frobnicate" in exprs
    assert exprs["mystery.frobnicate"].site == "eng/main.py:17"
    guess = result.graph.edges["eng.main.run", f"{KV}.KVCacheManager.allocate_slots"]
    assert guess["confidence"] == "guess" and guess["candidates"] == [f"{KV}.KVCacheManager.allocate_slots"]
    assert result.external["os.path.join"] == 1


def test_calls_query_depth_and_reverse(graphs: Graphs) -> None:
    g = graphs.calls
    root = find_one(g, "Scheduler.schedule")
    one = calls_query(g, root, depth=1)
    assert f"{KV}.KVCacheManager.allocate_slots" in {s.callee for s in one}
    two = calls_query(g, root, depth=2)
    assert f"{KV}.BlockPool.get_blocks" in {s.callee for s in two if s.depth == 2}
    callers = calls_query(g, find_one(g, "KVCacheManager.allocate_slots"), reverse=True)
    assert f"{S}.Scheduler.schedule" in {s.caller for s in callers}
    certain = calls_query(g, root, depth=1, min_confidence="certain")
    assert all(s.confidence == "certain" for s in certain) and certain


def test_ambiguous_and_unknown_symbols_raise(graphs: Graphs) -> None:
    with pytest.raises(QueryError, match="ambiguous"):
        find_one(graphs.calls, "schedule")
    with pytest.raises(QueryError, match="no symbol"):
        find_one(graphs.calls, "Nope.nope")


def test_path_query_shortest_first(graphs: Graphs) -> None:
    g = graphs.calls
    paths = path_query(g, find_one(g, "main.run"), find_one(g, "BlockPool.get_blocks"))
    assert paths
    assert [s.callee for s in paths[0]][-1] == f"{KV}.BlockPool.get_blocks"
    assert all(len(a) <= len(b) for a, b in itertools.pairwise(paths))
    assert path_query(g, find_one(g, "BlockPool.get_blocks"), find_one(g, "main.run")) == []


def test_exports(graphs: Graphs) -> None:
    g = graphs.calls.to_nx()
    assert g.number_of_edges() == graphs.calls.number_of_edges()
    data = json.loads(to_json(g))
    assert len(data["edges"]) == g.number_of_edges()
    dot = to_dot(g)
    assert dot.startswith("digraph") and f'"{S}.Scheduler.schedule" -> "{KV}.KVCacheManager.allocate_slots"' in dot
    root = ET.fromstring(to_graphml(g))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:edge", ns)) == g.number_of_edges()


def test_compact_graph_round_trip_and_pruned_paths(graphs: Graphs) -> None:
    import pickle

    compact = pickle.loads(pickle.dumps(graphs.calls))
    full = compact.to_nx()
    assert set(full.nodes) == set(compact) and full.number_of_edges() == compact.number_of_edges()
    for u, v in full.edges:
        assert compact.edges[u, v] == full.edges[u, v]
    src, dst = find_one(compact, "main.run"), find_one(compact, "BlockPool.get_blocks")
    pruned = compact.subgraph_between(src, dst, 12)
    assert src in pruned and dst in pruned and pruned.number_of_nodes() < full.number_of_nodes()
    assert path_query(compact, src, dst) == path_query(full, src, dst)


def test_state_index_is_lazy_and_picklable(graphs: Graphs) -> None:
    import pickle

    states = pickle.loads(pickle.dumps(graphs.state))
    assert f"{KV}.KVCacheManager" in states and len(states) == len(graphs.state)
    assert states[f"{KV}.KVCacheManager"].attrs.keys() == graphs.state[f"{KV}.KVCacheManager"].attrs.keys()
