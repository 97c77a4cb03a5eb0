"""A Qwen3-0.6B-shaped checkpoint written by transformers, read by the engine and by transformers.

    .venv/bin/python benchmarks/qwen3_checkpoint_check.py                      # CPU, float32
    .venv/bin/python benchmarks/qwen3_checkpoint_check.py --dtype float32 bfloat16 --out fig.json
    python benchmarks/qwen3_checkpoint_check.py --device cuda --dtype bfloat16 float32

Readers run Qwen/Qwen3-0.6B from a local folder; no model hub is reachable here, so this builds
the same folder shape instead: EXACTLY the published config.json (151936-token vocabulary,
28 layers, head_dim 128, tied embeddings), transformers' own random init, `save_pretrained` in
bfloat16 (about 1.2 GB, one safetensors file, lm_head omitted as in the real one), the published
generation_config eos list, and a small byte-level tokenizer saved by transformers. The weights
are random, so the text is noise; what is measured is that both readers build the same model:

  * load time of each (our `LLM(...)` including its KV cache; `from_pretrained` + `.to`);
  * parameter count of each;
  * per dtype: max |logit difference| over a few prompts, and greedy-token agreement for
    `--new-tokens` tokens (on a mismatch, transformers' own top-2 margin at that step says
    whether it was a near-tie);
  * our engine's output tokens/s on a small batch, beside transformers `generate` on the
    same batch.

Only APIs present in torch >= 2.11 and transformers 5.x are used, so the script runs unchanged
on a GPU machine (`--device cuda`). Prints figures; `--out FILE` also writes them as JSON.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from reference_engine import LLM, SamplingParams  # noqa: E402
from reference_engine.forward_batch import SeqInput, build_forward_batch  # noqa: E402
from reference_engine.tiny_model import build_tokenizer  # noqa: E402

# The published Qwen3-0.6B config lives with the tests' Hugging Face folder builders.
sys.path.insert(0, str(REPO / "tests" / "engine"))
from hf_checkpoints import QWEN3_0_6B  # noqa: E402

GENERATION_EOS = [151645, 151643]  # Qwen3's generation_config.json: <|im_end|>, <|endoftext|>

PROMPTS = [
    "The KV cache",
    "Paged attention stores keys and values in fixed-size blocks.",
    "Continuous batching admits new requests at every step",
    "東京 naïve café 😀",
]
BLOCK_SIZE = 16
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def build_checkpoint(folder: Path) -> dict[str, Any]:
    """Write the folder with transformers' own classes; returns what it took."""
    import transformers

    config_fields = {k: v for k, v in QWEN3_0_6B.items() if k not in ("architectures",)}
    config_fields.pop("torch_dtype")
    config = transformers.Qwen3Config(**config_fields)
    start = time.perf_counter()
    torch.manual_seed(0)
    model = transformers.Qwen3ForCausalLM(config)
    init_s = time.perf_counter() - start
    start = time.perf_counter()
    model.to(torch.bfloat16).save_pretrained(str(folder), safe_serialization=True)
    save_s = time.perf_counter() - start
    del model
    gc.collect()
    # The published generation_config.json lists both eos ids; config.json only the first.
    gen_file = folder / "generation_config.json"
    gen = json.loads(gen_file.read_text()) if gen_file.is_file() else {}
    gen.update({"bos_token_id": 151643, "eos_token_id": GENERATION_EOS})
    gen_file.write_text(json.dumps(gen, indent=2))
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=build_tokenizer(), eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.save_pretrained(str(folder))
    size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    return {"init_s": init_s, "save_s": save_s, "weights_bytes": size}


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def our_logits(llm: LLM, tokens: list[int]) -> torch.Tensor:
    blocks = list(range(-(-len(tokens) // BLOCK_SIZE)))
    batch = build_forward_batch([SeqInput(tokens, 0, blocks, True)], BLOCK_SIZE)
    return llm.engine.runner.execute_model(batch).float().cpu()


def hf_logits(model: Any, tokens: list[int], device: str) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([tokens], device=device)).logits[0].float().cpu()


def hf_generate(model: Any, prompts: list[list[int]], new_tokens: int, device: str) -> Any:
    """Greedy, exactly `new_tokens` per row (eos suppressed), left-padded static batch."""
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts], device=device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    with torch.no_grad():
        out = model.generate(
            input_ids=ids,
            attention_mask=mask,
            do_sample=False,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            pad_token_id=0,
        )
    return [row[width:].tolist() for row in out]


def compare_dtype(
    folder: Path, dtype: str, device: str, prompts: list[list[int]], new_tokens: int, batch: int
) -> dict[str, Any]:
    import transformers

    figures: dict[str, Any] = {"dtype": dtype}
    _sync(device)
    start = time.perf_counter()
    llm = LLM(
        str(folder),
        dtype=dtype,
        device=device,
        block_size=BLOCK_SIZE,
        num_gpu_blocks=16 * batch,
        max_model_len=256,
        max_num_seqs=batch,
    )
    _sync(device)
    figures["ours_load_s"] = time.perf_counter() - start
    start = time.perf_counter()
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=DTYPES[dtype])
    hf = hf.to(device).eval()
    _sync(device)
    figures["hf_load_s"] = time.perf_counter() - start
    figures["ours_params"] = sum(p.numel() for p in llm.engine.runner.model.parameters())
    figures["hf_params"] = sum(p.numel() for p in hf.parameters())  # tied weight counted once
    figures["ours_eos_ids"] = list(llm.engine.eos_token_ids)

    diffs = []
    for tokens in prompts:
        want = hf_logits(hf, tokens, device)
        got = our_logits(llm, tokens)
        diffs.append((got - want).abs().max().item())
        scale = want.abs().max().item()
    figures["max_abs_logit_diff"] = max(diffs)
    figures["logit_scale"] = scale  # max |logit| of the last prompt, for reading the diff
    # What a small real mistake would cost, to read the diff against: scale one mid-stack
    # weight by 1% on transformers' side and measure again.
    weight = hf.model.layers[len(hf.model.layers) // 2].mlp.down_proj.weight
    saved = weight.detach().clone()
    with torch.no_grad():
        weight.mul_(1.01)
        perturbed = hf_logits(hf, prompts[0], device)
        weight.copy_(saved)
    figures["diff_if_one_weight_off_by_1pct"] = (
        (our_logits(llm, prompts[0]) - perturbed).abs().max().item()
    )
    del saved

    greedy = SamplingParams(temperature=0.0, max_tokens=new_tokens, ignore_eos=True)
    ours = [o.outputs[0].token_ids for o in llm.generate(prompts, greedy)]
    theirs = [hf_generate(hf, [p], new_tokens, device)[0] for p in prompts]
    agree, total, prefixes, tie_margins = 0, 0, [], []
    for prompt, a, b in zip(prompts, ours, theirs, strict=True):
        agree += sum(x == y for x, y in zip(a, b, strict=True))
        total += len(b)
        prefix = next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), len(b))
        prefixes.append(prefix)
        if prefix < len(b):
            # transformers' own margin between its top two tokens at the first divergence.
            row = hf_logits(hf, prompt + b[:prefix], device)[-1]
            top2 = row.topk(2).values
            tie_margins.append((top2[0] - top2[1]).item())
    figures["greedy_tokens_agree"] = f"{agree}/{total}"
    figures["greedy_common_prefix"] = prefixes
    figures["hf_top2_margin_at_divergence"] = tie_margins

    # Throughput: a small batch, all requests at once, after a warm-up (CUDA graph capture).
    work = (prompts * batch)[:batch]
    llm.generate(work, SamplingParams(temperature=0.0, max_tokens=2, ignore_eos=True))
    _sync(device)
    start = time.perf_counter()
    outs = llm.generate(work, greedy)
    _sync(device)
    elapsed = time.perf_counter() - start
    figures["ours_tokens_per_s"] = sum(len(o.outputs[0].token_ids) for o in outs) / elapsed
    hf_generate(hf, work, 2, device)
    _sync(device)
    start = time.perf_counter()
    rows = hf_generate(hf, work, new_tokens, device)
    _sync(device)
    figures["hf_generate_tokens_per_s"] = sum(len(r) for r in rows) / (time.perf_counter() - start)
    del llm, hf
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument(
        "--dtype",
        nargs="+",
        choices=sorted(DTYPES),
        default=None,
        help="one or more; default float32 on cpu, bfloat16 on cuda",
    )
    parser.add_argument("--new-tokens", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4, help="requests in the throughput batch")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    parser.add_argument("--keep", type=Path, help="build the checkpoint here and keep it")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda but torch sees no CUDA device")
    dtypes = args.dtype or (["bfloat16"] if args.device == "cuda" else ["float32"])

    import transformers

    results: dict[str, Any] = {
        "device": args.device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "new_tokens": args.new_tokens,
        "batch": args.batch,
    }
    with tempfile.TemporaryDirectory(prefix="qwen3-0.6b-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        results["build"] = build_checkpoint(folder)
        b = results["build"]
        print(
            f"checkpoint: {sorted(p.name for p in folder.iterdir())}\n"
            f"  transformers init {b['init_s']:.1f} s, save_pretrained (bf16) {b['save_s']:.1f} s, "
            f"weights {b['weights_bytes'] / 2**30:.2f} GiB"
        )
        from reference_engine.loader import load_tokenizer

        tokenizer = load_tokenizer(folder)
        prompts = [tokenizer.encode(p) for p in PROMPTS]
        results["runs"] = []
        for dtype in dtypes:
            f = compare_dtype(folder, dtype, args.device, prompts, args.new_tokens, args.batch)
            results["runs"].append(f)
            print(
                f"[{dtype} on {args.device}]\n"
                f"  load: ours {f['ours_load_s']:.1f} s | transformers {f['hf_load_s']:.1f} s\n"
                f"  parameters: ours {f['ours_params']:,} | transformers {f['hf_params']:,}\n"
                f"  max |logit diff| {f['max_abs_logit_diff']:.3g} "
                f"(logits up to {f['logit_scale']:.3g}; one mid-layer weight 1% off would give "
                f"{f['diff_if_one_weight_off_by_1pct']:.3g})\n"
                f"  greedy tokens agreeing {f['greedy_tokens_agree']}, common prefix per prompt "
                f"{f['greedy_common_prefix']}, transformers' top-2 margin where they part "
                f"{[round(m, 5) for m in f['hf_top2_margin_at_divergence']]}\n"
                f"  eos ids the engine stops on: {f['ours_eos_ids']} (config.json + "
                f"generation_config.json + the stand-in tokenizer's own eos)\n"
                f"  tokens/s, batch {args.batch} x {args.new_tokens}: ours "
                f"{f['ours_tokens_per_s']:.1f} | transformers generate "
                f"{f['hf_generate_tokens_per_s']:.1f} "
                f"({f['ours_tokens_per_s'] / f['hf_generate_tokens_per_s']:.2f}x)"
            )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
