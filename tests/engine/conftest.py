"""Shared fixtures for engine tests: tiny random checkpoints of each family, tiny runners.

Checkpoints are float64 by default so that argmax ties and batching-order rounding cannot make
a comparison flaky; every folder is real Hugging Face format, read by the ordinary loader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from reference_engine.config import EngineConfig, ModelConfig
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.tiny_model import (
    build_tokenizer,
    ensure_tiny_model,
    random_weights,
    write_checkpoint,
)

_COMMON: dict[str, Any] = {
    "vocab_size": 512,  # the tiny tokenizer's size
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 512,
    "bos_token_id": None,
    "eos_token_id": 2,
}

# One small config per family, each exercising what sets the family apart.
FAMILY_CONFIGS: dict[str, dict[str, Any]] = {
    # Qwen3: q/k norm, head_dim not hidden/heads (like Qwen3-0.6B), tied embeddings.
    "qwen3": {
        **_COMMON,
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "head_dim": 24,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": True,
        "attention_bias": False,
    },
    # Llama: untied, attention_bias on q/k/v/o, llama3 RoPE scaling.
    "llama": {
        **_COMMON,
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "head_dim": 16,
        "num_key_value_heads": 1,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
        "tie_word_embeddings": False,
        "attention_bias": True,
    },
    # Mistral: the Llama graph with every layer sliding over 7 tokens (not a block multiple).
    "mistral": {
        **_COMMON,
        "architectures": ["MistralForCausalLM"],
        "model_type": "mistral",
        "head_dim": 16,
        "rope_theta": 10000.0,
        "sliding_window": 7,
        "tie_word_embeddings": False,
    },
    # Qwen3-MoE: 8 experts, top-2 renormalised; layer 1 keeps a dense MLP (mlp_only_layers).
    "qwen3_moe": {
        **_COMMON,
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "head_dim": 16,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": False,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "norm_topk_prob": True,
        "mlp_only_layers": [1],
    },
    # Qwen2: biases on q/k/v only.
    "qwen2": {
        **_COMMON,
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "num_key_value_heads": 4,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
    },
}

CheckpointFactory = Callable[..., Path]


@pytest.fixture(scope="session", autouse=True)
def _single_torch_thread() -> Iterator[None]:
    """Tiny models gain nothing from intra-op threads, and on a shared, busy CPU the
    threads' spin-waits make every op several times slower (the suite ran 2.5x faster)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def atlas_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("atlas-cache")


@pytest.fixture(scope="session")
def tiny_model_path(atlas_cache_dir: Path) -> Path:
    """The built-in random-weights model, generated into a temporary cache."""
    return ensure_tiny_model(atlas_cache_dir)


@pytest.fixture(scope="session")
def random_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> CheckpointFactory:
    """`random_checkpoint("qwen3" | "llama" | "qwen2" | "qwen3_moe", dtype="float64", num_shards=1, seed=0)`
    -> folder of a tiny random checkpoint (written once per argument set)."""
    made: dict[tuple[str, str, int, int], Path] = {}
    tokenizer = build_tokenizer()

    def make(family: str, dtype: str = "float64", num_shards: int = 1, seed: int = 0) -> Path:
        key = (family, dtype, num_shards, seed)
        if key not in made:
            config = {**FAMILY_CONFIGS[family], "torch_dtype": dtype}
            weights = random_weights(
                ModelConfig.from_dict(config), seed=seed, dtype=getattr(torch, dtype)
            )
            folder = tmp_path_factory.mktemp(f"{family}-{dtype}-{num_shards}-{seed}")
            write_checkpoint(folder, config, weights, tokenizer, num_shards=num_shards)
            made[key] = folder
        return made[key]

    return make


@pytest.fixture
def make_runner() -> Callable[..., ModelRunner]:
    """`make_runner(model_dir, dtype="float64", num_blocks=64, block_size=4, **engine_kwargs)`."""

    def make(
        model_dir: Path,
        dtype: str = "float64",
        num_blocks: int = 64,
        block_size: int = 4,
        **engine_kwargs: Any,
    ) -> ModelRunner:
        cfg = EngineConfig(
            model=str(model_dir),
            dtype=dtype,
            num_gpu_blocks=num_blocks,
            block_size=block_size,
            **engine_kwargs,
        )
        return ModelRunner(load_model_config(cfg), cfg)

    return make


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`cuda` tests need a GPU; where torch sees none they are skipped, saying so."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (run `pytest -m cuda` on a GPU machine)")
    for item in items:
        if item.get_closest_marker("cuda"):
            item.add_marker(skip)
