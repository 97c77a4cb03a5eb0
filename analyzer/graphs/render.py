"""Terminal rendering (rich) for graph queries."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from analyzer.graphs.queries import CallStep
from analyzer.graphs.state import Access, ClassState, StateAttr, how

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


def _shorten(state: ClassState) -> Callable[[str], str]:
    prefix = state.cls + "."
    package = state.cls.split(".")[0] + "."

    def short(func: str) -> str:
        # Own methods by name; others relative to the top-level package.
        return func.removeprefix(prefix) if func.startswith(prefix) else func.removeprefix(package)

    return short


def _site_key(site: str) -> tuple[str, int]:
    path, _, line = site.rpartition(":")
    return path, int(line) if line.isdigit() else 0


_BY_MARK = {"mixin": " \\[mixin]", "base": " \\[base class]", "subclass": " \\[subclass]", "outside": " OUTSIDE"}


def grouped_writers(attr: StateAttr) -> dict[str, dict[str, list[Access]]]:
    """how -> writing function -> its writes, in a stable order (outside writers last)."""
    out: dict[str, dict[str, list[Access]]] = {}
    for w in sorted(attr.writes, key=lambda w: (how(w), w.outside, w.function, _site_key(w.site))):
        out.setdefault(how(w), {}).setdefault(w.function, []).append(w)
    return out


def render_state(console: Console, state: ClassState) -> None:
    table = Table(title=f"{state.cls}  ({state.path}:{state.line})", show_lines=True)
    table.add_column("attribute", overflow="fold")
    table.add_column("origin", style="dim")
    table.add_column("written by (grouped by how)", overflow="fold")
    table.add_column("read by", overflow="fold")
    short = _shorten(state)
    for attr in sorted(state.attrs.values(), key=lambda a: (a.line, a.name)):
        readers = sorted({short(r.function) for r in attr.reads})
        lines: list[str] = []
        for text, functions in grouped_writers(attr).items():
            lines.append(f"[bold]{text}[/bold]")
            for func, writes in functions.items():
                mark = _BY_MARK.get(writes[0].by, "")
                entry = f"  {short(func)}{mark}"
                lines.append(f"[red]{entry}[/red]" if writes[0].outside else entry)
        table.add_row(attr.name, attr.origin, "\n".join(lines), "\n".join(readers))
    console.print(table)
    if state.inherited:
        names = ", ".join(f"{a} ({', '.join(_shorten(state)(o) for o in owners)})"
                          for a, owners in sorted(state.inherited.items()))
        console.print(f"[dim]state it uses that another class owns: {names}[/dim]")
    outside = state.outside_writes
    if outside:
        console.print(f"[red]{len(outside)} write(s) from outside the class[/red]")


def render_attr(console: Console, state: ClassState, attr: StateAttr) -> None:
    """One attribute's story: where it is created, every writer and reader with site."""
    short = _shorten(state)
    ann = f": {escape(attr.annotation)}" if attr.annotation else ""
    console.print(f"[bold]{state.cls}.{attr.name}[/bold]{ann}  ({attr.origin}, {state.path}:{attr.line})",
                  highlight=False)
    console.print("[bold]created[/bold]")
    for c in attr.created or [f"{state.path}:{attr.line}"]:
        console.print(f"  {escape(c)}", highlight=False)
    functions = {w.function for w in attr.writes}
    console.print(f"[bold]written by[/bold] {len(functions)} function(s) at {len(attr.writes)} site(s)")
    for text, by_func in grouped_writers(attr).items():
        console.print(f"  {text}", highlight=False)
        for func, writes in by_func.items():
            mark = _BY_MARK.get(writes[0].by, "")
            style = "red" if writes[0].outside else "default"
            console.print(f"    [{style}]{short(func)}{mark}[/{style}]", highlight=False)
            for w in writes:
                detail = f"  ({escape(w.detail)})" if w.detail else ""
                console.print(f"      [dim]{w.site}{detail}[/dim]", highlight=False)
    readers: dict[str, list[Access]] = {}
    for r in sorted(attr.reads, key=lambda r: (r.function, _site_key(r.site))):
        readers.setdefault(r.function, []).append(r)
    console.print(f"[bold]read by[/bold] {len(readers)} function(s) at {len(attr.reads)} site(s)")
    for func, reads in readers.items():
        via = sorted({r.via for r in reads if r.via != "direct"})
        extra = f" (via {', '.join(via)})" if via else ""
        mark = _BY_MARK.get(reads[0].by, "")
        sites = ", ".join(r.site.rpartition(":")[2] for r in reads)
        console.print(f"    {short(func)}{mark}{extra}  [dim]{reads[0].site.rpartition(':')[0]}:{sites}[/dim]",
                      highlight=False)
