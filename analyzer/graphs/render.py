"""Terminal rendering (rich) for graph queries."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.tree import Tree

from analyzer.graphs.queries import CallStep
from analyzer.graphs.state import ClassState

_STYLE = {"certain": "green", "inferred": "yellow", "guess": "red"}


def _short(name: str, root: str) -> str:
    """Drop the module prefix shared with the query root, for readability."""
    prefix = root.rpartition(".")[0]
    return name[len(prefix) + 1 :] if prefix and name.startswith(prefix + ".") else name


def _label(step: CallStep, name: str) -> str:
    style = _STYLE[step.confidence]
    more = f" (+{step.sites - 1} sites)" if step.sites > 1 else ""
    cands = f" [dim]one of {len(step.candidates)}[/dim]" if step.confidence == "guess" else ""
    return f"{name}  [{style}]{step.kind}/{step.confidence}[/{style}] [dim]{step.site}{more}[/dim]{cands}"


def render_calls(console: Console, root: str, steps: list[CallStep], reverse: bool) -> None:
    tree = Tree(f"[bold]{root}[/bold] {'callers' if reverse else 'callees'}")
    branches: dict[str, Tree] = {root: tree}
    for step in steps:
        parent_name, child = (step.callee, step.caller) if reverse else (step.caller, step.callee)
        parent = branches.get(parent_name, tree)
        branch = parent.add(_label(step, _short(child, root)))
        branches.setdefault(child, branch)
    console.print(tree)
    if not steps:
        console.print("[dim](none found)[/dim]")


def render_paths(console: Console, source: str, target: str, paths: list[list[CallStep]]) -> None:
    if not paths:
        console.print(f"[yellow]no call path from {source} to {target}[/yellow]")
        return
    for i, path in enumerate(paths, 1):
        title = "shortest path" if i == 1 else f"path {i}"
        console.print(f"[bold]{title}[/bold] ({len(path)} calls)")
        console.print(f"  {path[0].caller}")
        for step in path:
            style = _STYLE[step.confidence]
            console.print(
                f"  -> {step.callee}  [{style}]{step.kind}/{step.confidence}[/{style}] [dim]{step.site}[/dim]"
            )


def render_state(console: Console, state: ClassState) -> None:
    table = Table(title=f"{state.cls}  ({state.path}:{state.line})", show_lines=False)
    table.add_column("attribute", overflow="fold")
    table.add_column("origin", style="dim")
    table.add_column("read by", overflow="fold")
    table.add_column("written by", overflow="fold")
    prefix = state.cls + "."
    package = state.cls.split(".")[0] + "."

    def short(func: str) -> str:
        # Own methods by name; others relative to the top-level package.
        return func.removeprefix(prefix) if func.startswith(prefix) else func.removeprefix(package)

    for attr in sorted(state.attrs.values(), key=lambda a: (a.line, a.name)):
        readers = sorted({short(r.function) for r in attr.reads})
        writers: dict[str, set[str]] = {}
        for w in attr.writes:
            writers.setdefault(w.function, set()).add(w.method or w.kind)
        written = []
        for func, kinds in sorted(writers.items()):
            outside = any(w.outside for w in attr.writes if w.function == func)
            text = f"{short(func)} ({', '.join(sorted(kinds))})"
            written.append(f"[red]{text} OUTSIDE[/red]" if outside else text)
        table.add_row(attr.name, attr.origin, "\n".join(readers), "\n".join(written))
    console.print(table)
    outside = state.outside_writes
    if outside:
        console.print(f"[red]{len(outside)} write(s) from outside the class[/red]")
