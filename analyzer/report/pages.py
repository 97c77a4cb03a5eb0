"""Concept mapping + the three sides' sources -> `ConceptPage` (plain data)."""

from __future__ import annotations

from dataclasses import replace

from analyzer.graphs.state import ClassState, how
from analyzer.index import SymbolMatch
from analyzer.mappings import SIDES, ConceptMapping, KnobRef, SideMapping
from analyzer.report.callpath import find_call_path, target_nodes
from analyzer.report.excerpt import make_excerpt
from analyzer.report.graphviz import path_dot, render_svg, state_dot
from analyzer.report.models import (
    AttrView,
    BridgeView,
    CallPathView,
    Column,
    ConceptPage,
    KnobView,
    StateView,
    SymbolView,
    Writer,
)
from analyzer.report.sources import SideSource, heading

MAX_ENTRY_PATHS = 3
MAX_WRITERS = 8  # per attribute; the rest are counted


def build_page(
    concept: ConceptMapping,
    sides: dict[str, SideSource | None],
    titles: dict[str, str],
    dot: str | None,
) -> ConceptPage:
    columns = [build_column(concept.side(project), sides.get(project), dot) for project in SIDES]
    # A concept left out of this build (`--concept`) is named, not linked: no dead links.
    related = [(other, titles.get(other, other), other in titles) for other in concept.related]
    return ConceptPage(concept.id, concept.title, concept.summary, list(concept.chapters), related, columns)


def build_column(mapping: SideMapping, source: SideSource | None, dot: str | None) -> Column:
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
    if source.graphs is not None:
        col.paths = call_paths(mapping, source, dot)
        col.state = state_views(source, col.symbols)
        if dot is not None:
            for st in col.state:
                source_dot = state_dot(st)
                st.svg = render_svg(source_dot, dot) if source_dot else None
    col.warnings = [f"{s.name}: {s.problem}" for s in col.symbols if s.problem]
    col.warnings += [f"{k.name}: not found in this release" for k in col.knobs if not k.found]
    return col


def symbol_view(source: SideSource, name: str, role: str) -> SymbolView:
    matches = source.index.find_symbol(name)
    if not matches:
        return SymbolView(name, role, False, problem="not found in this release")
    exact = [m for m in matches if m.dotted == name]
    match = (exact or matches)[0]
    view = SymbolView(name, role, True, match.kind, _repo_path(source, match.path), match.line, match.end_line)
    if len(exact or matches) > 1:
        view.problem = f"{len(exact or matches)} definitions match; showing {match.path}:{match.line}"
    if source.permalinks is not None:
        view.permalink = source.permalinks.url(match.path, match.line, match.end_line)
    lines = source.read_lines(match.path)
    if lines is None:
        view.problem = f"cannot read {match.path}"
    else:
        view.excerpt = make_excerpt(lines, view.path, match.line, match.end_line, match.kind)
    return view


def _repo_path(source: SideSource, package_path: str) -> str:
    return source.permalinks.repo_path(package_path) if source.permalinks else package_path


def knob_view(source: SideSource, knob: KnobRef) -> KnobView:
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


def _site_link(source: SideSource, site: str) -> str | None:
    return source.permalinks.site_url(site) if source.permalinks and site else None


def call_paths(mapping: SideMapping, source: SideSource, dot: str | None) -> list[CallPathView]:
    assert source.graphs is not None
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


def state_views(source: SideSource, symbols: list[SymbolView]) -> list[StateView]:
    """State of the mapped classes, and of the classes owning mapped methods."""
    assert source.graphs is not None
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


def _dotted(source: SideSource, view: SymbolView) -> str | None:
    matches: list[SymbolMatch] = source.index.find_symbol(view.name)
    exact = [m for m in matches if m.dotted == view.name]
    return (exact or matches)[0].dotted if matches else None


def state_view(source: SideSource, st: ClassState) -> StateView:
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
