"""The Llama / Qwen2 decoder (Qwen3 adds q/k norms on top, see qwen3.py).

Pre-norm residual blocks: RMSNorm -> attention (GQA, RoPE, paged KV) -> RMSNorm -> SwiGLU MLP.
Modules keep Hugging Face's names (`model.layers.N.self_attn...`) so checkpoint names map
straight across, except the fused `qkv_proj` / `gate_up_proj` (see `PACKED_MODULES`).
Projections, embedding and LM head are the tensor-parallel layers of reference_engine/
distributed/; built outside a parallel group (one process) they are the plain layers.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from reference_engine.config import ModelConfig
from reference_engine.distributed.parallel_linear import (
    MergedColumnParallelLinear,
    QKVParallelLinear,
    RowParallelLinear,
)
from reference_engine.distributed.parallel_state import current_parallel_state
from reference_engine.distributed.pipeline_parallel import PPMissingLayer, layer_range
from reference_engine.distributed.vocab_parallel_embedding import (
    ParallelLMHead,
    VocabParallelEmbedding,
    vocab_parallel_logits,
)
from reference_engine.forward_batch import ForwardBatch
from reference_engine.layers.activation import SiluAndMul
from reference_engine.layers.attention import PagedAttention
from reference_engine.layers.norm import RMSNorm
from reference_engine.layers.rotary import RopeAngles, RotaryEmbedding

KVCache = tuple[torch.Tensor, torch.Tensor]


class LlamaAttention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.head_dim = cfg.head_dim
        self.qkv_proj = QKVParallelLinear(
            cfg.hidden_size,
            cfg.head_dim,
            cfg.num_attention_heads,
            cfg.num_key_value_heads,
            bias=cfg.qkv_bias,
        )
        # This rank's heads (all of them in one process).
        self.num_heads, self.num_kv_heads = self.qkv_proj.num_heads, self.qkv_proj.num_kv_heads
        self.o_proj = RowParallelLinear(cfg.q_size, cfg.hidden_size, bias=cfg.o_bias)
        self.attn = PagedAttention(
            self.num_heads, self.num_kv_heads, self.head_dim, scale=self.head_dim**-0.5
        )

    def normalize_qk(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return q, k  # Llama / Qwen2: nothing between projection and RoPE

    def forward(
        self, rope: RopeAngles, x: torch.Tensor, kv_cache: KVCache, batch: ForwardBatch
    ) -> torch.Tensor:
        q, k, v = self.qkv_proj(x).split(self.qkv_proj.split_sizes(), dim=-1)
        q = q.view(-1, self.num_heads, self.head_dim)
        k = k.view(-1, self.num_kv_heads, self.head_dim)
        v = v.view(-1, self.num_kv_heads, self.head_dim)
        q, k = self.normalize_qk(q, k)
        q, k = rope.rotate(q, k)
        out = self.attn(q, k, v, kv_cache, batch)
        return self.o_proj(out.flatten(1))


class LlamaMLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_up_proj = MergedColumnParallelLinear(
            cfg.hidden_size, cfg.intermediate_size, cfg.mlp_bias
        )
        self.down_proj = RowParallelLinear(
            cfg.intermediate_size, cfg.hidden_size, bias=cfg.mlp_bias
        )
        self.act = SiluAndMul()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act(self.gate_up_proj(x)))


MakeMLP = Callable[[ModelConfig, int], nn.Module]  # (config, layer index) -> the layer's MLP

# Checkpoint sub-name -> (our fused module, shard); see loader.py. Every family fuses gate/up.
GATE_UP_PACKED: dict[str, tuple[str, str]] = {
    "gate_proj": ("gate_up_proj", "gate"),
    "up_proj": ("gate_up_proj", "up"),
}


def packed_checkpoint_name(
    hf_name: str, packed: dict[str, tuple[str, str]]
) -> tuple[str, str | None]:
    """Checkpoint tensor name -> (our parameter, shard): a sub-name in `packed` names a shard
    of the fused module that replaced it; any other name is ours unchanged."""
    parts = hf_name.split(".")
    for i, part in enumerate(parts):
        if part in packed:
            fused, shard = packed[part]
            return ".".join([*parts[:i], fused, *parts[i + 1 :]]), shard
    return hf_name, None


def dense_mlp(cfg: ModelConfig, layer_idx: int) -> nn.Module:
    return LlamaMLP(cfg)


class LlamaDecoderLayer(nn.Module):
    def __init__(
        self,
        cfg: ModelConfig,
        attention_cls: type[LlamaAttention],
        layer_idx: int = 0,
        make_mlp: MakeMLP = dense_mlp,
    ) -> None:
        super().__init__()
        self.self_attn = attention_cls(cfg)
        self.mlp = make_mlp(cfg, layer_idx)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self, rope: RopeAngles, x: torch.Tensor, kv_cache: KVCache, batch: ForwardBatch
    ) -> torch.Tensor:
        x = x + self.self_attn(rope, self.input_layernorm(x), kv_cache, batch)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(
        self, cfg: ModelConfig, attention_cls: type[LlamaAttention], make_mlp: MakeMLP = dense_mlp
    ) -> None:
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding(cfg.vocab_size, cfg.hidden_size)
        self.rotary_emb = RotaryEmbedding(
            cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta, cfg.rope_scaling
        )
        # Pipeline parallelism: this stage's layers [start, end); the rest hold no weights.
        pp = current_parallel_state().pp
        self.start_layer, self.end_layer = layer_range(
            cfg.num_hidden_layers, pp.rank, pp.world_size
        )
        self.is_last_stage = pp.rank == pp.world_size - 1
        self.layers = nn.ModuleList(
            LlamaDecoderLayer(cfg, attention_cls, i, make_mlp)
            if self.start_layer <= i < self.end_layer
            else PPMissingLayer()
            for i in range(cfg.num_hidden_layers)
        )
        for layer, window in zip(self.layers, cfg.sliding_windows, strict=False):
            if isinstance(layer, LlamaDecoderLayer):  # another stage's PPMissingLayer has none
                layer.self_attn.attn.sliding_window = window  # Mistral, Qwen2/3 `layer_types`
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: list[KVCache],
        batch: ForwardBatch,
        hidden_states: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """`hidden_states`: what the previous pipeline stage sent (then no embedding); a
        stage other than the last returns its layers' output un-normalised."""
        x = self.embed_tokens(input_ids) if hidden_states is None else hidden_states
        rope = self.rotary_emb.lookup(positions)  # same angles for every layer
        for i in range(self.start_layer, self.end_layer):
            x = self.layers[i](rope, x, kv_caches[i], batch)
        return self.norm(x) if self.is_last_stage else x


class LlamaForCausalLM(nn.Module):
    attention_cls: type[LlamaAttention] = LlamaAttention
    # checkpoint sub-name -> (our fused module, shard) ; see loader.py
    PACKED_MODULES: dict[str, tuple[str, str]] = {  # noqa: RUF012 - read-only table
        "q_proj": ("qkv_proj", "q"),
        "k_proj": ("qkv_proj", "k"),
        "v_proj": ("qkv_proj", "v"),
        **GATE_UP_PACKED,
    }

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.model = LlamaModel(cfg, self.attention_cls, type(self).make_mlp)
        # Tied models reuse the embedding matrix as the output projection (no lm_head weight).
        self.lm_head = (
            None if cfg.tie_word_embeddings else ParallelLMHead(cfg.hidden_size, cfg.vocab_size)
        )

    # (config, layer index) -> that layer's MLP; a mixture-of-experts family swaps it.
    make_mlp: MakeMLP = staticmethod(dense_mlp)

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv_caches: list[KVCache],
        batch: ForwardBatch,
    ) -> torch.Tensor:
        return self.model(input_ids, positions, kv_caches, batch)

    def holds_checkpoint_tensor(self, hf_name: str) -> bool:
        """False for a layer another pipeline stage holds (its tensors are never read)."""
        parts = hf_name.split(".")
        if len(parts) > 2 and parts[:2] == ["model", "layers"] and parts[2].isdigit():
            index = int(parts[2])
            # A layer the model does not have is the loader's clear "has no place" error.
            if index < len(self.model.layers):
                return not isinstance(self.model.layers[index], PPMissingLayer)
        return True

    def map_checkpoint_name(self, hf_name: str) -> tuple[str, str | None]:
        """Checkpoint tensor name -> (our parameter, shard); see loader.load_weights."""
        return packed_checkpoint_name(hf_name, self.PACKED_MODULES)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return vocab_parallel_logits(hidden, self.model.embed_tokens, self.lm_head)
