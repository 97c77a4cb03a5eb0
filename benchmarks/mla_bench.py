"""MLA against grouped-query attention: KV bytes per token, and decode speed of MLA's two paths.

    .venv/bin/python benchmarks/mla_bench.py              # 1 torch thread, float32
    .venv/bin/python benchmarks/mla_bench.py --context 1024 --batch 16

Part 1 prints what one token costs in the paged cache (ModelConfig.kv_cache_shapes, the
same numbers the engine sizes its block pool with) for DeepSeek-V3's published shape and for
GQA / MHA models at the same hidden size and depth, and for this script's small models.

Part 2 times decode steps of a small random DeepSeek-V3-shaped model (MLA in every layer,
dense MLPs so attention dominates) at a fixed context, once with the absorbed path (the
engine's decode default) and once with the plain path that re-expands every cached latent
into per-head K and V each step (layers/mla_attention.py says why the engine decodes
absorbed). Timings are medians of interleaved rounds. It also prints what DeepSeek-V3.2's
sparse attention (layers/dsa_indexer.py) reads per decode query against dense MLA.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from reference_engine.config import EngineConfig, ModelConfig  # noqa: E402
from reference_engine.forward_batch import SeqInput, build_forward_batch  # noqa: E402
from reference_engine.model_runner import ModelRunner  # noqa: E402

# DeepSeek-V3's published attention shape (config.json of deepseek-ai/DeepSeek-V3).
DEEPSEEK_V3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "vocab_size": 129280,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
}


def llama_like(
    hidden: int, layers: int, heads: int, kv_heads: int, head_dim: int
) -> dict[str, Any]:
    return {
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": 1000,
        "hidden_size": hidden,
        "intermediate_size": 4 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
    }


def small_mla(hidden: int, layers: int, heads: int) -> dict[str, Any]:
    return {
        "architectures": ["DeepseekV3ForCausalLM"],
        "vocab_size": 1000,
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "kv_lora_rank": 4 * (hidden // heads),  # DeepSeek-V3: rank 512 = 4 x nope head dim
        "q_lora_rank": None,
        "qk_rope_head_dim": hidden // heads // 2,
        "qk_nope_head_dim": hidden // heads,
        "v_head_dim": hidden // heads,
        "max_position_embeddings": 8192,
    }


def kv_table(elem_bytes: int, hidden: int, layers: int, heads: int) -> None:
    head_dim = hidden // heads
    rows = [
        ("DeepSeek-V3 MLA", DEEPSEEK_V3),
        ("MHA, 128 heads x 128 (same hidden, depth)", llama_like(7168, 61, 128, 128, 128)),
        ("GQA, 8 KV heads x 128 (Llama-3-70B-like)", llama_like(7168, 61, 64, 8, 128)),
        (f"small MLA (hidden {hidden}, {layers} layers)", small_mla(hidden, layers, heads)),
        (
            f"small GQA, {heads // 4} KV heads",
            llama_like(hidden, layers, heads, heads // 4, head_dim),
        ),
        (f"small MHA, {heads} heads", llama_like(hidden, layers, heads, heads, head_dim)),
    ]
    print(f"KV cache per token ({elem_bytes}-byte elements, all layers):")
    base = None
    for name, raw in rows:
        cfg = ModelConfig.from_dict(raw)
        per_layer = cfg.kv_elems_per_token // cfg.num_hidden_layers
        total = cfg.kv_elems_per_token * elem_bytes
        if name.startswith("DeepSeek") or name.startswith("small MLA"):
            base = total
        ratio = f"{total / base:6.1f}x MLA" if base else ""
        print(f"  {name:46s} {per_layer:6d} elems/layer  {total / 1024:9.1f} KiB  {ratio}")


def dsa_traffic_table() -> None:
    """Cache bytes one decode query reads per layer: dense MLA reads every latent; DSA
    (DeepSeek-V3.2: index_head_dim 128, index_topk 2048) reads every token's indexer key
    and only the selected latents. bf16 everywhere (the released model keeps indexer keys
    in FP8, halving that column)."""
    latent, index_key, topk, elem = 576, 128, 2048, 2
    print("\nDSA decode traffic per query per layer (bf16; a kernel reading selected rows only):")
    for context in (4096, 32768, 131072):
        dense = context * latent * elem
        sparse = context * index_key * elem + min(topk, context) * latent * elem
        print(
            f"  context {context:6d}: dense MLA {dense / 2**20:7.2f} MiB  DSA {sparse / 2**20:6.2f} "
            f"MiB  ({dense / sparse:4.1f}x less)"
        )


def decode_steps(runner: ModelRunner, batch_size: int, context: int, block_size: int) -> Any:
    """Prefill `batch_size` sequences of `context` tokens, then return a function that runs
    one decode step for all of them at that context (the cache is rewritten in place)."""
    blocks_per_seq = -(-(context + 1) // block_size)
    tables = [list(range(i * blocks_per_seq, (i + 1) * blocks_per_seq)) for i in range(batch_size)]
    gen = torch.Generator().manual_seed(0)
    for t in tables:
        ids = torch.randint(0, 1000, (context,), generator=gen).tolist()
        runner.execute_model(build_forward_batch([SeqInput(ids, 0, t)], block_size))
    step = build_forward_batch([SeqInput([7], context, t) for t in tables], block_size)
    return lambda: runner.execute_model(step)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--context", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    kv_table(2, args.hidden, args.layers, args.heads)
    dsa_traffic_table()

    raw = small_mla(args.hidden, args.layers, args.heads)
    model_cfg = ModelConfig.from_dict(raw)
    block_size = 16
    blocks = args.batch * (-(-(args.context + 1) // block_size))
    engine_cfg = EngineConfig(dtype="float32", num_gpu_blocks=blocks, block_size=block_size)
    runner = ModelRunner(model_cfg, engine_cfg)
    step = decode_steps(runner, args.batch, args.context, block_size)
    times: dict[str, list[float]] = {"absorbed": [], "plain": []}
    outputs = {}
    for _ in range(args.rounds):
        for path in times:
            runner.model.set_attention_paths("plain", path)
            t0 = time.perf_counter()
            outputs[path] = step()
            times[path].append(time.perf_counter() - t0)
    diff = (outputs["absorbed"] - outputs["plain"]).abs().max().item()
    print(
        f"\ndecode, batch {args.batch} x context {args.context}, {args.layers} MLA layers, "
        f"hidden {args.hidden}, {args.heads} heads, rank {raw['kv_lora_rank']}, "
        f"{args.threads} thread(s); max logit diff between paths {diff:.1e}"
    )
    med = {p: statistics.median(t) for p, t in times.items()}
    for path, seconds in med.items():
        print(f"  {path:9s} {seconds * 1e3:8.2f} ms/step  {args.batch / seconds:8.1f} tok/s")
    print(f"  absorbed / plain speed: {med['plain'] / med['absorbed']:.2f}x")


if __name__ == "__main__":
    main()
