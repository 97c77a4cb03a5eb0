"""`map verify`: check every mapped name against every pinned tree, and report coverage.

A *problem* fails the run: a symbol, entry point, bridge end, flag or env var
that does not exist in a pin it claims to hold in, or a `releases` list naming
a version that is not pinned. A *note* does not: an entry limited to some
releases that in fact also exists elsewhere. Coverage lists every concept's
status per side, so gaps (not implemented, not mapped yet) are visible.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from analyzer.mappings.models import (
    REFERENCE,
    SIDES,
    UPSTREAMS,
    ConceptMapping,
    Dispatch,
    SideMapping,
    Step,
    SymbolRef,
)
from analyzer.mappings.trace import CallGraphLike, StepLink, bridges_for, chain_steps
from analyzer.pinned import PinnedTree, TreeError, reference_tree, release_tree
from analyzer.settings import Settings


@dataclass(frozen=True, slots=True)
class VerifyFinding:
    concept: str
    project: str
    pin: str  # "vllm@0.30.0", or "reference"
    kind: str  # "symbol" | "entry_point" | "bridge" | "dispatch" | "flag" | "env" | "release" | "step" | "focus" | "chain" | "run-time call"
    name: str
    message: str
    suggestions: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["suggestions"] = list(self.suggestions)
        return data


@dataclass(frozen=True, slots=True)
class CoverageRow:
    concept: str
    title: str
    statuses: dict[str, str]  # side -> status
    notes: dict[str, str]  # side -> note (why partial / not implemented)
    counts: dict[str, int]  # side -> number of mapped symbols (all releases)

    def gaps(self) -> list[str]:
        """Sides with nothing mapped: the project lacks it, or nobody mapped it yet."""
        return [side for side in SIDES if self.statuses[side] in ("not-implemented", "unmapped")]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "gaps": self.gaps()}


@dataclass(slots=True)
class VerifyReport:
    pins: list[str]
    checked: int = 0  # names checked, summed over pins
    problems: list[VerifyFinding] = field(default_factory=list)
    notes: list[VerifyFinding] = field(default_factory=list)
    coverage: list[CoverageRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. flags that could not be read statically
    # concept -> pin -> how each step of that side is reached (when a call graph was given)
    chains: dict[str, dict[str, list[StepLink]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def gaps(self, side: str, status: str | None = None) -> list[str]:
        """Concept ids whose `side` is a gap (optionally of one status)."""
        return [
            row.concept
            for row in self.coverage
            if row.statuses[side] in ("not-implemented", "unmapped")
            and (status is None or row.statuses[side] == status)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "pins": self.pins,
            "checked": self.checked,
            "problems": [p.to_dict() for p in self.problems],
            "notes": [n.to_dict() for n in self.notes],
            "coverage": [row.to_dict() for row in self.coverage],
            "gaps": {side: self.gaps(side) for side in SIDES},
            "warnings": self.warnings,
            "chains": {c: {pin: [link.to_dict() for link in links] for pin, links in by_pin.items()}
                       for c, by_pin in self.chains.items()},
        }


def run_verify(
    settings: Settings,
    concepts: list[ConceptMapping],
    pins: list[str] | None,
    *,
    reference: bool = True,
    fetch: bool = True,
    progress: bool = False,
    chains: bool = True,
    catalogue: list[ConceptMapping] | None = None,
) -> VerifyReport:
    """Open each pin (indexing cold releases; default: every locked release) and verify
    `concepts` against them. `catalogue`: every concept, whose bridges the chain check may
    cross (default: `concepts`). TreeError with a readable message for a pin that cannot be opened."""
    from analyzer.snapshots import load_locks

    locks = load_locks()
    pinned: dict[str, list[str]] = {}
    for entry in locks.values():
        pinned.setdefault(entry.ref.project, []).append(entry.ref.version)
    refs = pins if pins is not None else sorted(str(entry.ref) for entry in locks.values())
    bad = [r for r in refs if r.partition("@")[0] not in UPSTREAMS]
    if bad:
        raise TreeError(f"--pin takes a vllm@VERSION or sglang@VERSION release, got: {', '.join(bad)}")
    views: list[PinnedTree] = []
    if reference:
        views.append(reference_tree(settings, progress=progress).prepare())
    for ref in refs:
        views.append(release_tree(settings, ref, fetch=fetch, progress=progress).prepare())
    graphs = {v.label: v.graphs.calls for v in views} if chains and any(c.steps for c in concepts) else {}
    # A pin checked now but missing from the lock files (a git pin) still counts as pinned.
    for view in views:
        if view.project != REFERENCE and view.version is not None:
            pinned.setdefault(view.project, [])
            if view.version not in pinned[view.project]:
                pinned[view.project].append(view.version)
    return verify_mappings(concepts, views, pinned, graphs, catalogue=catalogue)


def verify_mappings(
    concepts: Iterable[ConceptMapping],
    views: Iterable[PinnedTree],
    pinned: Mapping[str, Iterable[str]],
    graphs: Mapping[str, CallGraphLike] | None = None,
    *,
    catalogue: Iterable[ConceptMapping] | None = None,
) -> VerifyReport:
    """Check `concepts` against every view; `pinned` is project -> every pinned
    version (a `releases` entry outside it is a problem even if that pin is not checked now).

    `graphs` (view label -> call graph) turns on the step chain check: consecutive
    steps of a side must be connected by calls or by the mappings' bridges."""
    concepts = list(concepts)
    # A bridge (a ZMQ socket, a thread queue) is declared once, in the concept that owns it,
    # and any concept's steps may cross it: checking one concept alone must still see them all.
    every = list(catalogue) if catalogue is not None else concepts
    views = list(views)
    pinned_sets = {project: set(versions) for project, versions in pinned.items()}
    report = VerifyReport(pins=[v.label for v in views])
    for view in views:
        report.warnings.extend(f"{view.label}: {w}" for w in view.warnings)
    for concept in concepts:
        for side_name in SIDES:
            side = concept.side(side_name)
            if side_name != REFERENCE:
                _check_releases(concept.id, side, pinned_sets.get(side_name, set()), report, concept.steps)
            for view in views:
                if view.project == side_name:
                    _check_side(concept.id, side, view, report)
                    _check_steps(concept, view, report)
                    graph = (graphs or {}).get(view.label)
                    if graph is not None:
                        _check_dispatch_needed(concept.id, side, view, graph, report)
                    if graph is not None and concept.steps:
                        _check_chain(concept, every, view, graph, report)
        report.coverage.append(_coverage(concept))
    return report


def _check_steps(concept: ConceptMapping, view: PinnedTree, report: VerifyReport) -> None:
    for i, step in enumerate(concept.steps, start=1):
        part = step.side(view.project)
        for ref in part.symbols:
            _check_symbol(concept.id, "step", ref, view, report, label=f"step {i} ({step.title}): {ref.name}",
                          route_only=True)
        if part.focus:
            _check_focus(concept.id, i, step, view, report)


def _check_focus(concept: str, index: int, step: Step, view: PinnedTree, report: VerifyReport) -> None:
    """Each `focus` is written in the body of one of the step's symbols at this pin (like a dispatch's call)."""
    part = step.side(view.project)
    bodies = []
    for ref in part.symbols_for(view.version):
        match = view.resolve(ref.name)
        lines = view.read_lines(match.path) if match is not None else None
        if match is not None and lines:
            bodies.append("\n".join(lines[match.line - 1:match.end_line]))
    for focus in part.focus:
        if not focus.applies_to(view.version):
            continue
        report.checked += 1
        if not any(focus.text in body for body in bodies):
            names = ", ".join(ref.name for ref in part.symbols_for(view.version)) or "none at this pin"
            report.problems.append(VerifyFinding(
                concept, view.project, view.label, "focus", focus.text,
                f"step {index} ({step.title}): no step symbol ({names}) has {focus.text!r} written in its body "
                f"in {view.label}"))


def _check_chain(
    concept: ConceptMapping, concepts: list[ConceptMapping], view: PinnedTree, graph: CallGraphLike,
    report: VerifyReport,
) -> None:
    named = [(i, [ref.name for ref in step.side(view.project).symbols_for(view.version)])
             for i, step in enumerate(concept.steps, start=1)]
    named = [(i, names) for i, names in named if names]
    if not named:
        return
    links = chain_steps(graph, named, bridges_for(concepts, view.project, view.version))
    report.chains.setdefault(concept.id, {})[view.label] = links
    taken: set[tuple[str, str]] = set()
    for link in links:
        for hop in link.dispatches:  # verified in the source, but not by the call graph: say so once
            if (hop.caller, hop.callee) in taken:
                continue
            taken.add((hop.caller, hop.callee))
            report.notes.append(VerifyFinding(
                concept.id, view.project, view.label, "run-time call", f"{hop.caller} -> {hop.callee}",
                f"{view.label}: the chain takes a call the call graph does not resolve (first at step "
                f"{link.index}): {hop.caller} -> {hop.callee}, written {hop.via.removeprefix('dispatch ')!r}"))
        if link.broken:
            step = concept.steps[link.index - 1]
            report.problems.append(VerifyFinding(
                concept.id, view.project, view.label, "chain", f"step {link.index}",
                f"the steps' chain breaks at step {link.index} ({step.title}): {link.broken}"))


def _check_releases(
    concept: str, side: SideMapping, versions: set[str], report: VerifyReport, steps: tuple[Step, ...] = ()
) -> None:
    entries: list[tuple[str, str, tuple[str, ...]]] = [
        *(("symbol", s.name, s.releases) for s in (*side.symbols, *side.entry_points)),
        *((k.kind, k.name, k.releases) for k in (*side.flags, *side.envs)),
        *(("bridge", b.name, b.releases) for b in side.bridges),
        *(("dispatch", d.call, d.releases) for d in side.dispatches),
    ]
    for step in steps:
        entries += [("step", s.name, s.releases) for s in step.side(side.project).symbols]
        entries += [("focus", f.text, f.releases) for f in step.side(side.project).focus]
    for kind, name, releases in entries:
        for version in releases:
            if version not in versions:
                pinned = ", ".join(sorted(versions)) or "none"
                report.problems.append(
                    VerifyFinding(concept, side.project, f"{side.project}@{version}", "release", name,
                            f"{kind} {name} is limited to {version}, which is not pinned (pinned: {pinned})")
                )


def _check_side(concept: str, side: SideMapping, view: PinnedTree, report: VerifyReport) -> None:
    version = view.version
    for kind, refs in (("symbol", side.symbols), ("entry_point", side.entry_points)):
        for ref in refs:
            _check_symbol(concept, kind, ref, view, report)
    for bridge in side.bridges:
        for end in (bridge.source, bridge.target):
            ref = SymbolRef(end, releases=bridge.releases)
            _check_symbol(concept, "bridge", ref, view, report, label=f"bridge {bridge.name}: {end}",
                          route_only=True)
    for dispatch in side.dispatches:
        _check_dispatch(concept, dispatch, view, report)
    for knob in (*side.flags, *side.envs):
        known = view.flags if knob.kind == "flag" else view.envs
        present = knob.name in known
        if knob.applies_to(version):
            report.checked += 1
            if not present:
                what = "flag" if knob.kind == "flag" else "environment variable"
                report.problems.append(
                    VerifyFinding(concept, side.project, view.label, knob.kind, knob.name,
                            f"{what} {knob.name} is not defined in {view.label}",
                            tuple(_close_names(knob.name, known))))
        elif present:
            report.notes.append(_also_there(concept, side.project, view.label, knob.kind, knob.name))


def _check_dispatch(concept: str, dispatch: Dispatch, view: PinnedTree, report: VerifyReport) -> None:
    """Both ends exist, and the call is written in the source's body as the mapping says."""
    label = f"dispatch {dispatch.source} -> {dispatch.target}"
    for end in (dispatch.source, dispatch.target):
        _check_symbol(concept, "dispatch", SymbolRef(end, releases=dispatch.releases), view, report,
                      label=f"{label}: {end}", route_only=True)
    match = view.resolve(dispatch.source)
    if match is None or not dispatch.applies_to(view.version):
        return
    lines = view.read_lines(match.path) or []
    body = "\n".join(lines[match.line - 1:match.end_line])
    if dispatch.call not in body:
        report.problems.append(VerifyFinding(
            concept, view.project, view.label, "dispatch", dispatch.call,
            f"{label}: {dispatch.source} has no call written {dispatch.call!r} in {view.label}"))


def _check_dispatch_needed(
    concept: str, side: SideMapping, view: PinnedTree, graph: CallGraphLike, report: VerifyReport
) -> None:
    """A declared run-time call the call graph now resolves by itself can go (a note)."""
    for d in side.dispatches_for(view.version):
        if d.source in graph and d.target in set(graph.successors(d.source)):
            report.notes.append(VerifyFinding(
                concept, view.project, view.label, "dispatch", d.call,
                f"{view.label}: the call graph now has {d.source} -> {d.target}; "
                f"the declared run-time call ({d.call!r}) is no longer needed"))


def _check_symbol(
    concept: str, kind: str, ref: SymbolRef, view: PinnedTree, report: VerifyReport, *, label: str = "",
    route_only: bool = False,
) -> None:
    """`releases` on a side-table entry claims the name is absent elsewhere (a note if
    it is there after all); on a step, a bridge or a declared call (`route_only`) it only says
    which releases' route goes through it, so a name present at other pins is fine."""
    found = view.resolve(ref.name) is not None
    if ref.applies_to(view.version):
        report.checked += 1
        if not found:
            report.problems.append(
                VerifyFinding(concept, view.project, view.label, kind, ref.name,
                        f"{label or ref.name} does not resolve in {view.label}",
                        tuple(view.suggest(ref.name))))
    elif found and not route_only:
        report.notes.append(_also_there(concept, view.project, view.label, kind, ref.name))


def _also_there(concept: str, project: str, pin: str, kind: str, name: str) -> VerifyFinding:
    return VerifyFinding(concept, project, pin, kind, name,
                   f"{name} is limited by `releases` but also exists in {pin}")


def _close_names(name: str, known: Iterable[str]) -> list[str]:
    """Flags/envs that share most words with a missing one (a rename usually keeps some)."""
    words = set(name.strip("-").replace("_", "-").lower().split("-"))
    scored = []
    for other in known:
        other_words = set(other.strip("-").replace("_", "-").lower().split("-"))
        overlap = len(words & other_words)
        if overlap and overlap >= len(words) / 2:
            scored.append((-overlap, len(other), other))
    return [other for _, _, other in sorted(scored)[:3]]


def _coverage(concept: ConceptMapping) -> CoverageRow:
    sides = {name: concept.side(name) for name in SIDES}
    return CoverageRow(
        concept=concept.id,
        title=concept.title,
        statuses={name: side.status for name, side in sides.items()},
        notes={name: side.note for name, side in sides.items() if side.note},
        counts={name: len(side.symbols) for name, side in sides.items()},
    )
