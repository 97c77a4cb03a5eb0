"""The two diffs, as plain data.

`version_diff`: one project, two releases — symbols added / removed / moved
(with evidence), flags and env vars added / removed, and per concept the call
edges out of its mapped functions that appeared or vanished.

`design_diff`: two sides (vLLM, SGLang, our reference engine) per concept —
which mapped classes own which state, what the entry points call, and the knobs.
"""

from __future__ import annotations

from collections.abc import Iterable

from analyzer.diff.models import (
    ConceptCalls,
    ConceptDesign,
    DeclaredState,
    DesignDiff,
    DiffEdge,
    KnobInfo,
    SideDesign,
    VersionDiff,
)
from analyzer.diff.symbols import SymbolChanges, compare_symbols
from analyzer.flags.models import Flag
from analyzer.graphs.compact import CompactCallGraph
from analyzer.index.models import Class
from analyzer.mappings.models import ConceptMapping, SideMapping
from analyzer.pinned import PinnedTree

# The cached call graph (CompactCallGraph); a networkx DiGraph has the same surface.
CallGraph = CompactCallGraph

CALL_DEPTH = 2  # design diff: levels of callees shown from each entry point
MAX_CALLS = 60  # per side and concept: enough to read the structure, not the whole program


# ------------------------------------------------------------------ version diff


def version_diff(
    old: PinnedTree,
    new: PinnedTree,
    concepts: Iterable[ConceptMapping],
    *,
    file_renames: list[tuple[str, str, int]] | None = None,
    concept: str | None = None,
) -> VersionDiff:
    """Compare two releases of one project. Call-graph changes are filled in only
    when both sides carry graphs (`PinnedTree.graphs_loaded`)."""
    concepts = list(concepts)
    changes = compare_symbols(old.index, new.index, file_renames)
    flags_old, flags_new = _primary(old.flags), _primary(new.flags)
    diff = VersionDiff(
        old=old.label,
        new=new.label,
        added=changes.added,
        removed=changes.removed,
        moved=changes.moved,
        modules=changes.modules,
        flags_added=sorted(f for f, aliases in flags_new.items() if not aliases & set(old.flags)),
        flags_removed=sorted(f for f, aliases in flags_old.items() if not aliases & set(new.flags)),
        options_added=_options_changed(flags_new, flags_old, set(old.flags)),
        options_removed=_options_changed(flags_old, flags_new, set(new.flags)),
        envs_added=sorted(_env_names(new) - set(old.envs)),
        envs_removed=sorted(_env_names(old) - set(new.envs)),
        concept_filter=concept,
        warnings=[*(f"{old.label}: {w}" for w in old.warnings), *(f"{new.label}: {w}" for w in new.warnings)],
    )
    if concept is not None:
        _limit_to_concept(diff, [c for c in concepts if c.id == concept], old, new)
    if old.graphs_loaded and new.graphs_loaded:
        for c in concepts:
            if concept is None or c.id == concept:
                diff.concepts.append(_concept_calls(c, old, new, changes))
    return diff


def _primary(flags: dict[str, Flag]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for flag in {id(f): f for f in flags.values()}.values():
        out[flag.flag] = {flag.flag, *flag.aliases, *flag.hidden_aliases}  # hidden ones are accepted too
    return out


def _options_changed(side: dict[str, set[str]], other: dict[str, set[str]], other_options: set[str]) -> list[str]:
    """Option strings of flags present on both sides that only `side` accepts."""
    return sorted(o for aliases in side.values() if aliases & other_options for o in aliases - other_options)


def _env_names(pin: PinnedTree) -> set[str]:
    return {e.name for e in pin.envs.values()}


def _limit_to_concept(diff: VersionDiff, found: list[ConceptMapping], old: PinnedTree, new: PinnedTree) -> None:
    """Keep the changes inside the modules and classes the concept maps (either release)."""
    if not found:
        return
    side = found[0].side(old.project)
    owners: set[str] = set()
    for pin in (old, new):
        for ref in (*side.symbols_for(pin.version), *side.entry_points_for(pin.version)):
            for match in pin.index.find_symbol(ref.name):
                if match.dotted == ref.name:
                    owners.add(match.module)
    knobs = {k.name for k in side.knobs_for(None)}

    def inside(name: str) -> bool:
        return any(name == m or name.startswith(m + ".") for m in owners)

    diff.added = [n for n in diff.added if inside(n)]
    diff.removed = [n for n in diff.removed if inside(n)]
    # Destinations were searched in the whole release: a move out of the concept's modules counts.
    diff.moved = [m for m in diff.moved if inside(m.old) or inside(m.new)]
    diff.modules = [m for m in diff.modules if inside(m.old) or any(inside(n) for n in m.new)]
    diff.flags_added = [f for f in diff.flags_added if f in knobs]
    diff.flags_removed = [f for f in diff.flags_removed if f in knobs]
    known = {o for pin in (old, new) for k in knobs if k in pin.flags for o in (pin.flags[k].flag, *pin.flags[k].aliases, *pin.flags[k].hidden_aliases)}
    diff.options_added = [o for o in diff.options_added if o in known]
    diff.options_removed = [o for o in diff.options_removed if o in known]
    diff.envs_added = [e for e in diff.envs_added if e in knobs]
    diff.envs_removed = [e for e in diff.envs_removed if e in knobs]


def _roots(side: SideMapping, pin: PinnedTree, graph: CallGraph) -> list[str]:
    names = [r.name for r in (*side.entry_points_for(pin.version), *side.symbols_for(pin.version))]
    return sorted({n for n in names if n in graph and graph.nodes[n].get("kind") in ("function", "method")})


def _out_edges(graph: CallGraph, node: str) -> list[DiffEdge]:
    """Calls out of `node`, sorted by callee (only `successors` / `edges[u, v]` are used)."""
    out = []
    for callee in sorted(graph.successors(node)):
        data = graph.edges[node, callee]
        out.append(DiffEdge(node, callee, data.get("kind", ""), data.get("confidence", "")))
    return out


def _translate(name: str, renames: dict[str, str]) -> str:
    """An old name under its new spelling, when it or an ancestor moved."""
    probe = name
    while probe:
        if probe in renames:
            return renames[probe] + name[len(probe):]
        probe = probe.rpartition(".")[0]
    return name


def _concept_calls(concept: ConceptMapping, old: PinnedTree, new: PinnedTree, changes: SymbolChanges) -> ConceptCalls:
    assert old.graphs_loaded and new.graphs_loaded
    side = concept.side(old.project)
    g_old, g_new = old.graphs.calls, new.graphs.calls
    roots_old, roots_new = _roots(side, old, g_old), _roots(side, new, g_new)
    renames = {m.old: m.new for m in changes.moved}
    edges_old = {
        (_translate(e.caller, renames), _translate(e.callee, renames)): e
        for r in roots_old
        for e in _out_edges(g_old, r)
    }
    edges_new = {(e.caller, e.callee): e for r in roots_new for e in _out_edges(g_new, r)}
    # Only compare roots present on both sides: a root that vanished shows in `removed` symbols.
    shared = {_translate(r, renames) for r in roots_old} & set(roots_new)
    mapped = {r.name for r in (*side.symbols, *side.entry_points)}
    missing = sorted(
        n for n in mapped
        if side.status in ("implemented", "partial") and n not in g_old and n not in g_new
    )
    return ConceptCalls(
        concept=concept.id,
        roots_old=roots_old,
        roots_new=roots_new,
        added=[e for k, e in sorted(edges_new.items()) if k[0] in shared and k not in edges_old],
        removed=[e for k, e in sorted(edges_old.items()) if k[0] in shared and k not in edges_new],
        missing=missing,
    )


# ------------------------------------------------------------------ design diff


def design_diff(
    left: PinnedTree, right: PinnedTree, concepts: Iterable[ConceptMapping], *, concept: str | None = None
) -> DesignDiff:
    """Side by side per concept. Calls are listed only for sides that carry graphs."""
    diff = DesignDiff(
        left=left.label,
        right=right.label,
        warnings=[*(f"{left.label}: {w}" for w in left.warnings), *(f"{right.label}: {w}" for w in right.warnings)],
    )
    concepts = list(concepts)
    mapped_left, mapped_right = _mapped_names(concepts, left), _mapped_names(concepts, right)
    for c in concepts:
        if concept is None or c.id == concept:
            diff.concepts.append(ConceptDesign(
                c.id, c.title, side_design(c, left, mapped_left), side_design(c, right, mapped_right)
            ))
    return diff


def _mapped_names(concepts: list[ConceptMapping], pin: PinnedTree) -> set[str]:
    """Every symbol any concept maps for this side: the landmarks of the call structure."""
    names: set[str] = set()
    for c in concepts:
        side = c.side(pin.project)
        names.update(r.name for r in (*side.symbols_for(pin.version), *side.entry_points_for(pin.version)))
    return names


def side_design(concept: ConceptMapping, pin: PinnedTree, mapped: set[str] | None = None) -> SideDesign:
    side = concept.side(pin.project)
    design = SideDesign(pin=pin.label, status=side.status, note=side.note)
    for ref in side.symbols_for(pin.version):
        match = next((m for m in pin.index.find_symbol(ref.name) if m.dotted == ref.name), None)
        if match is None:
            continue
        if match.kind == "class":
            fact = pin.index.fact(match)
            if isinstance(fact, Class):
                design.state.append(DeclaredState(ref.name, _attributes(fact)))
    for knob in side.knobs_for(pin.version):
        if knob.kind == "flag":
            flag = pin.flags.get(knob.name)
            design.knobs.append(KnobInfo(knob.name, "flag", flag.default if flag else None,
                                         flag.help if flag else knob.role or None, found=flag is not None))
        else:
            env = pin.envs.get(knob.name)
            design.knobs.append(KnobInfo(knob.name, "env", env.default if env else None,
                                         knob.role or None, found=env is not None))
    design.bridges = [b.to_dict() for b in side.bridges_for(pin.version)]
    if pin.graphs_loaded:
        design.calls = _call_tree(side, pin, mapped or set())
    return design


def _attributes(cls: Class) -> list[str]:
    """Declared state: dataclass fields, class attributes, then `self.x` assignments."""
    seen: dict[str, str] = {}
    for assignment in (*cls.fields, *cls.class_attributes, *cls.instance_attributes):
        name = assignment.target.removeprefix("self.")
        if "." in name or "[" in name or name.startswith("__"):
            continue
        if name not in seen or (assignment.annotation and ":" not in seen[name]):
            seen[name] = f"{name}: {assignment.annotation}" if assignment.annotation else name
    return list(seen.values())


def _call_tree(side: SideMapping, pin: PinnedTree, mapped: set[str]) -> list[DiffEdge]:
    """Calls out of the entry points, mapped callees first; the second level only
    below mapped callees, so the structure shows how the mapped parts connect."""
    assert pin.graphs_loaded
    graph = pin.graphs.calls
    roots = [r.name for r in side.entry_points_for(pin.version) if r.name in graph]
    if not roots:
        roots = _roots(side, pin, graph)
    edges: list[DiffEdge] = []
    seen: set[tuple[str, str]] = set()
    frontier = roots
    for level in range(CALL_DEPTH):
        nxt: list[str] = []
        for node in frontier:
            out = sorted(_out_edges(graph, node), key=lambda e: (e.callee not in mapped, e.callee))
            for edge in out:
                if (node, edge.callee) in seen or len(edges) >= MAX_CALLS:
                    continue
                seen.add((node, edge.callee))
                edges.append(edge)
                if level == 0 and edge.callee in mapped:
                    nxt.append(edge.callee)
        frontier = nxt
    return edges
