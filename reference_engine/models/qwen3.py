"""Qwen3: the Llama decoder plus a per-head RMSNorm on q and k before RoPE (`qk_norm`),
which keeps attention logits in range without the q/k/v biases Qwen2 used."""

from __future__ import annotations

import torch

from reference_engine.config import ModelConfig
from reference_engine.layers.norm import RMSNorm
from reference_engine.models.llama import LlamaAttention, LlamaForCausalLM


class Qwen3Attention(LlamaAttention):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        self.q_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.k_norm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps)

    def normalize_qk(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q_norm(q), self.k_norm(k)


class Qwen3ForCausalLM(LlamaForCausalLM):
    attention_cls = Qwen3Attention
