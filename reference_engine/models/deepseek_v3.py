"""DeepSeek-V3 (and V2's layout; V3.2 adds a sparse-attention indexer, layers/dsa_indexer.py): the Llama-style pre-norm decoder with multi-head latent
attention (layers/mla_attention.py) in every layer, a dense SwiGLU MLP in the first
`first_k_dense_replace` layers and mixture-of-experts layers after them (routed experts
with grouped top-k and shared experts, on layers/fused_moe.py).

Module names follow transformers' DeepseekV3ForCausalLM, so checkpoints load 1:1 (gate/up
fused as in Llama). The KV cache holds one latent per token per layer
(ModelConfig.kv_cache_shapes), which is where MLA's memory saving shows up.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.config import ConfigError, ModelConfig
from reference_engine.forward_batch import ForwardBatch
from reference_engine.layers.dsa_indexer import DSAIndexer
from reference_engine.layers.fused_moe import FusedMoE
from reference_engine.layers.linear import Linear
from reference_engine.layers.mla_attention import MLAAttention
from reference_engine.layers.mla_attention import Path as MLAPath
from reference_engine.layers.norm import RMSNorm
from reference_engine.layers.rotary import RopeAngles, RotaryEmbedding, yarn_mscale
from reference_engine.models.llama import GATE_UP_PACKED, LlamaMLP, packed_checkpoint_name

KVCache = tuple[torch.Tensor, ...]


def _mla(cfg: ModelConfig) -> MLAAttention:
    raw: dict[str, Any] = cfg.hf_config
    assert cfg.kv_lora_rank is not None
    attn = MLAAttention(
        hidden_size=cfg.hidden_size,
        num_heads=cfg.num_attention_heads,
        q_lora_rank=raw.get("q_lora_rank"),
        kv_lora_rank=cfg.kv_lora_rank,
        qk_nope_head_dim=int(raw["qk_nope_head_dim"]),
        qk_rope_head_dim=int(raw["qk_rope_head_dim"]),
        v_head_dim=int(raw["v_head_dim"]),
        rms_norm_eps=cfg.rms_norm_eps,
        bias=bool(raw.get("attention_bias", False)),
    )
    scaling = cfg.rope_scaling or {}
    if scaling.get("rope_type") == "yarn" and scaling.get("mscale_all_dim"):
        # YaRN's temperature on the whole head, folded into the softmax scale (DeepSeek's way).
        m = yarn_mscale(float(scaling["factor"]), float(scaling["mscale_all_dim"]))
        attn.scale *= m * m
    if raw.get("index_topk"):  # DeepSeek-V3.2 sparse attention
        attn.indexer = DSAIndexer(
            hidden_size=cfg.hidden_size,
            q_lora_rank=int(raw["q_lora_rank"]),
            num_heads=int(raw["index_n_heads"]),
            head_dim=int(raw["index_head_dim"]),
            rope_dim=int(raw["qk_rope_head_dim"]),
            topk=int(raw["index_topk"]),
        )
    return attn


class DeepseekV3TopkRouter(nn.Module):
    """Router scores in float32, as transformers computes them; the correction bias only
    steers which experts win (auxiliary-loss-free load balancing), never their weights."""

    def __init__(self, num_experts: int, hidden_size: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_experts, hidden_size))
        nn.init.normal_(self.weight, std=hidden_size**-0.5)  # kept only without a checkpoint
        self.e_score_correction_bias = nn.Parameter(torch.zeros(num_experts), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = torch.promote_types(x.dtype, torch.float32)
        return F.linear(x.to(dtype), self.weight.to(dtype))


class DeepseekV3MoE(nn.Module):
    """Routed experts (sigmoid scores, grouped top-k, scaled weights) plus shared experts
    every token passes through, on the engine's one MoE layer (layers/fused_moe.py)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        raw = cfg.hf_config
        num_experts = int(raw["n_routed_experts"])
        inter = int(raw["moe_intermediate_size"])
        self.gate = DeepseekV3TopkRouter(num_experts, cfg.hidden_size)
        self.experts = FusedMoE(
            num_experts=num_experts,
            top_k=int(raw["num_experts_per_tok"]),
            hidden_size=cfg.hidden_size,
            intermediate_size=inter,
            renormalize=bool(raw.get("norm_topk_prob", True)),
            scoring_func="sigmoid",
            routed_scaling_factor=float(raw.get("routed_scaling_factor", 1.0)),
            num_expert_group=int(raw.get("n_group") or 1),
            topk_group=int(raw.get("topk_group") or 1),
        )
        shared = inter * int(raw.get("n_shared_experts") or 0)
        self.shared_experts = (
            LlamaMLP(dataclasses.replace(cfg, intermediate_size=shared)) if shared else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.experts(x, self.gate(x), self.gate.e_score_correction_bias)
        return out if self.shared_experts is None else out + self.shared_experts(x)


def _mlp(cfg: ModelConfig, layer: int) -> nn.Module:
    raw = cfg.hf_config
    types = raw.get("mlp_layer_types")  # V3.2 spells the pattern out
    dense = types[layer] == "dense" if types else layer < int(raw.get("first_k_dense_replace", 0))
    if dense or not raw.get("n_routed_experts"):
        return LlamaMLP(cfg)
    return DeepseekV3MoE(cfg)


class DeepseekV3DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, layer: int) -> None:
        super().__init__()
        self.self_attn = _mla(cfg)
        self.mlp = _mlp(cfg, layer)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self, rope: RopeAngles, x: torch.Tensor, kv_cache: KVCache, batch: ForwardBatch
    ) -> torch.Tensor:
        x = x + self.self_attn(rope, self.input_layernorm(x), kv_cache, batch)
        return x + self.mlp(self.post_attention_layernorm(x))


class DeepseekV3Model(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        # RoPE rotates only the decoupled qk_rope_head_dim part of q and k.
        self.rotary_emb = RotaryEmbedding(
            int(cfg.hf_config["qk_rope_head_dim"]),
            cfg.max_position_embeddings,
            cfg.rope_theta,
            cfg.rope_scaling,
        )
        self.layers = nn.ModuleList(
            DeepseekV3DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers)
        )
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: list[KVCache],
        batch: ForwardBatch,
    ) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        rope = self.rotary_emb.lookup(positions)
        for layer, kv_cache in zip(self.layers, kv_caches, strict=True):
            x = layer(rope, x, kv_cache, batch)
        return self.norm(x)


class DeepseekV3ForCausalLM(nn.Module):
    PACKED_MODULES = GATE_UP_PACKED

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        if cfg.kv_lora_rank is None:
            raise ConfigError("DeepseekV3ForCausalLM needs kv_lora_rank (MLA) in config.json")
        self.config = cfg
        self.model = DeepseekV3Model(cfg)
        self.lm_head = (
            None if cfg.tie_word_embeddings else Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: list[KVCache],
        batch: ForwardBatch,
    ) -> torch.Tensor:
        return self.model(input_ids, positions, kv_caches, batch)

    def map_checkpoint_name(self, hf_name: str) -> tuple[str, str | None]:
        """Routed experts load into the stacked FusedMoE weights; the rest as Llama's."""
        routed = FusedMoE.map_checkpoint_name(hf_name)
        return routed or packed_checkpoint_name(hf_name, self.PACKED_MODULES)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.lm_head is None:
            return F.linear(hidden, self.model.embed_tokens.weight)
        return self.lm_head(hidden)

    def set_attention_paths(self, prefill: MLAPath, decode: MLAPath) -> None:
        """Force MLA's computation paths (tests compare them; the defaults are the fast ones)."""
        for module in self.modules():
            if isinstance(module, MLAAttention):  # each layer's self_attn
                module.prefill_path = prefill
                module.decode_path = decode
