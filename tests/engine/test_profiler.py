"""Profiling a window of steps: the trace is Chrome/Perfetto JSON with every phase of a
step and every layer kind of the model, the breakdown adds up, and the engine is left
exactly as it was (no ranges or hooks once the window closes; the same tokens)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from analyzer.cli import app
from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.profiler import PHASES, StepProfiler, profile_engine, trace_ranges
from reference_engine.sampling_params import SamplingParams
from tests.engine.conftest import CheckpointFactory


def _engine(model: Path) -> Engine:
    return Engine(EngineConfig(model=str(model), dtype="float64", num_gpu_blocks=64, block_size=4))


def _add(engine: Engine) -> None:
    params = SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True)
    for i, prompt in enumerate([[5, 6, 7, 8, 9, 10, 11], [20, 21, 22], [30, 31, 32, 33, 34]]):
        engine.add_request(str(i), prompt, params)


def _tokens(engine: Engine, profile_steps: int | None) -> dict[str, list[int]]:
    finals: dict[str, list[int]] = {}

    def keep(outs: list) -> None:
        finals.update({o.request_id: o.outputs[0].token_ids for o in outs if o.finished})

    if profile_steps is None:
        while engine.has_unfinished_requests():
            keep(engine.step())
    else:
        profile_engine(engine, 1, profile_steps, keep)
    return finals


def test_trace_has_every_phase_and_layer_kind_and_engine_is_restored(
    random_checkpoint: CheckpointFactory, tmp_path: Path
) -> None:
    model = random_checkpoint("qwen3_moe")  # a dense and a MoE layer: two MLP kinds
    plain = _engine(model)
    _add(plain)
    expected = _tokens(plain, None)

    engine = _engine(model)
    _add(engine)
    engine.step()
    profiler = StepProfiler(engine)
    with profiler:
        list(profiler.steps(3))
    trace = profiler.export(tmp_path / "trace.json")

    events = json.loads(trace.read_text())["traceEvents"]  # loads as Chrome trace JSON
    assert events
    ranges = trace_ranges(trace)
    for phase in (*PHASES, "step"):
        assert ranges.get(phase, 0.0) > 0.0, f"no {phase} range in the trace"
    kinds = {k.removeprefix("layer/") for k in ranges if k.startswith("layer/")}
    assert {"norm", "embedding", "lm_head"} <= kinds and any("Attention" in k for k in kinds)
    assert any("Moe" in k for k in kinds) and any("MLP" in k and "Moe" not in k for k in kinds), kinds

    b = profiler.breakdown()
    assert b.num_steps == 3
    # Phases are disjoint parts of the step; layer kinds are disjoint parts of forward.
    assert sum(b.phases_ms.values()) <= b.step_ms * 1.001
    assert sum(b.layer_kinds_ms.values()) <= b.phases_ms["forward"] * 1.001

    # The window closed: no wrapper, no hook is left on the engine or its model.
    assert "_forward" not in vars(engine) and "schedule" not in vars(engine.scheduler)
    assert "step" not in vars(engine.stop_checker)
    for module in engine.runner.model.modules():
        assert not module._forward_hooks and not module._forward_pre_hooks
    while engine.has_unfinished_requests():
        engine.step()

    again = _engine(model)
    _add(again)
    assert _tokens(again, 3) == expected  # profiling changes no token


def test_profile_command_and_run_profile(atlas_cache_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "p.json"
    base = ["--cache-dir", str(atlas_cache_dir), "engine"]
    result = runner.invoke(
        app,
        [*base, "profile", "-o", str(out), "--num-prompts", "2", "--prompt-len", "8",
         "--max-tokens", "4", "--warmup-steps", "0", "--steps", "3", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["num_steps"] == 3 and set(figures["phases_ms"]) == set(PHASES)
    assert trace_ranges(out)["forward"] > 0

    run_trace = tmp_path / "run.json"
    result = runner.invoke(
        app, [*base, "run", "-p", "hello", "--max-tokens", "3", "--profile", str(run_trace)]
    )
    assert result.exit_code == 0, result.output
    assert "detokenize" in result.output and "output:" in result.output
    assert trace_ranges(run_trace)["sample"] > 0

    refused = runner.invoke(
        app, [*base, "run", "-p", "hi", "--async-scheduling", "--profile", str(run_trace)]
    )
    assert refused.exit_code == 2 and "--async-scheduling" in refused.output
