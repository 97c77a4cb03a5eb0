"""Model families, looked up by the `architectures` name in a checkpoint's config.json."""

from __future__ import annotations

from types import MappingProxyType

from torch import nn

from reference_engine.config import ConfigError, ModelConfig
from reference_engine.models.deepseek_v3 import DeepseekV3ForCausalLM
from reference_engine.models.gemma3 import Gemma3ForCausalLM
from reference_engine.models.gpt_oss import GptOssForCausalLM
from reference_engine.models.llama import LlamaForCausalLM
from reference_engine.models.qwen3 import Qwen3ForCausalLM
from reference_engine.models.qwen3_5 import Qwen3_5ForCausalLM, Qwen3_5ForConditionalGeneration
from reference_engine.models.qwen3_moe import Qwen3MoeForCausalLM
from reference_engine.models.qwen3_next import Qwen3NextForCausalLM

# Qwen2 is the Llama graph with q/k/v biases; ModelConfig sets those flags.
MODEL_REGISTRY = MappingProxyType(
    {
        "Qwen3ForCausalLM": Qwen3ForCausalLM,
        "LlamaForCausalLM": LlamaForCausalLM,
        "Qwen2ForCausalLM": LlamaForCausalLM,
        # Mistral is the Llama graph with every layer sliding (ModelConfig.sliding_windows).
        "MistralForCausalLM": LlamaForCausalLM,
        "Qwen3MoeForCausalLM": Qwen3MoeForCausalLM,
        "DeepseekV3ForCausalLM": DeepseekV3ForCausalLM,
        # V3.2: the same family, MLA layers with a DSA indexer (ModelConfig sets the cache).
        "DeepseekV32ForCausalLM": DeepseekV3ForCausalLM,
        # Hybrid: Gated DeltaNet + gated full attention, recurrent state per request.
        "Qwen3_5ForCausalLM": Qwen3_5ForCausalLM,
        "Qwen3_5ForConditionalGeneration": Qwen3_5ForConditionalGeneration,
        "Qwen3NextForCausalLM": Qwen3NextForCausalLM,
        # Llama graph + attention sinks + biased MoE with a clamped SwiGLU.
        "GptOssForCausalLM": GptOssForCausalLM,
        # Llama graph + sandwich norms, local/global RoPE, 5 sliding : 1 full layers.
        "Gemma3ForCausalLM": Gemma3ForCausalLM,
    }
)


def model_class(cfg: ModelConfig) -> type[nn.Module]:
    try:
        return MODEL_REGISTRY[cfg.architecture]
    except KeyError:
        raise ConfigError(f"no model class for architecture {cfg.architecture}") from None


__all__ = [
    "MODEL_REGISTRY",
    "DeepseekV3ForCausalLM",
    "Gemma3ForCausalLM",
    "GptOssForCausalLM",
    "LlamaForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "Qwen3NextForCausalLM",
    "Qwen3_5ForCausalLM",
    "Qwen3_5ForConditionalGeneration",
    "model_class",
]
