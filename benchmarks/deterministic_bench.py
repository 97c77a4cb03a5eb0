"""Deterministic (batch-invariant) mode: what it costs in throughput, and what it buys.

    .venv/bin/python benchmarks/deterministic_bench.py [--model DIR] [--dtype bfloat16]

One workload (16 greedy requests of varied prompt lengths, 32 tokens each) runs with and
without EngineConfig.deterministic; it prints output tokens/s of each and their ratio. Then
one request runs alone and inside the batch, in each mode, and the script prints whether
its logprobs were bitwise identical and the largest difference seen. Without --model the
target is a random-weights Qwen3 (hidden 512, 8 layers, as engine_bench.py).
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


def run(engine: Engine, prompts: list[list[int]], params: SamplingParams) -> tuple[float, dict]:
    for i, p in enumerate(prompts):
        engine.add_request(str(i), p, params)
    finals = {}
    start = time.perf_counter()
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                finals[out.request_id] = out.outputs[0]
    return time.perf_counter() - start, finals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rng = random.Random(0)
    prompts = [[rng.randrange(3, 500) for _ in range(rng.randrange(8, 96))] for _ in range(16)]
    params = SamplingParams(temperature=0.0, max_tokens=32, ignore_eos=True, logprobs=5)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or __import__("engine_bench").write_model(Path(tmp) / "m", 512, 8)
        print(f"model {model}; {args.dtype}; {args.threads} thread(s); 16 requests x 32 tokens")
        print(f"{'mode':>13} {'tok/s':>8} {'vs plain':>8}  {'alone == batched':>16} {'max |diff|':>10}")
        plain_tps = 0.0
        for deterministic in (False, True):
            cfg = EngineConfig(model=str(model), dtype=args.dtype, max_num_seqs=16,
                               max_num_batched_tokens=256, prefix_caching="none",
                               deterministic=deterministic)  # fmt: skip
            engine = Engine(cfg)
            run(engine, prompts[:1], SamplingParams(max_tokens=2))  # warm-up
            seconds, batched = run(engine, prompts, params)
            tps = 16 * 32 / seconds
            plain_tps = plain_tps or tps
            _, alone = run(engine, prompts[:1], params)
            a, b = alone["0"].logprobs, batched["0"].logprobs
            same = [{t: lp.logprob for t, lp in e.items()} for e in a] == [
                {t: lp.logprob for t, lp in e.items()} for e in b
            ]
            diff = max(
                abs(x.logprob - y.logprob) for ea, eb in zip(a, b, strict=True)
                for t, x in ea.items() if (y := eb.get(t)) is not None
            )  # fmt: skip
            name = "deterministic" if deterministic else "plain"
            print(f"{name:>13} {tps:>8.1f} {tps / plain_tps:>8.2f}  {same!s:>16} {diff:>10.2e}")


if __name__ == "__main__":
    main()
