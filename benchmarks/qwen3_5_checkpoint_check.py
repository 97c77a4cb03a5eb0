"""A Qwen3.5-0.8B-shaped checkpoint written by transformers, read by the engine and by transformers.

    .venv/bin/python benchmarks/qwen3_5_checkpoint_check.py

The book's linear-attention chapter runs Qwen/Qwen3.5-0.8B; no model hub is reachable here,
so this builds the folder instead: transformers' own Qwen3_5ForConditionalGeneration (the
published architecture) at the published text configuration (below: 24 layers, three Gated
DeltaNet layers to one gated full-attention layer, 248320-token vocabulary, tied
embeddings, M-RoPE sections [11, 11, 10], theta 1e7, a quarter of each head rotated), with
a vision tower of the published depth and width (its other fields transformers' defaults),
random init, saved in bfloat16 with `save_pretrained`. Both readers then load the folder in
float32 and the script prints parameter counts, the largest logit difference over a few
prompts, then over prompts with an image (processed by each side's own image processor at
Qwen3.5's defaults: 16-pixel patches, 2x2 merge, at least 65536 pixels), and greedy-token
agreement (`--new-tokens 0` skips generation, the slow part). The text config was read from
two independent public copies of the published config.json; the real weights were never
loaded here.

Measured (2-core CPU, float32, shared machine): 752,393,024 language-model parameters on
both sides; max |logit difference| 1.16e-05 over three prompts; greedy tokens 36/36; about
14 minutes in all, most of it transformers' reference gated-delta kernels generating.
With images (`--new-tokens 0 --threads 1`, about 6.5 minutes): 752,393,024 language +
123,315,904 vision parameters on both sides; text logits within 9.6e-06; a 64x64 image
(64 image tokens) within 2.2e-05, a 300x180 one (77 tokens) within 1.8e-05.
"""

from __future__ import annotations

import argparse
import gc
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
from reference_engine.multimodal.inputs import MultiModalInputs  # noqa: E402
from reference_engine.tiny_model import build_tokenizer  # noqa: E402

TEXT_CONFIG: dict[str, Any] = {
    "vocab_size": 248320,
    "hidden_size": 1024,
    "intermediate_size": 3584,
    "num_hidden_layers": 24,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "attention_bias": False,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 16,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 262144,
    "tie_word_embeddings": True,
    "eos_token_id": 248044,
    "layer_types": ["linear_attention"] * 3 + ["full_attention"],  # x 6, below
    "rope_parameters": {
        "rope_type": "default",
        "rope_theta": 10000000.0,
        "partial_rotary_factor": 0.25,
        "mrope_interleaved": True,
        "mrope_section": [11, 11, 10],
    },
}
TEXT_CONFIG["layer_types"] = TEXT_CONFIG["layer_types"] * 6
VISION_CONFIG = {"depth": 12, "hidden_size": 768, "out_hidden_size": 1024}
PROMPTS = [[5, 17, 99, 3, 250, 11], [7] * 9, list(range(40, 61))]
VISION_START, VISION_END, IMAGE_PAD = 248053, 248054, 248056  # Qwen3.5's token ids


def build(folder: Path) -> dict[str, Any]:
    import transformers

    config = transformers.Qwen3_5Config(
        text_config=TEXT_CONFIG, vision_config=VISION_CONFIG, tie_word_embeddings=True
    )
    start = time.perf_counter()
    torch.manual_seed(0)
    model = transformers.Qwen3_5ForConditionalGeneration(config)
    init_s = time.perf_counter() - start
    model.to(torch.bfloat16).save_pretrained(str(folder), safe_serialization=True)
    del model
    gc.collect()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=build_tokenizer(), eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    fast.save_pretrained(str(folder))
    size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    return {"init_s": round(init_s, 1), "weights_bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, default=12)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    import transformers

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("built:", build(folder))
        llm = LLM(
            str(folder), dtype="float32", block_size=16, num_gpu_blocks=64, max_model_len=256,
            max_num_seqs=4, cpu_prepack=False,
        )  # fmt: skip
        model = llm.engine.runner.model
        ours = sum(p.numel() for p in model.parameters())
        ours_vision = sum(p.numel() for p in model.visual.parameters())
        hf = transformers.AutoModelForImageTextToText.from_pretrained(
            str(folder), dtype=torch.float32
        ).eval()
        text_params = sum(p.numel() for p in hf.model.language_model.parameters())
        vision_params = sum(p.numel() for p in hf.model.visual.parameters())
        print(f"parameters: ours {ours - ours_vision:,} language + {ours_vision:,} vision; "
              f"transformers' {text_params:,} + {vision_params:,}")  # fmt: skip
        diffs = []
        for tokens in PROMPTS:
            with torch.no_grad():
                want = hf(input_ids=torch.tensor([tokens])).logits[0]
            blocks = list(range(-(-len(tokens) // 16)))
            batch = build_forward_batch([SeqInput(tokens, 0, blocks, True, state_slot=0)], 16)
            got = llm.engine.runner.execute_model(batch)
            diffs.append((got - want).abs().max().item())
        print(f"max |logit difference| over {len(PROMPTS)} prompts: {max(diffs):.2e}")
        image_check(llm, hf)
        if args.new_tokens == 0:
            return
        greedy = SamplingParams(temperature=0.0, max_tokens=args.new_tokens, ignore_eos=True)
        agree = total = 0
        for tokens, out in zip(PROMPTS, llm.generate(PROMPTS, greedy), strict=True):
            with torch.no_grad():
                theirs = hf.generate(
                    input_ids=torch.tensor([tokens]), do_sample=False,
                    max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                )[0, len(tokens):].tolist()  # fmt: skip
            agree += sum(a == b for a, b in zip(out.outputs[0].token_ids, theirs, strict=True))
            total += len(theirs)
        print(f"greedy tokens agree: {agree}/{total}")


def image_check(llm: LLM, hf: Any) -> None:
    """Logits of prompts with an image: ours (processor, encoder, M-RoPE) vs transformers'."""
    import numpy as np
    from PIL import Image
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )

    mm = llm.engine.mm
    assert mm is not None
    hf_proc = Qwen2VLImageProcessorPil(
        patch_size=16, merge_size=2, temporal_patch_size=2, image_mean=[0.5] * 3,
        image_std=[0.5] * 3, size={"shortest_edge": 65536, "longest_edge": 16777216},
    )  # fmt: skip
    rng = np.random.default_rng(0)
    diffs = []
    for width, height in [(64, 64), (300, 180)]:
        picture = Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))
        prompt = [5, 17, VISION_START, IMAGE_PAD, VISION_END, 99, 3, 250]
        ids, inputs = mm.process(prompt, [picture])

        class Seq:
            request_id = f"check-{width}"
            multi_modal: MultiModalInputs = inputs

        part = mm.seq_input(Seq(), 0, len(ids))  # type: ignore[arg-type]
        blocks = list(range(-(-len(ids) // 16)))
        batch = build_forward_batch(
            [SeqInput(ids, 0, blocks, True, state_slot=0, multimodal=part)], 16
        )
        got = llm.engine.runner.execute_model(batch)
        proc = hf_proc(images=[picture], return_tensors="pt")
        input_ids = torch.tensor([ids])
        with torch.no_grad():
            want = hf(
                input_ids=input_ids, pixel_values=proc["pixel_values"],
                image_grid_thw=proc["image_grid_thw"],
                mm_token_type_ids=(input_ids == IMAGE_PAD).int(),
            ).logits[0]  # fmt: skip
        diffs.append((got - want).abs().max().item())
        print(f"image {width}x{height}: {inputs.placeholders[0].length} image tokens, "
              f"{len(ids)} prompt tokens, max |logit difference| {diffs[-1]:.2e}")  # fmt: skip


if __name__ == "__main__":
    main()
