"""Reference engine vs Hugging Face transformers `generate`, side by side in one run.

    .venv/bin/python benchmarks/engine_bench.py            # default workload, CPU, 1 thread
    .venv/bin/python benchmarks/engine_bench.py --quick    # smaller, for a smoke run
    python3 benchmarks/engine_bench.py --device cuda --json figures.json   # on a GPU machine

One random-weights float32 Qwen3 checkpoint (hidden 512, 8 layers by default:
big enough that matrix multiplies, not Python, dominate a step) is written to
a temporary folder; the engine and transformers both load that folder. On one
synthetic workload of varied prompt and output lengths (greedy, exact output
lengths) it measures:

  * output-token throughput and per-token latency of
      - transformers, one request at a time,
      - transformers, static batches (left-padded, each batch runs until its
        longest request is done),
      - the engine (continuous batching, chunked prefill), all requests at once;
    and prints the engine's ratios against both;
  * time to first token on a shared-prefix workload (requests one after another,
    a long common system prompt) with prefix caching off, hashed and radix;
  * the decode forward pass's achieved memory traffic (weights + KV read per
    step / step time) against this machine's measured copy bandwidth (on CUDA: a
    device-to-device tensor copy).

Both sides run on the same device in the same dtype (`--device`, `--dtype`). On
CUDA the engine replays CUDA graphs for decode batches; its graphs are captured
during warm-up (as transformers gets a warm-up generate), not inside a timed run,
and every timed region ends with torch.cuda.synchronize(). Neither side uses
torch.compile. On a CPU in float32 the engine multiplies with oneDNN-prepacked
weights (EngineConfig.cpu_prepack, see reference_engine/layers/cpu_gemm.py) while
transformers uses PyTorch's default matmul; the report says so next to the ratios,
and `--no-cpu-prepack` runs the engine on the default matmul too. `--threads` sets
the torch CPU threads of every contender alike; the published CPU figures use the
default, 1 thread.

Per-token latency (TPOT) is the time between a request's output tokens: for
the engine (finish - first token) / (tokens - 1); for transformers the batch's
(or single request's) generate time / tokens generated per row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from reference_engine.bench import WorkloadRequest, run_engine, synthetic_workload  # noqa: E402
from reference_engine.config import EngineConfig, ModelConfig  # noqa: E402
from reference_engine.engine import Engine  # noqa: E402
from reference_engine.forward_batch import ForwardBatch  # noqa: E402
from reference_engine.sampling_params import SamplingParams  # noqa: E402
from reference_engine.tiny_model import (  # noqa: E402
    TINY_CONFIG,
    build_tokenizer,
    random_weights,
    write_checkpoint,
)


@dataclass(slots=True)
class Figures:
    label: str
    seconds: float
    output_tokens: int
    tpot_s: float

    @property
    def tokens_per_s(self) -> float:
        return self.output_tokens / self.seconds

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "seconds": self.seconds,
            "output_tokens": self.output_tokens,
            "tokens_per_s": self.tokens_per_s,
            "tpot_ms": 1000 * self.tpot_s,
        }


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def sync(device: str) -> None:
    """Wait for queued GPU work, so a timer read afterwards covers it (no-op on a CPU)."""
    if device == "cuda":
        torch.cuda.synchronize()


def write_model(folder: Path, hidden: int, layers: int, seed: int = 0) -> Path:
    config = {
        **TINY_CONFIG,
        "hidden_size": hidden,
        "intermediate_size": 3 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": hidden // 64,
        "num_key_value_heads": max(1, hidden // 128),
        "head_dim": 64,
        "max_position_embeddings": 4096,
        "atlas_notice": "benchmark model: RANDOM weights",
    }
    weights = random_weights(ModelConfig.from_dict(config), seed=seed)
    write_checkpoint(folder, config, weights, build_tokenizer())
    return folder


# --- Hugging Face transformers --------------------------------------------------------


def load_hf(folder: Path, device: str, dtype: str) -> Any:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=DTYPES[dtype])
    return model.to(device).eval()


@torch.inference_mode()
def hf_generate(model: Any, prompts: list[list[int]], new_tokens: int) -> list[list[int]]:
    """Greedy, exactly `new_tokens` per row, left-padded batch."""
    width = max(len(p) for p in prompts)
    ids = torch.zeros((len(prompts), width), dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p) :] = torch.tensor(p)
        mask[i, width - len(p) :] = 1
    out = model.generate(
        input_ids=ids.to(model.device),
        attention_mask=mask.to(model.device),
        max_new_tokens=new_tokens,
        min_new_tokens=new_tokens,
        do_sample=False,
        pad_token_id=0,
    )
    return [row[width:].tolist() for row in out]  # .tolist() waits for the GPU


def hf_one_at_a_time(model: Any, reqs: list[WorkloadRequest]) -> tuple[Figures, list[list[int]]]:
    start = time.perf_counter()
    outputs, tpots = [], []
    for r in reqs:
        t0 = time.perf_counter()
        outputs.append(hf_generate(model, [r.prompt_token_ids], r.max_tokens)[0])
        tpots.append((time.perf_counter() - t0) / r.max_tokens)
    seconds = time.perf_counter() - start
    tokens = sum(r.max_tokens for r in reqs)
    return Figures("HF one at a time", seconds, tokens, statistics.fmean(tpots)), outputs


def hf_static_batches(model: Any, reqs: list[WorkloadRequest], batch_size: int) -> Figures:
    start = time.perf_counter()
    tpots = []
    for i in range(0, len(reqs), batch_size):
        batch = reqs[i : i + batch_size]
        longest = max(r.max_tokens for r in batch)  # everyone waits for the longest
        t0 = time.perf_counter()
        hf_generate(model, [r.prompt_token_ids for r in batch], longest)
        tpots.extend([(time.perf_counter() - t0) / longest] * len(batch))
    seconds = time.perf_counter() - start
    tokens = sum(r.max_tokens for r in reqs)  # only the tokens that were asked for count
    return Figures(f"HF static batches of {batch_size}", seconds, tokens, statistics.fmean(tpots))


# --- the engine -------------------------------------------------------------------------


def make_engine(folder: Path, max_num_seqs: int, device: str, dtype: str, **kwargs: Any) -> Engine:
    cfg = {
        "model": str(folder),
        "device": device,
        "dtype": dtype,
        "num_gpu_blocks": 2048,
        "max_num_seqs": max_num_seqs,
        "max_num_batched_tokens": 512,
        "prefix_caching": "none",
    }
    cfg.update(kwargs)
    engine = Engine(EngineConfig(**cfg))
    if engine.graph_runner is not None:
        engine.graph_runner.capture_all()  # warm-up work, kept out of the timed runs
    return engine


def engine_outputs(engine: Engine, reqs: list[WorkloadRequest]) -> list[list[int]]:
    for i, r in enumerate(reqs):
        params = SamplingParams(temperature=0.0, max_tokens=r.max_tokens, ignore_eos=True)
        engine.add_request(f"check{i}", r.prompt_token_ids, params)
    done: dict[str, list[int]] = {}
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                done[out.request_id] = out.outputs[0].token_ids
    return [done[f"check{i}"] for i in range(len(reqs))]


def shared_prefix_ttft(
    folder: Path,
    cache: str,
    num: int,
    prefix_len: int,
    suffix_len: int,
    vocab: int,
    device: str,
    dtype: str,
    prepack: bool,
) -> float:
    """Mean TTFT of requests sent one after another that share a long prefix; the
    first request (which fills the cache) is not counted, for both settings alike."""
    engine = make_engine(
        folder,
        4,
        device,
        dtype,
        prefix_caching=cache,
        max_num_batched_tokens=2048,
        cpu_prepack=prepack,
    )
    reqs = synthetic_workload(
        num + 1,
        (prefix_len + suffix_len,) * 2,
        (2, 2),
        vocab,
        seed=7,
        shared_prefix_len=prefix_len,
    )
    ttfts = []
    for i, r in enumerate(reqs):
        result = run_engine(engine, [r], tag=f"{cache}{i}-")
        if i > 0:
            ttfts.append(result.mean_ttft_s)
    return statistics.fmean(ttfts)


def memcpy_bandwidth(device: str, num_bytes: int = 256 << 20) -> float:
    """Bytes moved per second (read + write) by a large tensor copy on `device`."""
    src = torch.ones(num_bytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)  # fault the pages in
    best = float("inf")
    for _ in range(5):
        sync(device)
        t0 = time.perf_counter()
        dst.copy_(src)
        sync(device)
        best = min(best, time.perf_counter() - t0)
    return 2 * num_bytes / best


def decode_traffic(
    folder: Path,
    reqs: list[WorkloadRequest],
    max_num_seqs: int,
    device: str,
    dtype: str,
    prepack: bool,
) -> tuple[float, int]:
    """(bytes/s, batch size): weights + KV read by decode-only forward passes, per second."""
    engine = make_engine(folder, max_num_seqs, device, dtype, cpu_prepack=prepack)
    runner = engine.runner
    cfg = engine.model_config
    elem = DTYPES[dtype].itemsize
    embed = runner.model.get_submodule("model.embed_tokens").weight
    weight_bytes = sum(p.numel() * elem for p in runner.model.parameters())
    if not cfg.tie_word_embeddings:
        weight_bytes -= embed.numel() * elem  # only the looked-up rows are read
    kv_bytes_per_token = 2 * cfg.num_hidden_layers * cfg.kv_size * elem
    totals = {"bytes": 0.0, "seconds": 0.0, "batch": 0}
    # On CUDA decode batches go through the graph runner (it falls back to the plain runner
    # for the rest), so that is the call to time.
    owner: Any = engine.graph_runner if engine.graph_runner is not None else runner
    name = "execute" if engine.graph_runner is not None else "execute_model"
    execute = getattr(owner, name)

    def timed(batch: ForwardBatch) -> torch.Tensor:
        sync(device)
        t0 = time.perf_counter()
        logits = execute(batch)
        sync(device)
        dt = time.perf_counter() - t0
        if batch.decode_only and batch.num_seqs == max_num_seqs:
            totals["seconds"] += dt
            totals["bytes"] += weight_bytes + kv_bytes_per_token * sum(batch.context_lens_cpu)
            totals["batch"] = batch.num_seqs
        return logits

    setattr(owner, name, timed)
    run_engine(engine, reqs)
    if totals["seconds"] == 0:
        return 0.0, 0
    return totals["bytes"] / totals["seconds"], int(totals["batch"])


# --- report -----------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller model and workload")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--num-prompts", type=int, default=32)
    ap.add_argument(
        "--batch-size", type=int, default=32, help="engine max_num_seqs = HF static batch size"
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads for every contender (README figures: the default, 1)",
    )
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="both sides run here")
    ap.add_argument(
        "--dtype", choices=sorted(DTYPES), default="float32", help="both sides compute in this"
    )
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    ap.add_argument(
        "--no-cpu-prepack",
        action="store_true",
        help="engine multiplies with PyTorch's default matmul, like transformers",
    )
    args = ap.parse_args()
    if args.quick:
        args.hidden, args.layers, args.num_prompts = 256, 4, 12
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error(f"--device cuda, but this torch ({torch.__version__}) sees no CUDA device")
    torch.set_num_threads(args.threads)
    device, dtype = args.device, args.dtype
    prepack = not args.no_cpu_prepack
    prompt_len, output_len = (16, 192), (8, 96)
    where = torch.cuda.get_device_name() if device == "cuda" else f"{os.cpu_count()} CPUs"
    report: dict[str, Any] = {
        "device": device,
        "device_name": where,
        "dtype": dtype,
        "torch": torch.__version__,
        "torch_threads": args.threads,
        "hidden": args.hidden,
        "layers": args.layers,
        "batch_size": args.batch_size,
    }

    with tempfile.TemporaryDirectory(prefix="atlas-bench-") as tmp:
        folder = write_model(Path(tmp) / "model", args.hidden, args.layers)
        vocab = int(TINY_CONFIG["vocab_size"])
        reqs = synthetic_workload(args.num_prompts, prompt_len, output_len, vocab, seed=1)
        print(
            f"model: Qwen3 random weights, hidden {args.hidden}, {args.layers} layers, {dtype} "
            f"on {device} ({where}); torch {torch.__version__}, threads {torch.get_num_threads()}"
        )
        print(
            f"workload: {len(reqs)} requests, prompts {prompt_len[0]}-{prompt_len[1]} tokens "
            f"({sum(len(r.prompt_token_ids) for r in reqs)} in all), outputs "
            f"{output_len[0]}-{output_len[1]} ({sum(r.max_tokens for r in reqs)} in all), greedy"
        )
        report["workload"] = {
            "requests": len(reqs),
            "prompt_tokens": sum(len(r.prompt_token_ids) for r in reqs),
            "output_tokens": sum(r.max_tokens for r in reqs),
        }

        load_before = os.getloadavg()[0]
        engine = make_engine(folder, args.batch_size, device, dtype, cpu_prepack=prepack)
        run_engine(engine, reqs[:2], tag="warmup-")
        hf = load_hf(folder, device, dtype)
        hf_generate(hf, [reqs[0].prompt_token_ids], 2)  # warm-up
        # Engine runs before and after the transformers runs and is averaged, so a drift
        # in machine load during the run does not favour either side.
        sync(device)
        first = run_engine(engine, reqs, tag="a-")
        sync(device)
        single, hf_tokens = hf_one_at_a_time(hf, reqs)
        static = hf_static_batches(hf, reqs, args.batch_size)
        sync(device)
        second = run_engine(engine, reqs, tag="b-")
        sync(device)
        ours = Figures(
            f"engine (max_num_seqs {args.batch_size})",
            (first.seconds + second.seconds) / 2,
            first.num_output_tokens,
            (first.mean_tpot_s + second.mean_tpot_s) / 2,
        )
        load_after = os.getloadavg()[0]
        print(
            f"  engine runs: {first.seconds:.1f} s and {second.seconds:.1f} s; "
            f"1-min load average {load_before:.1f} -> {load_after:.1f} "
            f"on {os.cpu_count()} CPUs (a busy machine makes every figure noisy)"
        )
        check_engine = make_engine(folder, args.batch_size, device, dtype, cpu_prepack=prepack)
        check = engine_outputs(check_engine, reqs)
        same = sum(a == b for a, b in zip(check, hf_tokens, strict=True))

        print("\nthroughput (output tokens/s) and per-token latency")
        for f in (single, static, ours):
            print(
                f"  {f.label:32s} {f.tokens_per_s:9.1f} tok/s   TPOT {1000 * f.tpot_s:7.2f} ms   "
                f"({f.seconds:.1f} s)"
            )
        vs_static = ours.tokens_per_s / static.tokens_per_s
        vs_single = ours.tokens_per_s / single.tokens_per_s
        print(f"  ratio engine / HF static batching: {vs_static:.2f}x (target >= 1.5x)")
        print(f"  ratio engine / HF one at a time:   {vs_single:.2f}x (target >= 8x)")
        print(f"  greedy outputs identical to HF: {same}/{len(reqs)} requests ({dtype})")
        # Said out loud because it is part of the gap: the two sides' matmuls differ.
        gemm = "oneDNN-prepacked weights" if engine.runner.packed_weights else "torch default"
        print(f"  projections: engine {gemm}; transformers torch default (F.linear)")
        report["engine_prepacked_weights"] = engine.runner.packed_weights
        report["throughput"] = [f.as_json() for f in (single, static, ours)]
        report["engine_runs_s"] = [first.seconds, second.seconds]
        report["load_average_1min"] = [load_before, load_after]
        report["ratio_vs_static"] = vs_static
        report["ratio_vs_one_at_a_time"] = vs_single
        report["identical_outputs"] = [same, len(reqs)]

        prefix_len, suffix_len = (512, 16) if not args.quick else (256, 8)
        print(
            f"\nshared prefix: {prefix_len}-token common prefix + {suffix_len} own tokens, "
            "8 requests one after another"
        )
        ttft = {
            c: shared_prefix_ttft(
                folder, c, 8, prefix_len, suffix_len, vocab, device, dtype, prepack
            )
            for c in ("none", "hash", "radix")
        }
        for cache, value in ttft.items():
            print(f"  TTFT prefix caching {cache:5s}: {1000 * value:8.2f} ms")
        for cache in ("hash", "radix"):
            print(
                f"  TTFT falls {ttft['none'] / ttft[cache]:.1f}x with {cache} prefix caching "
                "(target >= 5x)"
            )
        report["ttft_ms"] = {c: 1000 * v for c, v in ttft.items()}

        copy_bw = memcpy_bandwidth(device)
        traffic, batch = decode_traffic(
            folder, reqs, min(args.batch_size, len(reqs)), device, dtype, prepack
        )
        kind = "device-to-device copy" if device == "cuda" else "tensor copy"
        print("\nmemory traffic")
        print(f"  {kind} (read + write): {copy_bw / 1e9:10.2f} GB/s")
        if batch:
            print(
                f"  decode forward, batch {batch:3d} (weights + KV read): {traffic / 1e9:7.2f} GB/s"
                f" = {100 * traffic / copy_bw:.0f}% of copy bandwidth"
            )
        else:
            print("  decode forward: no full decode-only batch was observed")
        report["copy_bandwidth_gb_s"] = copy_bw / 1e9
        report["decode_traffic_gb_s"] = traffic / 1e9 if batch else None

    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")


if __name__ == "__main__":
    main()
