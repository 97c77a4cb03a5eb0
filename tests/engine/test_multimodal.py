"""Images in the engine (Qwen3.5's vision path), against transformers as the oracle.

- the image processor's patches and grids equal transformers' Qwen2VLImageProcessorPil's;
- logits of the whole vision-language model (encoder, placeholder embeddings, multimodal
  RoPE, hybrid language model) equal Qwen3_5ForConditionalGeneration's, over packed
  batches that cut an image across prefill chunks and continue with decodes;
- batched generation mixing image and text requests equals each request alone;
- an encoder-cache hit gives the same tokens without running the encoder again;
- the same text with a different image never shares prefix blocks, with the same image
  it does.
"""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_model_hf_oracle import spread_weights

from reference_engine.config import EngineConfig
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.multimodal.image_processor import (
    ImageError,
    ImageProcessor,
    ImageProcessorConfig,
)
from reference_engine.multimodal.manager import MultiModalManager

transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

VOCAB = 520
VISION_START, VISION_END, IMAGE_PAD = 512, 513, 514  # the test tokenizer's added tokens

TEXT_SHAPE: dict[str, Any] = {
    "vocab_size": VOCAB,
    "hidden_size": 48,
    "intermediate_size": 80,
    "num_hidden_layers": 4,
    "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"],
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 6,
    "max_position_embeddings": 512,
    # 8 rotary dims = 4 frequencies: temporal, height, width, temporal (interleaved).
    "rope_parameters": {
        "rope_type": "default",
        "rope_theta": 10000.0,
        "partial_rotary_factor": 0.5,
        "mrope_section": [2, 1, 1],
    },
}
VISION_SHAPE: dict[str, Any] = {
    "depth": 2,
    "hidden_size": 32,
    "intermediate_size": 40,
    "num_heads": 2,
    "out_hidden_size": 48,
    "patch_size": 4,
    "num_position_embeddings": 16,  # a 4 x 4 table, resampled to each image's grid
}
PROCESSOR = {
    "patch_size": 4,
    "temporal_patch_size": 2,
    "merge_size": 2,
    "size": {"shortest_edge": 8 * 8, "longest_edge": 40 * 40},
    "image_mean": [0.5, 0.5, 0.5],
    "image_std": [0.5, 0.5, 0.5],
}


def hf_processor() -> Any:
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )

    return Qwen2VLImageProcessorPil(**PROCESSOR)


def noise_image(width: int, height: int, seed: int, mode: str = "RGB") -> Any:
    rng = np.random.default_rng(seed)
    channels = len(mode)
    pixels = rng.integers(0, 256, size=(height, width, channels), dtype=np.uint8)
    return Image.fromarray(pixels if channels > 1 else pixels[..., 0], mode=mode)


def png_bytes(image: Any) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def write_qwen3_5_vl(folder: Path) -> torch.nn.Module:
    config = transformers.Qwen3_5Config(
        text_config=TEXT_SHAPE,
        vision_config=VISION_SHAPE,
        image_token_id=IMAGE_PAD,
        vision_start_token_id=VISION_START,
        vision_end_token_id=VISION_END,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    hf = transformers.Qwen3_5ForConditionalGeneration(config).to(torch.float64).eval()
    spread_weights(hf)
    with torch.no_grad():
        for layer in hf.model.language_model.layers:
            if hasattr(layer, "linear_attn"):
                layer.linear_attn.A_log.uniform_(-2.0, 1.0)
    hf.save_pretrained(folder)
    hf_processor().save_pretrained(folder)
    return hf


@pytest.fixture(scope="module")
def vl_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.nn.Module]:
    folder = tmp_path_factory.mktemp("qwen3_5_vl")
    hf = write_qwen3_5_vl(folder)
    return folder, hf


# --------------------------------------------------------------------------- processor


@pytest.mark.parametrize(
    ("size", "mode"),
    [((20, 28), "RGB"), ((13, 9), "RGB"), ((90, 31), "RGBA"), ((7, 50), "L"), ((3, 3), "P")],
)
def test_processor_equals_transformers(size: tuple[int, int], mode: str) -> None:
    image = noise_image(*size, seed=sum(size), mode="RGB" if mode == "P" else mode)
    if mode == "P":
        image = image.convert("P")
    ours = ImageProcessor(ImageProcessorConfig.from_pretrained(None, {}).__class__(
        patch_size=4, temporal_patch_size=2, merge_size=2, min_pixels=64, max_pixels=1600,
    ))(image)
    want = hf_processor()(images=[image], return_tensors="pt")
    assert list(ours.grid_thw) == want["image_grid_thw"][0].tolist()
    torch.testing.assert_close(ours.pixel_values, want["pixel_values"], rtol=0, atol=1e-6)
    # The count of image tokens transformers' processor would expand the placeholder to.
    assert ours.num_tokens == int(want["image_grid_thw"][0].prod()) // 4


def test_processor_reads_preprocessor_config(vl_dir: tuple[Path, Any]) -> None:
    folder, _ = vl_dir
    cfg = ImageProcessorConfig.from_pretrained(folder, {})
    assert (cfg.patch_size, cfg.merge_size, cfg.min_pixels, cfg.max_pixels) == (4, 2, 64, 1600)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (b"not an image at all", "not an image"),
        ("data:image/png;base64,@@@", "not valid base64"),
        ("data:text/plain;base64,aGVsbG8=", "data:image/"),
        ("http://example.com/cat.png", "network"),
        ("/etc/passwd", "local image paths are refused"),
    ],
)
def test_bad_images_are_clear_errors(source: Any, message: str) -> None:
    with pytest.raises(ImageError, match=message):
        ImageProcessor(ImageProcessorConfig())(source)


def test_truncated_and_huge_images_are_refused() -> None:
    data = png_bytes(noise_image(64, 64, seed=3))
    with pytest.raises(ImageError, match="corrupt"):
        ImageProcessor(ImageProcessorConfig())(data[: len(data) // 2])
    # A 10000 x 6000 PNG of one colour is a few KB encoded, 60 M pixels decoded.
    bomb = png_bytes(Image.new("L", (10000, 6000)))
    assert len(bomb) < 1 << 20
    with pytest.raises(ImageError, match="pixels"):
        ImageProcessor(ImageProcessorConfig())(bomb)


# --------------------------------------------------------------------------- logits


def _hf_logits(hf: Any, ids: list[int], images: list[Any]) -> torch.Tensor:
    proc = hf_processor()(images=images, return_tensors="pt")
    input_ids = torch.tensor([ids])
    with torch.no_grad():
        out = hf(
            input_ids=input_ids,
            pixel_values=proc["pixel_values"].to(torch.float64),
            image_grid_thw=proc["image_grid_thw"],
            mm_token_type_ids=(input_ids == IMAGE_PAD).int(),
        )
    return out.logits[0]


def test_logits_match_transformers(vl_dir: tuple[Path, Any]) -> None:
    folder, hf = vl_dir
    cfg = EngineConfig(model=str(folder), dtype="float64", num_gpu_blocks=80, block_size=4)
    model_cfg = load_model_config(cfg)
    runner = ModelRunner(model_cfg, cfg)
    mm = MultiModalManager.for_model(runner.model, model_cfg)
    assert mm is not None
    rng = random.Random(5)

    def text(n: int) -> list[int]:
        return [rng.randrange(3, 500) for _ in range(n)]

    images = [noise_image(20, 28, seed=1), noise_image(40, 17, seed=2)]
    prompt = [
        *text(5), VISION_START, IMAGE_PAD, VISION_END, *text(4),
        VISION_START, IMAGE_PAD, VISION_END, *text(3),
    ]  # fmt: skip
    ids, inputs = mm.process(prompt, images)
    assert [p.length for p in inputs.placeholders] == [im.num_tokens for im in inputs.images]
    full = ids + text(4)  # four "generated" tokens follow the prompt
    want_mm = _hf_logits(hf, full, images)
    plain = text(10)
    with torch.no_grad():
        want_text = hf(input_ids=torch.tensor([plain])).logits[0]

    class Seq:  # what seq_input reads of a Sequence
        request_id = "r0"
        multi_modal = inputs

    first_image = inputs.placeholders[0]
    cut = first_image.offset + first_image.length // 2  # a chunk ends inside image 1
    n = len(ids)
    plan = [[(0, 0, cut), (1, 0, 5)], [(0, cut, n), (1, 5, 6)]]
    plan += [[(0, p, p + 1), (1, 6 + k, 7 + k)] for k, p in enumerate(range(n, len(full)))]
    tables = [list(range(0, 40)), list(range(40, 80))]
    for step in plan:
        seq_inputs = []
        for i, a, b in step:
            tokens = full if i == 0 else plain
            part = mm.seq_input(Seq(), a, b) if i == 0 else None  # type: ignore[arg-type]
            seq_inputs.append(
                SeqInput(tokens[a:b], a, tables[i], want_prompt_logits=True, state_slot=i,
                         multimodal=part)
            )  # fmt: skip
        batch = build_forward_batch(seq_inputs, block_size=4)
        logits = runner.execute_model(batch)
        for j, (i, a, b) in enumerate(step):
            rows = logits[batch.logits_start_loc[j] : batch.logits_start_loc[j + 1]]
            want = (want_mm if i == 0 else want_text)[a:b]
            # transformers runs the delta rule, norms and both rotations in float32 even in a
            # float64 model; a wrong position or a misplaced image row moves logits by O(1).
            torch.testing.assert_close(rows, want, rtol=0, atol=5e-4)
    assert mm.num_encoder_runs == 2  # each image encoded once, its halves sliced
