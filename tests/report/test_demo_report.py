"""The demo's report step (`atlas demo` after indexing) on fetched fake releases: the
walkthrough the README promises (index, a page per concept with three columns, highlighted
excerpts, aligned steps, call paths and routes drawn by Graphviz, Markdown beside it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mappings.conftest import FakePins, fake_pins, pins, write_mapping  # noqa: F401 (fixtures)
from rich.console import Console

from analyzer.demo import _build_report
from analyzer.mappings.load import MAPPINGS_ENV

CONCEPT = """
    title = "Scheduler"
    summary = "Who runs next."

    [reference]
    status = "implemented"
    symbols = ["reference_engine.scheduler.Scheduler.schedule", "reference_engine.kv_cache_manager.KVCacheManager.allocate_slots"]
    entry_points = ["reference_engine.scheduler.Scheduler.schedule"]

    [vllm]
    status = "implemented"
    symbols = ["vllm.core.sched.Scheduler", "vllm.core.sched.Scheduler.schedule",
               { name = "vllm.core.kv.pool.BlockPool.allocate", releases = ["2.0"] },
               { name = "vllm.core.pool.BlockPool.allocate", releases = ["1.0"] }]
    entry_points = ["vllm.core.sched.Scheduler.schedule"]
    flags = ["--max-num-seqs"]

    [sglang]
    status = "implemented"
    symbols = ["sglang.srt.managers.scheduler.Scheduler.get_next_batch_to_run"]

    [[steps]]
    title = "Pick the batch"
    explain = "The step starts."
    reference = ["reference_engine.scheduler.Scheduler.schedule"]
    vllm = ["vllm.core.sched.Scheduler.schedule"]
    sglang = ["sglang.srt.managers.scheduler.Scheduler.get_next_batch_to_run"]

    [[steps]]
    title = "Take blocks"
    explain = "Room in the KV cache."
    reference = ["reference_engine.kv_cache_manager.KVCacheManager.allocate_slots"]
    vllm = [{ name = "vllm.core.kv.pool.BlockPool.allocate", releases = ["2.0"] }, { name = "vllm.core.pool.BlockPool.allocate", releases = ["1.0"] }]
    sglang = { none = "the fake SGLang has no pool" }
"""


@pytest.mark.slow  # indexes and graphs the real reference engine once (cold cache: ~15 s)
def test_demo_report_step_writes_what_the_readme_promises(
    pins: FakePins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811 (the imported fixture)
) -> None:
    write_mapping(tmp_path / "mappings", "scheduler", CONCEPT)
    monkeypatch.setenv(MAPPINGS_ENV, str(tmp_path / "mappings"))
    console = Console(record=True, width=200)
    out = tmp_path / "reports"
    index = _build_report(pins.settings, console, ["vllm@1.0", "vllm@2.0", "sglang@1.0"], out, book=None)
    text = console.export_text()
    # Without a book the columns are the newest locked releases, and the demo says so.
    assert "reference engine | vllm@2.0 | sglang@1.0" in text
    assert index == out / "index.html" and index.is_file()
    page = (out / "concepts" / "scheduler.html").read_text()
    md = (out / "md" / "scheduler.md").read_text()
    assert (out / "md" / "index.md").is_file()
    # Three columns, highlighted excerpts with the file's own line numbers.
    assert re.findall(r'<section class="column" id="col-(\w+)"', page) == ["reference", "vllm", "sglang"]
    assert page.count('class="hl"') >= 4 and '<span class="nf">schedule</span>' in page
    # Aligned steps, a missing counterpart as a finding, and drawn graphs (the demo installs dot).
    assert page.index('id="step-1"') < page.index('id="step-2"') < page.index('class="columns"')
    assert "No counterpart: the fake SGLang has no pool" in page
    assert page.count('class="route-svg"') == 3 and page.count("<svg") >= 3
    assert "Graphviz `dot` was not found" not in page
    assert "## Step by step" in md and "#### `vllm.core.kv.pool.BlockPool.allocate`" in md


def test_make_demo_installs_graphviz_before_the_demo() -> None:
    """`make demo` on a fresh machine draws graphs: its recipe installs Graphviz (when `dot`
    is missing) before `atlas demo`, and only Graphviz (not the test targets' browser)."""
    import shutil
    import subprocess

    make = shutil.which("make")
    assert make is not None, "make is required"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([make, "-n", "demo"], cwd=root, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    install = next(i for i, line in enumerate(lines) if "apt-get install" in line and "graphviz" in line)
    demo = next(i for i, line in enumerate(lines) if "atlas demo" in line)
    assert install < demo and "command -v dot" in lines[install] and "chromium" not in lines[install]


@pytest.mark.slow  # the whole `atlas demo` on fake releases (warm after the test above)
def test_atlas_demo_columns_are_the_books_pins_and_each_page_says_so(
    pins: FakePins, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811 (the imported fixture)
) -> None:
    """`atlas demo` as `make demo` runs it (no options but where the book and site are): the
    walkthrough's columns are the pins in the book's atlas.toml, not the newest locked
    releases, every page names them, and `--newest` is the one option to the newest."""
    from typer.testing import CliRunner

    from analyzer.cli import app

    write_mapping(tmp_path / "mappings", "scheduler", CONCEPT)
    monkeypatch.setenv(MAPPINGS_ENV, str(tmp_path / "mappings"))
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    (book / "atlas.toml").write_text('[book]\nmanuscript = ["chapters"]\n\n[check]\npins = ["vllm@1.0", "sglang@1.0"]\n')
    (book / "chapters" / "ch1.md").write_text("The loop starts in `vllm.core.sched.Scheduler.schedule`.\n")
    base = ["--cache-dir", str(pins.settings.cache_dir), "demo", "--book", str(book)]

    out = tmp_path / "reports"
    result = CliRunner().invoke(app, [*base, "--report-dir", str(out)])
    assert result.exit_code == 0, result.output
    assert "reference engine | vllm@1.0 | sglang@1.0" in result.output  # the locks also hold vllm@2.0
    assert "Open the walkthrough:" in result.output
    said = f"Columns: Reference engine | vLLM 1.0 | SGLang 1.0 — the pins of {book / 'atlas.toml'}"
    pages = [out / "index.html", *sorted((out / "concepts").glob("*.html")), *sorted((out / "md").glob("*.md"))]
    assert len(pages) >= 4
    for page in pages:
        text = page.read_text()
        if page.suffix == ".md":  # Markdown escapes `|`, `_`, ...
            text = re.sub(r"\\(.)", r"\1", text)
        assert said in text and "vLLM 2.0" not in text, page
    assert re.search(r'<div class="pins[^"]*" id="pins">Columns: Reference engine \| vLLM 1\.0', pages[1].read_text())
    scheduler = (out / "concepts" / "scheduler.html").read_text()
    assert scheduler.count('class="route-svg"') == 3 and "Graphviz `dot` was not found" not in scheduler

    newest = tmp_path / "newest"
    result = CliRunner().invoke(app, [*base, "--report-dir", str(newest), "--newest"])
    assert result.exit_code == 0, result.output
    assert "reference engine | vllm@2.0 | sglang@1.0" in result.output
    assert "Columns: Reference engine | vLLM 2.0 | SGLang 1.0 — the newest locked release of each project" in (
        newest / "concepts" / "scheduler.html").read_text()


def test_the_sample_books_pins_are_the_default_columns() -> None:
    """What `make demo` shows by default: the sample book's atlas.toml pins (the book's
    own, not the newest locked releases), read by the same code as the demo."""
    from analyzer.paths import sample_book
    from analyzer.project import find_config, read_project
    from analyzer.report.run import book_columns

    config = find_config(sample_book())
    assert config == sample_book() / "atlas.toml"
    assert book_columns(read_project(config).pins) == ["vllm@0.30.0", "sglang@0.5.20"]
