"""Speculative decoding: output tokens/s with and without it at batch sizes 1, 4 and 16.

    .venv/bin/python benchmarks/spec_decode_bench.py                 # n-gram, random model
    .venv/bin/python benchmarks/spec_decode_bench.py --model DIR     # a trained checkpoint
    .venv/bin/python benchmarks/spec_decode_bench.py --model DIR --draft-model SMALL_DIR
    .venv/bin/python benchmarks/spec_decode_bench.py --trained                # trained code model
    .venv/bin/python benchmarks/spec_decode_bench.py --trained --draft-model small

Each batch size runs the same greedy workload up to four ways: plain decoding, speculation
with a fixed draft length (num_speculative_tokens), the load-adaptive draft length
(spec_decode/draft_length.py) and, for n-gram drafting, token trees of 3 branches. It prints tokens/s, the speedup over plain decoding, the
acceptance rate, the mean accepted length and the draft lengths the adaptive policy chose,
side by side, and checks that every speculative output equals the plain one.

--trained uses the model trained here (reference_engine/trained_model.py, "default", ~4M
parameters, Python code) on prompts cut from its held-out files, and `--draft-model small`
then drafts with the ~1M "small" recipe, which shares its tokenizer.

Without --model or --trained the target is a random-weights float32 Qwen3 (hidden 512, 8 layers, as
engine_bench.py) and the workload is repetitive (each prompt is a motif repeated four
times), so prompt lookup shows the mechanism; how often drafts are accepted then depends
on how much the random model's greedy output loops, which the acceptance column shows.
"""

from __future__ import annotations

import argparse
import random
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


def workload(num: int, seed: int, motif_len: int, repeats: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(3, 500) for _ in range(motif_len)] * repeats for _ in range(num)]


def run(model: Path, prompts: list[list[int]], max_tokens: int, spec: dict[str, Any] | None,
        batch: int) -> tuple[float, list[list[int]], Engine, list[int]]:  # fmt: skip
    engine = Engine(EngineConfig(
        model=str(model), max_num_seqs=batch, max_num_batched_tokens=2048,
        speculative_config=spec, prefix_caching="none",
    ))  # fmt: skip
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True)
    engine.add_request("warm", prompts[0][:8], SamplingParams(temperature=0.0, max_tokens=4))
    while engine.has_unfinished_requests():
        engine.step()
    for i, p in enumerate(prompts):
        engine.add_request(str(i), p, params)
    outputs: dict[str, list[int]] = {}
    chosen: list[int] = []
    start = time.perf_counter()
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                outputs[out.request_id] = out.outputs[0].token_ids
        if engine.spec is not None:
            chosen.append(engine.spec.stats.last_num_draft_tokens)
    elapsed = time.perf_counter() - start
    tokens = [outputs[str(i)] for i in range(len(prompts))]
    return sum(map(len, tokens)) / elapsed, tokens, engine, chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help="target checkpoint (default: random, written here)")
    ap.add_argument("--draft-model", type=Path, help="draft checkpoint (default: n-gram lookup)")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--k", type=int, default=4, help="num_speculative_tokens")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--trained", action="store_true", help="the trained code model, held-out prompts")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        prompts_for = lambda batch: workload(batch, seed=batch, motif_len=12, repeats=4)  # noqa: E731
        if args.trained:
            from tokenizers import Tokenizer

            from reference_engine.trained_model import heldout_text, trained_model_dir

            model = trained_model_dir("default")
            if args.draft_model is not None and str(args.draft_model) == "small":
                args.draft_model = trained_model_dir("small")
            ids = Tokenizer.from_file(str(model / "tokenizer.json")).encode(heldout_text(model)).ids

            def prompts_for(batch: int) -> list[list[int]]:
                starts = random.Random(batch).sample(range(len(ids) - 200), batch)
                return [ids[s : s + 96] for s in starts]

        elif model is None:
            from engine_bench import write_model

            model = write_model(Path(tmp) / "target", hidden=512, layers=8)
        base: dict[str, Any] = (
            {"model": str(args.draft_model)} if args.draft_model else {"method": "ngram"}
        )
        base["num_speculative_tokens"] = args.k
        print(f"target {model}; drafter {base}; greedy, {args.max_tokens} tokens per request, "
              f"{args.threads} thread(s)")  # fmt: skip
        print(f"{'batch':>5} {'mode':>9} {'tok/s':>8} {'speedup':>8} {'accept':>7} "
              f"{'mean len':>8} {'k chosen (mean)':>15}  same output")  # fmt: skip
        for batch in args.batch_sizes:
            prompts = prompts_for(batch)
            plain_tps, plain_tokens, _, _ = run(model, prompts, args.max_tokens, None, batch)
            print(f"{batch:>5} {'plain':>9} {plain_tps:>8.1f} {1.0:>8.2f}")
            modes = ["fixed", "adaptive"] + ([] if args.draft_model else ["tree"])
            for mode in modes:
                spec = {**base, "draft_length": "fixed" if mode == "tree" else mode}
                if mode == "tree":
                    spec["tree_width"] = 3
                tps, tokens, engine, chosen = run(model, prompts, args.max_tokens, spec, batch)
                s = engine.stats().spec_decoding
                assert s is not None
                mean_k = sum(chosen) / max(len(chosen), 1)
                print(f"{batch:>5} {mode:>9} {tps:>8.1f} {tps / plain_tps:>8.2f} "
                      f"{s.acceptance_rate:>7.2f} {s.mean_accepted_length:>8.2f} {mean_k:>15.2f}  "
                      f"{'yes' if tokens == plain_tokens else 'NO'}")  # fmt: skip


if __name__ == "__main__":
    main()
