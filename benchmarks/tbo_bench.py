"""Two-batch overlap: one expert-parallel MoE layer on 2 gloo ranks, plain vs overlapped.

Each rank builds the same FusedMoE (random weights, same seed) with its experts split over
the two ranks, then times the layer on the same tokens with the plain path (dispatch,
experts, combine in turn) and with two-batch overlap (distributed/two_batch_overlap.py).
Prints ms per layer call for both, the ratio, how long the overlapped path still blocked
on the wire (communication it did not hide), and the largest output difference.

    .venv/bin/python benchmarks/tbo_bench.py                      # 1024 tokens, hidden 512
    .venv/bin/python benchmarks/tbo_bench.py --tokens 4096 --repeats 10

On the 2-core machine the two ranks and gloo's transfer threads share the cores, so what
overlaps is the wire's waiting, not two busy processors.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reference_engine.distributed.parallel_state import (  # noqa: E402
    GroupCoordinator,
    ParallelState,
    building_with,
)
from reference_engine.distributed.two_batch_overlap import (  # noqa: E402
    TwoBatchOverlapStats,
    enable_two_batch_overlap,
)
from reference_engine.layers.fused_moe import FusedMoE  # noqa: E402


def _rank(rank: int, args: argparse.Namespace, init_file: str, out_file: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=2,
        timeout=datetime.timedelta(seconds=300),
    )  # fmt: skip
    state = ParallelState(ep=GroupCoordinator(rank, 2, dist.group.WORLD, (0, 1)))
    torch.manual_seed(0)
    with building_with(state):
        moe = FusedMoE(args.experts, 2, args.hidden, args.intermediate, renormalize=True)
    full = torch.randn(args.experts, 2 * args.intermediate, args.hidden, generator=torch.Generator().manual_seed(1)) * args.hidden**-0.5  # fmt: skip
    down = torch.randn(args.experts, args.hidden, args.intermediate, generator=torch.Generator().manual_seed(2)) * args.intermediate**-0.5  # fmt: skip
    with torch.no_grad():
        moe.w13_weight.copy_(full[moe.local_experts])
        moe.w2_weight.copy_(down[moe.local_experts])
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(args.tokens, args.hidden, generator=gen)
    logits = torch.randn(args.tokens, args.experts, generator=gen)
    results: dict[str, list[float]] = {"plain": [], "overlap": []}
    outs = {}
    with torch.no_grad():
        for _ in range(args.repeats + 1):  # the first round warms up
            for mode in ("plain", "overlap"):
                if mode == "overlap":
                    enable_two_batch_overlap(moe)
                else:
                    moe.overlap_stats = None  # type: ignore[attr-defined]
                dist.barrier()
                start = time.perf_counter()
                outs[mode] = moe(x, logits)
                results[mode].append(time.perf_counter() - start)
            stats: TwoBatchOverlapStats = moe.overlap_stats  # type: ignore[attr-defined]
            results.setdefault("wait", []).append(stats.wait_s)
    diff = float((outs["plain"] - outs["overlap"]).abs().max())
    if rank == 0:
        figures = {k: statistics.median(v[1:]) * 1e3 for k, v in results.items()}
        Path(out_file).write_text(json.dumps({**figures, "max_diff": diff}))
    dist.destroy_process_group()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--intermediate", type=int, default=1024)
    ap.add_argument("--experts", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        init_file, out_file = str(Path(tmp) / "init"), str(Path(tmp) / "out.json")
        ctx = mp.get_context("spawn")
        procs = [ctx.Process(target=_rank, args=(r, args, init_file, out_file)) for r in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=600)
            if p.exitcode != 0:
                raise SystemExit(f"a rank failed (exit code {p.exitcode})")
        f = json.loads(Path(out_file).read_text())
    print(f"EP=2 MoE layer, {args.tokens} tokens, hidden {args.hidden}, {args.experts} experts "
          f"top-2 (median of {args.repeats}, rank 0)")  # fmt: skip
    print(f"  plain    {f['plain']:8.2f} ms")
    print(f"  overlap  {f['overlap']:8.2f} ms   ({f['plain'] / f['overlap']:.2f}x; still waiting "
          f"on the wire {f['wait']:.2f} ms)")  # fmt: skip
    print(f"  max |plain - overlap| = {f['max_diff']:.2e}")


if __name__ == "__main__":
    main()
