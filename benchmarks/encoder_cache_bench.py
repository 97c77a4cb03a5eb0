"""What the encoder cache and batched encoding buy for image requests (Qwen3.5's vision path).

    .venv/bin/python benchmarks/encoder_cache_bench.py            # 1 torch thread, float32

A small random Qwen3.5 vision-language checkpoint (written by transformers; 4 hybrid text
layers, a 6-block vision encoder at 16-pixel patches) serves a prompt with one 448x448
image (196 image tokens after the 2x2 merge). Time to first token, median of interleaved
rounds, for:

- a new image: processor output in hand, the encoder runs, then the prefill;
- the same image under another question, prefix caching off: the encoder cache hands its
  embeddings over, only the prefill runs;
- the same prompt again with prefix caching on: the KV (and the hybrid's recurrent state
  checkpoint) of its whole blocks is reused, only the tail is computed.

Then four new images arriving in one step, encoded in one vision-encoder call (what the
engine does, multimodal/manager.py step_inputs) against one call per image.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from reference_engine.config import EngineConfig  # noqa: E402
from reference_engine.engine import Engine  # noqa: E402
from reference_engine.sampling_params import SamplingParams  # noqa: E402
from reference_engine.tiny_model import CHAT_TEMPLATE, build_tokenizer  # noqa: E402

VISION_START, VISION_END, IMAGE_PAD = 512, 513, 514
PLACEHOLDER = "<|vision_start|><|image_pad|><|vision_end|>"
TEXT = {
    "vocab_size": 1024, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
    "layer_types": ["linear_attention"] * 3 + ["full_attention"], "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "linear_num_key_heads": 4,
    "linear_num_value_heads": 4, "linear_key_head_dim": 32, "linear_value_head_dim": 32,
    "max_position_embeddings": 2048,
    "rope_parameters": {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25,
                        "mrope_section": [3, 3, 2]},
}  # fmt: skip
VISION = {"depth": 6, "hidden_size": 256, "intermediate_size": 768, "num_heads": 4,
          "out_hidden_size": 256, "patch_size": 16, "num_position_embeddings": 1024}  # fmt: skip


def build(folder: Path) -> None:
    import transformers

    config = transformers.Qwen3_5Config(
        text_config=TEXT, vision_config=VISION, image_token_id=IMAGE_PAD,
        vision_start_token_id=VISION_START, vision_end_token_id=VISION_END,
    )  # fmt: skip
    torch.manual_seed(0)
    transformers.Qwen3_5ForConditionalGeneration(config).save_pretrained(folder)
    tok = build_tokenizer()
    tok.add_special_tokens(["<|vision_start|>", "<|vision_end|>", "<|image_pad|>"])
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"eos_token": "<|im_end|>", "chat_template": CHAT_TEMPLATE})
    )


def picture(seed: int) -> Any:
    from PIL import Image

    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (448, 448, 3), dtype=np.uint8))


def ttft(eng: Engine, rid: str, prompt: str, image: Any) -> float:
    """Seconds from add_request to the step that samples the first token."""
    params = SamplingParams(temperature=0.0, max_tokens=1, ignore_eos=True)
    start = time.perf_counter()
    eng.add_request(rid, prompt, params, images=[image])
    while eng.has_unfinished_requests():
        eng.step()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder)
        common = {"model": str(folder), "block_size": 16, "num_gpu_blocks": 256,
                  "max_num_batched_tokens": 1024}  # fmt: skip
        plain = Engine(EngineConfig(prefix_caching="none", **common))
        cached = Engine(EngineConfig(prefix_caching="hash", **common))
        assert plain.mm is not None and cached.mm is not None
        ask = f"Describe {PLACEHOLDER} in a few words."
        other = f"What colour dominates {PLACEHOLDER}?"
        times: dict[str, list[float]] = {"new image": [], "encoder-cache hit": [],
                                         "prefix-cache hit": []}  # fmt: skip
        for r in range(args.rounds):
            image = plain.mm.processor(picture(100 + r))  # processing is not timed
            times["new image"].append(ttft(plain, f"new{r}", ask, image))
            times["encoder-cache hit"].append(ttft(plain, f"hit{r}", other, image))
            ttft(cached, f"warm{r}", ask, image)
            times["prefix-cache hit"].append(ttft(cached, f"again{r}", ask, image))
        tokens = image.num_tokens
        base = statistics.median(times["new image"])
        print(f"time to first token, one {tokens}-token image, median of {args.rounds}:")
        for name, values in times.items():
            t = statistics.median(values)
            print(f"  {name:18s} {t * 1e3:8.1f} ms   {base / t:5.2f}x")
        images = [plain.mm.processor(picture(200 + i)) for i in range(4)]
        one, each = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            plain.mm._encode(images, ["b"] * 4)
            one.append(time.perf_counter() - start)
            start = time.perf_counter()
            for im in images:
                plain.mm._encode([im], ["b"])
            each.append(time.perf_counter() - start)
            plain.mm.free("b")
            plain.mm._just_encoded.clear()
        t_one, t_each = statistics.median(one), statistics.median(each)
        print(f"four new images in one step: one encoder call {t_one * 1e3:.1f} ms, "
              f"one call per image {t_each * 1e3:.1f} ms ({t_each / t_one:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
