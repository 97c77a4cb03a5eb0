"""Plain data for `atlas diff`: a version diff (one project, two releases) and a
design diff (two projects side by side, per concept). Every class has `to_dict`
so the terminal, `--json` and the HTML report render the same data."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SymbolMove:
    """A definition that left one name and appeared under another."""

    old: str  # dotted name in the older release
    new: str
    # "moved" (other module, same name) | "renamed" (same parent, other name) | "module"
    # (a whole module) | "re-exported" (defined elsewhere now, still importable from the
    # old path) | "merged" (a copy dropped in favour of one that already existed)
    kind: str
    evidence: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "kind": self.kind, "evidence": list(self.evidence)}


@dataclass(frozen=True, slots=True)
class ModuleChange:
    """A module whose definitions went to other modules: split into several, folded
    into a package (`x.py` -> `x/__init__.py` + submodules), or merged into one that existed."""

    old: str  # dotted module name in the older release
    new: tuple[str, ...]  # the modules its definitions went to, most first
    kind: str  # "split" | "package" | "merged"
    evidence: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": list(self.new), "kind": self.kind, "evidence": list(self.evidence)}


@dataclass(frozen=True, slots=True)
class DiffEdge:
    caller: str
    callee: str
    kind: str = ""  # the call graph's edge kind (direct, method, constructor, ...)
    confidence: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class ConceptCalls:
    """Call-graph changes around one concept's mapped symbols between two releases."""

    concept: str
    roots_old: list[str]
    roots_new: list[str]
    added: list[DiffEdge] = field(default_factory=list)
    removed: list[DiffEdge] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # mapped roots absent from a call graph

    def to_dict(self) -> dict[str, Any]:
        return {
            "concept": self.concept,
            "roots_old": self.roots_old,
            "roots_new": self.roots_new,
            "added": [e.to_dict() for e in self.added],
            "removed": [e.to_dict() for e in self.removed],
            "missing": self.missing,
        }


@dataclass(slots=True)
class VersionDiff:
    old: str  # "vllm@0.30.0"
    new: str
    added: list[str] = field(default_factory=list)  # top-most added definitions only
    removed: list[str] = field(default_factory=list)
    moved: list[SymbolMove] = field(default_factory=list)
    modules: list[ModuleChange] = field(default_factory=list)  # splits, package folds, merges
    flags_added: list[str] = field(default_factory=list)
    flags_removed: list[str] = field(default_factory=list)
    # Option strings of flags on both sides that one release accepts and the other not
    # (`--disable-x` beside `--enable-x` when a custom action derives it).
    options_added: list[str] = field(default_factory=list)
    options_removed: list[str] = field(default_factory=list)
    envs_added: list[str] = field(default_factory=list)
    envs_removed: list[str] = field(default_factory=list)
    concepts: list[ConceptCalls] = field(default_factory=list)
    concept_filter: str | None = None  # added/removed/moved limited to this concept's modules
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "version",
            "old": self.old,
            "new": self.new,
            "concept": self.concept_filter,
            "symbols": {
                "added": self.added,
                "removed": self.removed,
                "moved": [m.to_dict() for m in self.moved],
                "modules": [m.to_dict() for m in self.modules],
            },
            "flags": {"added": self.flags_added, "removed": self.flags_removed,
                      "options_added": self.options_added, "options_removed": self.options_removed},
            "envs": {"added": self.envs_added, "removed": self.envs_removed},
            "concepts": [c.to_dict() for c in self.concepts],
            "warnings": self.warnings,
        }


@dataclass(slots=True)
class DeclaredState:
    """The state one mapped class owns, as its declared attributes."""

    name: str
    attributes: list[str]  # `name: annotation` where annotated
    found: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class KnobInfo:
    name: str
    kind: str  # "flag" | "env"
    default: str | None = None
    help: str | None = None
    found: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class SideDesign:
    """One pin's side of a concept: who owns which state, what calls what, the knobs."""

    pin: str
    status: str
    note: str = ""
    state: list[DeclaredState] = field(default_factory=list)
    calls: list[DiffEdge] = field(default_factory=list)  # from the entry points / mapped functions
    knobs: list[KnobInfo] = field(default_factory=list)
    bridges: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pin": self.pin,
            "status": self.status,
            "note": self.note,
            "state": [s.to_dict() for s in self.state],
            "calls": [c.to_dict() for c in self.calls],
            "knobs": [k.to_dict() for k in self.knobs],
            "bridges": self.bridges,
        }


@dataclass(slots=True)
class ConceptDesign:
    concept: str
    title: str
    left: SideDesign
    right: SideDesign

    def to_dict(self) -> dict[str, Any]:
        return {"concept": self.concept, "title": self.title, "left": self.left.to_dict(), "right": self.right.to_dict()}


@dataclass(slots=True)
class DesignDiff:
    left: str  # "vllm@0.30.0"
    right: str  # "sglang@0.5.20"
    concepts: list[ConceptDesign] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "design",
            "left": self.left,
            "right": self.right,
            "concepts": [c.to_dict() for c in self.concepts],
            "warnings": self.warnings,
        }
