"""A real concept's step cells show the lines doing the step, not whole symbol bodies."""

from __future__ import annotations

import pytest
from mappings.conftest import FakePins, fake_pins  # noqa: F401 (the session's shared cache)

from analyzer.mappings import load_mappings
from analyzer.paths import reference_root
from analyzer.report.markdown import concept_markdown
from analyzer.report.models import ReportMeta
from analyzer.report.pages import build_page
from analyzer.report.sources import tree_side


@pytest.mark.slow  # indexes and graphs the real reference engine (shared with test_demo_report)
def test_the_scheduler_steps_are_narrowed_and_keep_the_chained_call(fake_pins: FakePins) -> None:  # noqa: F811
    concept = next(c for c in load_mappings() if c.id == "scheduler")
    sides = {"reference": tree_side(fake_pins.settings, "reference", reference_root()), "vllm": None, "sglang": None}
    page = build_page(concept, sides, {concept.id: concept.title}, None)
    first, second = page.steps[0].cells[0], page.steps[1].cells[0]
    # Step 2 is reached from step 1 by a call; step 1's cell (the engine's step(), longer
    # than a short symbol) is cut to the lines around that call, which it still shows.
    assert second.source == 1 and not second.broken
    callee = second.hops[0][0].rsplit(".", 1)[-1]
    view = first.symbols[0]
    assert view.narrowed is not None, view.name
    total = view.narrowed.end - view.narrowed.first + 1
    assert view.narrowed.shown < total
    shown = "".join(seg.code for seg in view.narrowed.segments)
    assert f".{callee}(" in shown
    assert shown.splitlines()[0].lstrip().startswith("def ")  # the signature comes first
    assert any(seg.skipped for seg in view.narrowed.segments) or view.narrowed.after
    # A symbol nothing leads on from is cut to its calls into the concept's other mapped code,
    # and says so; which symbols those are is the call graph's answer, checked by name here.
    mapped = {r.name.rsplit(".", 1)[-1] for r in concept.reference.symbols}
    mapped |= {v.name.rsplit(".", 1)[-1] for row in page.steps for v in row.cells[0].symbols}
    by_concept = [v for row in page.steps for v in row.cells[0].symbols if v.narrowed and v.narrowed.reason == "concept"]
    assert by_concept  # Scheduler._start (step 5) calls the cache's and the scheduler's mapped code
    for v in by_concept:
        assert v.narrowed is not None and "calls this concept's other code" in v.narrowed.label
        code = "".join(seg.code for seg in v.narrowed.segments)
        assert any(f"{name}(" in code for name in mapped), v.name
    md = concept_markdown(page, ReportMeta("now", [], False))
    assert f"of {total} lines, the ones doing this step" in md and "...  # " in md
