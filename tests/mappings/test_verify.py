"""`map verify` against fetched fake releases: stale names fail, gaps are listed, not failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from mappings.conftest import FakePins, write_mapping
from typer.testing import CliRunner

from analyzer.mappings import load_mappings
from analyzer.mappings.commands import register
from analyzer.mappings.verify import run_verify
from analyzer.settings import Settings

SCHEDULER = """
    title = "Scheduler"
    summary = "Who runs next."

    [reference]
    status = "not-implemented"
    note = "fake world: no reference engine"

    [vllm]
    status = "implemented"
    symbols = [
      "vllm.core.sched.Scheduler",
      "vllm.core.sched.Scheduler.schedule",
      { name = "vllm.core.sched.Scheduler._preempt", releases = ["1.0"] },
      { name = "vllm.core.sched.Scheduler._preempt_request", releases = ["2.0"] },
      { name = "vllm.core.pool.BlockPool", releases = ["1.0"] },
      { name = "vllm.core.kv.pool.BlockPool", releases = ["2.0"] },
    ]
    entry_points = ["vllm.core.sched.Scheduler.schedule"]
    flags = ["--max-num-seqs", { name = "--block-size", releases = ["1.0"] }, { name = "--kv-block-size", releases = ["2.0"] }]
    envs = ["VLLM_FOO", { name = "VLLM_BAR", releases = ["2.0"] }]

    [sglang]
    status = "implemented"
    symbols = ["sglang.srt.managers.scheduler.Scheduler.get_next_batch_to_run"]
    flags = ["--schedule-policy"]
    envs = ["SGLANG_ENABLE_TORCH_COMPILE"]
"""

SAMPLING = """
    title = "Sampling"
    summary = "Nobody mapped it yet."

    [reference]
    status = "unmapped"
"""


def _verify(pins: FakePins, folder: Path, refs: list[str] | None = None):
    return run_verify(pins.settings, load_mappings(folder), refs, reference=False, fetch=False)


def test_correct_mapping_passes_every_pin(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", SCHEDULER)
    report = _verify(pins, tmp_path)
    assert report.pins == ["sglang@1.0", "vllm@1.0", "vllm@2.0"]
    assert report.ok, report.problems
    # vllm: 5 names per pin (3 symbols + 1 entry point + 1 version-specific pool... ) plus knobs.
    assert report.checked == (5 + 2 + 1) + (5 + 2 + 2) + (1 + 1 + 1)


def test_stale_symbol_fails_with_where_it_went(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", SCHEDULER.replace(
        '{ name = "vllm.core.pool.BlockPool", releases = ["1.0"] }', '"vllm.core.pool.BlockPool"'))
    report = _verify(pins, tmp_path)
    assert not report.ok
    [problem] = report.problems
    assert (problem.pin, problem.kind, problem.name) == ("vllm@2.0", "symbol", "vllm.core.pool.BlockPool")
    assert problem.suggestions == ("vllm.core.kv.pool.BlockPool",)


def test_renamed_flag_fails(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", SCHEDULER.replace('{ name = "--block-size", releases = ["1.0"] }', '"--block-size"'))
    report = _verify(pins, tmp_path)
    [problem] = report.problems
    assert (problem.pin, problem.kind, problem.name) == ("vllm@2.0", "flag", "--block-size")
    assert "--kv-block-size" in problem.suggestions


def test_env_var_claimed_for_a_release_without_it_fails(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", SCHEDULER.replace('{ name = "VLLM_BAR", releases = ["2.0"] }', '"VLLM_BAR"'))
    [problem] = _verify(pins, tmp_path).problems
    assert (problem.pin, problem.kind, problem.name) == ("vllm@1.0", "env", "VLLM_BAR")


def test_release_list_naming_an_unpinned_version_fails(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", SCHEDULER.replace(
        '{ name = "vllm.core.kv.pool.BlockPool", releases = ["2.0"] }',
        '{ name = "vllm.core.kv.pool.BlockPool", releases = ["3.0"] }',
    ))
    problems = _verify(pins, tmp_path).problems
    assert [(p.kind, p.pin) for p in problems] == [("release", "vllm@3.0")]


def test_over_restricted_entry_is_a_note_not_a_failure(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", SCHEDULER.replace('"vllm.core.sched.Scheduler.schedule",\n', '{ name = "vllm.core.sched.Scheduler.schedule", releases = ["1.0"] },\n', 1))
    report = _verify(pins, tmp_path)
    assert report.ok
    assert [(n.pin, n.name) for n in report.notes] == [("vllm@2.0", "vllm.core.sched.Scheduler.schedule")]


def test_bridge_ends_are_checked(pins: FakePins, tmp_path: Path) -> None:
    text = SCHEDULER.replace('envs = ["SGLANG_ENABLE_TORCH_COMPILE"]', 'envs = ["SGLANG_ENABLE_TORCH_COMPILE"]\nbridges = [{ name = "to-cache", source = "sglang.srt.managers.scheduler.Scheduler.get_new_batch_prefill", target = "sglang.srt.mem_cache.radix_cache.RadixCache.lookup", transport = "call" }]')
    write_mapping(tmp_path, "scheduler", text)
    [problem] = _verify(pins, tmp_path).problems
    assert problem.kind == "bridge" and problem.name.endswith("RadixCache.lookup")
    assert "sglang.srt.mem_cache.radix_cache.RadixCache.match_prefix" not in problem.suggestions  # different method name


def test_coverage_lists_gaps_without_failing(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", SCHEDULER)
    write_mapping(tmp_path, "sampling", SAMPLING)
    report = _verify(pins, tmp_path, ["vllm@1.0"])
    assert report.ok
    assert report.gaps("reference", "not-implemented") == ["scheduler"]
    assert report.gaps("reference", "unmapped") == ["sampling"]
    assert report.gaps("vllm") == ["sampling"]
    data = report.to_dict()
    assert data["gaps"]["sglang"] == ["sampling"]
    assert {row["concept"]: row["gaps"] for row in data["coverage"]}["scheduler"] == ["reference"]


def _cli(settings: Settings) -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = settings

    register(app)
    return app


def test_cli_exit_codes_and_json(pins: FakePins, tmp_path: Path) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    write_mapping(good, "scheduler", SCHEDULER)
    write_mapping(good, "sampling", SAMPLING)
    write_mapping(bad, "scheduler", SCHEDULER.replace('"vllm.core.sched.Scheduler",', '"vllm.core.sched.Sched",'))
    runner = CliRunner()
    app = _cli(pins.settings)
    ok = runner.invoke(app, ["map", "verify", "--mappings", str(good), "--no-reference", "--no-fetch", "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert data["ok"] and data["gaps"]["reference"] == ["sampling", "scheduler"]
    stale = runner.invoke(app, ["map", "verify", "--mappings", str(bad), "--no-reference", "--no-fetch"])
    assert stale.exit_code == 1
    assert "vllm.core.sched.Sched does not resolve" in stale.stdout
    assert "vllm.core.sched.Scheduler" in stale.stdout  # the suggestion


def test_cli_bad_input_is_a_message_not_a_traceback(pins: FakePins, tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("title = [")
    runner = CliRunner()
    app = _cli(pins.settings)
    result = runner.invoke(app, ["map", "verify", "--mappings", str(tmp_path), "--no-fetch"])
    assert result.exit_code == 2
    assert "broken.toml: not valid TOML" in result.output and "Traceback" not in result.output
    write_mapping(tmp_path / "ok", "sampling", SAMPLING)
    unpinned = runner.invoke(app, ["map", "verify", "--mappings", str(tmp_path / "ok"), "--pin", "vllm@9.9", "--no-reference", "--no-fetch"])
    assert unpinned.exit_code == 2 and "vllm@9.9" in unpinned.output and "Traceback" not in unpinned.output
    unknown = runner.invoke(app, ["map", "show", "nothing", "--mappings", str(tmp_path / "ok")])
    assert unknown.exit_code == 2 and "no such concept: nothing" in unknown.output


@pytest.mark.slow
def test_reference_engine_names_are_checked(pins: FakePins, tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", """
        title = "Scheduler"
        summary = "x"
        [reference]
        status = "implemented"
        symbols = ["reference_engine.scheduler.Scheduler.schedule", "reference_engine.scheduler.Scheduler.plan"]
    """)
    report = run_verify(pins.settings, load_mappings(tmp_path), ["vllm@1.0"], fetch=False)
    assert [(p.pin, p.name) for p in report.problems] == [("reference", "reference_engine.scheduler.Scheduler.plan")]


STEPS = """
    [[steps]]
    title = "Schedule"
    explain = "The step starts."
    vllm = ["vllm.core.sched.Scheduler.schedule"]
    sglang = {{ none = "fake world" }}

    [[steps]]
    title = "Preempt"
    explain = "Out of blocks: a victim goes back to waiting."
    vllm = [{{ name = "vllm.core.sched.Scheduler._preempt", releases = ["1.0"] }}, {{ name = "vllm.core.sched.Scheduler._preempt_request", releases = ["2.0"] }}]

    [[steps]]
    title = "Free the victim's blocks"
    explain = "Its blocks return to the pool."
    vllm = [{{ name = "vllm.core.pool.BlockPool.free", releases = ["1.0"] }}, {{ name = "vllm.core.kv.pool.BlockPool.free", releases = ["2.0"] }}]

    [[steps]]
    title = "{last}"
    explain = "Back in the pool, then allocated again."
    vllm = [{{ name = "vllm.core.pool.BlockPool.{method}", releases = ["1.0"] }}, {{ name = "vllm.core.kv.pool.BlockPool.{method}", releases = ["2.0"] }}]
"""


def test_steps_chain_through_the_call_graph_at_every_pin(pins: FakePins, tmp_path: Path) -> None:
    # schedule -> _preempt(_request) -> BlockPool.free; allocate is a sibling called by schedule.
    write_mapping(tmp_path, "scheduler", SCHEDULER + STEPS.format(last="Allocate", method="allocate"))
    report = _verify(pins, tmp_path)
    assert report.ok, report.problems
    links = report.chains["scheduler"]["vllm@2.0"]
    assert [(link.index, link.source) for link in links] == [(1, None), (2, 1), (3, 2), (4, 1)]
    assert [s.callee for s in links[2].path] == ["vllm.core.kv.pool.BlockPool.free"]
    assert set(report.chains["scheduler"]) == {"vllm@1.0", "vllm@2.0"}
    quick = run_verify(pins.settings, load_mappings(tmp_path), None, reference=False, fetch=False, chains=False)
    assert quick.ok and quick.chains == {}  # --no-chains: names only, no call graphs built


def test_a_step_limited_to_a_release_is_a_route_not_an_absence_claim(pins: FakePins, tmp_path: Path) -> None:
    # schedule exists at both pins; a step naming it for 1.0 only says 1.0's route goes
    # through it (2.0's goes elsewhere), so no "also exists" note, unlike a side-table entry.
    steps = STEPS.format(last="Allocate", method="allocate").replace(
        'vllm = [{ name = "vllm.core.sched.Scheduler._preempt", releases = ["1.0"] }',
        'vllm = [{ name = "vllm.core.sched.Scheduler.schedule", releases = ["1.0"] }, '
        '{ name = "vllm.core.sched.Scheduler._preempt", releases = ["1.0"] }', 1)
    assert steps != STEPS.format(last="Allocate", method="allocate")
    write_mapping(tmp_path, "scheduler", SCHEDULER + steps)
    report = _verify(pins, tmp_path)
    assert report.ok, report.problems
    assert [n for n in report.notes if "limited by `releases`" in n.message] == []


def test_broken_chain_and_missing_step_symbol_fail_with_where(pins: FakePins, tmp_path: Path) -> None:
    # A step symbol that does not exist is stale; one that exists but is not reached
    # from any earlier step breaks the chain.
    write_mapping(tmp_path, "scheduler", SCHEDULER + STEPS.format(last="Gone", method="gone"))
    stale = _verify(pins, tmp_path)
    assert any(p.kind == "step" and p.name.endswith("BlockPool.gone") and "step 4 (Gone)" in p.message
               for p in stale.problems)
    # BlockPool.__init__ is called from Scheduler.__init__ only: no step reaches it.
    write_mapping(tmp_path, "scheduler", SCHEDULER + STEPS.format(last="Init", method="__init__"))
    broken = _verify(pins, tmp_path, ["vllm@1.0"])
    chain = [p for p in broken.problems if p.kind == "chain"]
    assert [(p.pin, p.name) for p in chain] == [("vllm@1.0", "step 4")], broken.problems
    assert "breaks at step 4 (Init)" in chain[0].message
    assert "BlockPool.__init__ is not reached from vllm.core.pool.BlockPool.free (step 3)" in chain[0].message


def test_a_bridge_declared_by_another_concept_joins_the_chain(pins: FakePins, tmp_path: Path) -> None:
    # Step 4 (BlockPool.__init__) is reached only across a bridge the *sampling* concept
    # declares: checking all concepts, or the scheduler alone against the whole catalogue
    # (what `atlas map verify --concept scheduler` does), crosses it.
    write_mapping(tmp_path, "scheduler", SCHEDULER + STEPS.format(last="Init", method="__init__"))
    write_mapping(tmp_path, "sampling", SAMPLING + """
    [vllm]
    status = "partial"
    note = "fake"
    symbols = [{ name = "vllm.core.pool.BlockPool", releases = ["1.0"] }]
    bridges = [{ name = "free-to-init", source = "vllm.core.pool.BlockPool.free", target = "vllm.core.pool.BlockPool.__init__", transport = "queue", releases = ["1.0"] }]
    """)
    everything = load_mappings(tmp_path)
    assert _verify(pins, tmp_path, ["vllm@1.0"]).ok
    alone = [c for c in everything if c.id == "scheduler"]
    report = run_verify(pins.settings, alone, ["vllm@1.0"], reference=False, fetch=False, catalogue=everything)
    assert report.ok, report.problems
    assert [s.via for s in report.chains["scheduler"]["vllm@1.0"][3].path] == ["bridge free-to-init (queue)"]
    # Without the catalogue the bridge is unknown and the chain breaks where it did before.
    unaware = run_verify(pins.settings, alone, ["vllm@1.0"], reference=False, fetch=False)
    assert [p.name for p in unaware.problems if p.kind == "chain"] == ["step 4"]


def test_a_declared_run_time_call_joins_the_chain_when_written_in_its_source(pins: FakePins, tmp_path: Path) -> None:
    # A call the call graph cannot follow (a registry, a swapped-in layer) may be declared with
    # the call as written in the caller: the chain crosses it, verify checks the text is really
    # in the caller's body and lists the hop as a call-graph gap (a note), not as a boundary.
    dispatch = """
    dispatch = [{{ source = "vllm.core.pool.BlockPool.free", target = "vllm.core.pool.BlockPool.__init__", call = "{call}", releases = ["1.0"] }}]
    """
    base = SCHEDULER.replace('envs = ["VLLM_FOO"', dispatch.format(call="self.free_ids.append(") + 'envs = ["VLLM_FOO"')
    write_mapping(tmp_path, "scheduler", base + STEPS.format(last="Init", method="__init__"))
    report = _verify(pins, tmp_path, ["vllm@1.0"])
    assert report.ok, report.problems
    link = report.chains["scheduler"]["vllm@1.0"][3]
    assert [s.via for s in link.path] == ["dispatch self.free_ids.append("] and link.bridges == []
    gaps = [n for n in report.notes if n.kind == "run-time call"]
    assert [n.name for n in gaps] == ["vllm.core.pool.BlockPool.free -> vllm.core.pool.BlockPool.__init__"]
    assert "BlockPool.free -> vllm.core.pool.BlockPool.__init__" in gaps[0].message
    # A call that is not written there is a stale declaration: a problem, with where.
    wrong = SCHEDULER.replace('envs = ["VLLM_FOO"', dispatch.format(call="self.model(") + 'envs = ["VLLM_FOO"')
    write_mapping(tmp_path, "scheduler", wrong + STEPS.format(last="Init", method="__init__"))
    stale = _verify(pins, tmp_path, ["vllm@1.0"])
    assert [p.message for p in stale.problems if p.kind == "dispatch"] == [
        "dispatch vllm.core.pool.BlockPool.free -> vllm.core.pool.BlockPool.__init__: "
        "vllm.core.pool.BlockPool.free has no call written 'self.model(' in vllm@1.0"]


def test_a_declared_run_time_call_the_call_graph_already_has_is_noted(pins: FakePins, tmp_path: Path) -> None:
    # Scheduler.schedule calls BlockPool.allocate in the fake tree: the declaration is redundant.
    dispatch = """
    dispatch = [{ source = "vllm.core.sched.Scheduler.schedule", target = "vllm.core.pool.BlockPool.allocate", call = "self.pool.allocate(", releases = ["1.0"] }]
    """
    base = SCHEDULER.replace('envs = ["VLLM_FOO"', dispatch + 'envs = ["VLLM_FOO"')
    write_mapping(tmp_path, "scheduler", base + STEPS.format(last="Allocate", method="allocate"))
    report = _verify(pins, tmp_path, ["vllm@1.0"])
    assert report.ok, report.problems
    assert [n.message for n in report.notes if n.kind == "dispatch"] == [
        "vllm@1.0: the call graph now has vllm.core.sched.Scheduler.schedule -> vllm.core.pool.BlockPool.allocate; "
        "the declared run-time call ('self.pool.allocate(') is no longer needed"]


def test_a_step_focus_must_be_written_in_a_step_symbol_at_every_pin(pins: FakePins, tmp_path: Path) -> None:
    # `focus` names lines a step's excerpt must show; like a dispatch's call, verify checks the
    # text is in the body of one of the step's symbols at every pin the focus claims.
    focused = STEPS.format(last="Allocate", method="allocate").replace(
        'vllm = ["vllm.core.sched.Scheduler.schedule"]',
        'vllm = { symbols = ["vllm.core.sched.Scheduler.schedule"], focus = ["TEXT"] }', 1)
    write_mapping(tmp_path, "scheduler", SCHEDULER + focused.replace("TEXT", "while self.waiting:"))
    report = _verify(pins, tmp_path)
    assert report.ok, report.problems
    write_mapping(tmp_path, "scheduler", SCHEDULER + focused.replace("TEXT", "if self.budget_left()"))
    stale = _verify(pins, tmp_path)
    assert sorted(p.pin for p in stale.problems if p.kind == "focus") == ["vllm@1.0", "vllm@2.0"]
    assert [p.message for p in stale.problems if p.pin == "vllm@1.0"] == [
        "step 1 (Schedule): no step symbol (vllm.core.sched.Scheduler.schedule) has 'if self.budget_left()' "
        "written in its body in vllm@1.0"]
