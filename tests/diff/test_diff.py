"""`atlas diff` on fake releases: vllm 1.0 -> 2.0 moves a module, renames a method and a flag."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from mappings.conftest import FakePins, write_mapping
from typer.testing import CliRunner

from analyzer.diff import DesignDiff, VersionDiff, run_diff
from analyzer.diff.commands import register
from analyzer.diff.html import render_html
from analyzer.mappings import load_mappings

SCHEDULER = """
    title = "Scheduler"
    summary = "Who runs next."

    [reference]
    status = "not-implemented"
    note = "fake world"

    [vllm]
    status = "implemented"
    symbols = [
      "vllm.core.sched.Scheduler",
      "vllm.core.sched.Scheduler.schedule",
      { name = "vllm.core.pool.BlockPool", releases = ["1.0"] },
      { name = "vllm.core.kv.pool.BlockPool", releases = ["2.0"] },
    ]
    entry_points = ["vllm.core.sched.Scheduler.schedule"]
    flags = ["--max-num-seqs", { name = "--block-size", releases = ["1.0"] }, { name = "--kv-block-size", releases = ["2.0"] }]
    envs = ["VLLM_FOO"]

    [sglang]
    status = "implemented"
    symbols = [
      "sglang.srt.managers.scheduler.Scheduler",
      "sglang.srt.managers.scheduler.Scheduler.get_new_batch_prefill",
      "sglang.srt.mem_cache.radix_cache.RadixCache",
    ]
    entry_points = ["sglang.srt.managers.scheduler.Scheduler.get_next_batch_to_run"]
    flags = ["--schedule-policy", "--no-such-flag"]
"""


def _concepts(tmp_path: Path):  # type: ignore[no-untyped-def]
    write_mapping(tmp_path, "scheduler", SCHEDULER)
    return load_mappings(tmp_path)


def test_version_diff_finds_moves_renames_and_flags(pins: FakePins, tmp_path: Path) -> None:
    diff = run_diff(pins.settings, "vllm@1.0", "vllm@2.0", _concepts(tmp_path), fetch=False)
    assert isinstance(diff, VersionDiff)
    moves = {(m.old, m.new): m for m in diff.moved}
    module_move = moves[("vllm.core.pool", "vllm.core.kv.pool")]
    assert module_move.kind == "module" and "git rename vllm/core/pool.py -> vllm/core/kv/pool.py" in module_move.evidence[0]
    rename = moves[("vllm.core.sched.Scheduler._preempt", "vllm.core.sched.Scheduler._preempt_request")]
    assert rename.kind == "renamed" and "same parameters (self)" in rename.evidence
    # What moved is not also reported as removed + added; the new package is new.
    assert "vllm.core.pool" not in diff.removed and "vllm.core.pool.BlockPool" not in diff.removed
    assert diff.added == ["vllm.core.kv"]
    assert diff.removed == []
    assert (diff.flags_added, diff.flags_removed) == (["--kv-block-size"], ["--block-size"])
    assert (diff.envs_added, diff.envs_removed) == (["VLLM_BAR"], [])


def test_version_diff_call_changes_follow_renames(pins: FakePins, tmp_path: Path) -> None:
    diff = run_diff(pins.settings, "vllm@1.0", "vllm@2.0", _concepts(tmp_path), fetch=False, calls=True)
    [calls] = diff.concepts
    assert calls.roots_new == ["vllm.core.sched.Scheduler.schedule"]
    # schedule -> _preempt became schedule -> _preempt_request: a rename, not a new call.
    assert calls.added == [] and calls.removed == []


def test_version_diff_limited_to_a_concept(pins: FakePins, tmp_path: Path) -> None:
    diff = run_diff(pins.settings, "vllm@1.0", "vllm@2.0", _concepts(tmp_path), concept="scheduler", calls=False, fetch=False)
    assert diff.concept_filter == "scheduler"
    assert {m.old for m in diff.moved} == {"vllm.core.pool", "vllm.core.sched.Scheduler._preempt"}
    assert diff.flags_removed == ["--block-size"] and diff.envs_added == []  # VLLM_BAR is not mapped


def test_design_diff_side_by_side(pins: FakePins, tmp_path: Path) -> None:
    diff = run_diff(pins.settings, "vllm@2.0", "sglang@1.0", _concepts(tmp_path), fetch=False)
    assert isinstance(diff, DesignDiff)
    [concept] = diff.concepts
    left, right = concept.left, concept.right
    state = {s.name: s.attributes for s in left.state}
    assert state["vllm.core.sched.Scheduler"] == ["pool", "waiting: list[int]", "running: list[int]"]
    assert state["vllm.core.kv.pool.BlockPool"] == ["free_ids", "ref_counts"]
    assert {s.name for s in right.state} == {"sglang.srt.managers.scheduler.Scheduler", "sglang.srt.mem_cache.radix_cache.RadixCache"}
    right_calls = {(e.caller.rsplit(".", 1)[-1], e.callee.rsplit(".", 1)[-1]) for e in right.calls}
    assert ("get_next_batch_to_run", "get_new_batch_prefill") in right_calls
    assert ("get_new_batch_prefill", "match_prefix") in right_calls  # depth 2, below a mapped callee
    left_calls = {(e.caller.rsplit(".", 1)[-1], e.callee.rsplit(".", 1)[-1]) for e in left.calls}
    assert ("schedule", "_preempt_request") in left_calls and ("schedule", "allocate") in left_calls
    knobs = {k.name: k for k in right.knobs}
    assert knobs["--schedule-policy"].found and knobs["--schedule-policy"].default == '"lpm"'
    assert not knobs["--no-such-flag"].found
    assert [k.name for k in left.knobs] == ["--max-num-seqs", "--kv-block-size", "VLLM_FOO"]
    html = render_html(diff)
    assert "sglang.srt.mem_cache.radix_cache.RadixCache" in html and "<script" not in html


def _cli(pins: FakePins) -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = pins.settings

    register(app)
    return app


def test_cli_json_html_and_errors(pins: FakePins, tmp_path: Path) -> None:
    _concepts(tmp_path / "maps")
    runner = CliRunner()
    app = _cli(pins)
    out = tmp_path / "page.html"
    result = runner.invoke(app, ["diff", "vllm@1.0", "vllm@2.0", "--mappings", str(tmp_path / "maps"),
                                 "--no-calls", "--no-fetch", "--json", "--html", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["kind"] == "version" and data["flags"]["added"] == ["--kv-block-size"]
    assert "vllm.core.sched.Scheduler._preempt_request" in out.read_text()
    text = runner.invoke(app, ["diff", "vllm@2.0", "sglang@1.0", "--mappings", str(tmp_path / "maps"), "--no-fetch"])
    assert text.exit_code == 0, text.output
    assert "state owners" in text.stdout and "get_new_batch_prefill" in text.stdout
    bad = runner.invoke(app, ["diff", "vllm@1.0", "vllm@7.0", "--mappings", str(tmp_path / "maps"), "--no-fetch"])
    assert bad.exit_code == 2 and "vllm@7.0" in bad.output and "Traceback" not in bad.output
    unknown = runner.invoke(app, ["diff", "vllm@1.0", "vllm@2.0", "--concept", "nope", "--mappings", str(tmp_path / "maps")])
    assert unknown.exit_code == 2 and "no such concept: nope" in unknown.output
