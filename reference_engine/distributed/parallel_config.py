"""Checks that a parallel layout fits the model, made before any rank starts.

vLLM raises the same kind of error from `ParallelConfig` / the model's `__init__`; here a
size that does not divide heads, KV heads, the vocabulary, the MLP, the experts or the layers
is a `ConfigError` in the driver, so no worker is spawned for a layout that cannot load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference_engine.config import ConfigError

if TYPE_CHECKING:
    from reference_engine.config import EngineConfig, ModelConfig


def verify_sizes(cfg: EngineConfig) -> None:
    """Model-independent checks (EngineConfig.verify)."""
    sizes = {
        "tensor_parallel_size": cfg.tensor_parallel_size,
        "pipeline_parallel_size": cfg.pipeline_parallel_size,
        "expert_parallel_size": cfg.expert_parallel_size,
        "context_parallel_size": cfg.context_parallel_size,
    }
    for name, size in sizes.items():
        if not isinstance(size, int) or size < 1:
            raise ConfigError(f"{name} must be a positive integer, got {size!r}")
    tp, ep = cfg.tensor_parallel_size, cfg.expert_parallel_size
    if ep > 1 and tp > 1 and ep != tp:
        raise ConfigError(
            f"expert_parallel_size {ep} must equal tensor_parallel_size {tp} (experts are "
            "spread over the tensor-parallel ranks) or be used with tensor_parallel_size=1"
        )
    cp = cfg.context_parallel_size
    if cp > 1 and ep > 1:
        raise ConfigError(
            "context_parallel_size combines with tensor and pipeline parallelism, not expert "
            "parallelism; use it with expert_parallel_size 1"
        )
    if cp > 1 and cfg.block_size % cp:
        raise ConfigError(
            f"block_size ({cfg.block_size}) must be divisible by context_parallel_size "
            f"({cp}): each rank holds block_size / cp rows of every block"
        )
    if cfg.distributed_backend not in ("auto", "gloo", "nccl"):
        raise ConfigError(
            f"distributed_backend must be auto, gloo or nccl, got {cfg.distributed_backend}"
        )
    if cfg.distributed_timeout_s <= 0:
        raise ConfigError("distributed_timeout_s must be positive")


# Families whose every layer is built from the parallel layers and verified across ranks.
SHARDED_ARCHITECTURES = (
    "Qwen3ForCausalLM",
    "LlamaForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3MoeForCausalLM",
)


def verify_model(model: ModelConfig, cfg: EngineConfig) -> None:
    """Does the layout divide this model? Raises ConfigError naming what does not."""
    tp, ep = cfg.tensor_parallel_size, cfg.expert_parallel_size
    if model.architecture not in SHARDED_ARCHITECTURES:
        raise ConfigError(
            f"{model.architecture} does not run across ranks yet; the distributed engine "
            f"shards {', '.join(SHARDED_ARCHITECTURES)}"
        )
    unsupported = [
        name
        for name, on in (
            ("quantization", cfg.quantization is not None),
            ("kv_cache_dtype", cfg.kv_cache_dtype != "auto"),
            ("enable_lora", cfg.enable_lora),
            ("speculative_config", cfg.speculative_config is not None),
            ("sliding-window layers", bool(model.sliding_windows)),
        )
        if on
    ]
    if unsupported:
        raise ConfigError(
            f"{', '.join(unsupported)} with several ranks is not implemented yet "
            "(run those features in one process)"
        )
    problems = []

    def need(value: int, size: int, what: str, knob: str) -> None:
        if value % size:
            problems.append(f"{what} ({value}) is not divisible by {knob} ({size})")

    need(model.num_attention_heads, tp, "num_attention_heads", "tensor_parallel_size")
    kv = model.num_key_value_heads
    if kv % tp and tp % kv:  # fewer KV heads than ranks is fine when they replicate evenly
        problems.append(
            f"num_key_value_heads ({kv}) and tensor_parallel_size ({tp}): neither divides "
            "the other, so KV heads can be neither split nor replicated evenly"
        )
    need(model.vocab_size, tp, "vocab_size", "tensor_parallel_size")
    need(model.intermediate_size, tp, "intermediate_size", "tensor_parallel_size")
    if model.num_experts:
        if ep > 1:
            need(model.num_experts, ep, "num_experts", "expert_parallel_size")
        else:
            need(model.moe_intermediate_size, tp, "moe_intermediate_size", "tensor_parallel_size")
    elif ep > 1:
        problems.append(
            f"expert_parallel_size {ep} needs a mixture-of-experts model; "
            f"{model.architecture} has no experts"
        )
    need(
        model.num_hidden_layers,
        cfg.pipeline_parallel_size,
        "num_hidden_layers",
        "pipeline_parallel_size",
    )
    if problems:
        raise ConfigError("this parallel layout does not fit the model: " + "; ".join(problems))
