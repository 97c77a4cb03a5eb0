"""The capacity simulator against the real server under the real load generator.

Writes a random-weight model (hidden --hidden x --layers, big enough that a step is mostly
model work), starts `python -m reference_engine.server`'s command with a step recorder
attached to its engine (capacity/step_log.py: each step's features and wall time, appended
to a file), and then:

1. calibration traffic: closed loops of 1, 4 and max_num_seqs clients, and long prompts,
   each round with prompts of its own seed (the server's prefix cache outlives a phase and
   the simulator starts cold, so no phase may repeat another's prompts); the step-cost model
   is fitted on the steps the server ran, each with the busy gap before it (the serving
   loop's own work, and what the HTTP event loop sharing the interpreter costs the engine
   thread), again before each rate (--no-recalibrate: once);
2. validation traffic: for several Poisson rates below the simulator's predicted saturation,
   a workload of its own seed goes to the server (`atlas engine loadtest`'s runner) and to
   the simulator. Predicted and measured p50 / p99 TTFT and TPOT are printed side by side
   with the error: "predicted" draws each simulated step's time from the calibration's
   measured spread, "mean steps" uses the fitted mean only, "own steps" refits on that
   rate's own served steps (what is left is the simulator's error); then the served and
   simulated step counts and prefill tokens (they must agree: the same schedule).

    .venv/bin/python benchmarks/capacity_validate.py                    # 3 rates, 100 requests each
    .venv/bin/python benchmarks/capacity_validate.py --fractions 0.3,0.6 --requests 60

All traffic goes to 127.0.0.1. On a machine shared with other work the step times move with
the load between calibration and validation; the figures say so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from reference_engine.capacity.step_log import StepRecorder, read_steps  # noqa: E402


def _serve_recording(log: str, argv: list[str]) -> None:
    """Child mode: the server's own command, each Engine built with a step recorder."""
    from reference_engine.commands import engine_app
    from reference_engine.engine import Engine

    plain_init = Engine.__init__

    def init(self: Engine, *args: object, **kwargs: object) -> None:
        plain_init(self, *args, **kwargs)  # type: ignore[arg-type]
        StepRecorder.attach(self, Path(log))

    Engine.__init__ = init  # type: ignore[method-assign]
    engine_app(["serve", *argv], prog_name="capacity_validate --serve-recording")


def main() -> int:
    import torch
    from engine_bench import write_model
    from serve_bench import _free_port, _wait_healthy

    from reference_engine.capacity.cost_model import StepCostModel, StepFeatures
    from reference_engine.capacity.planner import report_of
    from reference_engine.capacity.simulator import SimRequest, Simulator, Traffic
    from reference_engine.config import EngineConfig
    from reference_engine.loader import load_model_config, load_tokenizer
    from reference_engine.loadtest.client import Target
    from reference_engine.loadtest.report import summarize
    from reference_engine.loadtest.runner import LoadPlan, run
    from reference_engine.loadtest.workload import LoadRequest, synthetic_workload
    from reference_engine.scheduler import SchedulerConfig

    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--max-num-seqs", type=int, default=16)
    ap.add_argument("--max-num-batched-tokens", type=int, default=512)
    ap.add_argument("--fractions", default="0.25,0.5,0.75", help="rates as fractions of saturation")
    ap.add_argument("--requests", type=int, default=100, help="requests per rate")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--recalibrate", action=argparse.BooleanOptionalAction, default=True,
        help="refit on fresh calibration traffic before each rate (the machine's load drifts)",
    )  # fmt: skip
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="atlas-capacity-") as tmp:
        model = write_model(Path(tmp) / "m", args.hidden, args.layers)
        cfg = EngineConfig(model=str(model), max_num_seqs=args.max_num_seqs,
                           max_num_batched_tokens=args.max_num_batched_tokens)  # fmt: skip
        model_config = load_model_config(cfg)
        tokenizer = load_tokenizer(model)
        log = Path(tmp) / "steps.jsonl"
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "ATLAS_CACHE_DIR": tmp}
        cmd = [sys.executable, __file__, "--serve-recording", str(log), "--model", str(model),
               "--port", str(port), "--torch-threads", str(args.threads),
               "--max-num-seqs", str(args.max_num_seqs),
               "--max-num-batched-tokens", str(args.max_num_batched_tokens),
               "--prefix-caching", "hash", "--graceful-timeout", "2"]  # fmt: skip
        server_log = (Path(tmp) / "server.log").open("w")
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=server_log, stderr=server_log)
        try:
            _wait_healthy(base, proc, 120)
            target = Target(base, "m", "completions", {"temperature": 0.0, "ignore_eos": True})

            # 1. calibration traffic, fitted on the served steps. Every phase (each refit, each
            # rate) sends prompts of its own seed: the server's prefix cache outlives a phase,
            # and a repeated prompt would be served from it while the simulator, which starts
            # cold, computes it (at 0.5x saturation that was 13x fewer served prefill tokens
            # than simulated, and refits on mostly cached prompts swung the coefficients).
            def calibration_plans(round_: int) -> list[LoadPlan]:
                s = args.seed + 1000 * (round_ + 2)  # clear of the validation seeds
                short = synthetic_workload(48, (16, 64), (16, 48), seed=s + 1)
                long = synthetic_workload(8, (150, 300), (4, 8), seed=s + 2)
                plans = [LoadPlan(short, concurrency=c, num_requests=n, seed=s + 1)
                         for c, n in ((1, 16), (4, 24), (args.max_num_seqs, 48))]  # fmt: skip
                plans.append(LoadPlan(long, concurrency=2, num_requests=8, seed=s + 2))
                return plans

            def calibrate_now(round_: int, skip_first: int) -> StepCostModel:
                t0 = time.perf_counter()
                before = len(log.read_text().splitlines()) if log.exists() else 0
                lone = None
                for plan in calibration_plans(round_):
                    result = asyncio.run(run(plan, target))
                    lone = lone or result  # the first plan: one client, each request alone
                fitted = StepCostModel.fit(
                    read_steps(log, skip=before + skip_first),
                    num_blocks=cfg.resolved_num_blocks(model_config), block_size=cfg.block_size,
                    model=f"hidden {args.hidden} x {args.layers}", threads=args.threads,
                )  # fmt: skip
                # A lone request's TTFT is its prefill step plus what serving adds outside
                # the steps (HTTP, tokenization, the way back): that remainder, per request.
                assert lone is not None
                rest = sorted(
                    r.ttft_s - fitted.predict(StepFeatures(r.prompt_tokens, 0,
                                                           r.prompt_tokens * (r.prompt_tokens + 1) / 2000))
                    for r in lone.results if r.ok and r.ttft_s is not None
                )  # fmt: skip
                fitted.request_overhead_s = max(0.0, rest[len(rest) // 2])
                print(f"calibration: {fitted.num_samples} served steps in "
                      f"{time.perf_counter() - t0:.1f} s; median step error "
                      f"{fitted.fit_error['median']:.1%}; "
                      + ", ".join(f"{k} {v * 1e3:.3g} ms" for k, v in fitted.coef.items())
                      + f"; request overhead {fitted.request_overhead_s * 1e3:.2f} ms"
                      + f" (lone prompts {sum(r.prompt_tokens for r in lone.results)} tokens)")  # fmt: skip
                return fitted

            asyncio.run(run(calibration_plans(-1)[0], target))  # warms the server up
            cost = calibrate_now(0, skip_first=0)

            def validation_workload(k: int) -> tuple[list[LoadRequest], list[SimRequest]]:
                texts = synthetic_workload(args.requests, (16, 64), (16, 48), seed=args.seed + k)
                return texts, [
                    SimRequest(tokenizer.encode(t.prompt, add_special_tokens=True), t.max_tokens)
                    for t in texts
                ]

            texts, requests = validation_workload(0)
            sched = SchedulerConfig(max_num_seqs=args.max_num_seqs,
                                    max_num_batched_tokens=args.max_num_batched_tokens)  # fmt: skip
            vocab = model_config.vocab_size
            sim = Simulator(cost, sched, "hash", vocab, noise=True)
            mean_only = Simulator(cost, sched, "hash", vocab)
            saturating = Traffic(requests, concurrency=2 * args.max_num_seqs, num_requests=400)
            closed = report_of(mean_only.run(saturating))
            saturation = closed.request_throughput
            print(f"predicted saturation: {saturation:.2f} req/s "
                  f"({closed.output_throughput:.0f} output tok/s)")  # fmt: skip
            # 2. validation traffic
            print(f"{'rate':>6} {'metric':>9} {'measured':>9} {'predicted':>16} "
                  f"{'mean steps':>16} {'own steps':>16}")  # fmt: skip
            cpu_per_hour = []
            errors: list[float] = []
            own_errors: list[float] = []
            drifts: list[float] = []
            for k, frac in enumerate(float(f) for f in args.fractions.split(",")):
                rate = frac * saturation
                if args.recalibrate and k > 0:
                    sim.cost = mean_only.cost = calibrate_now(k, skip_first=0)
                texts, requests = validation_workload(k)
                plan = LoadPlan(texts, rate=rate, num_requests=args.requests, seed=args.seed)
                before = len(log.read_text().splitlines())
                measured = asyncio.run(run(plan, target))
                served = read_steps(log, skip=before)
                drifts.append(sum(t for _, t in served)
                              / max(sum(sim.cost.predict(f) for f, _ in served), 1e-9))  # fmt: skip
                meas = summarize(measured.results, measured.wall_s, measured.loop_lag_s)
                traffic = Traffic(requests, rate=rate, num_requests=args.requests, seed=args.seed)
                sim_steps: list[StepFeatures] = []
                simulated = sim.run(traffic, on_step=lambda _, out, acc=sim_steps: acc.append(
                    StepFeatures.of(out)))  # fmt: skip
                # The simulated schedule must be the served one: same prefill work, similar steps.
                served_prefill = sum(f.prefill_tokens for f, _ in served)
                sim_prefill = sum(f.prefill_tokens for f in sim_steps)
                print(f"{'':6} {'steps':>9} served {len(served)}, simulated {len(sim_steps)}; "
                      f"prefill tokens served {served_prefill}, simulated {sim_prefill}"
                      + ("" if abs(served_prefill - sim_prefill) <= 0.02 * sim_prefill else
                         "  <- NOT the simulated work (prefix cache warm from another phase?)"))  # fmt: skip
                cpu_per_hour.append(simulated.cpu_s_per_simulated_hour)
                pred, pred_mean = report_of(simulated), report_of(mean_only.run(traffic))
                # The same simulation with the model refitted on this rate's own served steps:
                # what is left is the simulator's error, not the calibration's.
                own = StepCostModel.fit(served, num_blocks=sim.cost.num_blocks,
                                        block_size=sim.cost.block_size, model="own", threads=1)  # fmt: skip
                own.request_overhead_s = sim.cost.request_overhead_s
                pred_own = report_of(Simulator(own, sched, "hash", vocab, noise=True).run(traffic))
                for name in ("ttft_ms", "tpot_ms"):
                    for q in ("p50", "p99"):
                        a = getattr(getattr(meas, name), q)
                        b = getattr(getattr(pred, name), q)
                        c = getattr(getattr(pred_mean, name), q)
                        d = getattr(getattr(pred_own, name), q)
                        errors.append(abs(b - a) / a)
                        own_errors.append(abs(d - a) / a)
                        label = f"{name[:4].upper()} {q}"
                        print(f"{rate:6.2f} {label:>9} {a:9.1f} {b:9.1f} ({(b - a) / a:+4.0%}) "
                              f"{c:9.1f} ({(c - a) / a:+4.0%}) "
                              f"{d:9.1f} ({(d - a) / a:+4.0%})")  # fmt: skip
                print(f"{'':6} {'req/s':>9} {meas.request_throughput:9.2f} "
                      f"{pred.request_throughput:9.2f}   errors {meas.num_errors}, client lag "
                      f"p99 {meas.client_loop_lag_ms.p99:.0f} ms")  # fmt: skip
            print("validation steps took " + ", ".join(f"{d:.2f}x" for d in drifts)
                  + " the calibrated model's prediction, per rate (far from 1: the step "
                  "times moved between calibration and validation)")  # fmt: skip
            within = sum(e <= 0.15 for e in errors)
            print(f"within 15%: {within} of {len(errors)} predicted percentiles "
                  f"({sum(e <= 0.15 for e in own_errors)} with the model refitted on each "
                  "rate's own served steps)")  # fmt: skip
            print(f"simulation cost: {min(cpu_per_hour):.1f}-{max(cpu_per_hour):.1f} CPU s "
                  "per simulated hour of traffic")  # fmt: skip
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            server_log.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--serve-recording":
        _serve_recording(sys.argv[2], sys.argv[3:])
    else:
        raise SystemExit(main())
