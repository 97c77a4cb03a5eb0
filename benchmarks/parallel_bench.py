"""Communication cost of the distributed engine against the alpha-beta model, on gloo.

1. Fit: two gloo ranks time all_reduce over message sizes from 8 B to 4 MiB; a least-squares
   line t = alpha + beta * bytes_on_the_wire gives alpha (latency) and beta (seconds per byte)
   for this machine. Bytes on the wire per rank follow the book's derivations:
   all-reduce 2(N-1)/N * S, all-gather (N-1)/N * S_out, all-to-all (N-1)/N * S_sent.
2. Per scheme (TP=2, EP=2 on a Qwen3-MoE checkpoint, CP=2, PP=2), one workload through the
   engine; the driver's collectives are timed and their bytes counted, per step, and printed
   beside the alpha-beta prediction with the ratio measured / predicted. The ring exchange of
   CP and the stage-to-stage sends of PP are point-to-point and not in the table; PP prints
   its measured bubble fraction instead.
3. Output tokens/s of the same workload on one process and on each layout.
4. Pipeline bubble on a wider model: PP=2 running one step at a time against the batch
   queue (two consecutive scheduler steps over disjoint requests in flight), the measured
   bubble fraction 1 - sum(stage busy) / (stages * wall) (wall: while a step is in flight;
   "run bubble": over the whole run, the driver's scheduling and sampling included) and
   tokens/s of each, medians of --pp-repeats fresh engines.

    python benchmarks/parallel_bench.py [--requests 12] [--max-tokens 16] [--pp-only]

A collective timed inside the engine includes waiting for the slower rank to arrive (the
ranks share two cores, so one is often descheduled), which the alpha-beta model leaves
out: ratios far above 1 there measure that skew, not the wire.
Tiny models on a shared 2-core CPU: read the ratios, not the seconds. Several ranks on two
cores are slower than one process; the point is what the messages cost, not a speed-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [8, 512, 8 << 10, 64 << 10, 512 << 10, 4 << 20]


def _fit_rank(rank: int, init_file: str, out_file: str, repeats: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    rows = []
    for size in SIZES:
        x = torch.zeros(size // 4, dtype=torch.float32)
        dist.all_reduce(x)  # warm the connection
        times = []
        for _ in range(repeats):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(x)
            times.append(time.perf_counter() - start)
        rows.append((size, statistics.median(times)))
    if rank == 0:
        torch.save(rows, out_file)
    dist.destroy_process_group()


def fit_alpha_beta(repeats: int) -> tuple[float, float, list[tuple[int, float]]]:
    """alpha [s], beta [s/byte] from all-reduce on two gloo ranks (wire bytes = S)."""
    with tempfile.TemporaryDirectory() as tmp:
        init_file, out_file = os.path.join(tmp, "init"), os.path.join(tmp, "rows")
        ctx = mp.get_context("spawn")
        procs = [
            ctx.Process(target=_fit_rank, args=(r, init_file, out_file, repeats)) for r in range(2)
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=300)
            if p.is_alive():
                p.kill()
                raise SystemExit("the alpha-beta fit did not finish")
        rows: list[tuple[int, float]] = torch.load(out_file)
    wire = torch.tensor([2 * (2 - 1) / 2 * s for s, _ in rows], dtype=torch.float64)
    t = torch.tensor([t for _, t in rows], dtype=torch.float64)
    # Relative error: divide each row by its time, or the 4 MiB point alone sets the line.
    a = torch.stack([torch.ones_like(wire), wire], dim=1) / t[:, None]
    alpha, beta = torch.linalg.lstsq(a, torch.ones_like(t)[:, None]).solution[:, 0].tolist()
    return max(alpha, 0.0), beta, rows


class CollectiveLog:
    """Times and bytes of the driver's collectives (GroupCoordinator methods, wrapped)."""

    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[float, float]]] = defaultdict(list)  # (wire bytes, s)
        self._saved: dict[str, Callable[..., Any]] = {}

    def install(self) -> None:
        from reference_engine.distributed.parallel_state import GroupCoordinator

        def wrap(name: str, wire: Callable[..., float]) -> None:
            real = getattr(GroupCoordinator, name)
            self._saved[name] = real

            def timed(coord: GroupCoordinator, *args: Any, **kwargs: Any) -> Any:
                if coord.world_size == 1:
                    return real(coord, *args, **kwargs)
                start = time.perf_counter()
                out = real(coord, *args, **kwargs)
                n = coord.world_size
                self.calls[name].append((wire(n, args, out), time.perf_counter() - start))
                return out

            setattr(GroupCoordinator, name, timed)

        def nbytes(t: torch.Tensor) -> float:
            return float(t.numel() * t.element_size())

        wrap("all_reduce", lambda n, args, out: 2 * (n - 1) / n * nbytes(args[0]))
        wrap("all_gather", lambda n, args, out: (n - 1) / n * nbytes(out))
        wrap("all_to_all", lambda n, args, out: (n - 1) / n * nbytes(args[0]))

    def uninstall(self) -> None:
        from reference_engine.distributed.parallel_state import GroupCoordinator

        for name, real in self._saved.items():
            setattr(GroupCoordinator, name, real)


def moe_checkpoint(folder: Path) -> Path:
    from reference_engine.config import ModelConfig
    from reference_engine.tiny_model import (
        TINY_CONFIG,
        build_tokenizer,
        random_weights,
        write_checkpoint,
    )

    config = {
        **TINY_CONFIG,
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 64,
        "norm_topk_prob": True,
    }
    weights = random_weights(ModelConfig.from_dict(config), seed=0)
    write_checkpoint(folder, config, weights, build_tokenizer())
    return folder


def pipeline_checkpoint(folder: Path) -> Path:
    """A dense model wide enough that a stage's layers cost more than the Python around
    them, so the bubble fraction measures the schedule rather than the interpreter."""
    from reference_engine.config import ModelConfig
    from reference_engine.tiny_model import (
        TINY_CONFIG,
        build_tokenizer,
        random_weights,
        write_checkpoint,
    )

    config = {
        **TINY_CONFIG,
        "hidden_size": 512,
        "intermediate_size": 2048,
        "num_hidden_layers": 8,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 64,
    }
    weights = random_weights(ModelConfig.from_dict(config), seed=0)
    write_checkpoint(folder, config, weights, build_tokenizer())
    return folder


def run_workload(
    model: str | None, requests: int, max_tokens: int, batch_queue: bool = True, **layout: Any
) -> tuple[float, Any]:
    from reference_engine.config import EngineConfig
    from reference_engine.engine import Engine
    from reference_engine.sampling_params import SamplingParams

    engine = Engine(
        EngineConfig(model=model, max_num_seqs=requests, distributed_timeout_s=120, **layout)
    )
    if not batch_queue:
        engine.batch_queue = None  # pipeline parallelism: one step in flight at a time
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True)
    for i in range(requests):
        engine.add_request(str(i), [(7 * i + j) % 400 + 3 for j in range(24 + i)], params)
    start = time.perf_counter()
    while engine.has_unfinished_requests():
        engine.step()
    elapsed = time.perf_counter() - start
    stats = engine.stats()
    stage_times = getattr(engine.runner, "stage_times", None)
    engine.shutdown()
    return stats.num_generated_tokens / elapsed, (stats, stage_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--pp-only", action="store_true", help="only the pipeline bubble (4.)")
    parser.add_argument("--pp-repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if not args.pp_only:
        communication(args)
    pipeline_bubble(args)


def communication(args: argparse.Namespace) -> None:

    alpha, beta, rows = fit_alpha_beta(args.repeats)
    print(f"alpha-beta fit on gloo, 2 ranks: alpha = {alpha * 1e6:.1f} us, "
          f"1/beta = {1 / beta / 1e6:.0f} MB/s")  # fmt: skip
    print(f"{'all_reduce bytes':>18} {'measured us':>12} {'model us':>10} {'ratio':>6}")
    for size, t in rows:
        model_t = alpha + beta * size
        print(f"{size:>18} {t * 1e6:>12.1f} {model_t * 1e6:>10.1f} {t / model_t:>6.2f}")

    with tempfile.TemporaryDirectory() as tmp:
        moe = str(moe_checkpoint(Path(tmp) / "moe"))
        layouts: list[tuple[str, str | None, dict[str, int]]] = [
            ("dense 1 rank", None, {}),
            ("TP=2", None, {"tensor_parallel_size": 2}),
            ("PP=2", None, {"pipeline_parallel_size": 2}),
            ("CP=2", None, {"context_parallel_size": 2}),
            ("MoE 1 rank", moe, {}),
            ("EP=2", moe, {"expert_parallel_size": 2}),
        ]
        print(f"\n{'layout':<13} {'collective':<11} {'per step':>8} {'bytes':>9} "
              f"{'measured us':>12} {'model us':>9} {'ratio':>6}")  # fmt: skip
        speeds = []
        for name, model, layout in layouts:
            log = CollectiveLog()
            log.install()
            try:
                tok_s, (stats, stage_times) = run_workload(
                    model, args.requests, args.max_tokens, **layout
                )
            finally:
                log.uninstall()
            speeds.append((name, tok_s))
            for coll, calls in sorted(log.calls.items()):
                wire = statistics.mean(b for b, _ in calls)
                measured = statistics.median(t for _, t in calls)
                model_t = alpha + beta * wire
                print(f"{name:<13} {coll:<11} {len(calls) / stats.num_steps:>8.1f} {wire:>9.0f} "
                      f"{measured * 1e6:>12.1f} {model_t * 1e6:>9.1f} {measured / model_t:>6.2f}")  # fmt: skip
            if stage_times is not None and stage_times.steps:
                print(f"{name:<13} pipeline bubble fraction {stage_times.bubble_fraction:.2f} "
                      f"over {stage_times.steps} steps")  # fmt: skip
    print(f"\n{'layout':<13} {'output tok/s':>12}")
    for name, tok_s in speeds:
        print(f"{name:<13} {tok_s:>12.1f}")


def pipeline_bubble(args: argparse.Namespace) -> None:
    """PP=2 one step at a time against consecutive steps in flight (batch_queue.py), each
    run `--pp-repeats` times (a fresh engine each), medians printed."""
    with tempfile.TemporaryDirectory() as tmp:
        wide = str(pipeline_checkpoint(Path(tmp) / "wide"))
        # bubble: idle share of stage-time while a step is in flight (StageTimes); run
        # bubble: over the whole run, the driver's scheduling and sampling included.
        print(f"\n{'PP=2, 512-wide 8 layers':<22} {'in flight':>9} {'steps':>6} {'bubble':>7} "
              f"{'run bubble':>10} {'tok/s':>8}")  # fmt: skip
        base = statistics.median(
            run_workload(wide, args.requests, args.max_tokens)[0] for _ in range(args.pp_repeats)
        )
        print(f"{'1 process':<22} {'':>9} {'':>6} {'':>7} {'':>10} {base:>8.1f}")
        for name, queued in (("one step at a time", False), ("batch queue", True)):
            rows = []
            for _ in range(args.pp_repeats):
                tok_s, (stats, times) = run_workload(
                    wide, args.requests, args.max_tokens, batch_queue=queued,
                    pipeline_parallel_size=2,
                )  # fmt: skip
                elapsed = stats.num_generated_tokens / tok_s
                run_bubble = 1 - sum(times.busy_s) / (len(times.busy_s) * elapsed)
                rows.append((times.bubble_fraction, run_bubble, tok_s, times.steps))
            bubble, run_bubble, tok_s = (statistics.median(r[i] for r in rows) for i in range(3))
            depth = 2 if queued else 1
            print(f"{name:<22} {depth:>9} {rows[0][3]:>6} {bubble:>7.2f} {run_bubble:>10.2f} "
                  f"{tok_s:>8.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
