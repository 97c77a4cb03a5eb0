"""The capacity simulator against the real server under the real load generator.

Writes a random-weight model (hidden --hidden x --layers, big enough that a step is mostly
model work, not HTTP), fits the step-cost model on this machine (capacity/calibrate.py),
starts `python -m reference_engine.server` with the same knobs, and for several Poisson rates
below the simulator's predicted saturation sends the same seeded traffic to the server
(`atlas engine loadtest`'s runner) and to the simulator. Prints predicted and measured p50 /
p99 TTFT and TPOT side by side with the error, then what the simulation cost.

    .venv/bin/python benchmarks/capacity_validate.py                    # 3 rates, 60 requests each
    .venv/bin/python benchmarks/capacity_validate.py --fractions 0.3,0.6 --requests 40

Served steps run slower than the engine's steps measured alone (the HTTP event loop shares
the interpreter with the engine thread; the load generator shares the cores), so one served
closed-loop run (--scale-concurrency clients) sets the cost model's `scale`: measured over
simulated mean TPOT of that same run. The open-loop rates are then predictions; the rows show
them drawing each step's time from the calibration's measured spread (predicted) and with
the fitted mean only (mean steps). Saturation is the simulator's closed-loop throughput
at 2 x max_num_seqs clients; rates are fractions of it. All traffic goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_bench import write_model  # noqa: E402
from serve_bench import _free_port, _wait_healthy  # noqa: E402

from reference_engine.capacity.calibrate import calibrate  # noqa: E402
from reference_engine.capacity.planner import report_of  # noqa: E402
from reference_engine.capacity.simulator import SimRequest, Simulator, Traffic  # noqa: E402
from reference_engine.config import EngineConfig  # noqa: E402
from reference_engine.engine import Engine  # noqa: E402
from reference_engine.loadtest.client import Target  # noqa: E402
from reference_engine.loadtest.report import summarize  # noqa: E402
from reference_engine.loadtest.runner import LoadPlan, run  # noqa: E402
from reference_engine.loadtest.workload import synthetic_workload  # noqa: E402
from reference_engine.scheduler import SchedulerConfig  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--max-num-seqs", type=int, default=16)
    ap.add_argument("--max-num-batched-tokens", type=int, default=512)
    ap.add_argument("--fractions", default="0.25,0.5,0.75", help="rates as fractions of saturation")
    ap.add_argument("--requests", type=int, default=60, help="requests per rate")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale-concurrency", type=int, default=8, help="0: keep scale 1")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    knobs = {
        "max_num_seqs": args.max_num_seqs,
        "max_num_batched_tokens": args.max_num_batched_tokens,
        "prefix_caching": "hash",
    }
    with tempfile.TemporaryDirectory(prefix="atlas-capacity-") as tmp:
        model = write_model(Path(tmp) / "m", args.hidden, args.layers)
        engine = Engine(EngineConfig(model=str(model), **knobs))  # type: ignore[arg-type]
        t0 = time.perf_counter()
        cost = calibrate(engine, f"hidden {args.hidden} x {args.layers}", args.threads)
        print(f"calibration: {cost.num_samples} steps in {time.perf_counter() - t0:.1f} s; "
              f"median step error {cost.fit_error['median']:.1%}; "
              + ", ".join(f"{k} {v * 1e3:.3g} ms" for k, v in cost.coef.items()))  # fmt: skip
        texts = synthetic_workload(args.requests, (16, 64), (16, 48), seed=args.seed)
        requests = [
            SimRequest(engine.tokenizer.encode(t.prompt, add_special_tokens=True), t.max_tokens)
            for t in texts
        ]
        sim = Simulator(
            cost,
            SchedulerConfig(max_num_seqs=args.max_num_seqs,
                            max_num_batched_tokens=args.max_num_batched_tokens),
            prefix_caching="hash",
            vocab_size=engine.model_config.vocab_size,
            noise=True,
        )  # fmt: skip
        del engine
        gc.collect()
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "ATLAS_CACHE_DIR": tmp}
        cmd = [sys.executable, "-m", "reference_engine.server", "--model", str(model),
               "--port", str(port), "--torch-threads", str(args.threads),
               "--max-num-seqs", str(args.max_num_seqs),
               "--max-num-batched-tokens", str(args.max_num_batched_tokens),
               "--prefix-caching", "hash", "--graceful-timeout", "2"]  # fmt: skip
        log = (Path(tmp) / "server.log").open("w")
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=log, text=True)
        try:
            _wait_healthy(base, proc, 120)
            target = Target(base, "m", "completions", {"temperature": 0.0, "ignore_eos": True})
            warm = LoadPlan(texts, concurrency=4, num_requests=8, seed=args.seed)
            asyncio.run(run(warm, target))
            if args.scale_concurrency:
                closed_plan = LoadPlan(texts, concurrency=args.scale_concurrency,
                                       num_requests=args.requests, seed=args.seed)  # fmt: skip
                served = asyncio.run(run(closed_plan, target))
                served_tpot = summarize(served.results, served.wall_s).tpot_ms.mean
                simulated_closed = report_of(sim.run(Traffic(
                    requests, concurrency=args.scale_concurrency, num_requests=args.requests,
                    seed=args.seed)))  # fmt: skip
                sim.cost.scale = served_tpot / simulated_closed.tpot_ms.mean
            print(f"serving scale: {sim.cost.scale:.2f} (served / simulated mean TPOT, closed "
                  f"loop, {args.scale_concurrency} clients)")  # fmt: skip
            closed = report_of(
                sim.run(Traffic(requests, concurrency=2 * args.max_num_seqs, num_requests=400))
            )
            saturation = closed.request_throughput
            print(f"predicted saturation: {saturation:.2f} req/s "
                  f"({closed.output_throughput:.0f} output tok/s)")  # fmt: skip
            mean_only = Simulator(sim.cost, sim.scheduler_config, "hash", sim.vocab_size)
            print(f"{'rate':>6} {'metric':>9} {'measured':>9} {'predicted':>16} "
                  f"{'mean steps':>16}")  # fmt: skip
            cpu_per_hour = []
            errors: list[float] = []
            for frac in (float(f) for f in args.fractions.split(",")):
                rate = frac * saturation
                plan = LoadPlan(texts, rate=rate, num_requests=args.requests, seed=args.seed)
                measured = asyncio.run(run(plan, target))
                meas = summarize(measured.results, measured.wall_s, measured.loop_lag_s)
                traffic = Traffic(requests, rate=rate, num_requests=args.requests, seed=args.seed)
                simulated = sim.run(traffic)
                cpu_per_hour.append(simulated.cpu_s_per_simulated_hour)
                pred, pred_raw = report_of(simulated), report_of(mean_only.run(traffic))
                for name in ("ttft_ms", "tpot_ms"):
                    for q in ("p50", "p99"):
                        a = getattr(getattr(meas, name), q)
                        b = getattr(getattr(pred, name), q)
                        c = getattr(getattr(pred_raw, name), q)
                        errors.append(abs(b - a) / a)
                        label = f"{name[:4].upper()} {q}"
                        print(f"{rate:6.2f} {label:>9} {a:9.1f} {b:9.1f} ({(b - a) / a:+4.0%}) "
                              f"{c:9.1f} ({(c - a) / a:+4.0%})")  # fmt: skip
                print(f"{'':6} {'req/s':>9} {meas.request_throughput:9.2f} "
                      f"{pred.request_throughput:9.2f}   errors {meas.num_errors}, client lag "
                      f"p99 {meas.client_loop_lag_ms.p99:.0f} ms")  # fmt: skip
            within = sum(e <= 0.15 for e in errors)
            print(f"within 15%: {within} of {len(errors)} predicted percentiles")
            print(f"simulation cost: {min(cpu_per_hour):.1f}-{max(cpu_per_hour):.1f} CPU s "
                  "per simulated hour of traffic")  # fmt: skip
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
