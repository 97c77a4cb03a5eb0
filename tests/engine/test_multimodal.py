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
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_model_hybrid import hybrid_model

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine, RequestError
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.multimodal.image_processor import (
    ImageError,
    ImageProcessor,
    ImageProcessorConfig,
)
from reference_engine.multimodal.manager import MultiModalManager
from reference_engine.sampling_params import SamplingParams
from reference_engine.tiny_model import CHAT_TEMPLATE, build_tokenizer

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
    hf = hybrid_model(transformers.Qwen3_5ForConditionalGeneration, config)
    hf.save_pretrained(folder)
    hf_processor().save_pretrained(folder)
    write_tokenizer(folder)
    return hf


# Qwen's chat template writes an image in a message as these three tokens.
PLACEHOLDER = "<|vision_start|><|image_pad|><|vision_end|>"


def write_tokenizer(folder: Path) -> None:
    """The tiny model's tokenizer plus Qwen's three vision tokens (ids 512, 513, 514)."""
    tok = build_tokenizer()
    tok.add_special_tokens(["<|vision_start|>", "<|vision_end|>", "<|image_pad|>"])
    assert tok.token_to_id("<|image_pad|>") == IMAGE_PAD
    tok.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>",
              "chat_template": CHAT_TEMPLATE}  # fmt: skip
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")


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


# --------------------------------------------------------------------------- the engine

IMAGES = {
    "a": (20, 28, 1),  # 8 image tokens
    "b": (64, 48, 2),  # resized down to 40 x 32: 20 tokens
    "c": (20, 28, 3),  # a's size, other pixels: the same 8 tokens
    "d": (40, 17, 4),  # 10 tokens
}


def image(name: str) -> Any:
    w, h, seed = IMAGES[name]
    return noise_image(w, h, seed)


def engine(folder: Path, **kwargs: Any) -> Engine:
    cfg = {"dtype": "float64", "block_size": 4, "num_gpu_blocks": 200, "max_num_seqs": 8,
           **kwargs}  # fmt: skip
    return Engine(EngineConfig(model=str(folder), **cfg))


def run(eng: Engine, reqs: dict[str, tuple[str, list[str], SamplingParams]]) -> dict[str, Any]:
    """All requests at once; each one's final RequestOutput."""
    for rid, (prompt, names, params) in reqs.items():
        eng.add_request(rid, prompt, params, images=[image(n) for n in names])
    outs: dict[str, Any] = {}
    for _ in range(2000):
        if not eng.has_unfinished_requests():
            break
        for out in eng.step():
            outs[out.request_id] = out
        eng.check_integrity()
    assert not eng.has_unfinished_requests()
    return outs


GREEDY = SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True)


def workload() -> dict[str, tuple[str, list[str], SamplingParams]]:
    seeded = SamplingParams(temperature=1.0, top_p=0.9, seed=7, max_tokens=6, ignore_eos=True)
    return {
        "img-a": (f"Describe {PLACEHOLDER} in a few words, please.", ["a"], GREEDY),
        "text": ("A serving engine turns many requests into batches.", [], GREEDY),
        "img-c": (f"Describe {PLACEHOLDER} in a few words, please.", ["c"], GREEDY),
        "two": (f"Compare {PLACEHOLDER} with {PLACEHOLDER}.", ["b", "d"], seeded),
        "img-a-again": (f"What is in {PLACEHOLDER}?", ["a"], GREEDY),
        "img-b": (f"{PLACEHOLDER} Prefix caching keeps finished blocks.", ["b"], seeded),
    }


@pytest.fixture(scope="module")
def solo_outputs(vl_dir: tuple[Path, Any]) -> dict[str, list[int]]:
    eng = engine(vl_dir[0], prefix_caching="none")
    return {
        rid: run(eng, {rid: req})[rid].outputs[0].token_ids for rid, req in workload().items()
    }


@pytest.mark.parametrize(("cache", "preemption"), [("hash", "recompute"), ("radix", "swap")])
def test_batched_image_requests_equal_solo(
    vl_dir: tuple[Path, Any], solo_outputs: dict[str, list[int]], cache: str, preemption: str
) -> None:
    """Six requests at once, images and text mixed, a 16-token step budget (chunks cut
    images in two), a KV pool too small for all of them (preemption), and a prefix cache:
    each request's tokens equal its solo run's."""
    eng = engine(vl_dir[0], prefix_caching=cache, preemption_mode=preemption,
                 num_gpu_blocks=18, num_cpu_blocks=80, max_num_batched_tokens=16)  # fmt: skip
    outs = run(eng, workload())
    for rid, tokens in solo_outputs.items():
        assert outs[rid].outputs[0].token_ids == tokens, rid
    assert eng.stats().num_preemptions > 0
    assert (eng.stats().num_swap_outs > 0) == (preemption == "swap")
    assert eng.mm is not None
    assert all(not e.refs for e in eng.mm.cache._entries.values())  # every reference back
    assert eng.kv.is_idle_clean()


def test_encoder_cache_hit_gives_the_same_output(vl_dir: tuple[Path, Any]) -> None:
    """A second request showing the same image reuses its encoder output (the encoder does
    not run again) and generates what a cold engine generates."""
    req = (f"What is in {PLACEHOLDER}?", ["b"], GREEDY)
    warm = engine(vl_dir[0], prefix_caching="none")
    run(warm, {"first": (f"Describe {PLACEHOLDER} briefly.", ["b"], GREEDY)})
    assert warm.mm is not None and warm.mm.num_encoder_runs == 1
    hits = warm.mm.cache.stats.hits
    got = run(warm, {"second": req})["second"].outputs[0].token_ids
    assert warm.mm.num_encoder_runs == 1 and warm.mm.cache.stats.hits > hits
    cold = engine(vl_dir[0], prefix_caching="none")
    assert got == run(cold, {"second": req})["second"].outputs[0].token_ids
    assert cold.mm is not None and cold.mm.num_encoder_runs == 1


@pytest.mark.parametrize("cache", ["hash", "radix"])
def test_prefix_cache_never_shares_blocks_across_images(
    vl_dir: tuple[Path, Any], cache: str
) -> None:
    """Images a and c have the same size, so their prompts have the same token ids; the
    prefix cache must still hit only the text before the image for c after a, and past the
    image for a again. (A hybrid model resumes only where its recurrent state was
    checkpointed: at the last block boundary of each step, so steps of 8 tokens.)"""
    text = (
        "A serving engine turns many independent requests into a few large batches: "
        f"{PLACEHOLDER} then decodes them."
    )
    eng = engine(vl_dir[0], prefix_caching=cache, max_num_batched_tokens=8)
    assert eng.mm is not None
    first = run(eng, {"a1": (text, ["a"], GREEDY)})["a1"]
    ids_a = first.prompt_token_ids
    image_at = ids_a.index(IMAGE_PAD)
    other = run(eng, {"c1": (text, ["c"], GREEDY)})["c1"]
    assert other.prompt_token_ids == ids_a  # same ids: only the image's content differs
    assert 0 < other.num_cached_tokens <= image_at
    again = run(eng, {"a2": (text, ["a"], GREEDY)})["a2"]
    assert again.num_cached_tokens > image_at + eng.mm.processor(image("a")).num_tokens
    assert again.outputs[0].token_ids == first.outputs[0].token_ids
    cold = engine(vl_dir[0], prefix_caching="none")
    assert other.outputs[0].token_ids == run(cold, {"c": (text, ["c"], GREEDY)})["c"].outputs[
        0
    ].token_ids


def test_image_requests_are_checked(vl_dir: tuple[Path, Any]) -> None:
    eng = engine(vl_dir[0])
    with pytest.raises(RequestError, match="2 image placeholders but 1 images"):
        eng.add_request("x", f"{PLACEHOLDER} and {PLACEHOLDER}", GREEDY, images=[image("a")])
    with pytest.raises(RequestError, match="not an image"):
        eng.add_request("y", f"{PLACEHOLDER}", GREEDY, images=[b"junk"])
    assert not eng.has_unfinished_requests()
    # Token ids already expanded by a processor are taken as they are.
    assert eng.mm is not None
    n = eng.mm.processor(image("a")).num_tokens
    ids = eng.tokenizer.encode("Look: ", add_special_tokens=False) + [IMAGE_PAD] * n
    eng.add_request("z", ids, GREEDY, images=[image("a")])
    with pytest.raises(RequestError, match=f"{n - 1} tokens; its image needs {n}"):
        eng.add_request("w", ids[:-1], GREEDY, images=[image("a")])


def test_offline_llm_takes_vllm_style_image_prompts(vl_dir: tuple[Path, Any]) -> None:
    from reference_engine.llm import LLM

    llm = LLM(str(vl_dir[0]), dtype="float64", block_size=4, num_gpu_blocks=200)
    text = f"Describe {PLACEHOLDER} in a few words, please."
    outs = llm.generate(
        [{"prompt": text, "multi_modal_data": {"image": image("a")}}, "plain text"], GREEDY
    )
    alone = run(engine(vl_dir[0]), {"x": (text, ["a"], GREEDY)})["x"]
    assert outs[0].outputs[0].token_ids == alone.outputs[0].token_ids
    assert outs[0].prompt_token_ids.count(IMAGE_PAD) == 8
    with pytest.raises(ValueError, match="only images"):
        llm.generate({"prompt": text, "multi_modal_data": {"audio": b""}}, GREEDY)


def test_samples_and_aborts_with_images(vl_dir: tuple[Path, Any]) -> None:
    """n = 2 samples of an image prompt differ, and the first equals an n = 1 run with the
    same seed; an aborted request gives its encoder-cache references back."""
    text = f"Describe {PLACEHOLDER} in a few words, please."
    params = SamplingParams(n=2, temperature=1.0, seed=3, max_tokens=5, ignore_eos=True)
    eng = engine(vl_dir[0], max_num_batched_tokens=8)
    both = run(eng, {"n2": (text, ["b"], params)})["n2"]
    assert len({tuple(c.token_ids) for c in both.outputs}) == 2
    one = SamplingParams(n=1, temperature=1.0, seed=3, max_tokens=5, ignore_eos=True)
    alone = run(engine(vl_dir[0], prefix_caching="none"), {"n1": (text, ["b"], one)})["n1"]
    assert both.outputs[0].token_ids == alone.outputs[0].token_ids
    eng.add_request("gone", text, GREEDY, images=[image("d")])
    eng.step()  # the first 8-token chunk reaches the image: its embeddings are referenced
    assert eng.mm is not None and eng.mm.cache.referenced_by("gone")
    eng.abort("gone")
    assert not eng.mm.cache.referenced_by("gone")
    assert eng.kv.is_idle_clean()


def test_a_step_encodes_its_new_images_together(
    vl_dir: tuple[Path, Any], solo_outputs: dict[str, list[int]]
) -> None:
    """Three requests, four distinct images, admitted in one step: one encoder call for
    all four, and each request's tokens still equal its solo run's."""
    reqs = {k: v for k, v in workload().items() if k in ("img-a", "img-c", "two")}
    eng = engine(vl_dir[0], max_num_batched_tokens=256)
    outs = run(eng, reqs)
    assert eng.mm is not None
    assert (eng.mm.num_encoder_calls, eng.mm.num_encoder_runs) == (1, 4)
    for rid in reqs:
        assert outs[rid].outputs[0].token_ids == solo_outputs[rid], rid


def test_encoder_cache_keeps_referenced_entries_and_evicts_lru() -> None:
    from reference_engine.multimodal.encoder_cache import EncoderCache

    cache = EncoderCache(capacity_tokens=10)
    cache.put("x", torch.zeros(4, 2), "r1")
    cache.put("y", torch.zeros(4, 2), "r2")
    cache.release("x", "r1")
    cache.release("y", "r2")
    assert cache.get("x", "r3") is not None  # x is now the most recently used
    cache.release("x", "r3")
    cache.put("z", torch.zeros(4, 2), "r4")  # 12 > 10: the least recently used goes (y)
    assert "x" in cache and "y" not in cache and cache.num_tokens == 8
    cache.put("w", torch.zeros(8, 2), "r5")  # x goes; z is referenced and stays
    assert "x" not in cache and "z" in cache and cache.num_tokens == 12  # overfilled
    cache.put("z", torch.zeros(4, 2), "r6")  # filed again: replaced, counted once
    assert cache.num_tokens == 12 and set(cache.referenced_by("r4")) == {"z"}
    assert (cache.stats.hits, cache.stats.misses) == (1, 0)


def test_chunks_stop_before_images_the_encoder_cache_has_no_room_for(
    vl_dir: tuple[Path, Any], solo_outputs: dict[str, list[int]]
) -> None:
    """An encoder cache of 24 image tokens, six requests whose images (8, 8, 20 + 10, 8, 20
    tokens) would need far more at once: the scheduler stops each chunk before an image
    with no room, the cache never holds more than 24 rows, and every request's tokens
    still equal its solo run's. An image larger than the whole cache is refused."""
    eng = engine(vl_dir[0], encoder_cache_tokens=24, max_num_batched_tokens=64)
    assert eng.mm is not None
    for rid, (prompt, names, params) in workload().items():
        eng.add_request(rid, prompt, params, images=[image(n) for n in names])
    outs: dict[str, Any] = {}
    while eng.has_unfinished_requests():
        for out in eng.step():
            outs[out.request_id] = out
        assert eng.mm.cache.num_tokens <= 24
        eng.check_integrity()
    for rid, tokens in solo_outputs.items():
        assert outs[rid].outputs[0].token_ids == tokens, rid
    small = engine(vl_dir[0], encoder_cache_tokens=16)
    with pytest.raises(RequestError, match="more than the encoder cache holds"):
        small.add_request("big", f"{PLACEHOLDER}", GREEDY, images=[image("b")])
