"""Terminal rendering (rich) for `atlas map`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from analyzer.mappings.book import ChapterTable
from analyzer.mappings.models import SIDES, ConceptMapping, SideMapping, is_crossing
from analyzer.mappings.trace import StepLink, TraceStep
from analyzer.mappings.verify import VerifyReport

STATUS_STYLE = {
    "implemented": "green",
    "partial": "yellow",
    "not-implemented": "dim",
    "unmapped": "red",
}


def styled(status: str) -> str:
    return f"[{STATUS_STYLE.get(status, 'white')}]{status}[/]"


def print_concept_list(console: Console, concepts: list[ConceptMapping]) -> None:
    table = Table(title=f"{len(concepts)} concepts")
    table.add_column("concept")
    table.add_column("title")
    for side in SIDES:
        table.add_column(side)
    for c in concepts:
        table.add_row(c.id, escape(c.title), *(styled(c.side(s).status) for s in SIDES))
    console.print(table)


def print_chapter_table(console: Console, chapters: ChapterTable) -> None:
    """Parts as headings, one row per (chapter, concept); a chapter with none gets a red row."""
    table = Table(title=f"{sum(len(p.chapters) for p in chapters.parts)} chapters, "
                  f"{len(chapters.uncovered)} without a concept")  # fmt: skip
    for col in ("chapter", "concept", *SIDES):
        table.add_column(col)
    for part in chapters.parts:
        table.add_row(f"[bold]{escape(part.title)}[/]", *("" for _ in range(1 + len(SIDES))))
        for ch in part.chapters:
            covering = chapters.concepts.get(ch, [])
            if not covering:
                table.add_row(f"  {escape(ch)}", "[red]none[/]", *("" for _ in SIDES))
            for i, c in enumerate(covering):
                table.add_row(
                    f"  {escape(ch)}" if i == 0 else "", c.id,
                    *(styled(c.side(s).status) for s in SIDES),
                )  # fmt: skip
    console.print(table)
    for ch, ids in sorted(chapters.unknown.items()):
        console.print(
            f"[yellow]not in the book's contents:[/] {escape(ch)} (named by {', '.join(ids)})",
            highlight=False,
        )


def _releases(releases: tuple[str, ...]) -> str:
    return f" [cyan](only {', '.join(releases)})[/]" if releases else ""


def _print_side(console: Console, side: SideMapping) -> None:
    console.print(f"\n[bold]{side.project}[/]: {styled(side.status)}")
    if side.note:
        console.print(f"  {escape(side.note)}")
    for title, refs in (("symbols", side.symbols), ("entry points", side.entry_points)):
        if refs:
            console.print(f"  [underline]{title}[/]")
            for ref in refs:
                role = f" — {escape(ref.role)}" if ref.role else ""
                console.print(f"    {escape(ref.name)}{role}{_releases(ref.releases)}")
    knobs = (*side.flags, *side.envs)
    if knobs:
        console.print("  [underline]flags and env vars[/]")
        for knob in knobs:
            role = f" — {escape(knob.role)}" if knob.role else ""
            console.print(f"    {escape(knob.name)}{role}{_releases(knob.releases)}")
    if side.bridges:
        console.print("  [underline]process bridges[/]")
        for b in side.bridges:
            carries = f", carries {escape(b.carries)}" if b.carries else ""
            console.print(
                f"    {escape(b.name)}: {escape(b.source)} → {escape(b.target)} "
                f"({escape(b.transport)}{carries}){_releases(b.releases)}"
            )
    if side.dispatches:
        console.print("  [underline]run-time calls the call graph cannot follow[/]")
        for d in side.dispatches:
            console.print(f"    {escape(d.source)} → {escape(d.target)} "
                          f"(written {escape(d.call)}){_releases(d.releases)}")


def print_concept(console: Console, concept: ConceptMapping) -> None:
    console.print(f"[bold]{escape(concept.title)}[/] ({concept.id})")
    console.print(escape(concept.summary))
    if concept.related:
        console.print(f"related: {', '.join(concept.related)}")
    if concept.steps:
        _print_steps(console, concept)
    for side in SIDES:
        _print_side(console, concept.side(side))


def _print_steps(console: Console, concept: ConceptMapping) -> None:
    console.print(f"\n[bold]steps[/] ({len(concept.steps)})")
    for i, step in enumerate(concept.steps, start=1):
        console.print(f"  [bold]{i}. {escape(step.title)}[/]: {escape(step.explain)}", soft_wrap=True)
        for name in SIDES:
            part = step.side(name)
            where = f" [dim]\\[{escape(part.process)}][/]" if part.process else ""
            if part.symbols:
                names = ", ".join(escape(r.name) + _releases(r.releases) for r in part.symbols)
                console.print(f"     {name}{where}: {names}", soft_wrap=True)
            elif part.none:
                console.print(f"     {name}: [yellow]no counterpart[/] — {escape(part.none)}", soft_wrap=True)
            else:
                console.print(f"     {name}: [red]not written for this side[/]")


def print_verify(console: Console, report: VerifyReport) -> None:
    console.print(f"checked {report.checked} names against {', '.join(report.pins) or 'no pins'}")
    if report.problems:
        # One line per problem (not a table): names stay whole and copy-pasteable.
        console.print(f"[bold red]{len(report.problems)} stale[/]")
        for p in report.problems:
            hint = f" [dim](maybe now: {escape(', '.join(p.suggestions))})[/]" if p.suggestions else ""
            console.print(f"  [red]✗[/] {p.concept} {escape(f'[{p.kind}]')} {escape(p.message)}{hint}", soft_wrap=True)
    runtime: dict[str, set[str]] = {}  # run-time call -> the concepts whose chains take it
    for note in report.notes:
        if note.kind == "run-time call":
            runtime.setdefault(note.name, set()).add(note.concept)
            continue
        console.print(f"[dim]note: {note.concept}: {escape(note.message)}[/]", soft_wrap=True)
    if runtime:
        console.print(f"[dim]{len(runtime)} declared run-time calls taken by step chains "
                      "(calls the call graph does not resolve; details in --json):[/]")
        for hop, concepts in sorted(runtime.items()):
            console.print(f"[dim]  {escape(hop)} ({', '.join(sorted(concepts))})[/]", soft_wrap=True)
    for concept, by_pin in report.chains.items():
        for pin, links in by_pin.items():
            broken = sum(1 for link in links if link.broken)
            mark = "[red]✗[/]" if broken else "[green]✓[/]"
            hops = ", ".join(_link_text(link) for link in links[1:])
            console.print(f"  {mark} steps of {concept} at {pin}: {hops or 'one step'}", soft_wrap=True)
    cov = Table(title="coverage")
    cov.add_column("concept")
    for side in SIDES:
        cov.add_column(side)
    for row in report.coverage:
        cells = []
        for side in SIDES:
            count = row.counts[side]
            cells.append(styled(row.statuses[side]) + (f" ({count})" if count else ""))
        cov.add_row(row.concept, *cells)
    console.print(cov)
    for side in SIDES:
        for status in ("not-implemented", "unmapped"):
            gaps = report.gaps(side, status)
            if gaps:
                console.print(f"{side} {status}: {', '.join(gaps)}")
    for warning in report.warnings[:10]:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if len(report.warnings) > 10:
        console.print(f"[yellow]… {len(report.warnings) - 10} more warnings (see --json)[/]")
    if report.ok:
        console.print("[green]all mapped names resolve[/]")


def _link_text(link: StepLink) -> str:
    if link.broken:
        return f"[red]{link.index} broken[/]"
    # Count the hops that reach the step apart from the bridges crossed within it (between
    # its own symbols), which a reader would otherwise take for part of the way there.
    calls = sum(s.via == "call" for s in link.path)
    dynamic = sum(s.via.startswith("dispatch ") for s in link.path)
    bridges = sum(is_crossing(s.via) for s in link.path)
    inner = sum(is_crossing(s.via) for s in link.inner)
    via = (f"{calls} calls" + (f" + {dynamic} run-time" if dynamic else "")
           + (f" + {bridges} bridge{'s' if bridges > 1 else ''}" if bridges else ""))
    if inner:
        via += f"; {inner} bridge{'s' if inner > 1 else ''} within the step"
    return f"{link.source}→{link.index} ({via})"


def print_trace(console: Console, start: str, end: str, steps: list[TraceStep] | None) -> None:
    if steps is None:
        console.print(f"no path from {escape(start)} to {escape(end)} (calls and mapped bridges)")
        return
    console.print(f"[bold]{escape(start)}[/]")
    for step in steps:
        arrow = "[magenta]⇒[/]" if step.via != "call" else "→"
        label = f" [magenta]{escape(step.via)}[/]" if step.via != "call" else ""
        console.print(f"  {arrow} {escape(step.callee)}{label}", soft_wrap=True)
