"""Custom all-reduce algorithms on gloo, measured against the alpha-beta model.

alpha and beta come from benchmarks/parallel_bench.py's fit (all_reduce on two gloo ranks);
then 2 and 4 ranks time ring, recursive doubling, one-shot and two-shot
(reference_engine/distributed/custom_all_reduce.py) and gloo's own all_reduce over a few
message sizes, printed beside each algorithm's alpha-beta prediction and the ratio.

    python benchmarks/allreduce_bench.py [--repeats 20] [--max-world 4]

Ranks share a 2-core CPU: with 4 ranks two are always waiting for a core, so ratios grow
with the number of rounds (each round waits for the slowest rank). Read which algorithm
wins at which size, and whether the model orders them the same way; not the microseconds.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parallel_bench import fit_alpha_beta

from reference_engine.distributed.custom_all_reduce import (
    ALGORITHMS,
    predicted_seconds,
)

SIZES = [64, 8 << 10, 256 << 10]  # bytes per rank (float32)


def _rank(rank: int, world: int, init_file: str, out_file: str, repeats: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world,
        timeout=datetime.timedelta(seconds=120),
    )  # fmt: skip
    rows: list[tuple[str, int, float]] = []
    for size in SIZES:
        x = torch.ones(size // 4)
        runs = {"gloo all_reduce": lambda t: dist.all_reduce(t.clone())}
        for name, algo in ALGORITHMS.items():
            if name == "recursive_doubling" and world & (world - 1):
                continue
            runs[name] = lambda t, algo=algo: algo(t, None)
        for name, fn in runs.items():
            fn(x)  # warm the connections
            times = []
            for _ in range(repeats):
                dist.barrier()
                start = time.perf_counter()
                fn(x)
                times.append(time.perf_counter() - start)
            rows.append((name, size, statistics.median(times)))
    if rank == 0:
        torch.save(rows, out_file)
    dist.destroy_process_group()


def measure(world: int, repeats: int) -> list[tuple[str, int, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        init_file, out_file = os.path.join(tmp, "init"), os.path.join(tmp, "rows")
        ctx = mp.get_context("spawn")
        procs = [
            ctx.Process(target=_rank, args=(r, world, init_file, out_file, repeats))
            for r in range(world)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=600)
            if p.is_alive():
                p.kill()
                raise SystemExit(f"{world} ranks did not finish")
        return torch.load(out_file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--max-world", type=int, default=4, choices=[2, 4])
    args = parser.parse_args()
    alpha, beta, _ = fit_alpha_beta(args.repeats)
    print(f"alpha-beta fit (parallel_bench.fit_alpha_beta, 2 gloo ranks): "
          f"alpha = {alpha * 1e6:.1f} us, 1/beta = {1 / beta / 1e6:.0f} MB/s")  # fmt: skip
    print(f"{'ranks':>5} {'algorithm':<19} {'bytes':>8} {'measured us':>12} "
          f"{'model us':>9} {'ratio':>6}")  # fmt: skip
    for world in (2, 4)[: 1 if args.max_world == 2 else 2]:
        for name, size, t in measure(world, args.repeats):
            # gloo's own all_reduce is modelled as a ring (its algorithm for these sizes).
            algo = "ring" if name == "gloo all_reduce" else name
            model_t = predicted_seconds(algo, size, world, alpha, beta)
            print(f"{world:>5} {name:<19} {size:>8} {t * 1e6:>12.1f} "
                  f"{model_t * 1e6:>9.1f} {t / model_t:>6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
