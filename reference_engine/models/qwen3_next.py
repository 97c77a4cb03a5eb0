"""Qwen3-Next: the Qwen3.5 hybrid graph (models/qwen3_5.py) with two differences.

- Gated DeltaNet's projections are fused, per key-head group: `in_proj_qkvz` emits, for each
  of the `linear_num_key_heads` groups, [q (Dk), k (Dk), v (r x Dv), z (r x Dv)] with
  r = value heads per key head, and `in_proj_ba` [b (r), a (r)]. `Qwen3NextGatedDeltaNet`
  regroups them into the q|k|v, z, b, a layout the shared layer computes with.
- Sparse MoE MLPs (softmax top-k routing, as Qwen3-MoE) plus a shared expert whose output is
  scaled by sigmoid(shared_expert_gate(x)), on the engine's one MoE layer (layers/fused_moe.py).
  Layers in `mlp_only_layers`, or off the `decoder_sparse_step` stride, keep a dense MLP.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from reference_engine.config import ModelConfig
from reference_engine.layers.fused_moe import FusedMoE
from reference_engine.layers.gated_delta_net import GatedDeltaNet
from reference_engine.layers.linear import Linear
from reference_engine.models.llama import LlamaMLP
from reference_engine.models.qwen3_5 import Qwen3_5ForCausalLM


class Qwen3NextGatedDeltaNet(GatedDeltaNet):
    def __init__(self, hidden_size: int, **kwargs: int | float) -> None:
        super().__init__(hidden_size, **kwargs)  # type: ignore[arg-type]
        # The fused projections replace the four separate ones.
        del self.in_proj_qkv, self.in_proj_z, self.in_proj_b, self.in_proj_a
        self.in_proj_qkvz = Linear(hidden_size, 2 * self.key_dim + 2 * self.value_dim, bias=False)
        self.in_proj_ba = Linear(hidden_size, 2 * self.num_v_heads, bias=False)

    def project(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        groups, dk, dv = self.num_k_heads, self.head_k_dim, self.head_v_dim
        r = self.num_v_heads // groups
        qkvz = self.in_proj_qkvz(x).view(-1, groups, 2 * dk + 2 * r * dv)
        q, k, v, z = qkvz.split([dk, dk, r * dv, r * dv], dim=-1)
        b, a = self.in_proj_ba(x).view(-1, groups, 2 * r).split([r, r], dim=-1)
        t = x.shape[0]
        mixed = torch.cat([q.reshape(t, -1), k.reshape(t, -1), v.reshape(t, -1)], dim=-1)
        z = z.reshape(t, self.num_v_heads, dv)
        return mixed, z, b.reshape(t, -1), a.reshape(t, -1)


class Qwen3NextSparseMoeBlock(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        raw = cfg.hf_config
        num_experts = int(raw["num_experts"])
        self.gate = Linear(cfg.hidden_size, num_experts, bias=False)
        self.experts = FusedMoE(
            num_experts=num_experts,
            top_k=int(raw["num_experts_per_tok"]),
            hidden_size=cfg.hidden_size,
            intermediate_size=int(raw["moe_intermediate_size"]),
            renormalize=bool(raw.get("norm_topk_prob", True)),
        )
        shared = int(raw.get("shared_expert_intermediate_size") or 0)
        self.shared_expert = (
            LlamaMLP(dataclasses.replace(cfg, intermediate_size=shared)) if shared else None
        )
        self.shared_expert_gate = Linear(cfg.hidden_size, 1, bias=False) if shared else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.experts(x, self.gate(x))
        if self.shared_expert is None or self.shared_expert_gate is None:
            return out
        return out + torch.sigmoid(self.shared_expert_gate(x)) * self.shared_expert(x)


def qwen3_next_mlp(cfg: ModelConfig, layer_idx: int) -> nn.Module:
    raw = cfg.hf_config
    sparse = (
        int(raw.get("num_experts") or 0) > 0
        and layer_idx not in (raw.get("mlp_only_layers") or [])
        and (layer_idx + 1) % int(raw.get("decoder_sparse_step") or 1) == 0
    )
    return Qwen3NextSparseMoeBlock(cfg) if sparse else LlamaMLP(cfg)


class Qwen3NextForCausalLM(Qwen3_5ForCausalLM):
    linear_attention_cls = Qwen3NextGatedDeltaNet
    make_mlp = staticmethod(qwen3_next_mlp)

    def map_checkpoint_name(self, hf_name: str) -> tuple[str, str | None]:
        # experts.N.gate_proj must not take the dense gate_proj -> gate_up_proj route.
        routed = FusedMoE.map_checkpoint_name(hf_name)
        return routed or super().map_checkpoint_name(hf_name)
