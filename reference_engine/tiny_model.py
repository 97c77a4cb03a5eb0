"""The built-in tiny model: RANDOM WEIGHTS, generated on first use, so everything runs offline.

It is written into `<cache>/models/atlas-tiny-qwen3/` in the same on-disk format as a real
Hugging Face checkpoint (config.json, model.safetensors, tokenizer.json, tokenizer_config.json
with a chat template) and read back by the ordinary loader, so the tiny model exercises exactly
the code path a real Qwen3 folder takes. Its text is gibberish by construction: the weights are
seeded random numbers, scaled so the next-token distribution is peaked (no argmax ties, no
single token repeated forever), and the tokenizer is a byte-level BPE trained on the short
paragraph below, so it encodes any UTF-8 text.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from reference_engine.config import ConfigError, ModelConfig

if TYPE_CHECKING:
    from tokenizers import Tokenizer

TINY_MODEL_NAME = "atlas-tiny-qwen3"
TINY_MODEL_VERSION = 1  # bump when the recipe changes, so stale caches are regenerated
RANDOM_WEIGHTS_NOTICE = (
    "atlas-tiny-qwen3 has RANDOM weights: its output is deterministic gibberish, "
    "useful only to exercise the engine"
)

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
VOCAB_SIZE = 512
SEED = 1234

TINY_CONFIG: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "vocab_size": VOCAB_SIZE,
    "hidden_size": 64,
    "intermediate_size": 192,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "torch_dtype": "float32",
    "atlas_random_weights": True,
    "atlas_tiny_version": TINY_MODEL_VERSION,
    "atlas_notice": RANDOM_WEIGHTS_NOTICE,
}

# ChatML, the layout Qwen models use.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# Training text for the tokenizer (written for this project). Byte-level BPE covers every
# byte anyway; this only decides which merges exist.
TOKENIZER_TEXT = """\
A serving engine turns many independent requests into a few large batches. Each step the
scheduler decides which requests run, how many prompt tokens each may prefill, and which
running requests only decode one new token. The model runs once over the packed batch, the
sampler picks the next token of every sequence, and the engine appends it, detokenizes it and
checks whether the request has finished. Keys and values live in fixed-size blocks; a block
table maps each sequence's logical positions onto physical blocks, so memory is allocated on
demand and shared prefixes can point at the same blocks. When memory runs out, the scheduler
preempts a request: it frees its blocks and recomputes them later, or swaps them to host
memory. Prefix caching keeps finished blocks around: hashed blocks in one design, a radix tree
of token runs in the other. Continuous batching admits new requests at every step instead of
waiting for the whole batch to finish. Chunked prefill splits a long prompt over several steps
so decodes never stall. Throughput, latency, time to first token, inter-token latency, tokens
per second: the numbers a serving system is judged by. 0123456789 +-*/=()[]{}<>.,;:!?'"
Qu'est-ce que c'est ? Größe, naïve café, 東京, привет, 😀 — unicode text is bytes too.
"""


def tiny_model_dir(cache_dir: Path) -> Path:
    return Path(cache_dir) / "models" / TINY_MODEL_NAME


def ensure_tiny_model(cache_dir: Path) -> Path:
    """The tiny model's folder, generated first if missing or from an older recipe."""
    target = tiny_model_dir(cache_dir)
    if _is_current(target):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write into a sibling temp folder and rename: a crash or a concurrent first use
        # never leaves a half-written model behind.
        tmp = Path(tempfile.mkdtemp(prefix=f".{TINY_MODEL_NAME}-", dir=target.parent))
    except OSError as exc:
        raise ConfigError(f"cannot write the tiny model under {target.parent}: {exc}") from None
    try:
        write_tiny_model(tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except OSError as exc:
        if not _is_current(target):  # lost a race with another process: theirs is fine
            raise ConfigError(f"cannot write the tiny model into {target}: {exc}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _is_current(folder: Path) -> bool:
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    needed = ("model.safetensors", "tokenizer.json", "tokenizer_config.json")
    return cfg.get("atlas_tiny_version") == TINY_MODEL_VERSION and all(
        (folder / n).is_file() for n in needed
    )


def write_tiny_model(folder: Path) -> None:
    """Write the whole checkpoint into `folder`; same bytes every time."""
    tokenizer = build_tokenizer()
    weights = random_weights(ModelConfig.from_dict(TINY_CONFIG), seed=SEED)
    write_checkpoint(folder, TINY_CONFIG, weights, tokenizer)
    (folder / "README.md").write_text(
        f"# {TINY_MODEL_NAME}\n\n{RANDOM_WEIGHTS_NOTICE}.\n\n"
        "Generated by `reference_engine.tiny_model`; delete this folder to regenerate it.\n",
        encoding="utf-8",
    )


def write_checkpoint(
    folder: Path,
    config: dict[str, Any],
    weights: dict[str, torch.Tensor],
    tokenizer: Tokenizer,
    num_shards: int = 1,
) -> None:
    """A Hugging Face style folder; `num_shards` > 1 splits the weights over several files
    with a `model.safetensors.index.json`, the way large checkpoints ship."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    _write_json(folder / "config.json", config)
    eos_id = tokenizer.token_to_id("<|im_end|>")
    _write_json(
        folder / "generation_config.json",
        {"eos_token_id": [eos_id, tokenizer.token_to_id("<|endoftext|>")]},
    )
    tok_cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "model_max_length": config["max_position_embeddings"],
    }
    _write_json(folder / "tokenizer_config.json", tok_cfg)
    if num_shards <= 1:
        save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
        return
    names = sorted(weights)
    weight_map: dict[str, str] = {}
    for i in range(num_shards):
        part = names[i::num_shards]
        file = f"model-{i + 1:05d}-of-{num_shards:05d}.safetensors"
        save_file({n: weights[n] for n in part}, str(folder / file), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(part, file))
    total = sum(t.numel() * t.element_size() for t in weights.values())
    _write_json(
        folder / "model.safetensors.index.json",
        {"metadata": {"total_size": total}, "weight_map": weight_map},
    )


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def build_tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(TOKENIZER_TEXT.splitlines(), trainer=trainer)
    return tokenizer


def random_weights(
    cfg: ModelConfig, seed: int, dtype: torch.dtype = torch.float32, special_tokens: int = 3
) -> dict[str, torch.Tensor]:
    """Seeded random tensors under Hugging Face's parameter names for `cfg`'s family."""
    hidden, inter = cfg.hidden_size, cfg.intermediate_size
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape: int, std: float) -> torch.Tensor:
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * std).to(dtype)

    def near_one(n: int) -> torch.Tensor:
        return 1.0 + rand(n, std=0.1)

    w: dict[str, torch.Tensor] = {
        "model.embed_tokens.weight": rand(cfg.vocab_size, hidden, std=1.0)
    }
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        # std 1/sqrt(fan_in) keeps activations O(1) through the residual stream.
        for name, rows in (("q", cfg.q_size), ("k", cfg.kv_size), ("v", cfg.kv_size)):
            w[f"{p}self_attn.{name}_proj.weight"] = rand(rows, hidden, std=hidden**-0.5)
            if cfg.qkv_bias:
                w[f"{p}self_attn.{name}_proj.bias"] = rand(rows, std=0.1)
        w[p + "self_attn.o_proj.weight"] = rand(hidden, cfg.q_size, std=cfg.q_size**-0.5)
        if cfg.o_bias:
            w[p + "self_attn.o_proj.bias"] = rand(hidden, std=0.1)
        if cfg.qk_norm:
            w[p + "self_attn.q_norm.weight"] = near_one(cfg.head_dim)
            w[p + "self_attn.k_norm.weight"] = near_one(cfg.head_dim)
        if cfg.is_moe_layer(i):
            # A spread-out router (std 1 logits) so the top-k choice is never a near tie.
            w[p + "mlp.gate.weight"] = rand(cfg.num_experts, hidden, std=hidden**-0.5 * 2)
            moe = cfg.moe_intermediate_size
            for e in range(cfg.num_experts):
                q = f"{p}mlp.experts.{e}."
                w[q + "gate_proj.weight"] = rand(moe, hidden, std=hidden**-0.5)
                w[q + "up_proj.weight"] = rand(moe, hidden, std=hidden**-0.5)
                w[q + "down_proj.weight"] = rand(hidden, moe, std=moe**-0.5)
        else:
            w[p + "mlp.gate_proj.weight"] = rand(inter, hidden, std=hidden**-0.5)
            w[p + "mlp.up_proj.weight"] = rand(inter, hidden, std=hidden**-0.5)
            w[p + "mlp.down_proj.weight"] = rand(hidden, inter, std=inter**-0.5)
        w[p + "input_layernorm.weight"] = near_one(hidden)
        w[p + "post_attention_layernorm.weight"] = near_one(hidden)
    w["model.norm.weight"] = near_one(hidden)
    # A large output scale makes the next-token distribution peaked: logits spread over
    # several units, so greedy decoding has a clear winner at every step.
    lm_head = rand(cfg.vocab_size, hidden, std=0.5)
    # Special tokens (eos among them) get near-zero logits: otherwise random text would end
    # after a handful of tokens whenever eos happens to win.
    lm_head[:special_tokens] *= 0.05
    if cfg.tie_word_embeddings:
        w["model.embed_tokens.weight"] = lm_head
    else:
        w["lm_head.weight"] = lm_head
    return w
