"""`atlas report` on the real pinned releases (network on first run: the wheels)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from analyzer.report.run import run_report
from analyzer.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# The releases tests/graphs' integration tier builds graphs for: a shared cache reuses them.
RELEASES = ["vllm@0.30.0", "sglang@0.5.20"]

# A mapping of our own (the repository's catalogue may change under us).
MAPPING = """
title = "Scheduling step"
summary = "One step of the scheduler."

[reference]
status = "implemented"
symbols = ["reference_engine.scheduler.Scheduler", "reference_engine.scheduler.Scheduler._admit"]
entry_points = ["reference_engine.scheduler.Scheduler.schedule"]

[vllm]
status = "implemented"
symbols = ["vllm.v1.core.sched.scheduler.Scheduler", "vllm.v1.core.kv_cache_manager.KVCacheManager.allocate_slots"]
entry_points = ["vllm.v1.core.sched.scheduler.Scheduler.schedule"]
flags = ["--max-num-seqs"]

[sglang]
status = "implemented"
symbols = ["sglang.srt.managers.scheduler.Scheduler"]
flags = ["--max-running-requests"]
"""


def test_report_on_real_releases(integration_settings: Settings, tmp_path: Path) -> None:
    mappings = tmp_path / "mappings"
    mappings.mkdir()
    (mappings / "step.toml").write_text(textwrap.dedent(MAPPING))
    result = run_report(integration_settings, out=tmp_path / "site", releases=RELEASES, mappings_dir=mappings)
    (page,) = result.pages
    ref, vllm, sgl = page.columns
    assert vllm.source_line == "commit ced6857af" and sgl.source_line.startswith("tag")
    cls = vllm.symbols[0]
    assert cls.found and cls.excerpt is not None and cls.excerpt.truncated
    assert cls.permalink.startswith(
        "https://github.com/vllm-project/vllm/blob/ced6857af/vllm/v1/core/sched/scheduler.py#L")
    (path,) = vllm.paths
    assert "vllm.v1.core.kv_cache_manager.KVCacheManager.allocate_slots" in path.reached
    state = next(s for s in vllm.state if s.cls == "vllm.v1.core.sched.scheduler.Scheduler")
    assert {"waiting", "running"} <= {a.name for a in state.attrs}
    assert vllm.knobs[0].found and vllm.knobs[0].defined_at.startswith("vllm/")
    assert sgl.symbols[0].permalink.startswith(
        "https://github.com/sgl-project/sglang/blob/v0.5.20/python/sglang/srt/managers/scheduler.py#L")
    assert sgl.knobs[0].found
    assert ref.paths[0].reached and ref.state[0].cls == "reference_engine.scheduler.Scheduler"
    html = (tmp_path / "site" / "concepts" / "step.html").read_text()
    assert html.count('class="column"') == 3


def test_repository_catalogue_renders(integration_settings: Settings, tmp_path: Path) -> None:
    result = run_report(integration_settings, out=tmp_path / "site", releases=RELEASES, fmt="html")
    assert result.pages, "mappings/ holds no concept"
    for page in result.pages:
        assert (tmp_path / "site" / "concepts" / f"{page.id}.html").is_file()
        assert [c.project for c in page.columns] == ["reference", "vllm", "sglang"]
