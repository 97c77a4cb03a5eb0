"""Checkpoint loading, the tiny built-in model, tokenizer/chat template and config parsing."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hf_checkpoints import QWEN3_0_6B
from safetensors.torch import load_file, save_file

from reference_engine.config import ConfigError, EngineConfig, ModelConfig
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.loader import load_model_config, load_tokenizer, resolve_model_dir
from reference_engine.tiny_model import (
    RANDOM_WEIGHTS_NOTICE,
    TINY_CONFIG,
    ensure_tiny_model,
    write_tiny_model,
)


def _logits(runner, tokens: list[int]) -> torch.Tensor:
    batch = build_forward_batch([SeqInput(tokens, 0, [0, 1, 2, 3], True)], runner.block_size)
    return runner.execute_model(batch)


# ---------------------------------------------------------------- the tiny model


def test_tiny_model_is_byte_for_byte_deterministic(tmp_path: Path) -> None:
    write_tiny_model(tmp_path / "a")
    write_tiny_model(tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= set(
        names
    )
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_tiny_model_says_its_weights_are_random(tiny_model_path: Path) -> None:
    cfg = ModelConfig.from_pretrained(tiny_model_path)
    assert cfg.random_weights and cfg.architecture == "Qwen3ForCausalLM"
    assert "RANDOM" in (tiny_model_path / "README.md").read_text()
    assert json.loads((tiny_model_path / "config.json").read_text())["atlas_notice"] == (
        RANDOM_WEIGHTS_NOTICE
    )


def test_ensure_tiny_model_reuses_then_regenerates_stale(tmp_path: Path) -> None:
    folder = ensure_tiny_model(tmp_path)
    weights = folder / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    assert ensure_tiny_model(tmp_path) == folder and weights.stat().st_mtime_ns == stamp
    stale = {**TINY_CONFIG, "atlas_tiny_version": -1}
    (folder / "config.json").write_text(json.dumps(stale))
    ensure_tiny_model(tmp_path)
    assert json.loads((folder / "config.json").read_text()) == TINY_CONFIG
    assert not [p for p in tmp_path.joinpath("models").iterdir() if p.name.startswith(".")]


def test_model_none_resolves_to_tiny_model(tmp_path: Path) -> None:
    cfg = load_model_config(EngineConfig(model=None, cache_dir=tmp_path))
    assert cfg.model_dir == tmp_path / "models" / "atlas-tiny-qwen3"
    assert cfg.random_weights


def test_tokenizer_round_trips_any_utf8(tiny_model_path: Path) -> None:
    tok = load_tokenizer(tiny_model_path)
    text = "Prefix caching — 東京 naïve 😀 \x00\t end"
    ids = tok.encode(text)
    assert max(ids) < tok.vocab_size == 512
    assert tok.decode(ids) == text
    assert tok.encode("<|im_end|>") == tok.eos_token_ids == [2]
    assert tok.special_token_ids == frozenset({0, 1, 2})
    assert tok.decode([*ids, 2]) == text  # special tokens skipped by default
    assert tok.decode([2], skip_special_tokens=False) == "<|im_end|>"


def test_chat_template_renders_chatml(tiny_model_path: Path) -> None:
    tok = load_tokenizer(tiny_model_path)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert tok.apply_chat_template(messages) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    ids = tok.encode(tok.apply_chat_template(messages), add_special_tokens=False)
    assert ids.count(1) == 3  # <|im_start|> is one token each time


def test_chat_template_errors_are_config_errors(tmp_path: Path, tiny_model_path: Path) -> None:
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_path, folder)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = "{{ raise_exception('no system role') }}"
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ConfigError, match="no system role"):
        load_tokenizer(folder).apply_chat_template([{"role": "user", "content": "x"}])
    del cfg["chat_template"]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ConfigError, match="no chat template"):
        load_tokenizer(folder).apply_chat_template([{"role": "user", "content": "x"}])


# ---------------------------------------------------------------- checkpoints


def test_sharded_checkpoint_loads_like_single_file(
    random_checkpoint: Callable, make_runner: Callable
) -> None:
    sharded = random_checkpoint("llama", num_shards=3)
    assert (sharded / "model.safetensors.index.json").is_file()
    assert len(list(sharded.glob("model-*-of-00003.safetensors"))) == 3
    assert not (sharded / "model.safetensors").exists()
    tokens = [5, 9, 200, 31, 77]
    want = _logits(make_runner(random_checkpoint("llama")), tokens)
    torch.testing.assert_close(_logits(make_runner(sharded), tokens), want, rtol=0, atol=0)


def test_bfloat16_checkpoint_runs_in_float32(
    random_checkpoint: Callable, make_runner: Callable
) -> None:
    folder = random_checkpoint("qwen3", dtype="bfloat16")
    assert ModelConfig.from_pretrained(folder).torch_dtype == "bfloat16"
    runner = make_runner(folder, dtype="float32")
    assert runner.model.model.embed_tokens.weight.dtype == torch.float32
    assert torch.isfinite(_logits(runner, [3, 4, 5])).all()


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit_weights(folder: Path, edit: Callable[[dict[str, torch.Tensor]], None]) -> None:
    weights = load_file(str(folder / "model.safetensors"))
    edit(weights)
    save_file(weights, str(folder / "model.safetensors"))


def test_loader_errors_are_clear(
    tmp_path: Path, random_checkpoint: Callable, make_runner: Callable
) -> None:
    src = random_checkpoint("qwen2")

    missing = _copy(src, tmp_path / "missing")
    _edit_weights(missing, lambda w: w.pop("model.layers.1.self_attn.k_proj.bias"))
    with pytest.raises(ConfigError, match=r"lacks 1 tensors.*qkv_proj.bias\[k\]"):
        make_runner(missing)

    extra = _copy(src, tmp_path / "extra")
    _edit_weights(extra, lambda w: w.update({"model.vision_tower.weight": torch.zeros(2)}))
    with pytest.raises(ConfigError, match=r"vision_tower.*has no place"):
        make_runner(extra)

    shape = _copy(src, tmp_path / "shape")
    cfg = json.loads((shape / "config.json").read_text())
    cfg["intermediate_size"] = 96
    (shape / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ConfigError, match="does not match the weights"):
        make_runner(shape)

    corrupt = _copy(src, tmp_path / "corrupt")
    (corrupt / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ConfigError, match="cannot read"):
        make_runner(corrupt)

    no_weights = _copy(src, tmp_path / "no-weights")
    (no_weights / "model.safetensors").unlink()
    with pytest.raises(ConfigError, match=r"no \*\.safetensors"):
        make_runner(no_weights)


def test_missing_shard_is_named(tmp_path: Path, random_checkpoint: Callable, make_runner) -> None:
    folder = _copy(random_checkpoint("llama", num_shards=3), tmp_path / "m")
    (folder / "model-00002-of-00003.safetensors").unlink()
    with pytest.raises(ConfigError, match="model-00002-of-00003"):
        make_runner(folder)


def test_model_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a local folder"):
        resolve_model_dir("Qwen/Qwen3-0.6B")
    with pytest.raises(ConfigError, match=r"no config\.json"):
        ModelConfig.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text("{oops")
    with pytest.raises(ConfigError, match="not valid JSON"):
        ModelConfig.from_pretrained(tmp_path)
    with pytest.raises(ConfigError, match=r"no tokenizer\.json"):
        load_tokenizer(tmp_path)


# ---------------------------------------------------------------- config parsing

BASE = {
    "architectures": ["Qwen3ForCausalLM"],
    "vocab_size": 100,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
}


def test_config_families_set_their_flags() -> None:
    qwen3 = ModelConfig.from_dict({**BASE, "num_key_value_heads": 2, "head_dim": 16})
    assert (qwen3.qk_norm, qwen3.qkv_bias, qwen3.o_bias, qwen3.head_dim) == (True, False, False, 16)
    qwen2 = ModelConfig.from_dict({**BASE, "architectures": ["Qwen2ForCausalLM"]})
    assert (qwen2.qk_norm, qwen2.qkv_bias, qwen2.o_bias) == (False, True, False)
    assert qwen2.num_key_value_heads == 4 and qwen2.head_dim == 8
    llama = ModelConfig.from_dict(
        {**BASE, "architectures": ["LlamaForCausalLM"], "attention_bias": True}
    )
    assert (llama.qk_norm, llama.qkv_bias, llama.o_bias) == (False, True, True)


def test_config_rope_forms() -> None:
    legacy = ModelConfig.from_dict({**BASE, "rope_theta": 5e5})
    assert legacy.rope_theta == 5e5 and legacy.rope_scaling is None
    new = ModelConfig.from_dict(
        {**BASE, "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}}
    )
    assert new.rope_theta == 1e6 and new.rope_scaling is None
    scaled = ModelConfig.from_dict(
        {**BASE, "rope_theta": 5e5, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}
    )
    assert scaled.rope_scaling == {"rope_type": "llama3", "factor": 8.0}
    with pytest.raises(ConfigError, match="yarn"):
        ModelConfig.from_dict({**BASE, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"architectures": ["MixtralForCausalLM"]}, "unsupported architecture"),
        ({"architectures": None}, "unsupported architecture"),
        ({"vocab_size": None}, "vocab_size"),
        ({"hidden_act": "gelu"}, "silu"),
        ({"num_key_value_heads": 3}, "multiple"),
    ],
)
def test_config_rejections(change: dict, message: str) -> None:
    raw = {k: v for k, v in {**BASE, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=message):
        ModelConfig.from_dict(raw)


def test_generation_config_adds_eos_ids(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({**BASE, "eos_token_id": 7}))
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [9, 7]}))
    cfg = ModelConfig.from_pretrained(tmp_path)
    assert cfg.eos_token_ids == [7, 9] and cfg.eos_token_id == 7


def test_engine_config_kv_capacity() -> None:
    model = ModelConfig.from_dict({**BASE, "num_key_value_heads": 2, "head_dim": 8})
    per_block = 2 * 2 * 16 * 2 * 8 * 4  # K+V, layers, block, kv heads, head dim, float32
    assert EngineConfig(block_size=16).kv_bytes_per_block(model) == per_block
    assert EngineConfig(num_gpu_blocks=7).resolved_num_blocks(model) == 7
    assert EngineConfig(kv_cache_memory=10 * per_block + 5).resolved_num_blocks(model) == 10
    # default: room for max_num_seqs full-length sequences (model max 4096 here)
    default = EngineConfig(max_num_seqs=2, max_model_len=100)
    assert (
        default.resolved_num_blocks(
            ModelConfig.from_dict({**BASE, "max_position_embeddings": 4096})
        )
        == 2 * 7
    )
    with pytest.raises(ConfigError, match="holds no block"):
        EngineConfig(kv_cache_memory=10).resolved_num_blocks(model)
    with pytest.raises(ConfigError, match="exceeds"):
        EngineConfig(max_model_len=10**6).resolved_max_model_len(model)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dtype": "int8"}, "dtype"),
        ({"prefix_caching": "lru"}, "prefix_caching"),
        ({"preemption_mode": "swap"}, "num_cpu_blocks"),
        ({"scheduling_policy": "lifo"}, "scheduling_policy"),
        ({"block_size": 0}, "block_size"),
        ({"device": "tpu"}, "device"),
    ],
)
def test_engine_config_rejections(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        EngineConfig(**kwargs)


def test_qwen3_0_6b_config_builds_the_right_model() -> None:
    from reference_engine.models import model_class

    cfg = ModelConfig.from_dict(QWEN3_0_6B)
    assert (cfg.q_size, cfg.kv_size, cfg.qk_norm, cfg.tie_word_embeddings) == (
        2048,
        1024,
        True,
        True,
    )
    assert cfg.rope_scaling is None and cfg.eos_token_ids == [151645]
    with torch.device("meta"):  # shapes only, no memory
        model = model_class(cfg)(cfg)
    assert model.lm_head is None
    total = sum(p.numel() for p in model.parameters())
    non_embedding = total - model.model.embed_tokens.weight.numel()
    # Qwen's model card: 0.6B parameters, 0.44B of them outside the embedding.
    assert 0.59e9 < total < 0.61e9 and 0.43e9 < non_embedding < 0.45e9
    engine = EngineConfig(dtype="bfloat16")
    assert engine.kv_bytes_per_block(cfg) == 16 * 2 * 28 * 8 * 128 * 2  # 112 KiB per token
    # Default capacity: 1 GiB of bf16 KV blocks at most; max_model_len capped at 4096.
    assert engine.resolved_max_model_len(cfg) == 4096
    assert engine.resolved_num_blocks(cfg) == (1 << 30) // engine.kv_bytes_per_block(cfg)


def test_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(ConfigError, match="cannot write the tiny model"):
        ensure_tiny_model(blocker)


def test_chat_template_features_real_templates_use(tmp_path: Path, tiny_model_path: Path) -> None:
    """Published templates (Qwen3's among them) use namespaces, loop controls, string methods,
    `tojson` and extra switches such as `enable_thinking`; all must render."""
    folder = tmp_path / "m"
    shutil.copytree(tiny_model_path, folder)
    template = (
        "{%- set ns = namespace(last_user=-1) %}"
        "{%- for m in messages %}{% if m.role == 'user' %}{% set ns.last_user = loop.index0 %}"
        "{% endif %}{% endfor %}"
        "{%- for m in messages %}"
        "{%- if m.role == 'tool' %}{% continue %}{% endif %}"
        "{{ '<|im_start|>' + m.role + '\\n' + m.content.split('</think>')[-1].strip() }}"
        "{%- if m.tool_calls is defined %}{{ m.tool_calls | tojson }}{% endif %}"
        "{{ '<|im_end|>\\n' }}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
        "{%- if enable_thinking is defined and not enable_thinking %}"
        "{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{% endif %}"
        "{{ ns.last_user }}"
    )
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = template
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "<think>hmm</think> Hello", "tool_calls": [{"n": "é"}]},
        {"role": "tool", "content": "ignored"},
    ]
    text = load_tokenizer(folder).apply_chat_template(messages, enable_thinking=False)
    assert text == (
        "<|im_start|>user\nHi<|im_end|>\n"
        '<|im_start|>assistant\nHello[{"n": "é"}]<|im_end|>\n'
        "<|im_start|>assistant\n<think>\n\n</think>\n\n0"
    )


def test_tied_checkpoint_that_also_ships_lm_head_loads(
    tmp_path: Path, random_checkpoint: Callable, make_runner: Callable
) -> None:
    """Some tied checkpoints still store `lm_head.weight` (a copy of the embedding); the
    loader must ignore it rather than reject it."""
    folder = _copy(random_checkpoint("qwen3"), tmp_path / "m")
    _edit_weights(
        folder, lambda w: w.update({"lm_head.weight": w["model.embed_tokens.weight"].clone()})
    )
    tokens = [7, 8, 9]
    want = _logits(make_runner(random_checkpoint("qwen3")), tokens)
    torch.testing.assert_close(_logits(make_runner(folder), tokens), want, rtol=0, atol=0)


def test_cuda_without_a_gpu_is_a_clear_error() -> None:
    if torch.cuda.is_available():
        assert EngineConfig(device="cuda").resolved_device() == "cuda"
        return
    assert EngineConfig(device="auto").resolved_device() == "cpu"
    with pytest.raises(ConfigError, match="sees no CUDA device"):
        EngineConfig(device="cuda").resolved_device()


def test_auto_dtype_takes_the_checkpoint_dtype_on_cuda_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cfg = ModelConfig.from_dict({**QWEN3_0_6B})
    assert EngineConfig(dtype="auto").resolved_dtype(cfg) == "float32"  # CPU
    monkeypatch.setattr(EngineConfig, "resolved_device", lambda self: "cuda")
    assert EngineConfig(dtype="auto").resolved_dtype(cfg) == "bfloat16"
    quantised = ModelConfig.from_dict({**QWEN3_0_6B, "torch_dtype": "float8_e4m3fn"})
    with pytest.raises(ConfigError, match="float8_e4m3fn"):
        EngineConfig(dtype="auto").resolved_dtype(quantised)
    assert EngineConfig(dtype="float32").resolved_dtype(quantised) == "float32"
