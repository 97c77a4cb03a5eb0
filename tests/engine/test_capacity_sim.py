"""The capacity simulator: the real scheduler driven on a simulated clock.

Checked here: it schedules exactly what the engine schedules (same steps, same tokens per
request per step, preemption and prefix hits included), its open loop sends at the load
generator's seeded times, the cost model fit recovers known coefficients, the max-rate
search brackets the objective, and the command's errors are clear. The comparison with the
real server under the load generator is benchmarks/capacity_validate.py (minutes, noisy).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from reference_engine.capacity.calibrate import calibration_shapes, measure_steps
from reference_engine.capacity.cost_model import FEATURES, StepCostModel, StepFeatures
from reference_engine.capacity.planner import LatencyObjective, max_rate, report_of
from reference_engine.capacity.simulator import SimRequest, Simulator, Traffic
from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.scheduler import SchedulerConfig, SchedulerOutput


def _cost(num_blocks: int, block_size: int, intercept: float = 1.0, **coef: float) -> StepCostModel:
    full = dict.fromkeys(FEATURES, 0.0)
    full.update(intercept=intercept, **coef)
    return StepCostModel(full, num_blocks, block_size, "test", 1)


def _step_plan(out: SchedulerOutput) -> list[tuple[str, int, int]]:
    return [(i.seq.request_id, i.start, i.num_new_tokens) for i in out.scheduled]


def _workload(seed: int) -> list[SimRequest]:
    rng = random.Random(seed)
    shared = [rng.randrange(16, 500) for _ in range(13)]
    reqs = []
    for _ in range(10):
        own = [rng.randrange(16, 500) for _ in range(rng.randrange(1, 30))]
        prompt = (shared[: rng.randrange(0, 14)] if rng.random() < 0.6 else []) + own
        reqs.append(SimRequest(prompt, rng.randrange(1, 14)))
    return reqs


@pytest.mark.parametrize(("num_blocks", "prefix"), [(64, "hash"), (14, "hash"), (14, "radix")])
def test_simulated_steps_equal_the_engine_steps(
    tiny_model_path: Path, num_blocks: int, prefix: str
) -> None:
    block_size, max_seqs, budget = 4, 4, 16
    reqs = _workload(num_blocks)
    engine = Engine(
        EngineConfig(
            model=str(tiny_model_path),
            num_gpu_blocks=num_blocks,
            block_size=block_size,
            max_num_seqs=max_seqs,
            max_num_batched_tokens=budget,
            prefix_caching=prefix,
        )
    )
    real: list[list[tuple[str, int, int]]] = []
    schedule = engine.scheduler.schedule

    def recording() -> SchedulerOutput:
        out = schedule()
        real.append(_step_plan(out))
        return out

    engine.scheduler.schedule = recording  # type: ignore[method-assign]
    for i, r in enumerate(reqs):
        params = SamplingParams(max_tokens=r.max_tokens, ignore_eos=True, temperature=0.0)
        engine.add_request(str(i), r.prompt_token_ids, params)
    while engine.has_unfinished_requests():
        engine.step()

    sim = Simulator(
        _cost(num_blocks, block_size),
        SchedulerConfig(max_num_seqs=max_seqs, max_num_batched_tokens=budget),
        prefix_caching=prefix,
        vocab_size=engine.model_config.vocab_size,
    )
    simulated: list[list[tuple[str, int, int]]] = []
    result = sim.run(
        Traffic(reqs, concurrency=len(reqs), num_requests=len(reqs)),
        on_step=lambda now, out: simulated.append(_step_plan(out)),
    )
    assert simulated == real
    if num_blocks == 14:  # the small pool preempts; the simulator must have done the same
        assert result.num_preemptions == engine.scheduler.num_preemptions > 0
    # One second per step: each request's first token comes at the step index it was sampled.
    first = {}
    for k, plan in enumerate(simulated, 1):
        for rid, start, n in plan:
            if start + n >= len(reqs[int(rid)].prompt_token_ids) and rid not in first:
                first[rid] = float(k)
    assert {str(i): r.ttft_s for i, r in enumerate(result.results)} == first
    assert all(
        r.output_tokens == req.max_tokens for r, req in zip(result.results, reqs, strict=True)
    )


def test_open_loop_arrivals_are_the_load_generators() -> None:
    reqs = [SimRequest([20 + i, 30, 40], 2) for i in range(5)]
    sim = Simulator(_cost(256, 4, intercept=1e-6), SchedulerConfig())
    result = sim.run(Traffic(reqs, rate=3.0, num_requests=12, seed=7))
    rng = random.Random(7)  # loadtest/runner.py: first at once, then exponential gaps
    expected, at = [], 0.0
    for _ in range(40):
        expected.append(at)
        at += rng.expovariate(3.0)
    assert [r.start for r in result.results] == pytest.approx(expected[:12])
    assert [r.prompt_tokens for r in result.results] == [3] * 12
    # Duration instead of a count: nothing arrives at or after it.
    timed = sim.run(Traffic(reqs, rate=3.0, duration_s=2.0, seed=7))
    assert [r.start for r in timed.results] == pytest.approx([t for t in expected if t < 2.0])


def test_cost_model_fit_recovers_coefficients_and_stays_non_negative(tmp_path: Path) -> None:
    rng = random.Random(0)
    truth = {"intercept": 2e-3, "prefill_tokens": 5e-5, "decode_seqs": 3e-4, "attention": 1e-4}
    samples = []
    for _ in range(200):
        f = StepFeatures(rng.randrange(0, 512), rng.randrange(0, 32), rng.uniform(0, 80))
        t = sum(truth[k] * x for k, x in zip(FEATURES, f.row(), strict=True))
        samples.append((f, t * rng.uniform(0.97, 1.03)))
    model = StepCostModel.fit(samples, num_blocks=10, block_size=16, model="x", threads=1)
    for k, v in truth.items():
        assert model.coef[k] == pytest.approx(v, rel=0.1), k
    assert model.fit_error["median"] < 0.03
    q = model.residual_quantiles_s  # the measured spread in seconds, around zero
    longest = max(t for _, t in samples)
    assert len(q) == 101 and q == sorted(q) and -0.03 * longest < q[0] < 0 < q[-1] < 0.03 * longest
    path = tmp_path / "cost.json"
    model.save(path)
    assert StepCostModel.load(path) == model
    # Attention that does not matter (times independent of it) must not come out negative.
    flat = [(f, 1e-3 + 1e-4 * f.decode_seqs - 1e-7 * f.attention) for f, _ in samples]
    fitted = StepCostModel.fit(flat, num_blocks=10, block_size=16, model="x", threads=1)
    assert min(fitted.coef.values()) >= 0.0
    bad = tmp_path / "bad.json"
    bad.write_text('{"coef": {"intercept": 1}}')
    with pytest.raises(ValueError, match="not a step-cost model"):
        StepCostModel.load(bad)


def test_max_rate_meets_the_objective_and_more_seqs_raise_it() -> None:
    reqs = [SimRequest(list(range(20, 20 + 24 + i % 9)), 16 + i % 5) for i in range(40)]
    cost = _cost(4096, 16, intercept=5e-3, decode_seqs=1e-3, prefill_tokens=1e-4)
    traffic = Traffic(reqs, rate=1.0, num_requests=200, seed=1)
    objective = LatencyObjective(ttft_p99_ms=150.0, tpot_p99_ms=40.0)
    rates = {}
    for seqs in (4, 16):
        sim = Simulator(cost, SchedulerConfig(max_num_seqs=seqs))
        best, probes = max_rate(sim, traffic, objective, iterations=8)
        assert best > 0
        ok = [p.rate for p in probes if p.ok]
        failed = [p.rate for p in probes if not p.ok]
        assert max(ok) == best and min(failed) > best  # the search brackets the answer
        at_best = report_of(sim.run(Traffic(reqs, rate=best, num_requests=200, seed=1)))
        assert objective.met_by(at_best)
        rates[seqs] = best
    # Four sequences at a time queue requests that sixteen would run: a lower sustainable rate.
    assert rates[16] > rates[4]


def test_calibration_measures_real_steps(tiny_model_path: Path) -> None:
    engine = Engine(
        EngineConfig(model=str(tiny_model_path), max_num_seqs=4, max_num_batched_tokens=64)
    )
    shapes = calibration_shapes(4, 64, engine.max_model_len)
    samples = measure_steps(engine, shapes, repeats=1, warmup_steps=0)
    assert not engine.has_unfinished_requests()
    assert all(t > 0 for _, t in samples)
    assert {f.decode_seqs for f, _ in samples} >= {1, 2, 4}  # every decode batch size
    assert max(f.prefill_tokens for f, _ in samples) == 64  # a full token budget of prefill
    assert engine.scheduler.schedule.__func__ is type(engine.scheduler).schedule  # restored
    model = StepCostModel.fit(samples, num_blocks=1, block_size=16, model="tiny", threads=1)
    assert model.coef["intercept"] > 0


def test_simulate_command(atlas_cache_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--cache-dir", str(atlas_cache_dir), "engine", "simulate"]
    cost = tmp_path / "cost.json"
    _cost(8192, 16, intercept=2e-3, decode_seqs=2e-4, prefill_tokens=2e-5).save(cost)
    result = runner.invoke(
        app, [*base, "--cost-model", str(cost), "-r", "2", "-r", "20", "-n", "40", "--json"]
    )
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [r["rate"] for r in runs] == [2.0, 20.0] and all(r["num_completed"] == 40 for r in runs)
    assert runs[1]["ttft_ms"]["p99"] >= runs[0]["ttft_ms"]["p50"] > 0
    result = runner.invoke(
        app,
        [*base, "--cost-model", str(cost), "-n", "60", "--slo-ttft-p99", "100",
         "--sweep", "max_num_seqs=2,32", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["max_rate"]
    assert [r["max_num_seqs"] for r in rows] == [2, 32]
    assert rows[1]["max_rate"] > rows[0]["max_rate"]
    for args, message in [
        (["--cost-model", str(cost), "--slo-ttft-p99", "1", "--sweep", "chunk=1"], "--sweep takes"),
        (["--cost-model", str(tmp_path / "missing.json"), "-r", "1"], "not a step-cost model"),
        (["--cost-model", str(cost)], "give --rate"),
    ]:
        bad = runner.invoke(app, [*base, *args])
        assert bad.exit_code == 2 and message in bad.output, bad.output


def test_shared_prefix_workload_keeps_the_rest_and_raises_the_sustainable_rate() -> None:
    from reference_engine.loadtest.workload import synthetic_workload

    plain = synthetic_workload(20, (4, 8), (4, 8), seed=3)
    shared = synthetic_workload(20, (4, 8), (4, 8), seed=3, shared_prefix_words=50)
    head = shared[0].prompt.split()[:50]
    assert all(r.prompt.split()[:50] == head for r in shared)
    assert [r.prompt.split()[50:] for r in shared] == [r.prompt.split() for r in plain]
    # Token ids standing for the shared words: prefix caching computes them once.
    reqs = [SimRequest([*range(100, 400), 500 + i], 8) for i in range(30)]
    cost = _cost(4096, 16, intercept=2e-3, prefill_tokens=2e-4, decode_seqs=1e-4)
    objective = LatencyObjective(ttft_p99_ms=80.0)
    rates = {}
    for prefix in ("none", "hash"):
        sim = Simulator(cost, SchedulerConfig(prefix_caching=prefix != "none"), prefix)
        rates[prefix], _ = max_rate(sim, Traffic(reqs, rate=1.0, num_requests=120), objective)
    assert rates["hash"] > 2 * rates["none"] > 0


def test_step_noise_widens_the_tail_not_the_middle() -> None:
    reqs = [SimRequest(list(range(20, 40)), 24) for _ in range(50)]
    cost = _cost(4096, 16, intercept=5e-3, decode_seqs=5e-4)
    # One step in ten takes 36 ms longer than the mean, the rest 4 ms less (mean ~kept).
    cost.residual_quantiles_s = [-4e-3] * 90 + [36e-3] * 11
    traffic = Traffic(reqs, rate=20.0, num_requests=200, seed=4)
    plain = report_of(Simulator(cost, SchedulerConfig()).run(traffic))
    noisy = report_of(Simulator(cost, SchedulerConfig(), noise=True).run(traffic))
    assert noisy.tpot_ms.p99 > 1.5 * plain.tpot_ms.p99
    assert noisy.itl_ms.p50 < plain.itl_ms.p50  # most steps are the fast ones
    again = report_of(Simulator(cost, SchedulerConfig(), noise=True).run(traffic))
    assert again == noisy  # seeded by the traffic: the same run twice


def test_step_recorder_logs_every_forward_step(tiny_model_path: Path, tmp_path: Path) -> None:
    from reference_engine.capacity.step_log import StepRecorder, read_steps

    engine = Engine(EngineConfig(model=str(tiny_model_path), max_num_batched_tokens=16))
    log = tmp_path / "steps.jsonl"
    StepRecorder.attach(engine, log)
    params = SamplingParams(max_tokens=3, ignore_eos=True, temperature=0.0)
    engine.add_request("a", list(range(20, 40)), params)  # 20 tokens: a 16 + 4 chunked prefill
    engine.add_request("b", [50, 51, 52], params)
    steps = 0
    while engine.has_unfinished_requests():
        engine.step()
        steps += 1
    recorded = read_steps(log)
    assert len(recorded) == steps and all(t > 0 for _, t in recorded)
    first, second = recorded[0][0], recorded[1][0]
    assert (first.prefill_tokens, first.decode_seqs) == (16, 0)
    assert (second.prefill_tokens, second.decode_seqs) == (4 + 3, 0)  # a's tail, b's prompt
    assert recorded[-1][0].decode_seqs >= 1 and recorded[-1][0].prefill_tokens == 0
    assert read_steps(log, skip=2) == recorded[2:]


def test_step_recorder_charges_the_busy_gaps_between_steps(
    tiny_model_path: Path, tmp_path: Path
) -> None:
    """A served engine thread spends time between steps (draining its queue, handing outputs
    to the event loop); the simulator's clock only moves by steps, so the recorded cost of a
    step must include the busy gap before it, and not an idle wait for the next arrival."""
    import time

    from reference_engine.capacity.step_log import StepRecorder, read_steps

    engine = Engine(EngineConfig(model=str(tiny_model_path)))
    log = tmp_path / "steps.jsonl"
    StepRecorder.attach(engine, log)
    params = SamplingParams(max_tokens=4, ignore_eos=True, temperature=0.0)
    busy_gap = 0.03
    for phase in range(2):
        engine.add_request(f"r{phase}", [20, 21, 22], params)
        while engine.has_unfinished_requests():
            engine.step()
            time.sleep(busy_gap)  # the serving loop's work between steps
        time.sleep(0.1)  # idle: no request in flight
    cycles, alone = read_steps(log), read_steps(log, with_gaps=False)
    assert len(cycles) == 8
    for k, ((_, cycle), (_, step)) in enumerate(zip(cycles, alone, strict=True)):
        if k % 4 == 0:  # the first step after idling: the idle wait is not charged
            assert cycle == step
        else:
            assert cycle >= step + busy_gap


def test_repeated_prompts_on_a_warm_server_break_the_cold_simulation(
    tiny_model_path: Path, tmp_path: Path
) -> None:
    """Why each phase of benchmarks/capacity_validate.py sends prompts of its own seed: the
    served engine's prefix cache outlives a phase, the simulator starts cold. Sending the
    same prompts again made the server skip most prefill the simulator charged for (13x
    fewer prefill tokens at 0.5x saturation), so the simulation over-predicted 2-6x and
    refits on cached calibration traffic swung the coefficients."""
    from reference_engine.capacity.step_log import StepRecorder, read_steps

    block_size, max_seqs, budget = 4, 4, 16
    engine = Engine(
        EngineConfig(
            model=str(tiny_model_path),
            num_gpu_blocks=256,
            block_size=block_size,
            max_num_seqs=max_seqs,
            max_num_batched_tokens=budget,
            prefix_caching="hash",
        )
    )
    log = tmp_path / "steps.jsonl"
    StepRecorder.attach(engine, log)
    sim = Simulator(
        _cost(256, block_size),
        SchedulerConfig(max_num_seqs=max_seqs, max_num_batched_tokens=budget),
        prefix_caching="hash",
        vocab_size=engine.model_config.vocab_size,
    )

    def serve(reqs: list[SimRequest], tag: str) -> list[StepFeatures]:
        before = len(log.read_text().splitlines()) if log.exists() else 0
        for i, r in enumerate(reqs):
            params = SamplingParams(max_tokens=r.max_tokens, ignore_eos=True, temperature=0.0)
            engine.add_request(f"{tag}-{i}", r.prompt_token_ids, params)
        while engine.has_unfinished_requests():
            engine.step()
        return [f for f, _ in read_steps(log, skip=before)]

    def simulate(reqs: list[SimRequest]) -> list[StepFeatures]:
        steps: list[StepFeatures] = []
        traffic = Traffic(reqs, concurrency=len(reqs), num_requests=len(reqs))
        sim.run(traffic, on_step=lambda now, out: steps.append(StepFeatures.of(out)))
        return steps

    first, fresh = _workload(101), _workload(202)
    assert serve(first, "a") == simulate(first)  # a cold server: step for step the same
    assert serve(fresh, "b") == simulate(fresh)  # warm, but new prompts: still the same
    repeated = serve(first, "c")
    cold = simulate(first)
    assert sum(f.prefill_tokens for f in repeated) < 0.5 * sum(f.prefill_tokens for f in cold)


def test_request_overhead_shifts_ttft_and_latency_not_the_steps(tmp_path: Path) -> None:
    reqs = [SimRequest(list(range(20, 40)), 8) for _ in range(20)]
    cost = _cost(4096, 16, intercept=2e-3, prefill_tokens=1e-4, decode_seqs=2e-4)
    traffic = Traffic(reqs, rate=100.0, num_requests=40, seed=1)
    plain = Simulator(cost, SchedulerConfig()).run(traffic)
    cost.request_overhead_s = 0.004
    served = Simulator(cost, SchedulerConfig()).run(traffic)
    assert served.num_steps == plain.num_steps
    for a, b in zip(plain.results, served.results, strict=True):
        assert b.ttft_s == pytest.approx(a.ttft_s + 0.004)
        assert b.latency_s == pytest.approx(a.latency_s + 0.004)
        assert b.itl_s == a.itl_s
    path = tmp_path / "cost.json"
    cost.save(path)
    assert StepCostModel.load(path).request_overhead_s == 0.004
    path.write_text(path.read_text().replace("0.004", "-1"))
    with pytest.raises(ValueError, match="request_overhead_s"):
        StepCostModel.load(path)
