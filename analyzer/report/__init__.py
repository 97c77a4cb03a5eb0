"""`atlas report`: a static walkthrough site, reference engine | vLLM | SGLang per concept.

Public API: `build_report`, `snapshot_side`, `tree_side`, `default_sides`.
"""

from analyzer.report.build import FORMATS, ReportResult, build_report
from analyzer.report.sources import ReportError, snapshot_side, tree_side

__all__ = [
    "FORMATS",
    "ReportError",
    "ReportResult",
    "build_report",
    "snapshot_side",
    "tree_side",
]
