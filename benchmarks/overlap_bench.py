"""Overlap scheduling: how much of a step's CPU work hides behind the forward pass.

    .venv/bin/python benchmarks/overlap_bench.py [--model DIR] [--device cuda]

The same greedy workload (32 requests, varied prompts, 48 tokens each) runs with and
without EngineConfig.async_scheduling. It prints output tokens/s and mean step time of
each; for the overlapped engine, the CPU work per step (scheduling, batch building,
detokenizing and stop checks) split into the part done while a forward pass ran (hidden)
and the part done with nothing in flight (exposed), and the time spent waiting on the
forward. Outputs are checked equal. Without --model the target is a random-weights Qwen3
(hidden 512, 8 layers by default, as engine_bench.py); --hidden/--layers shrink it so the
CPU work is a larger share of the step. On a CPU the forward pass and the scheduler
share cores (the forward uses --threads), so the gain is bounded by the cores left over.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import torch  # noqa: E402

from reference_engine.config import EngineConfig  # noqa: E402
from reference_engine.engine import Engine  # noqa: E402
from reference_engine.sampling_params import SamplingParams  # noqa: E402


def run(engine: Engine, prompts: list[list[int]], max_tokens: int) -> tuple[float, int, list]:
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True)
    for i, p in enumerate(prompts):
        engine.add_request(str(i), p, params)
    finals: dict[str, list[int]] = {}
    steps = 0
    start = time.perf_counter()
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                finals[out.request_id] = out.outputs[0].token_ids
        steps += 1
    elapsed = time.perf_counter() - start
    if engine.overlap is not None:
        engine.overlap.drain()
    return elapsed, steps, [finals[str(i)] for i in range(len(prompts))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rng = random.Random(0)
    prompts = [[rng.randrange(3, 500) for _ in range(rng.randrange(4, 64))]
               for _ in range(args.requests)]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or __import__("engine_bench").write_model(
            Path(tmp) / "m", args.hidden, args.layers
        )
        print(f"model {model}; {args.device}; {args.threads} thread(s); "
              f"{args.requests} requests x {args.max_tokens} tokens")  # fmt: skip
        print(f"{'mode':>10} {'tok/s':>8} {'ms/step':>8} {'speedup':>8}  "
              f"{'CPU hidden ms/step':>18} {'CPU exposed ms/step':>19} {'wait ms/step':>12}")  # fmt: skip
        base = None
        tokens_seen = None
        for overlap in (False, True):
            cfg = EngineConfig(model=str(model), device=args.device, max_num_seqs=args.requests,
                               max_num_batched_tokens=512, async_scheduling=overlap)  # fmt: skip
            engine = Engine(cfg)
            run(engine, prompts[:2], 4)  # warm-up
            if engine.overlap is not None:
                engine.overlap.stats.__init__()  # type: ignore[misc]
            seconds, steps, tokens = run(engine, prompts, args.max_tokens)
            tps = args.requests * args.max_tokens / seconds
            base = base or tps
            line = f"{'overlap' if overlap else 'plain':>10} {tps:>8.1f} {seconds / steps * 1e3:>8.2f} {tps / base:>8.2f}"
            if engine.overlap is not None:
                s = engine.overlap.stats
                n = max(s.num_steps, 1)
                line += (f"  {s.cpu_overlapped_s / n * 1e3:>18.2f} {s.cpu_exposed_s / n * 1e3:>19.2f}"
                         f" {s.wait_s / n * 1e3:>12.2f}")  # fmt: skip
            print(line)
            if tokens_seen is not None:
                print("outputs equal:", tokens == tokens_seen)
            tokens_seen = tokens


if __name__ == "__main__":
    main()
