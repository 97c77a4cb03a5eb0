"""Quantization on the trained code model: perplexity, bytes and speed in one table.

    .venv/bin/python benchmarks/quant_bench.py                    # default trained model
    .venv/bin/python benchmarks/quant_bench.py --variant small    # the small one, faster
    .venv/bin/python benchmarks/quant_bench.py --device cuda

For full precision and each scheme (weights int8 / int4 / fp8 on the fly; KV cache int8 /
fp8; int4 weights with an int8 cache) it prints:
  * held-out perplexity on files the model never trained on (reference_engine/
    trained_model.py), through the serving path: each window prefilled in chunks, so later
    chunks read their context from the (possibly quantized) paged KV cache; and its ratio
    to full precision;
  * weight bytes of the decoder projections and of the whole model; KV bytes per token;
  * output tokens/s of the engine generating greedily for a batch of prompts.

Weights-only schemes save memory, not time, here: each quantized projection dequantizes
128-row tiles in plain PyTorch before a float matmul (no int4/fp8 kernels on a CPU), while
the float32 path multiplies with oneDNN-prepacked weights. Read tokens/s as the cost of
the readable path, not as what a fused kernel would do.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import torch

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.layers.linear import Linear
from reference_engine.layers.quantization.linear import QuantizedLinear
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.perplexity import runner_perplexity
from reference_engine.sampling_params import SamplingParams
from reference_engine.trained_model import NOTICE, heldout_text, trained_model_dir

ROWS: list[tuple[str, str | None, str]] = [
    ("float32", None, "auto"),
    ("W8A16 int8 per-channel", "int8", "auto"),
    ("W4A16 int4 group 128", "int4", "auto"),
    ("FP8 e4m3 128x128 blocks", "fp8", "auto"),
    ("KV cache int8", None, "int8"),
    ("KV cache fp8", None, "fp8"),
    ("int4 weights + int8 KV", "int4", "int8"),
]


def projection_bytes(model: torch.nn.Module) -> int:
    total = 0
    for m in model.modules():
        if isinstance(m, QuantizedLinear):
            total += m.weight_bytes()
        elif isinstance(m, Linear) and m is not getattr(model, "lm_head", None):
            total += m.weight.numel() * m.weight.element_size()
    return total


def tokens_per_s(folder: Path, prompts: list[list[int]], max_tokens: int, **kw: Any) -> float:
    engine = Engine(EngineConfig(model=str(folder), **kw))
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True)
    engine.add_request("warm", prompts[0][:8], SamplingParams(temperature=0.0, max_tokens=2))
    while engine.has_unfinished_requests():
        engine.step()
    for i, p in enumerate(prompts):
        engine.add_request(str(i), p, params)
    start = time.perf_counter()
    n = 0
    while engine.has_unfinished_requests():
        n += sum(len(o.outputs[0].token_ids_delta) for o in engine.step())
    return n / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", default="default")
    ap.add_argument("--eval-tokens", type=int, default=8192)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path, help="Also write the figures here.")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    folder = trained_model_dir(args.variant)
    print(f"note: {NOTICE}.")
    cfg_raw = json.loads((folder / "config.json").read_text())
    window = int(cfg_raw["atlas_trained"]["trained_context"])
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    ids = tok.encode(heldout_text(folder)).ids
    eval_ids = ids[: args.eval_tokens]
    prompts = [ids[i * 97 : i * 97 + 48] for i in range(args.prompts)]

    results = []
    base_ppl = None
    for label, quant, kv in ROWS:
        kw: dict[str, Any] = {"quantization": quant, "kv_cache_dtype": kv, "device": args.device}
        ecfg = EngineConfig(model=str(folder), num_gpu_blocks=64, **kw)
        runner = ModelRunner(load_model_config(ecfg), ecfg)
        ppl = runner_perplexity(runner, eval_ids, window=window, chunk=64)
        base_ppl = base_ppl or ppl
        row = {
            "scheme": label,
            "perplexity": ppl,
            "ppl_ratio": ppl / base_ppl,
            "projection_bytes": projection_bytes(runner.model),
            "weight_bytes": runner.weight_bytes,
            "kv_bytes_per_token": runner.kv_bytes_per_token,
            "tokens_per_s": tokens_per_s(folder, prompts, args.max_tokens, **kw),
        }
        del runner
        results.append(row)
        print(
            f"{label:26s} ppl {row['perplexity']:8.3f} ({row['ppl_ratio']:.4f}x)  "
            f"proj {row['projection_bytes'] / 1e6:6.2f} MB  all {row['weight_bytes'] / 1e6:6.2f} MB"
            f"  KV/token {row['kv_bytes_per_token']:5d} B  {row['tokens_per_s']:7.1f} tok/s",
            flush=True,
        )
    print(
        f"\n{args.variant} model, {len(eval_ids)} held-out tokens, windows of {window}, "
        f"{args.prompts} prompts x {args.max_tokens} greedy tokens, {args.threads} thread(s), "
        f"{args.device}"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
