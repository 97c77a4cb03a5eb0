"""Terminal rendering (rich) for `atlas diff`."""

from __future__ import annotations

from rich.columns import Columns
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from analyzer.diff.models import DesignDiff, SideDesign, VersionDiff

SHOWN = 40  # names per list on a terminal; --json has them all


def _names(console: Console, title: str, names: list[str], style: str) -> None:
    console.print(f"[bold]{title}[/] ({len(names)})")
    for name in names[:SHOWN]:
        console.print(f"  [{style}]{escape(name)}[/]", soft_wrap=True)
    if len(names) > SHOWN:
        console.print(f"  [dim]… {len(names) - SHOWN} more (see --json)[/]")


def print_version(console: Console, diff: VersionDiff) -> None:
    scope = f" (concept {diff.concept_filter})" if diff.concept_filter else ""
    console.rule(f"{diff.old} → {diff.new}{scope}")
    _names(console, "symbols added", diff.added, "green")
    _names(console, "symbols removed", diff.removed, "red")
    console.print(f"[bold]moved or renamed[/] ({len(diff.moved)})")
    for move in diff.moved[:SHOWN]:
        console.print(f"  [yellow]{escape(move.old)}[/] → [yellow]{escape(move.new)}[/] [dim]({move.kind})[/]", soft_wrap=True)
        console.print(f"    [dim]evidence: {escape('; '.join(move.evidence))}[/]", soft_wrap=True)
    if len(diff.moved) > SHOWN:
        console.print(f"  [dim]… {len(diff.moved) - SHOWN} more (see --json)[/]")
    if diff.modules:
        console.print(f"[bold]modules split, merged or folded into a package[/] ({len(diff.modules)})")
    for change in diff.modules[:SHOWN]:
        console.print(f"  [yellow]{escape(change.old)}[/] → [yellow]{escape(', '.join(change.new))}[/] "
                      f"[dim]({change.kind})[/]", soft_wrap=True)
        console.print(f"    [dim]evidence: {escape('; '.join(change.evidence))}[/]", soft_wrap=True)
    _names(console, "flags added", diff.flags_added, "green")
    _names(console, "flags removed", diff.flags_removed, "red")
    _names(console, "option strings added to existing flags", diff.options_added, "green")
    _names(console, "option strings removed from existing flags", diff.options_removed, "red")
    _names(console, "env vars added", diff.envs_added, "green")
    _names(console, "env vars removed", diff.envs_removed, "red")
    if diff.concepts:
        console.rule("call-graph changes per concept")
    for c in diff.concepts:
        if not (c.added or c.removed or c.missing):
            console.print(f"[bold]{c.concept}[/]: no change in calls out of {len(c.roots_new)} mapped functions")
            continue
        console.print(f"[bold]{c.concept}[/]:")
        for e in c.added:
            console.print(f"  [green]+ {escape(e.caller)} → {escape(e.callee)}[/]", soft_wrap=True)
        for e in c.removed:
            console.print(f"  [red]- {escape(e.caller)} → {escape(e.callee)}[/]", soft_wrap=True)
        if c.missing:
            console.print(f"  [dim]not in either call graph: {escape(', '.join(c.missing))}[/]", soft_wrap=True)
    for warning in diff.warnings[:5]:
        console.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)


def _side_panel(side: SideDesign) -> Panel:
    lines: list[Text | str] = [Text.from_markup(f"[bold]{side.status}[/]")]
    if side.note:
        lines.append(Text(side.note, style="dim"))
    if side.state:
        lines.append(Text("state owners", style="underline"))
        for cls in side.state:
            lines.append(Text(f"{cls.name.rsplit('.', 1)[-1]}: {', '.join(a.split(':')[0] for a in cls.attributes) or '-'}"))
    if side.calls:
        lines.append(Text("calls", style="underline"))
        for edge in side.calls:
            lines.append(Text(f"{_short(edge.caller)} → {_short(edge.callee)}"))
    if side.knobs:
        lines.append(Text("knobs", style="underline"))
        for knob in side.knobs:
            default = f" = {knob.default}" if knob.default is not None else ""
            lines.append(Text(f"{knob.name}{default}" + ("" if knob.found else "  (not found)")))
    if side.bridges:
        lines.append(Text("process bridges", style="underline"))
        for b in side.bridges:
            lines.append(Text(f"{b['name']}: {_short(b['source'])} → {_short(b['target'])} ({b['transport']})"))
    return Panel(Group(*lines), title=side.pin, expand=True)


def _short(name: str) -> str:
    """`pkg.mod.Class.method` -> `Class.method` (the full names are in --json)."""
    parts = name.split(".")
    tail = [p for p in parts if p[:1].isupper()]
    if tail:
        return ".".join(parts[parts.index(tail[0]):])
    return ".".join(parts[-2:])


def print_design(console: Console, diff: DesignDiff) -> None:
    console.rule(f"{diff.left} vs {diff.right}")
    for c in diff.concepts:
        console.print(f"\n[bold]{escape(c.title)}[/] ({c.concept})")
        console.print(Columns([_side_panel(c.left), _side_panel(c.right)], equal=True, expand=True))
    for warning in diff.warnings[:5]:
        console.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
