"""Concept mapping + the three sides' sources -> `ConceptPage` (plain data)."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import replace

from analyzer.graphs.compact import CompactCallGraph
from analyzer.graphs.state import ClassState, how
from analyzer.index import SymbolMatch
from analyzer.mappings import SIDES, ConceptMapping, KnobRef, SideMapping, StepSide
from analyzer.mappings.models import is_crossing
from analyzer.mappings.trace import Link, StepLink, TraceStep, chain_steps
from analyzer.pinned import PinnedTree, heading
from analyzer.report.callpath import find_call_path, target_nodes
from analyzer.report.excerpt import highlight_python, make_excerpt
from analyzer.report.graphviz import path_dot, render_svg, route_dot, state_dot
from analyzer.report.models import (
    AttrView,
    BridgeView,
    CallPathView,
    Column,
    ConceptPage,
    KnobView,
    Narrowed,
    Segment,
    StateView,
    StepCell,
    StepRow,
    SymbolView,
    Writer,
)
from analyzer.report.narrow import call_lines, calls_of, narrow

MAX_ENTRY_PATHS = 3
MAX_WRITERS = 8  # per attribute; the rest are counted
# A step's cell shows the whole function that does it (a class: its head); only
# monoliths (vLLM's 900-line Scheduler.schedule) are cut, the permalink has the rest.
STEP_MAX_LINES = {"function": 160, "method": 160}


def build_page(
    concept: ConceptMapping,
    sides: dict[str, PinnedTree | None],
    titles: dict[str, str],
    dot: str | None,
    bridges: dict[str, dict[str, list[Link]]] | None = None,
) -> ConceptPage:
    """`bridges`: project -> source symbol -> bridges, from every concept (the steps' chains cross them)."""
    columns = [build_column(concept.side(project), sides.get(project), dot) for project in SIDES]
    # A concept left out of this build (`--concept`) is named, not linked: no dead links.
    related = [(other, titles.get(other, other), other in titles) for other in concept.related]
    page = ConceptPage(concept.id, concept.title, concept.summary, list(concept.chapters), related, columns)
    page.steps = step_rows(concept, sides, bridges or {})
    if dot is not None and page.steps:
        for i, col in enumerate(columns):
            source_dot = route_dot(i, page.steps)
            svg = render_svg(source_dot, dot) if source_dot else None
            if svg:
                page.routes[col.project] = svg
    return page


def step_rows(
    concept: ConceptMapping, sides: dict[str, PinnedTree | None], bridges: dict[str, dict[str, list[Link]]]
) -> list[StepRow]:
    """The concept's steps as rows of three cells, each cell linked to the step before it."""
    rows = [StepRow(i, step.title, step.explain, []) for i, step in enumerate(concept.steps, start=1)]
    for project in SIDES:
        source = sides.get(project)
        status = concept.side(project).status
        cells = [_step_cell(project, step.side(project), source, status) for step in concept.steps]
        links: list[StepLink] = []
        if source is not None and source.graphs_loaded:
            named = [(i, [s.name for s in cell.symbols]) for i, cell in enumerate(cells, start=1) if cell.symbols]
            links = chain_steps(source.graphs.calls, named, bridges.get(project, {}))
            for link in links:
                _apply_link(cells[link.index - 1], link)
        if source is not None:
            hops = _cell_hops(cells, links)
            mapped: set[str] = set()
            if source.graphs_loaded:
                names = [r.name for r in concept.side(project).symbols_for(source.version)]
                names += [v.name for cell in cells for v in cell.symbols]
                # As named: a mapped class counts as its constructor, not all its methods (a data
                # class's properties, a queue's own helpers would flood the cell).
                mapped = {n for n in names if n in source.graphs.calls}
            for i, (step, cell) in enumerate(zip(concept.steps, cells, strict=True), start=1):
                focus = list(step.side(project).focus_for(source.version))
                for view in cell.symbols:
                    _narrow_view(source, view, hops.get(i, []), focus, mapped)
        for row, cell in zip(rows, cells, strict=True):
            row.cells.append(cell)
    return rows


def _step_cell(project: str, part: StepSide, source: PinnedTree | None, status: str) -> StepCell:
    cell = StepCell(project, none=part.none, process=part.process)
    if source is None:
        cell.missing = "this side's source is not part of this report"
        return cell
    if not part.written:
        cell.missing = (f"no step mapped for this side (status: {status})" if status != "implemented"
                        else "the mapping does not say who does this step here yet")
        return cell
    for ref in part.symbols_for(source.version):
        cell.symbols.append(symbol_view(source, ref.name, ref.role, step=True))
    if part.symbols and not cell.symbols:
        cell.missing = f"the step's symbols are limited to other releases than {source.version}"
    return cell


def _owns(name: str, caller: str) -> bool:
    """`caller` is the step symbol `name` itself, or a method of it (a class step)."""
    return caller == name or caller.startswith(name + ".")


def _cell_hops(cells: list[StepCell], links: list[StepLink]) -> dict[int, list[TraceStep]]:
    """Step number -> the chain's hops leaving that step's own symbols: the call (run-time
    call, bridge) that leads on to a later step is what its cell must show."""
    names = {i: [s.name for s in cell.symbols] for i, cell in enumerate(cells, start=1)}
    out: dict[int, list[TraceStep]] = {}

    def add(index: int, hop: TraceStep) -> bool:
        if hop.via != "return" and any(_owns(n, hop.caller) for n in names.get(index, [])):
            out.setdefault(index, []).append(hop)
            return True
        return False

    for link in links:
        for hop in link.path:
            if link.source is not None:
                add(link.source, hop)
        for hop in link.inner:
            add(link.index, hop)
        for hop in link.branches:  # from the nearest earlier step owning the caller
            any(add(j, hop) for j in range(link.index - 1, 0, -1))
        for hop in (*link.path, *link.inner):  # a bridge's receiving end does the step
            if hop.via.startswith("bridge "):
                out.setdefault(link.index, []).append(hop)
    return out


# Where a bridge's ends send and receive (a socket, a queue, a loop): the calls as usually written.
_SEND = re.compile(r"\.(send\w*|put|put_nowait|call_soon_threadsafe|submit)\s*\(")
_RECEIVE = re.compile(r"\.(recv\w*|poll|get_nowait)\s*\(|\.get\s*\(\s*(\)|block|timeout)")


def _call_sites(graph: CompactCallGraph, caller: str, callee: str, path: str, first: int, end: int) -> set[int]:
    """The call graph's sites of caller -> callee within lines first..end of `path`."""
    out: set[int] = set()
    if graph.has_edge(caller, callee):
        for site in graph.edges[caller, callee].get("sites", ()):
            where, _, line = str(site).rpartition(":")
            if where == path and line.isdigit() and first < int(line) <= end:
                out.add(int(line))
    return out


def _narrow_view(
    source: PinnedTree, view: SymbolView, hops: list[TraceStep], focus: list[str], mapped: AbstractSet[str] = frozenset()
) -> None:
    """Cut a step symbol's excerpt to the lines leading on (see analyzer/report/narrow.py); with
    nothing leading on, to its calls into the concept's other mapped code (`mapped`: call-graph nodes)."""
    match = _find(source, view.name) if view.found else None
    lines = source.read_lines(match.path) if match is not None else None
    if match is None or lines is None or match.kind in ("module",):
        return
    first, end = match.line, min(match.end_line, len(lines))
    wanted: set[int] = call_lines(lines, first + 1, end, focus)
    graph = source.graphs.calls if source.graphs_loaded else None
    for hop in hops:
        mine = _owns(view.name, hop.caller)
        if hop.via == "call" and mine:
            sites = _call_sites(graph, hop.caller, hop.callee, match.path, first, end) if graph is not None else set()
            # The call graph's sites are exact; the callee's name as written is the fallback.
            wanted |= sites or (calls_of(lines, first, end, hop.callee) if hop.caller == view.name else set())
        elif hop.via.startswith("dispatch ") and mine:
            wanted |= call_lines(lines, first + 1, end, [hop.via.removeprefix("dispatch ")])
        elif hop.via.startswith("bridge "):
            pattern = _SEND if mine else _RECEIVE if _owns(view.name, hop.callee) else None
            if pattern is not None:
                wanted |= {n for n in range(first + 1, end + 1) if pattern.search(lines[n - 1])}
    reason = "step" if any(first < n <= end for n in wanted) else "head"
    if reason == "head" and graph is not None and view.name in graph:
        for callee in graph.successors(view.name):
            if callee in mapped and callee != view.name:
                wanted |= _call_sites(graph, view.name, callee, match.path, first, end)
        reason = "concept" if wanted else "head"
    kept = narrow(lines, first, end, wanted)
    if kept is None:
        return
    segments, previous = [], first - 1
    for k in kept:
        code = "\n".join(lines[k.first - 1:k.last]) + "\n"
        segments.append(Segment(k.first, k.last, code, highlight_python(code, k.first), k.first - previous - 1))
        previous = k.last
    view.narrowed = Narrowed(view.path, first, end, tuple(segments), end - previous, reason)


def _apply_link(cell: StepCell, link: StepLink) -> None:
    cell.source = link.source
    cell.broken = link.broken
    cell.hops = [(s.callee, "call" if s.via == "call" else s.via.removeprefix("bridge ")) for s in link.path]
    cell.inner = [b.via.removeprefix("bridge ") for b in link.inner if is_crossing(b.via)]


def build_column(mapping: SideMapping, source: PinnedTree | None, dot: str | None) -> Column:
    project = mapping.project
    if source is None:
        return Column(project, heading(project, None), mapping.status, mapping.note, available=False,
                      warnings=["this side's source was not part of this report"])
    version = source.version
    col = Column(
        project,
        source.heading,
        mapping.status,
        mapping.note,
        source_line=source.source_line,
        source_link=source.permalinks.tree_url if source.permalinks else None,
    )
    col.symbols = [symbol_view(source, ref.name, ref.role) for ref in mapping.symbols_for(version)]
    col.bridges = [BridgeView(b.name, b.source, b.target, b.transport, b.carries, b.note)
                   for b in mapping.bridges_for(version)]
    col.knobs = [knob_view(source, k) for k in mapping.knobs_for(version)]
    if source.graphs_loaded:
        col.paths = call_paths(mapping, source, dot)
        col.state = state_views(source, col.symbols)
        if dot is not None:
            for st in col.state:
                source_dot = state_dot(st)
                st.svg = render_svg(source_dot, dot) if source_dot else None
    col.warnings = [f"{s.name}: {s.problem}" for s in col.symbols if s.problem]
    col.warnings += [f"{k.name}: not found in this release" for k in col.knobs if not k.found]
    return col


def _matches(source: PinnedTree, name: str) -> list[SymbolMatch]:
    matches = source.index.find_symbol(name)
    if not matches:
        # A module-level constant or alias (`BlockHash = NewType(...)`): what map verify accepts.
        attribute = source.resolve(name)
        matches = [attribute] if attribute is not None else []
    exact = [m for m in matches if m.dotted == name]
    return exact or matches


def _find(source: PinnedTree, name: str) -> SymbolMatch | None:
    matches = _matches(source, name)
    return matches[0] if matches else None


def symbol_view(source: PinnedTree, name: str, role: str, *, step: bool = False) -> SymbolView:
    matches = _matches(source, name)
    if not matches:
        return SymbolView(name, role, False, problem="not found in this release")
    match = matches[0]
    view = SymbolView(name, role, True, match.kind, _repo_path(source, match.path), match.line, match.end_line)
    if len(matches) > 1:
        view.problem = f"{len(matches)} definitions match; showing {match.path}:{match.line}"
    if source.permalinks is not None:
        view.permalink = source.permalinks.url(match.path, match.line, match.end_line)
    lines = source.read_lines(match.path)
    if lines is None:
        view.problem = f"cannot read {match.path}"
    else:
        budget = STEP_MAX_LINES.get(match.kind) if step else None
        view.excerpt = make_excerpt(lines, view.path, match.line, match.end_line, match.kind, budget)
    return view


def _repo_path(source: PinnedTree, package_path: str) -> str:
    return source.permalinks.repo_path(package_path) if source.permalinks else package_path


def knob_view(source: PinnedTree, knob: KnobRef) -> KnobView:
    if knob.kind == "flag":
        flag = source.flags.get(knob.name)
        if flag is None:
            return KnobView(knob.name, "flag", knob.role, False)
        return KnobView(knob.name, "flag", knob.role, True, flag.default, flag.help, flag.defined_at,
                        _site_link(source, flag.defined_at))
    env = source.envs.get(knob.name)
    if env is None:
        return KnobView(knob.name, "env", knob.role, False)
    return KnobView(knob.name, "env", knob.role, True, env.default, None, env.defined_at,
                    _site_link(source, env.defined_at))


def _site_link(source: PinnedTree, site: str) -> str | None:
    return source.permalinks.site_url(site) if source.permalinks and site else None


def call_paths(mapping: SideMapping, source: PinnedTree, dot: str | None) -> list[CallPathView]:
    assert source.graphs_loaded
    graph = source.graphs.calls
    version = source.version
    targets = target_nodes(graph, [s.name for s in mapping.symbols_for(version)])
    bridges = mapping.bridges_for(version)
    out: list[CallPathView] = []
    for entry in mapping.entry_points_for(version)[:MAX_ENTRY_PATHS]:
        view = find_call_path(graph, entry.name, targets, bridges, lambda site: _site_link(source, site))
        if dot is not None and view.routes:
            view.svg = render_svg(path_dot(view), dot)
        out.append(view)
    return out


def state_views(source: PinnedTree, symbols: list[SymbolView]) -> list[StateView]:
    """State of the mapped classes, and of the classes owning mapped methods."""
    assert source.graphs_loaded
    states = source.graphs.state
    wanted: list[str] = []
    for s in symbols:
        if not s.found:
            continue
        match = _dotted(source, s)
        if match is None:
            continue
        if s.kind == "class":
            wanted.append(match)
        elif s.kind == "method":
            wanted.append(match.rsplit(".", 1)[0])
    out = []
    for cls in dict.fromkeys(wanted):
        st = states.get(cls)
        if st is not None and st.attrs:
            out.append(state_view(source, st))
    return out


def _dotted(source: PinnedTree, view: SymbolView) -> str | None:
    matches: list[SymbolMatch] = source.index.find_symbol(view.name)
    exact = [m for m in matches if m.dotted == view.name]
    return (exact or matches)[0].dotted if matches else None


def state_view(source: PinnedTree, st: ClassState) -> StateView:
    attrs = []
    for a in sorted(st.attrs.values(), key=lambda a: (a.line, a.name)):
        by_function: dict[str, Writer] = {}
        hows: dict[str, list[str]] = {}
        for w in a.writes:
            hows.setdefault(w.function, [])
            if how(w) not in hows[w.function]:
                hows[w.function].append(how(w))
            prev = by_function.get(w.function)
            if prev is None or (w.outside and not prev.outside):
                label = w.function.removeprefix(st.cls + ".") if not w.outside else w.function
                by_function[w.function] = Writer(w.function, w.outside, w.site, _site_link(source, w.site), label,
                                                 by=w.by)
        by_function = {f: replace(wr, how="; ".join(hows[f])) for f, wr in by_function.items()}
        # Outside writers first, then grouped by how they write.
        writers = sorted(by_function.values(), key=lambda w: (not w.outside, w.how, w.function))
        attrs.append(AttrView(a.name, a.origin, a.line, a.annotation, writers[:MAX_WRITERS],
                              len({r.function for r in a.reads}), max(0, len(writers) - MAX_WRITERS)))
    link = source.permalinks.url(st.path, st.line) if source.permalinks else None
    return StateView(st.cls, _repo_path(source, st.path), st.line, attrs, link)
