"""`build_report`: concepts + sides -> pages -> HTML site and Markdown under one folder."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from analyzer.mappings import ConceptMapping
from analyzer.mappings.trace import bridges_for
from analyzer.pinned import PinnedTree
from analyzer.report.graphviz import find_dot
from analyzer.report.html import render_site
from analyzer.report.markdown import render_markdown
from analyzer.report.models import ConceptPage, ReportMeta
from analyzer.report.pages import build_page

FORMATS = ("html", "md", "both")
# Sub-folders the builder owns and rewrites; anything else under `out` is left alone.
_OWNED = ("concepts", "md")


@dataclass(slots=True)
class ReportResult:
    out: Path
    index: Path | None
    markdown_index: Path | None
    pages: list[ConceptPage]
    files: list[Path] = field(default_factory=list)
    graphviz: bool = False
    no_graphviz_reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return [f"{p.id} [{c.heading}] {w}" for p in self.pages for c in p.columns for w in c.warnings]

    def to_dict(self) -> dict[str, object]:
        return {
            "out": str(self.out),
            "index": str(self.index) if self.index else None,
            "markdown_index": str(self.markdown_index) if self.markdown_index else None,
            "concepts": [p.id for p in self.pages],
            "files": len(self.files),
            "graphviz": self.graphviz,
            "notes": self.notes,
            "warnings": self.warnings,
        }


def build_report(
    concepts: list[ConceptMapping],
    sides: dict[str, PinnedTree | None],
    out: Path,
    *,
    fmt: str = "both",
    dot: str | bool | None = True,
    columns_from: str = "",
    catalogue: list[ConceptMapping] | None = None,
) -> ReportResult:
    """`dot=True` looks Graphviz up on PATH; a path uses that binary; None/False draws no SVG.
    `catalogue`: every concept, whose bridges a page's route may cross (default: `concepts`)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    dot_path = find_dot() if dot is True else (dot or None)
    titles = {c.id: c.title for c in concepts}
    bridges = {project: bridges_for(catalogue or concepts, project, side.version)
               for project, side in sides.items() if side is not None}
    pages = [build_page(c, sides, titles, dot_path, bridges) for c in concepts]
    notes = [n for s in sides.values() if s is not None for n in s.notes]
    meta = ReportMeta(
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        sides=[f"{s.heading} ({s.source_line})" for s in sides.values() if s is not None],
        graphviz=dot_path is not None,
        no_graphviz_reason="" if dot_path else (
            "Graphviz `dot` was not found" if dot is True else "drawing was switched off (--no-graphviz)"),
        notes=notes,
        columns_from=columns_from,
        headings=[s.heading for s in sides.values() if s is not None],
    )
    out.mkdir(parents=True, exist_ok=True)
    for name in _OWNED:
        shutil.rmtree(out / name, ignore_errors=True)  # no stale pages of concepts since removed
    result = ReportResult(out, None, None, pages, graphviz=meta.graphviz, notes=notes,
                          no_graphviz_reason=meta.no_graphviz_reason)
    if fmt in ("html", "both"):
        files = render_site(pages, meta, out)
        result.index = files[0]
        result.files += files
    if fmt in ("md", "both"):
        files = render_markdown(pages, meta, out)
        result.markdown_index = files[0]
        result.files += files
    return result
