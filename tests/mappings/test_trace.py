"""Tracing a request across process bridges: calls alone stop at the socket."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import typer
from mappings.conftest import FakePins, write_mapping
from typer.testing import CliRunner

from analyzer.mappings import Bridge
from analyzer.mappings.commands import register
from analyzer.mappings.trace import trace_path


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
