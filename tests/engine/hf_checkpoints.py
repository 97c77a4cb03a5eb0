"""Checkpoint folders written by Hugging Face's own code, the way readers' folders look.

Weights come from transformers' model classes (their init, their `save_pretrained`), the
tokenizer from the `tokenizers` library saved through `PreTrainedTokenizerFast.save_pretrained`,
so any mismatch between our reader and transformers' writer shows up. Nothing here is read by
the engine directly: tests load these folders through the ordinary loader.

The chat template below is written for this project. It deliberately uses the Jinja features
Qwen3's published template relies on (namespace, reversed iteration, loop.index0, string
methods, `is defined` switches, raise_exception, tojson) so a renderer that lacks one fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
import transformers
from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

# Specials the way Qwen3 marks them: the ChatML markers are special (skipped when decoding),
# the thinking tags are plain added tokens (kept in decoded text).
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
THINK_TOKENS = ("<think>", "</think>")
BPE_VOCAB = 360  # learned vocabulary incl. the three specials; the think tags come on top

# Our own split rule (letters, up to three digits, punctuation runs with an optional leading
# space, whitespace), in the spirit of the regex splits byte-level BPE tokenizers use.
_SPLIT = r" ?\p{L}+| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

TRAINING_TEXT = """\
Paged attention stores keys and values in blocks; the block table maps a sequence onto them.
The scheduler admits waiting requests while the token budget lasts, then decodes the rest.
Prefix caching reuses finished blocks: a hash per block in one engine, a radix tree in another.
Speculative decoding drafts several tokens and verifies them in one forward pass, 2 or 3 at once.
Größe, naïve café, 東京の夜, привет мир, 😀 👍 — multi-byte text is only bytes to the model.
"""

CHAT_TEMPLATE = """\
{%- if messages | length == 0 %}{{ raise_exception('a chat needs at least one message') }}{% endif %}
{#- Find the newest real question: the last user turn that is not a tool result in disguise. #}
{%- set seen = namespace(question=-1, found=false) %}
{%- for turn in messages[::-1] %}
{%- set at = messages | length - 1 - loop.index0 %}
{%- if not seen.found and turn.role == 'user' and not turn.content.startswith('<tool_result>') %}
{%- set seen.question = at %}{% set seen.found = true %}
{%- endif %}
{%- endfor %}
{%- if messages[0].role == 'system' or tools is defined and tools %}
{{- '<|im_start|>system\\n' }}
{%- if messages[0].role == 'system' %}{{ messages[0].content.rstrip() }}{% endif %}
{%- if tools is defined and tools %}
{{- '\\n\\nTools you may call:' }}
{%- for tool in tools %}{{ '\\n' + (tool | tojson) }}{% endfor %}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- endif %}
{%- for turn in messages %}
{%- if turn.role == 'system' %}
{%- if not loop.first %}{{ raise_exception('system messages go first') }}{% endif %}
{%- elif turn.role == 'user' %}
{{- '<|im_start|>user\\n' + turn.content.lstrip() + '<|im_end|>\\n' }}
{%- elif turn.role == 'assistant' %}
{%- set answer = turn.content %}
{%- set thought = '' %}
{%- if '</think>' in turn.content %}
{%- set answer = turn.content.split('</think>')[-1].lstrip('\\n') %}
{%- set thought = turn.content.split('</think>')[0].split('<think>')[-1].strip('\\n') %}
{%- endif %}
{{- '<|im_start|>assistant\\n' }}
{%- if loop.index0 > seen.question and thought %}
{{- '<think>\\n' + thought + '\\n</think>\\n\\n' }}
{%- endif %}
{{- answer.rstrip() }}
{%- if turn.tool_calls is defined %}
{%- for call in turn.tool_calls %}{{ '\\n<call>' + (call | tojson) + '</call>' }}{% endfor %}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- elif turn.role == 'tool' %}
{{- '<|im_start|>user\\n<tool_result>\\n' + turn.content + '\\n</tool_result><|im_end|>\\n' }}
{%- else %}
{{- raise_exception('unknown role ' + turn.role) }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}
{%- endif %}
"""

# The published config.json of Qwen/Qwen3-0.6B, the model the book's readers run locally.
QWEN3_0_6B: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"],
    "attention_bias": False,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "max_position_embeddings": 40960,
    "max_window_layers": 28,
    "model_type": "qwen3",
    "num_attention_heads": 16,
    "num_hidden_layers": 28,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 1000000,
    "sliding_window": None,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "use_sliding_window": False,
    "vocab_size": 151936,
}


def build_bpe_tokenizer() -> Tokenizer:
    """A byte-level BPE with Qwen's kind of normaliser, split and added tokens."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    # Qwen's tokenizer.json carries a ByteLevel post-processor (offsets only, no added ids).
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=BPE_VOCAB,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TRAINING_TEXT.splitlines(), trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in THINK_TOKENS])
    return tok


def save_tokenizer(folder: Path, layout: str = "installed") -> None:
    """Write tokenizer files with transformers' `save_pretrained`.

    layout "installed": exactly what the installed transformers writes (5.x: the template in
    chat_template.jinja). "legacy": the template inside tokenizer_config.json plus
    special_tokens_map.json, as transformers 4.x checkpoints (Qwen3-0.6B's among them) ship.
    """
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=build_bpe_tokenizer(),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
    )
    fast.save_pretrained(str(folder))
    if layout == "installed":
        return
    if layout != "legacy":
        raise ValueError(f"unknown tokenizer layout {layout!r}")
    jinja = folder / "chat_template.jinja"
    cfg_file = folder / "tokenizer_config.json"
    cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    if jinja.is_file():
        cfg["chat_template"] = jinja.read_text(encoding="utf-8")
        jinja.unlink()
    tok = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    cfg["added_tokens_decoder"] = {
        str(t["id"]): {k: v for k, v in t.items() if k != "id"} for t in tok["added_tokens"]
    }
    cfg.update({"bos_token": None, "clean_up_tokenization_spaces": False, "errors": "replace"})
    cfg["tokenizer_class"] = "Qwen2Tokenizer"  # what Qwen3-0.6B's folder names
    cfg_file.write_text(json.dumps(cfg, indent=2, ensure_ascii=False), encoding="utf-8")
    specials = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    (folder / "special_tokens_map.json").write_text(json.dumps(specials, indent=2))


def tokenizer_vocab_size() -> int:
    return int(build_bpe_tokenizer().get_vocab_size(with_added_tokens=True))


# ---------------------------------------------------------------- models


def hf_config(family: str, tied: bool, **overrides: Any) -> Any:
    """A tiny config of `family` ("qwen3" | "llama" | "qwen2") through transformers' classes.

    initializer_range 0.1 (HF's default is 0.02): logits then spread over about one unit, so
    greedy choices have real margins instead of near-uniform noise.
    """
    common: dict[str, Any] = {
        "vocab_size": tokenizer_vocab_size(),
        "hidden_size": 64,
        "intermediate_size": 112,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "max_position_embeddings": 512,
        "tie_word_embeddings": tied,
        "initializer_range": 0.1,
        "bos_token_id": None,
        "eos_token_id": 2,  # <|im_end|>, as in Qwen3's config.json
        **overrides,
    }
    if family == "qwen3":  # head_dim != hidden/heads, as in Qwen3-0.6B
        return transformers.Qwen3Config(
            **common, num_key_value_heads=2, head_dim=24, rope_theta=1e6
        )
    if family == "llama":
        return transformers.LlamaConfig(**common, num_key_value_heads=1, rope_theta=5e5)
    if family == "qwen2":
        return transformers.Qwen2Config(**common, num_key_value_heads=2)
    raise ValueError(f"unknown family {family!r}")


_CLASSES = {
    "qwen3": "Qwen3ForCausalLM",
    "llama": "LlamaForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
}


def build_hf_model(family: str, tied: bool, seed: int = 0, **overrides: Any) -> Any:
    """A float32 transformers model with transformers' own seeded random init."""
    torch.manual_seed(seed)
    model = getattr(transformers, _CLASSES[family])(hf_config(family, tied, **overrides))
    return model.eval()


def save_checkpoint(
    model: Any, folder: Path, dtype: torch.dtype, sharded: bool, tokenizer_layout: str = "installed"
) -> Path:
    """`save_pretrained` in `dtype`; sharded folders get several files and an index."""
    model.to(dtype).save_pretrained(
        str(folder), safe_serialization=True, max_shard_size="40KB" if sharded else "5GB"
    )
    model.to(torch.float32)
    save_tokenizer(folder, tokenizer_layout)
    return folder


def load_hf(folder: Path, dtype: torch.dtype) -> Any:
    """transformers' own reading of the folder, the oracle's side of every comparison."""
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
    return model.eval()
