"""Gemma 3 (text, Gemma3ForCausalLM): the Llama-style decoder with Gemma's twists.

- Local and global layers: `layer_types` makes five of every six layers slide over
  `sliding_window` tokens (ModelConfig.sliding_windows) and gives them their own RoPE base
  (10k, against the global layers' 1M, which may also be linearly stretched for long
  context): two rotary tables, each layer reading its kind's.
- Sandwich norms: the attention's and the MLP's outputs are normalised again before the
  residual add (four norms per layer), all RMSNorms scaling by (1 + weight).
- Embeddings multiplied by sqrt(hidden_size), rounded to the weights' dtype first as
  Gemma does; q/k norms per head; scores scaled by query_pre_attn_scalar^-1/2 rather than
  head_dim^-1/2; a GeGLU MLP (tanh-approximated GELU gate); tied LM head, with an optional
  tanh cap on the final logits.

Module names follow transformers' Gemma3ForCausalLM (q/k/v and gate/up fused on load).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.config import ConfigError, ModelConfig
from reference_engine.distributed.parallel_linear import (
    MergedColumnParallelLinear,
    RowParallelLinear,
)
from reference_engine.distributed.vocab_parallel_embedding import (
    ParallelLMHead,
    VocabParallelEmbedding,
)
from reference_engine.forward_batch import ForwardBatch
from reference_engine.layers.norm import ZeroCenteredRMSNorm
from reference_engine.layers.rotary import RopeAngles, RotaryEmbedding
from reference_engine.models.llama import KVCache, LlamaAttention, LlamaForCausalLM


class Gemma3Attention(LlamaAttention):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        raw = cfg.hf_config
        if raw.get("attn_logit_softcapping"):
            raise ConfigError("Gemma attention logit soft-capping (Gemma 2) is not implemented")
        self.q_norm = ZeroCenteredRMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.k_norm = ZeroCenteredRMSNorm(cfg.head_dim, cfg.rms_norm_eps)
        self.attn.scale = float(raw.get("query_pre_attn_scalar") or cfg.head_dim) ** -0.5

    def normalize_qk(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q_norm(q), self.k_norm(k)


class Gemma3MLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_up_proj = MergedColumnParallelLinear(cfg.hidden_size, cfg.intermediate_size, False)
        self.down_proj = RowParallelLinear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.gelu(gate, approximate="tanh") * up)


class Gemma3DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        eps = cfg.rms_norm_eps
        self.self_attn = Gemma3Attention(cfg)
        self.mlp = Gemma3MLP(cfg)
        self.input_layernorm = ZeroCenteredRMSNorm(cfg.hidden_size, eps)
        self.post_attention_layernorm = ZeroCenteredRMSNorm(cfg.hidden_size, eps)
        self.pre_feedforward_layernorm = ZeroCenteredRMSNorm(cfg.hidden_size, eps)
        self.post_feedforward_layernorm = ZeroCenteredRMSNorm(cfg.hidden_size, eps)

    def forward(
        self, rope: RopeAngles, x: torch.Tensor, kv_cache: KVCache, batch: ForwardBatch
    ) -> torch.Tensor:
        h = self.self_attn(rope, self.input_layernorm(x), kv_cache, batch)
        x = x + self.post_attention_layernorm(h)
        h = self.mlp(self.pre_feedforward_layernorm(x))
        return x + self.post_feedforward_layernorm(h)


def _rotary(cfg: ModelConfig, layer_type: str, default_theta: float) -> RotaryEmbedding:
    params = (cfg.hf_config.get("rope_parameters") or {}).get(layer_type) or {}
    rope_type = params.get("rope_type", "default")
    if rope_type not in ("default", "linear"):
        raise ConfigError(f"Gemma 3 RoPE {rope_type!r} is not implemented (default, linear are)")
    linear = rope_type == "linear"
    scaling = {"rope_type": "linear", "factor": float(params["factor"])} if linear else None
    theta = float(params.get("rope_theta", default_theta))
    return RotaryEmbedding(cfg.head_dim, cfg.max_position_embeddings, theta, scaling)


class Gemma3Model(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding(cfg.vocab_size, cfg.hidden_size)
        self.hidden_size = cfg.hidden_size
        self.rotary_emb = _rotary(cfg, "full_attention", 1_000_000.0)
        self.rotary_emb_local = _rotary(cfg, "sliding_attention", 10_000.0)
        layers = [Gemma3DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)]
        windows = cfg.sliding_windows or [None] * cfg.num_hidden_layers
        for layer, window in zip(layers, windows, strict=True):
            layer.self_attn.attn.sliding_window = window
        self.layers = nn.ModuleList(layers)
        self.sliding = [w is not None for w in windows]
        self.norm = ZeroCenteredRMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: list[KVCache],
        batch: ForwardBatch,
    ) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        # sqrt(hidden) in float32, then the weights' dtype (bf16 rounds 55.43 to 55.5), as
        # the checkpoints were trained.
        x = x * torch.tensor(self.hidden_size**0.5, dtype=torch.float32).to(x.dtype)
        global_rope = self.rotary_emb.lookup(positions)
        local_rope = self.rotary_emb_local.lookup(positions)
        for layer, sliding, kv_cache in zip(self.layers, self.sliding, kv_caches, strict=True):
            x = layer(local_rope if sliding else global_rope, x, kv_cache, batch)
        return self.norm(x)


class Gemma3ForCausalLM(LlamaForCausalLM):
    def __init__(self, cfg: ModelConfig) -> None:
        nn.Module.__init__(self)
        self.config = cfg
        self.model = Gemma3Model(cfg)  # type: ignore[assignment]
        self.lm_head = (
            None if cfg.tie_word_embeddings else ParallelLMHead(cfg.hidden_size, cfg.vocab_size)
        )
        self.softcap = float(cfg.hf_config.get("final_logit_softcapping") or 0.0)

    def holds_checkpoint_tensor(self, hf_name: str) -> bool:
        return True  # one process (ParallelConfig refuses sliding-window models on several)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        logits = super().compute_logits(hidden)
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits
