"""Qwen3.5 (text): a hybrid of Gated DeltaNet layers and gated full-attention layers.

`layer_types` interleaves them (three linear-attention layers, then one full-attention layer,
in the published configs). Only the full-attention layers have paged KV
(ModelConfig.kv_cache_shapes gives the others none); each linear-attention layer keeps a
fixed-size state per running request (layers/gated_delta_net.py) in a slot the
KVCacheManager assigns. What sets the full-attention layers apart from Qwen3's:

- an output gate: q_proj emits each head's query and a gate side by side, and the attention
  output is multiplied by sigmoid(gate) before o_proj;
- RoPE on the first `partial_rotary_factor` of each head's dimensions only (text positions
  are the same on all three multimodal-RoPE axes, so plain RoPE equals Qwen3.5's M-RoPE here);
- q/k norms and the decoder norms store their scale as an offset from 1 (ZeroCenteredRMSNorm).

Module names follow transformers' Qwen3_5ForCausalLM, so checkpoints load 1:1 (gate/up fused).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.config import ModelConfig
from reference_engine.forward_batch import ForwardBatch
from reference_engine.layers.attention import PagedAttention
from reference_engine.layers.gated_delta_net import GatedDeltaNet
from reference_engine.layers.linear import Linear
from reference_engine.layers.norm import ZeroCenteredRMSNorm
from reference_engine.layers.rotary import MRotaryEmbedding, RopeAngles, RotaryEmbedding
from reference_engine.models.llama import GATE_UP_PACKED, MakeMLP, dense_mlp, packed_checkpoint_name
from reference_engine.models.qwen3_5_vision import Qwen3_5VisionModel, VisionConfig

KVCache = tuple[torch.Tensor, ...]


def rotary_dim(cfg: ModelConfig) -> int:
    factor = float((cfg.hf_config.get("rope_parameters") or {}).get("partial_rotary_factor", 1.0))
    return int(cfg.head_dim * factor)


class Qwen3_5Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.num_heads, self.num_kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.head_dim, self.rotary_dim = cfg.head_dim, rotary_dim(cfg)
        bias = bool(cfg.hf_config.get("attention_bias", False))
        self.q_proj = Linear(cfg.hidden_size, 2 * cfg.q_size, bias=bias)  # query and gate
        self.k_proj = Linear(cfg.hidden_size, cfg.kv_size, bias=bias)
        self.v_proj = Linear(cfg.hidden_size, cfg.kv_size, bias=bias)
        self.o_proj = Linear(cfg.q_size, cfg.hidden_size, bias=bias)
        self.q_norm = ZeroCenteredRMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.k_norm = ZeroCenteredRMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.attn = PagedAttention(
            self.num_heads, self.num_kv_heads, self.head_dim, scale=self.head_dim**-0.5
        )

    def forward(
        self, rope: RopeAngles, x: torch.Tensor, kv_cache: KVCache, batch: ForwardBatch
    ) -> torch.Tensor:
        q, gate = self.q_proj(x).view(-1, self.num_heads, 2 * self.head_dim).chunk(2, dim=-1)
        q = self.q_norm(q)
        k = self.k_norm(self.k_proj(x).view(-1, self.num_kv_heads, self.head_dim))
        v = self.v_proj(x).view(-1, self.num_kv_heads, self.head_dim)
        r = self.rotary_dim
        q_rot, k_rot = rope.rotate(q[..., :r], k[..., :r])
        q = torch.cat([q_rot, q[..., r:]], dim=-1)
        k = torch.cat([k_rot, k[..., r:]], dim=-1)
        out = self.attn(q, k, v, kv_cache, batch)
        return self.o_proj((out * torch.sigmoid(gate)).flatten(1))


def _linear_attention(cfg: ModelConfig, cls: type[GatedDeltaNet]) -> GatedDeltaNet:
    raw = cfg.hf_config
    return cls(
        hidden_size=cfg.hidden_size,
        num_k_heads=int(raw["linear_num_key_heads"]),
        num_v_heads=int(raw["linear_num_value_heads"]),
        head_k_dim=int(raw["linear_key_head_dim"]),
        head_v_dim=int(raw["linear_value_head_dim"]),
        conv_kernel=int(raw.get("linear_conv_kernel_dim", 4)),
        eps=cfg.rms_norm_eps,
    )


class Qwen3_5DecoderLayer(nn.Module):
    def __init__(
        self,
        cfg: ModelConfig,
        layer_idx: int,
        linear_cls: type[GatedDeltaNet] = GatedDeltaNet,
        make_mlp: MakeMLP = dense_mlp,
    ) -> None:
        super().__init__()
        self.is_linear = cfg.layer_types[layer_idx] == "linear_attention"
        if self.is_linear:
            self.linear_attn = _linear_attention(cfg, linear_cls)
        else:
            self.self_attn = Qwen3_5Attention(cfg)
        self.mlp = make_mlp(cfg, layer_idx)
        self.input_layernorm = ZeroCenteredRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = ZeroCenteredRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self, rope: RopeAngles, x: torch.Tensor, kv_cache: KVCache, batch: ForwardBatch
    ) -> torch.Tensor:
        h = self.input_layernorm(x)
        if self.is_linear:
            x = x + self.linear_attn(h, batch)
        else:
            x = x + self.self_attn(rope, h, kv_cache, batch)
        return x + self.mlp(self.post_attention_layernorm(x))


class Qwen3_5Model(nn.Module):
    def __init__(
        self,
        cfg: ModelConfig,
        linear_cls: type[GatedDeltaNet] = GatedDeltaNet,
        make_mlp: MakeMLP = dense_mlp,
    ) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.rotary_emb = RotaryEmbedding(
            rotary_dim(cfg), cfg.max_position_embeddings, cfg.rope_theta, cfg.rope_scaling
        )
        self.layers = nn.ModuleList(
            Qwen3_5DecoderLayer(cfg, i, linear_cls, make_mlp) for i in range(cfg.num_hidden_layers)
        )
        self.norm = ZeroCenteredRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: list[KVCache],
        batch: ForwardBatch,
        inputs_embeds: torch.Tensor | None = None,
        rope: RopeAngles | None = None,
    ) -> torch.Tensor:
        """`inputs_embeds` and `rope`: what the vision-language model computed instead
        (image embeddings in place of placeholder tokens, multimodal positions)."""
        x = self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds
        rope = self.rotary_emb.lookup(positions) if rope is None else rope
        for layer, kv_cache in zip(self.layers, kv_caches, strict=True):
            x = layer(rope, x, kv_cache, batch)
        return self.norm(x)


class Qwen3_5ForCausalLM(nn.Module):
    PACKED_MODULES = GATE_UP_PACKED

    # What a family on this graph swaps (models/qwen3_next.py): the linear-attention layer
    # and the MLP of each layer.
    linear_attention_cls: type[GatedDeltaNet] = GatedDeltaNet
    make_mlp: MakeMLP = staticmethod(dense_mlp)

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.model = Qwen3_5Model(cfg, self.linear_attention_cls, type(self).make_mlp)
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

    def allocate_state_cache(self, num_slots: int, device: torch.device) -> None:
        """Recurrent-state pools of every linear-attention layer, one row per slot."""
        dtype = self.model.embed_tokens.weight.dtype
        for module in self.modules():
            if isinstance(module, GatedDeltaNet):
                module.allocate_state(num_slots, dtype, device)

    def map_checkpoint_name(self, hf_name: str) -> tuple[str, str | None]:
        return packed_checkpoint_name(hf_name, self.PACKED_MODULES)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.lm_head is None:
            return F.linear(hidden, self.model.embed_tokens.weight)
        return self.lm_head(hidden)


class Qwen3_5ForConditionalGeneration(Qwen3_5ForCausalLM):
    """The published Qwen3.5 checkpoints (Qwen3.5-0.8B among them): the same language model
    under `model.language_model.*`, beside the vision encoder (`model.visual.*`,
    models/qwen3_5_vision.py).

    A step with images (ForwardBatch.multimodal, multimodal/manager.py) brings their
    encoder outputs, which replace the embeddings of the image's placeholder tokens, and
    three positions per token for multimodal RoPE. Without it every token is text, whose
    three positions are equal: plain RoPE gives the same angles."""

    # The multi-token-prediction layer the published files carry (not run).
    IGNORED_CHECKPOINT_PREFIXES = ("mtp.",)

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        rope = cfg.hf_config.get("rope_parameters") or {}
        self.model.rotary_emb = MRotaryEmbedding(
            rotary_dim(cfg),
            cfg.max_position_embeddings,
            cfg.rope_theta,
            list(rope.get("mrope_section") or [11, 11, 10]),
            cfg.rope_scaling,
        )
        self.visual = Qwen3_5VisionModel(VisionConfig.from_dict(cfg.hf_config["vision_config"]))
        self.image_token_id = int(cfg.hf_config.get("image_token_id", -1))

    def encode_images(
        self, pixel_values: torch.Tensor, grid_thw: list[tuple[int, int, int]]
    ) -> torch.Tensor:
        """Processed patches of one or more images -> the embeddings of their tokens."""
        return self.visual(pixel_values.to(self.visual.pos_embed.weight.dtype), grid_thw)

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: list[KVCache],
        batch: ForwardBatch,
    ) -> torch.Tensor:
        mm = batch.multimodal
        if mm is None:
            return self.model(input_ids, positions, kv_caches, batch)
        x = self.model.embed_tokens(input_ids)
        if mm.embeds is not None:
            x = x.index_copy(0, mm.rows, mm.embeds.to(x.dtype))
        rope = self.model.rotary_emb.lookup_mrope(mm.positions)  # type: ignore[operator]
        return self.model(input_ids, positions, kv_caches, batch, inputs_embeds=x, rope=rope)

    def map_checkpoint_name(self, hf_name: str) -> tuple[str, str | None]:
        if hf_name.startswith("model.visual."):
            return hf_name.removeprefix("model."), None
        if hf_name.startswith("model.language_model."):
            hf_name = "model." + hf_name.removeprefix("model.language_model.")
        return super().map_checkpoint_name(hf_name)
