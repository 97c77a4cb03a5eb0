"""Structured output: per-step cost of the grammar bitmask vs unconstrained decoding.

    .venv/bin/python benchmarks/structured_output_bench.py [--model DIR]

At batch sizes 1 and 16, the same greedy requests run unconstrained and under a JSON
Schema (xgrammar). It prints the mean engine step time of each, their difference, and
the time spent inside StructuredOutputManager.apply (filling the bitmasks and masking the
logits), per step and per constrained row. Without --model the target is a random-weights
float32 Qwen3 (hidden 512, 8 layers, as engine_bench.py); the schema's fields are bounded
so a random model finishes it; unconstrained requests run 120 tokens each.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import torch  # noqa: E402

from reference_engine.config import EngineConfig  # noqa: E402
from reference_engine.engine import Engine  # noqa: E402
from reference_engine.sampling_params import SamplingParams  # noqa: E402
from reference_engine.structured_output import StructuredOutputsParams  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "tags": {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}, "maxItems": 4},
        "score": {"type": "integer", "minimum": 0, "maximum": 1000},
        "ok": {"type": "boolean"},
    },
    "required": ["name", "tags", "score", "ok"],
    "additionalProperties": False,
}


def timed_run(engine: Engine, prompts: list[str], params: list[SamplingParams]) -> tuple[float, float, int, int]:
    """(seconds in step(), seconds in the mask, steps, masked rows)."""
    mask_time = [0.0]
    rows = [0]
    apply = engine.structured.apply

    def timed_apply(logits: torch.Tensor, constrained: list[Any]) -> None:
        start = time.perf_counter()
        apply(logits, constrained)
        mask_time[0] += time.perf_counter() - start
        rows[0] += len(constrained)

    engine.structured.apply = timed_apply  # type: ignore[method-assign]
    for i, (p, sp) in enumerate(zip(prompts, params, strict=True)):
        engine.add_request(str(i), p, sp)
    steps, total = 0, 0.0
    while engine.has_unfinished_requests():
        start = time.perf_counter()
        engine.step()
        total += time.perf_counter() - start
        steps += 1
    engine.structured.apply = apply  # type: ignore[method-assign]
    return total, mask_time[0], steps, rows[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            from engine_bench import write_model

            model = write_model(Path(tmp) / "target", hidden=512, layers=8)
        print(f"model {model}; {args.threads} thread(s); JSON Schema with 4 bounded fields")
        print(f"{'batch':>5} {'plain ms/step':>13} {'json ms/step':>12} {'overhead':>9} "
              f"{'mask ms/step':>12} {'mask us/row':>11}")  # fmt: skip
        for batch in args.batch_sizes:
            prompts = [f"Record {i}:" for i in range(batch)]
            engine = Engine(EngineConfig(model=str(model), max_num_seqs=batch, prefix_caching="none"))
            constrained = [SamplingParams(temperature=0.0, max_tokens=120,
                                          structured_outputs=StructuredOutputsParams(json=SCHEMA))
                           for _ in prompts]  # fmt: skip
            timed_run(engine, prompts[:1], constrained[:1])  # warm-up: compile, caches
            total_c, mask, steps_c, rows = timed_run(engine, prompts, constrained)
            # Unconstrained: the same prompts, 120 tokens each (the figures are per step).
            plain = [SamplingParams(temperature=0.0, max_tokens=120, ignore_eos=True) for _ in prompts]
            total_p, _, steps_p, _ = timed_run(engine, prompts, plain)
            per_c, per_p = total_c / steps_c * 1e3, total_p / steps_p * 1e3
            print(f"{batch:>5} {per_p:>13.2f} {per_c:>12.2f} {per_c / per_p - 1:>8.1%} "
                  f"{mask / steps_c * 1e3:>12.3f} {mask / max(rows, 1) * 1e6:>11.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
