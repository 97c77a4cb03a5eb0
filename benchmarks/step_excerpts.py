"""How long the walkthrough's Markdown pages are with step cells narrowed to the lines doing
each step (analyzer/report/narrow.py) and with whole symbol bodies, as before.

Opens the default columns (reference engine, the book's vLLM and SGLang pins) from the
cache, builds every concept's page once, renders its Markdown as built (narrowed), then
again with the narrowing dropped (each step symbol shown as its whole excerpt, up to
pages.STEP_MAX_LINES): lines per page and of its "Step by step" section, side by side.

    .venv/bin/python benchmarks/step_excerpts.py [--concept scheduler ...]
"""

from __future__ import annotations

import argparse

from analyzer.mappings import load_mappings
from analyzer.mappings.trace import bridges_for
from analyzer.report.markdown import concept_markdown
from analyzer.report.models import ConceptPage, ReportMeta
from analyzer.report.pages import build_page
from analyzer.report.run import default_releases, open_sides
from analyzer.settings import Settings, default_cache_dir


def steps_section(text: str) -> int:
    """Lines of the page's "Step by step" section (up to the first column's section)."""
    lines = text.splitlines()
    if "## Step by step" not in lines:
        return 0
    start = lines.index("## Step by step")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return end - start


def kinds(page: ConceptPage) -> list[str]:
    """Each step symbol's excerpt: whole (short), step (cut to the lines leading on), concept
    (to its calls into the concept's mapped code), head."""
    return ["whole" if v.narrowed is None else v.narrowed.reason
            for row in page.steps for cell in row.cells for v in cell.symbols if v.found]


def unnarrowed(page: ConceptPage) -> None:
    for row in page.steps:
        for cell in row.cells:
            for view in cell.symbols:
                view.narrowed = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concept", action="append", help="only these concept ids (default: all)")
    args = parser.parse_args()
    settings = Settings(default_cache_dir())
    catalogue = load_mappings()
    concepts = [c for c in catalogue if not args.concept or c.id in args.concept]
    releases = default_releases()
    sides = open_sides(settings, releases, progress=False)
    bridges = {p: bridges_for(catalogue, p, s.version) for p, s in sides.items() if s is not None}
    titles = {c.id: c.title for c in catalogue}
    meta = ReportMeta("bench", [], False)
    print(f"columns: reference engine, {', '.join(releases)}; {len(concepts)} concepts")
    print(f"{'concept':<28} {'page before':>11} {'page after':>10} {'steps before':>12} {'steps after':>11} {'ratio':>6}")
    totals = [0, 0, 0, 0]
    shown: list[str] = []
    for concept in concepts:
        page = build_page(concept, sides, titles, None, bridges)
        shown += kinds(page)
        after = concept_markdown(page, meta)
        unnarrowed(page)
        before = concept_markdown(page, meta)
        row = [len(before.splitlines()), len(after.splitlines()), steps_section(before), steps_section(after)]
        totals = [t + r for t, r in zip(totals, row, strict=True)]
        ratio = f"{row[2] / row[3]:.1f}x" if row[3] else "-"
        print(f"{concept.id:<28} {row[0]:>11} {row[1]:>10} {row[2]:>12} {row[3]:>11} {ratio:>6}")
    ratio = f"{totals[2] / totals[3]:.1f}x" if totals[3] else "-"
    print(f"{'total':<28} {totals[0]:>11} {totals[1]:>10} {totals[2]:>12} {totals[3]:>11} {ratio:>6}")
    print(f"step symbols: {len(shown)}; shown whole (short): {shown.count('whole')}, cut to the lines leading on: "
          f"{shown.count('step')}, to their calls into the concept's mapped code: {shown.count('concept')}, "
          f"only their head (nothing known leads on: a `focus` would name the lines): "
          f"{shown.count('head')}")


if __name__ == "__main__":
    main()
