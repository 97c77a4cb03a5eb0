"""CLI: `atlas calls`, `atlas path`, `atlas state`, `atlas graph`, `atlas callgraph`.

Every command takes the target first: a release (`vllm@0.30.0`), `reference` or a
directory, opened as a `PinnedTree` (analyzer/pinned.py). Graphs are built once per
target and cached.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import typer

from analyzer.commandline import fail, settings_of, stdout_console
from analyzer.graphs import queries, render
from analyzer.graphs.export import EXPORTERS
from analyzer.graphs.pycg import pycg_callgraph
from analyzer.graphs.queries import QueryError
from analyzer.graphs.state import state_graph
from analyzer.graphs.store import Graphs
from analyzer.pinned import PinnedTree, TreeError, directory_tree, open_tree
from analyzer.settings import Settings

CONFIDENCE_HELP = "Weakest edge confidence to follow: certain, inferred or guess."
_CONFIDENCES = ("certain", "inferred", "guess")


def _tree(ctx: typer.Context, target: str) -> PinnedTree:
    try:
        # Indexing a cold tree takes minutes: show the (transient) bar on a terminal only.
        return open_tree(settings_of(ctx), target, progress=sys.stdout.isatty())
    except TreeError as exc:
        raise fail(str(exc)) from None


def _load(tree: PinnedTree, rebuild: bool = False) -> Graphs:
    try:
        return tree.rebuild_graphs() if rebuild else tree.graphs
    except TreeError as exc:
        raise fail(str(exc)) from None


def _graphs(ctx: typer.Context, target: str) -> Graphs:
    return _load(_tree(ctx, target))


def directory_callgraph(settings: Settings, path: Path, *, min_confidence: str = "guess") -> dict[str, list[str]]:
    """What `atlas callgraph DIR --format pycg` prints: the folder indexed with names
    relative to it (as PyCG names modules, package or not), function bodies read from
    it for per-site bindings (as the library path reads them)."""
    tree = directory_tree(settings, path, path.name, read_knobs=False, as_package=False)
    return pycg_callgraph(list(tree.index.modules.values()), min_confidence=min_confidence, root=tree.root)


def _owns_state(graphs: Graphs, symbol: str) -> bool:
    """`Scheduler` names a class that owns state (else `Scheduler.waiting` may be an attribute)."""
    try:
        queries.state_query(graphs.state, symbol)
    except QueryError:
        return False
    return True


def _check_confidence(value: str) -> str:
    if value not in _CONFIDENCES:
        raise fail(f"--min-confidence must be one of {', '.join(_CONFIDENCES)}, not {value!r}")
    return value


def _emit(data: object) -> None:
    typer.echo(json.dumps(data, indent=1))


def register(app: typer.Typer) -> None:
    @app.command("calls")
    def calls_cmd(
        ctx: typer.Context,
        target: str = typer.Argument(..., help="Snapshot (vllm@0.30.0) or directory."),
        symbol: str = typer.Argument(..., help="Function or method, e.g. Scheduler.schedule."),
        depth: int = typer.Option(1, "--depth", min=1, max=20, help="How many call levels to follow."),
        reverse: bool = typer.Option(False, "--reverse", help="Show callers instead of callees."),
        min_confidence: str = typer.Option("guess", "--min-confidence", help=CONFIDENCE_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """What SYMBOL calls (or, with --reverse, what calls it), to --depth levels."""
        _check_confidence(min_confidence)
        graphs = _graphs(ctx, target)
        try:
            root = queries.find_one(graphs.calls, symbol, ("function", "method", "module", "class"))
        except QueryError as exc:
            raise fail(str(exc)) from None
        steps = queries.calls_query(graphs.calls, root, depth=depth, reverse=reverse, min_confidence=min_confidence)
        if as_json:
            _emit({"target": target, "symbol": root, "reverse": reverse, "depth": depth,
                   "edges": [asdict(s) for s in steps]})
        else:
            render.render_calls(stdout_console(), root, steps, reverse)

    @app.command("path")
    def path_cmd(
        ctx: typer.Context,
        target: str = typer.Argument(..., help="Snapshot (vllm@0.30.0) or directory."),
        source: str = typer.Argument(..., help="Calling function, e.g. Scheduler.schedule."),
        dest: str = typer.Argument(..., help="Called function, e.g. KVCacheManager.allocate_slots."),
        max_paths: int = typer.Option(5, "--max-paths", min=1, max=50, help="Simple paths to list."),
        max_length: int = typer.Option(12, "--max-length", min=1, max=50, help="Longest path, in calls."),
        min_confidence: str = typer.Option("guess", "--min-confidence", help=CONFIDENCE_HELP),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Shortest call path FROM -> TO, then further simple paths by length."""
        _check_confidence(min_confidence)
        graphs = _graphs(ctx, target)
        try:
            src = queries.find_one(graphs.calls, source, ("function", "method", "module"))
            dst = queries.find_one(graphs.calls, dest, ("function", "method", "module", "class"))
        except QueryError as exc:
            raise fail(str(exc)) from None
        paths = queries.path_query(graphs.calls, src, dst, max_paths=max_paths,
                                   min_confidence=min_confidence, max_length=max_length)
        if as_json:
            _emit({"target": target, "from": src, "to": dst,
                   "paths": [[asdict(s) for s in p] for p in paths]})
        else:
            render.render_paths(stdout_console(), src, dst, paths)

    @app.command("state")
    def state_cmd(
        ctx: typer.Context,
        target: str = typer.Argument(..., help="Snapshot (vllm@0.30.0) or directory."),
        cls: str = typer.Argument(..., help="Class, e.g. Scheduler or vllm.v1.core.sched.scheduler.Scheduler."),
        attr: str = typer.Option(None, "--attr", help="One attribute's story: creation, every writer and reader."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """The state CLASS owns and who reads and writes it, writers grouped by how they
        write (mixin and outside writers marked); --attr NAME (or CLASS.NAME) for one attribute."""
        graphs = _graphs(ctx, target)
        try:
            if attr is not None or ("." in cls and not _owns_state(graphs, cls)):
                state, name = queries.attr_query(graphs.state, cls, attr)
                if as_json:
                    _emit(queries.attr_to_dict(state, name))
                else:
                    render.render_attr(stdout_console(), state, state.attrs[name])
                return
            state = queries.state_query(graphs.state, cls)
        except QueryError as exc:
            raise fail(str(exc)) from None
        if as_json:
            _emit(queries.state_to_dict(state))
        else:
            render.render_state(stdout_console(), state)

    @app.command("graph")
    def graph_cmd(
        ctx: typer.Context,
        target: str = typer.Argument(..., help="Snapshot (vllm@0.30.0) or directory."),
        fmt: str = typer.Option("json", "--format", help="json, dot or graphml."),
        which: str = typer.Option("calls", "--graph", help="calls (call graph) or state (state ownership)."),
        output: Path = typer.Option(None, "--output", "-o", help="Write here instead of stdout."),
        stats: bool = typer.Option(False, "--stats", help="Print counts only."),
        unresolved: bool = typer.Option(
            False, "--unresolved", help="List the call sites that resolved to nothing (with their reason)."
        ),
        rebuild: bool = typer.Option(False, "--rebuild", help="Ignore the cached graphs."),
        as_json: bool = typer.Option(False, "--json", help="With --stats / --unresolved: print JSON."),
    ) -> None:
        """Export a target's whole call graph (or, with --graph state, its state-ownership graph)."""
        if fmt not in EXPORTERS:
            raise fail(f"--format must be one of {', '.join(EXPORTERS)}, not {fmt!r}")
        tree = _tree(ctx, target)
        graphs = _load(tree, rebuild)
        if unresolved:
            records = tree.unresolved_calls()
            if as_json:
                _emit([asdict(r) for r in records])
            else:
                for r in records:
                    more = f" (candidates: {len(r.candidates)})" if r.candidates else ""
                    typer.echo(f"{r.site}  {r.caller}: {r.expr}  -- {r.reason}{more}")
            return
        if stats:
            if as_json:
                _emit(graphs.meta)
            else:
                for key, value in graphs.meta.items():
                    typer.echo(f"{key}: {value}")
            return
        if which not in ("calls", "state"):
            raise fail(f"--graph must be calls or state, not {which!r}")
        graph = graphs.calls.to_nx() if which == "calls" else state_graph(graphs.state)
        text = EXPORTERS[fmt](graph)
        if output is None:
            typer.echo(text, nl=False)
        else:
            output.write_text(text)

    @app.command("callgraph")
    def callgraph_cmd(
        ctx: typer.Context,
        path: Path = typer.Argument(..., help="Directory of Python code."),
        fmt: str = typer.Option("pycg", "--format", help="Only pycg for now."),
        min_confidence: str = typer.Option("guess", "--min-confidence", help=CONFIDENCE_HELP),
        output: Path = typer.Option(None, "--output", "-o", help="Write here instead of stdout."),
    ) -> None:
        """PyCG-format call graph JSON of a directory (names relative to it)."""
        if fmt != "pycg":
            raise fail(f"--format must be pycg, not {fmt!r}")
        _check_confidence(min_confidence)
        try:
            graph = directory_callgraph(settings_of(ctx), path, min_confidence=min_confidence)
        except TreeError as exc:
            raise fail(str(exc)) from None
        text = json.dumps(graph, indent=1)
        if output is None:
            typer.echo(text)
        else:
            output.write_text(text + "\n")
