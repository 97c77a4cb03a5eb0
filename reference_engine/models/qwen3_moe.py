"""Qwen3-MoE: the Qwen3 decoder with a sparse mixture-of-experts block in place of the MLP.

Each sparse layer's router (`mlp.gate`, a plain replicated linear) scores every expert; the
top `num_experts_per_tok` run, their weights renormalised when `norm_topk_prob` (see
layers/fused_moe.py). Layers in `mlp_only_layers`, or off the `decoder_sparse_step` stride,
keep a dense MLP. Qwen3-MoE has no shared experts.
"""

from __future__ import annotations

import torch
from torch import nn

from reference_engine.config import ModelConfig
from reference_engine.layers.fused_moe import FusedMoE
from reference_engine.layers.linear import Linear
from reference_engine.models.llama import LlamaMLP
from reference_engine.models.qwen3 import Qwen3ForCausalLM


class Qwen3MoeSparseMoeBlock(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate = Linear(cfg.hidden_size, cfg.num_experts, bias=False)
        self.experts = FusedMoE(
            num_experts=cfg.num_experts,
            top_k=cfg.num_experts_per_tok,
            hidden_size=cfg.hidden_size,
            intermediate_size=cfg.moe_intermediate_size,
            renormalize=cfg.norm_topk_prob,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.experts(x, self.gate(x))


def qwen3_moe_mlp(cfg: ModelConfig, layer_idx: int) -> nn.Module:
    return Qwen3MoeSparseMoeBlock(cfg) if cfg.is_moe_layer(layer_idx) else LlamaMLP(cfg)


class Qwen3MoeForCausalLM(Qwen3ForCausalLM):
    make_mlp = staticmethod(qwen3_moe_mlp)

    def map_checkpoint_name(self, hf_name: str) -> tuple[str, str | None]:
        # experts.N.gate_proj must not take the dense gate_proj -> gate_up_proj route.
        return FusedMoE.map_checkpoint_name(hf_name) or super().map_checkpoint_name(hf_name)
