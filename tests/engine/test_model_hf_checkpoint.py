"""Checkpoints written by transformers itself, loaded through `LLM` like a reader's folder.

test_model_hf_oracle.py checks the arithmetic (float64, packed batches); this file checks the
*files*: what `save_pretrained` really writes in float32 and bfloat16, sharded or not, tied
(lm_head.weight omitted) or untied, with the config keys of the installed transformers. Each
folder is read by our engine and by `AutoModelForCausalLM.from_pretrained`, and the logits and
greedy tokens compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from hf_checkpoints import build_hf_model, load_hf, save_checkpoint
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from reference_engine import LLM, SamplingParams
from reference_engine.config import ModelConfig
from reference_engine.forward_batch import SeqInput, build_forward_batch

PROMPTS = [[5, 17, 200, 31, 77, 140, 9], [300, 2, 45, 45, 45, 12, 99, 250, 3, 60, 61, 62, 8]]
BLOCK_SIZE = 8


def _engine(folder: Path, dtype: str) -> LLM:
    return LLM(str(folder), dtype=dtype, num_gpu_blocks=32, block_size=BLOCK_SIZE)


def _our_logits(llm: LLM, tokens: list[int]) -> torch.Tensor:
    """Logits for every prompt position from the engine's own runner (one fresh sequence)."""
    blocks = list(range(-(-len(tokens) // BLOCK_SIZE)))
    batch = build_forward_batch([SeqInput(tokens, 0, blocks, True)], BLOCK_SIZE)
    return llm.engine.runner.execute_model(batch).float()


def _hf_logits(model: Any, tokens: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([tokens])).logits[0].float()


def _shard_keys(folder: Path) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.safetensors")):
        with safe_open(str(path), framework="pt") as f:
            keys[path.name] = set(f.keys())
    return keys


# (family, tied, dtype, sharded): every family, both dtypes, both file layouts, both tyings.
CASES = [
    ("qwen3", True, torch.float32, False),
    ("qwen3", True, torch.float32, True),
    ("qwen3", True, torch.bfloat16, False),
    ("qwen3", True, torch.bfloat16, True),
    ("qwen3", False, torch.float32, True),
    ("qwen3", False, torch.bfloat16, False),
    ("llama", False, torch.float32, True),
    ("llama", True, torch.bfloat16, False),
    ("qwen2", True, torch.float32, False),
    ("qwen2", False, torch.bfloat16, True),
]


def _case_id(case: tuple[str, bool, torch.dtype, bool]) -> str:
    family, tied, dtype, sharded = case
    tying = "tied" if tied else "untied"
    return f"{family}-{tying}-{str(dtype).removeprefix('torch.')}-{'sharded' if sharded else 'one'}"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    made: dict[tuple[str, bool, torch.dtype, bool], Path] = {}

    def make(family: str, tied: bool, dtype: torch.dtype, sharded: bool) -> Path:
        key = (family, tied, dtype, sharded)
        if key not in made:
            folder = tmp_path_factory.mktemp(_case_id(key))
            save_checkpoint(build_hf_model(family, tied, seed=1), folder, dtype, sharded)
            made[key] = folder
        return made[key]

    return make


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_files_are_what_save_pretrained_writes(case: tuple, checkpoint: Callable) -> None:
    """Guard the premise: the folders really have the shapes this file claims to test."""
    _, tied, dtype, sharded = case
    folder = checkpoint(*case)
    keys = _shard_keys(folder)
    assert (folder / "model.safetensors.index.json").is_file() == sharded
    assert (len(keys) > 1) == sharded
    every = set().union(*keys.values())
    # Tied checkpoints from transformers omit lm_head.weight entirely.
    assert ("lm_head.weight" in every) == (not tied)
    config = json.loads((folder / "config.json").read_text())
    assert config.get("dtype", config.get("torch_dtype")) == str(dtype).removeprefix("torch.")
    assert ModelConfig.from_pretrained(folder).torch_dtype == str(dtype).removeprefix("torch.")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_float32_engine_matches_transformers(case: tuple, checkpoint: Callable) -> None:
    """Engine in float32 against transformers in float32 reading the same files. A bfloat16
    checkpoint upcasts exactly, so the tolerance stays tight: only the summation order
    differs (fused qkv / gate_up, paged attention vs SDPA), about 1e-6 of the logit scale."""
    folder = checkpoint(*case)
    hf = load_hf(folder, torch.float32)
    llm = _engine(folder, "float32")
    for tokens in PROMPTS:
        want = _hf_logits(hf, tokens)
        assert want.std() > 0.3  # the init spreads logits; a near-constant output proves little
        torch.testing.assert_close(_our_logits(llm, tokens), want, rtol=1e-4, atol=1e-4)

    # Greedy decoding through the whole engine (scheduler, paged KV, sampler): every token it
    # picks must be transformers' argmax given the same prefix, up to float32 ties.
    greedy = SamplingParams(temperature=0.0, max_tokens=8, ignore_eos=True)
    for tokens, out in zip(PROMPTS, llm.generate(PROMPTS, greedy), strict=True):
        generated = list(out.outputs[0].token_ids)
        assert len(generated) == 8
        logits = _hf_logits(hf, tokens + generated)[len(tokens) - 1 : -1]
        chosen = logits.gather(1, torch.tensor(generated)[:, None])[:, 0]
        assert (chosen >= logits.max(dim=1).values - 1e-4).all(), (generated, logits.argmax(1))


@pytest.mark.parametrize("case", [c for c in CASES if c[2] == torch.bfloat16], ids=_case_id)
def test_bfloat16_engine_tracks_transformers(case: tuple, checkpoint: Callable) -> None:
    """Engine in bfloat16 against transformers in bfloat16, both measured against the float32
    forward of the same weights. Both round every matmul and norm output to 8 mantissa bits,
    in different orders, so they cannot agree bit for bit; what must hold is that our rounding
    error is of the same size as transformers' own (an error that a wrong weight or a
    misplaced norm causes is orders larger), and that on positions with a clear winner (margin
    far above the rounding error) both pick the same token."""
    folder = checkpoint(*case)
    reference = load_hf(folder, torch.float32)
    hf16 = load_hf(folder, torch.bfloat16)
    llm = _engine(folder, "bfloat16")
    assert llm.engine.runner.model.model.embed_tokens.weight.dtype == torch.bfloat16
    clear, total = 0, 0
    for tokens in PROMPTS:
        ref = _hf_logits(reference, tokens)
        ours, theirs = _our_logits(llm, tokens), _hf_logits(hf16, tokens)
        our_err = (ours - ref).abs().max().item()
        their_err = (theirs - ref).abs().max().item()
        assert our_err <= 3 * their_err + 0.02, (our_err, their_err)
        assert our_err < 0.1 * ref.abs().max().item()
        top2 = ref.topk(2, dim=1).values
        margin = top2[:, 0] - top2[:, 1]
        confident = margin > 4 * max(our_err, their_err)
        clear += int(confident.sum())
        total += len(tokens)
        assert torch.equal(ours.argmax(1)[confident], ref.argmax(1)[confident])
        assert torch.equal(theirs.argmax(1)[confident], ref.argmax(1)[confident])
    assert clear >= total // 2, f"only {clear}/{total} positions had a clear winner"


def test_tied_checkpoint_carrying_lm_head_loads(checkpoint: Callable, tmp_path: Path) -> None:
    """Some published tied checkpoints still store lm_head.weight (a copy of the embedding,
    often in the last shard). Both readers must accept it and agree."""
    src = checkpoint("qwen3", True, torch.float32, True)
    folder = tmp_path / "with-lm-head"
    folder.mkdir()
    for item in src.iterdir():
        (folder / item.name).write_bytes(item.read_bytes())
    index_file = folder / "model.safetensors.index.json"
    index = json.loads(index_file.read_text())
    embed_file = index["weight_map"]["model.embed_tokens.weight"]
    last = sorted(set(index["weight_map"].values()))[-1]
    shard = load_file(str(folder / last))
    shard["lm_head.weight"] = load_file(str(folder / embed_file))["model.embed_tokens.weight"]
    save_file(shard, str(folder / last), metadata={"format": "pt"})
    index["weight_map"]["lm_head.weight"] = last
    index_file.write_text(json.dumps(index))

    hf = load_hf(folder, torch.float32)
    ours = _engine(folder, "float32")
    plain = _engine(src, "float32")
    for tokens in PROMPTS:
        torch.testing.assert_close(
            _our_logits(ours, tokens), _hf_logits(hf, tokens), rtol=1e-4, atol=1e-4
        )
        assert torch.equal(_our_logits(ours, tokens), _our_logits(plain, tokens))


# ---------------------------------------------------------------- config.json key variants


def _v4_config(config: dict[str, Any]) -> dict[str, Any]:
    """The same config as transformers 4.x wrote it: torch_dtype, top-level rope_theta."""
    out = {k: v for k, v in config.items() if k not in ("dtype", "rope_parameters", "layer_types")}
    out["torch_dtype"] = config.get("dtype", config.get("torch_dtype"))
    rope = config.get("rope_parameters") or {}
    out["rope_theta"] = rope.get("rope_theta", config.get("rope_theta"))
    out["rope_scaling"] = None
    out["transformers_version"] = "4.51.0"
    return out


def _v5_config(config: dict[str, Any]) -> dict[str, Any]:
    """The same config as transformers 5.x writes it: dtype, rope_parameters."""
    out = {
        k: v for k, v in config.items() if k not in ("torch_dtype", "rope_theta", "rope_scaling")
    }
    out["dtype"] = config.get("dtype", config.get("torch_dtype"))
    theta = (config.get("rope_parameters") or {}).get("rope_theta", config.get("rope_theta"))
    out["rope_parameters"] = {"rope_theta": theta, "rope_type": "default"}
    return out


@pytest.mark.parametrize("variant", ["v4", "v5", "both-keys", "no-dtype-key"])
def test_config_dtype_and_rope_key_variants(
    variant: str, checkpoint: Callable, tmp_path: Path
) -> None:
    """transformers 4.x writes `torch_dtype` and `rope_theta`; 5.x writes `dtype` and
    `rope_parameters`. The engine must read either and load identical models."""
    src = checkpoint("qwen3", True, torch.bfloat16, False)
    installed = json.loads((src / "config.json").read_text())
    config = {"v4": _v4_config, "v5": _v5_config}.get(variant, _v5_config)(installed)
    if variant == "both-keys":
        config["torch_dtype"] = config["dtype"]
    if variant == "no-dtype-key":
        config.pop("dtype")
    folder = tmp_path / variant
    folder.mkdir()
    for item in src.iterdir():
        (folder / item.name).write_bytes(item.read_bytes())
    (folder / "config.json").write_text(json.dumps(config, indent=2))

    parsed = ModelConfig.from_pretrained(folder)
    # Without any dtype key the checkpoint's dtype is unknown; float32 is the safe reading.
    assert parsed.torch_dtype == ("float32" if variant == "no-dtype-key" else "bfloat16")
    assert parsed.rope_theta == 1e6 and parsed.rope_scaling is None
    hf = load_hf(folder, torch.float32)
    ours = _engine(folder, "float32")
    for tokens in PROMPTS:
        torch.testing.assert_close(
            _our_logits(ours, tokens), _hf_logits(hf, tokens), rtol=1e-4, atol=1e-4
        )


# ---------------------------------------------------------------- chat, end to end


@pytest.mark.parametrize("enable_thinking", [True, False])
def test_chat_matches_transformers_end_to_end(enable_thinking: bool, checkpoint: Callable) -> None:
    """LLM.chat on a transformers-written folder: the prompt tokens are what transformers'
    apply_chat_template(tokenize=True) gives, and the greedy reply is what transformers'
    generate continues with (float32, so no rounding can split them)."""
    import transformers

    folder = checkpoint("qwen3", True, torch.float32, False)
    messages = [
        {"role": "system", "content": "Answer in one line."},
        {"role": "user", "content": "What does the block table map? 東京"},
    ]
    kwargs = {"enable_thinking": enable_thinking}
    tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    prompt = tok.apply_chat_template(messages, tokenize=True, add_generation_prompt=True, **kwargs)
    if not isinstance(prompt, list):  # BatchEncoding in some transformers versions
        prompt = list(prompt["input_ids"])
    hf = load_hf(folder, torch.float32)
    with torch.no_grad():
        full = hf.generate(
            torch.tensor([prompt]),
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            do_sample=False,
            max_new_tokens=10,
            min_new_tokens=10,
            pad_token_id=0,
        )[0].tolist()
    want = full[len(prompt) :]

    llm = _engine(folder, "float32")
    greedy = SamplingParams(temperature=0.0, max_tokens=10, ignore_eos=True)
    out = llm.chat(messages, greedy, chat_template_kwargs=kwargs)[0]
    assert out.prompt_token_ids == prompt
    assert list(out.outputs[0].token_ids) == want
    assert out.outputs[0].text == tok.decode(want, skip_special_tokens=True)
