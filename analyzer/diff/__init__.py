"""`atlas diff`: version diffs (one project, two releases) and design diffs (side by side).

Public API (used by `atlas report`): `run_diff(settings, left, right, concepts, ...)`
returns a `VersionDiff` or `DesignDiff`; `.to_dict()` is the plain data to render.
`version_diff` / `design_diff` work on already-opened sides (`open_pin`).
"""

from analyzer.diff.design import design_diff, side_design, version_diff
from analyzer.diff.models import (
    ConceptCalls,
    ConceptDesign,
    DeclaredState,
    DesignDiff,
    DiffEdge,
    KnobInfo,
    ModuleChange,
    SideDesign,
    SymbolMove,
    VersionDiff,
)
from analyzer.diff.pins import DiffError, load_pin_graphs, open_pin
from analyzer.diff.run import run_diff

__all__ = [
    "ConceptCalls",
    "ConceptDesign",
    "DeclaredState",
    "DesignDiff",
    "DiffEdge",
    "DiffError",
    "KnobInfo",
    "ModuleChange",
    "SideDesign",
    "SymbolMove",
    "VersionDiff",
    "design_diff",
    "load_pin_graphs",
    "open_pin",
    "run_diff",
    "side_design",
    "version_diff",
]
