"""Tracing a request across process bridges: calls alone stop at the socket."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import typer
from mappings.conftest import FakePins, write_mapping
from typer.testing import CliRunner

from analyzer.mappings import Bridge
from analyzer.mappings.commands import register
from analyzer.mappings.trace import chain_steps, trace_path


def _graph(*edges: tuple[str, str]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_edges_from(edges)
    return g


def test_path_continues_across_a_bridge() -> None:
    g = _graph(("api.generate", "client.send"), ("core.recv", "core.loop"), ("core.loop", "sched.add"))
    bridge = Bridge("api-to-core", "client.send", "core.recv", "zmq")
    assert trace_path(g, "api.generate", "sched.add", {}) is None
    steps = trace_path(g, "api.generate", "sched.add", {"client.send": [bridge]})
    assert steps is not None
    assert [(s.caller, s.callee, s.via) for s in steps] == [
        ("api.generate", "client.send", "call"),
        ("client.send", "core.recv", "bridge api-to-core (zmq)"),
        ("core.recv", "core.loop", "call"),
        ("core.loop", "sched.add", "call"),
    ]


def test_shortest_path_and_length_limit() -> None:
    g = _graph(("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"))
    steps = trace_path(g, "a", "d", {})
    assert steps is not None and [s.callee for s in steps] == ["d"]
    long = _graph(("a", "b"), ("b", "c"), ("c", "d"))
    assert trace_path(long, "a", "d", {}, max_length=2) is None


def test_cli_trace_on_a_fetched_release(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "pool", """
        title = "Pool"
        summary = "x"
        [reference]
        status = "unmapped"
        [vllm]
        status = "implemented"
        symbols = ["vllm.core.sched.Scheduler"]
        bridges = [{ name = "to-pool-process", source = "vllm.core.sched.Scheduler._preempt", target = "vllm.core.pool.BlockPool.allocate", transport = "pipe", releases = ["1.0"] }]
    """)
    app = typer.Typer()

    @app.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = pins.settings

    register(app)
    runner = CliRunner()
    args = ["map", "trace", "vllm@1.0", "Scheduler.schedule", "vllm.core.pool.BlockPool.allocate", "--mappings", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    # schedule calls allocate directly: the shortest path needs no bridge.
    assert "bridge" not in result.stdout
    free = runner.invoke(app, ["map", "trace", "vllm@1.0", "Scheduler._preempt", "BlockPool.allocate", "--mappings", str(tmp_path), "--json"])
    assert free.exit_code == 0, free.output
    assert '"via": "bridge to-pool-process (pipe)"' in free.stdout
    missing = runner.invoke(app, ["map", "trace", "vllm@1.0", "BlockPool.free", "Scheduler.schedule", "--mappings", str(tmp_path)])
    assert missing.exit_code == 1 and "no path" in missing.stdout


def test_steps_chain_returns_to_the_loop_that_received_the_message() -> None:
    """The busy loop both receives the request and runs the step: after the handler returns,
    the chain continues from the loop that called the bridge's receiving end."""
    g = _graph(("api.generate", "client.send"), ("core.loop", "core.recv"), ("core.recv", "sched.add"),
               ("core.loop", "core.step"), ("core.step", "sched.schedule"), ("other.main", "core.step"))
    bridges = {"client.send": [Bridge("api-to-core", "client.send", "core.recv", "zmq")]}
    links = chain_steps(g, [(1, ["api.generate"]), (2, ["sched.add"]), (3, ["sched.schedule"])], bridges)
    assert [(link.index, link.source, link.broken) for link in links] == [(1, None, ""), (2, 1, ""), (3, 2, "")]
    assert [(s.caller, s.callee, s.via) for s in links[2].path] == [
        ("sched.add", "core.loop", "return"),
        ("core.loop", "core.step", "call"),
        ("core.step", "sched.schedule", "call"),
    ]
    assert [s.via for s in links[1].bridges] == ["bridge api-to-core (zmq)"]
    # Without the bridge nothing links step 2 to step 1, and no loop is known to return to.
    cut = chain_steps(g, [(1, ["api.generate"]), (2, ["sched.add"]), (3, ["sched.schedule"])], {})
    assert "sched.add is not reached from api.generate (step 1)" in cut[1].broken
    assert cut[2].broken and "not in the call graph" in chain_steps(g, [(1, ["nowhere"])], {})[0].broken


def test_every_symbol_of_a_step_is_chained_not_only_its_first() -> None:
    g = _graph(("a", "b"), ("x", "c"))
    links = chain_steps(g, [(1, ["a"]), (2, ["b", "c"])], {})
    assert links[1].source == 1 and "c is not reached from b (step 2)" in links[1].broken


def test_a_step_spanning_a_boundary_records_the_crossing_inside_it() -> None:
    g = _graph(("api.handler", "api.add"), ("api.add", "client.send"), ("core.recv", "core.add"))
    bridges = {"client.send": [Bridge("to-core", "client.send", "core.recv", "zmq")]}
    links = chain_steps(g, [(1, ["api.handler"]), (2, ["api.add", "core.add"])], bridges)
    assert links[1].source == 1 and [s.callee for s in links[1].path] == ["api.add"]
    assert [s.via for s in links[1].bridges] == ["bridge to-core (zmq)"]


def test_link_summary_counts_the_way_there_apart_from_crossings_inside_the_step() -> None:
    """`atlas map verify` prints how each step is reached: a bridge crossed between a step's
    own symbols is not a hop on the way to it (that once printed "-1 calls")."""
    from analyzer.mappings.render import _link_text

    g = _graph(("api.handler", "api.add"), ("api.add", "client.send"), ("core.recv", "core.add"))
    bridges = {"client.send": [Bridge("to-core", "client.send", "core.recv", "zmq")]}
    links = chain_steps(g, [(1, ["api.handler"]), (2, ["api.add", "core.add"])], bridges)
    assert _link_text(links[1]) == "1→2 (1 calls; 1 bridge within the step)"
    links = chain_steps(g, [(1, ["api.handler"]), (2, ["core.add"])], bridges)
    assert _link_text(links[1]) == "1→2 (3 calls + 1 bridge)"


def test_a_declared_run_time_call_is_taken_only_where_calls_do_not_reach() -> None:
    """A dispatch declared for one concept (a hybrid model's Mamba manager) must not reroute
    another concept's chain that calls already connect, however much shorter it is."""
    from analyzer.mappings import Dispatch

    g = _graph(("coord.allocate", "full.allocate"), ("full.allocate", "pool.take"), ("pool.take", "pool.get"),
               ("mamba.allocate", "pool.get"), ("loop.step", "layer.forward"), ("gdn.forward", "gdn.core"))
    hops = {"coord.allocate": [Dispatch("coord.allocate", "mamba.allocate", "manager.allocate(")],
            "loop.step": [Dispatch("loop.step", "gdn.forward", "self.model(")]}
    links = chain_steps(g, [(1, ["coord.allocate"]), (2, ["pool.get"])], hops)
    assert [s.via for s in links[1].path] == ["call", "call", "call"]  # not the one-hop dispatch
    links = chain_steps(g, [(1, ["loop.step"]), (2, ["gdn.forward"])], hops)
    assert [s.via for s in links[1].path] == ["dispatch self.model("] and links[1].bridges == []
    assert [s.callee for s in links[1].dispatches] == ["gdn.forward"]
