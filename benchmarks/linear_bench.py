"""Projection matmuls: plain F.linear (MKL) against oneDNN-prepacked weights, side by side.

    .venv/bin/python benchmarks/linear_bench.py              # 1 torch thread, float32
    .venv/bin/python benchmarks/linear_bench.py --threads 2

The shapes are engine_bench's model (hidden 512, 8 layers): q/k/v, o, gate/up and down
projections, for row counts from a lone decode to a full 512-token prefill chunk. Each
contender multiplies by 8 different weights per call (one per layer), so, as in a real
forward pass, the weights come from memory rather than a warm cache. Prints microseconds
per projection (median of interleaved rounds) and the packed path's speed-up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from reference_engine.layers.cpu_gemm import (  # noqa: E402
    pack_weight,
    packed_linear,
    packing_supported,
)

SHAPES = {"qkv": (512, 1024), "o": (512, 512), "gate_up": (512, 3072), "down": (1536, 512)}
ROWS = (1, 2, 8, 32, 128, 512)
LAYERS = 8


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if not packing_supported(torch.device("cpu"), torch.float32):
        sys.exit("this torch build has no oneDNN: nothing to compare")
    print(f"float32, torch threads {torch.get_num_threads()}; us per projection, plain / packed")
    print(f"{'':8s}" + "".join(f"{f'{r} rows':>22s}" for r in ROWS))
    gen = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for name, (k, n) in SHAPES.items():
            weights = [torch.randn(n, k, generator=gen) for _ in range(LAYERS)]
            packed = [pack_weight(w) for w in weights]
            cells = []
            for rows in ROWS:
                x = torch.randn(rows, k, generator=gen)
                torch.testing.assert_close(
                    packed_linear(x, packed[0], None), F.linear(x, weights[0]), rtol=1e-4, atol=1e-4
                )
                times: dict[str, list[float]] = {"plain": [], "packed": []}
                for _ in range(args.rounds):
                    t0 = time.perf_counter()
                    for w in weights:
                        F.linear(x, w)
                    t1 = time.perf_counter()
                    for p in packed:
                        packed_linear(x, p, None)
                    t2 = time.perf_counter()
                    times["plain"].append((t1 - t0) / LAYERS)
                    times["packed"].append((t2 - t1) / LAYERS)
                plain, fast = (1e6 * statistics.median(times[c]) for c in ("plain", "packed"))
                cells.append(f"{plain:7.0f} /{fast:6.0f} {plain / fast:4.2f}x")
            print(f"{name:8s}" + "".join(f"{c:>22s}" for c in cells))


if __name__ == "__main__":
    main()
