"""The capacity simulator against the real server under the real load generator.

Writes a random-weight model (hidden --hidden x --layers, big enough that a step is mostly
model work, not HTTP), fits the step-cost model on this machine (capacity/calibrate.py),
starts `python -m reference_engine.server` with the same knobs, and for several Poisson rates
below the simulator's predicted saturation sends the same seeded traffic to the server
(`atlas engine loadtest`'s runner) and to the simulator. Prints predicted and measured p50 /
p99 TTFT and TPOT side by side with the error, then what the simulation cost.

    .venv/bin/python benchmarks/capacity_validate.py                    # 3 rates, 60 requests each
    .venv/bin/python benchmarks/capacity_validate.py --fractions 0.3,0.6 --requests 40

Saturation is the simulator's closed-loop throughput at 2 x max_num_seqs clients; rates are
fractions of it. All traffic goes to 127.0.0.1.
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
        )  # fmt: skip
        del engine
        gc.collect()
        closed = report_of(
            sim.run(Traffic(requests, concurrency=2 * args.max_num_seqs, num_requests=400))
        )
        saturation = closed.request_throughput
        print(f"predicted saturation: {saturation:.2f} req/s "
              f"({closed.output_throughput:.0f} output tok/s)")  # fmt: skip

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
            header = (f"{'rate':>6} {'req/s meas/pred':>16} "
                      + " ".join(f"{m + ' ' + q:>24}" for m in ("TTFT", "TPOT") for q in ("p50", "p99")))  # fmt: skip
            print(header)
            print(f"{'':>6} {'':>16} " + " ".join(f"{'meas / pred (err)':>24}" for _ in range(4)))
            cpu_per_hour = []
            for frac in (float(f) for f in args.fractions.split(",")):
                rate = frac * saturation
                plan = LoadPlan(texts, rate=rate, num_requests=args.requests, seed=args.seed)
                measured = asyncio.run(run(plan, target))
                meas = summarize(measured.results, measured.wall_s, measured.loop_lag_s)
                simulated = sim.run(Traffic(requests, rate=rate, num_requests=args.requests,
                                            seed=args.seed))  # fmt: skip
                cpu_per_hour.append(simulated.cpu_s_per_simulated_hour)
                pred = report_of(simulated)
                cells = []
                for m, p in ((meas.ttft_ms, pred.ttft_ms), (meas.tpot_ms, pred.tpot_ms)):
                    for q in ("p50", "p99"):
                        a, b = getattr(m, q), getattr(p, q)
                        cells.append(f"{a:8.1f} / {b:7.1f} ({(b - a) / a:+5.0%})")
                print(f"{rate:6.2f} {meas.request_throughput:7.2f}/{pred.request_throughput:<8.2f} "
                      + " ".join(f"{c:>24}" for c in cells)
                      + f"   errors {meas.num_errors}, client lag p99 {meas.client_loop_lag_ms.p99:.0f} ms")  # fmt: skip
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
