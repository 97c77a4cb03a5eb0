"""`atlas`: the command-line entry point. Each stage registers its own commands."""

from __future__ import annotations

import importlib
from pathlib import Path

import typer

from analyzer.settings import CACHE_ENV, Settings, default_cache_dir
from reference_engine.exit_codes import OneLineErrors

app = typer.Typer(
    cls=OneLineErrors,  # usage errors: one `error:` line, exit 2, as every command's own
    help="Serving Atlas: index, check, compare and run the ideas of LLM serving systems.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)

# Modules exposing `register(app: typer.Typer) -> None`; one per pipeline stage.
COMMAND_MODULES: tuple[str, ...] = (
    "analyzer.snapshots.commands",
    "analyzer.index.commands",
    "analyzer.flags.commands",
    "analyzer.refs.commands",
    "analyzer.graphs.commands",
    "analyzer.mappings.commands",
    "analyzer.diff.commands",
    "analyzer.report.commands",
    "analyzer.demo",
    "analyzer.project_commands",
    "reference_engine.commands",
)


@app.callback()
def main(
    ctx: typer.Context,
    cache_dir: Path = typer.Option(
        None,
        "--cache-dir",
        envvar=CACHE_ENV,
        help="Where snapshots, indexes and generated models live.",
        show_default=False,
    ),
) -> None:
    ctx.obj = Settings(cache_dir=(cache_dir or default_cache_dir()).expanduser().resolve())


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # Tolerate a stage not written yet; a missing dependency inside one is a real error.
            if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
                raise
            continue
        module.register(app)


_register_all()
