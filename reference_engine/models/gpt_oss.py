"""GPT-OSS: the Llama-style decoder with three twists.

- Attention sinks: every head has a learned logit `sinks[h]` that joins each query's
  softmax as one extra "key" with a zero value, so a head can put weight on nothing at all
  instead of being forced onto some token (OpenAI's fix for the attention-sink effect that
  StreamingLLM keeps real tokens for). `SinkAttention` computes it explicitly.
- Layers alternate sliding-window and full attention (`layer_types`; ModelConfig.sliding_windows).
- Every MLP is a mixture of experts with biases everywhere and a clamped SwiGLU
  (`(clamp(up) + 1) * gate * sigmoid(1.702 * gate)`), on the engine's FusedMoE with biases.
  The checkpoint stores experts fused in 3-D tensors, gate and up columns interleaved;
  `GptOssExperts` loads them into FusedMoE's [gate rows; up rows] layout.
"""

from __future__ import annotations

import torch
from torch import nn

from reference_engine.config import ConfigError, ModelConfig
from reference_engine.forward_batch import ForwardBatch
from reference_engine.heavy_hitters import accumulate
from reference_engine.kv_window import visible
from reference_engine.layers.attention import PagedAttention, _starts, gather_kv, write_kv
from reference_engine.layers.fused_moe import FusedMoE, grouped_experts, select_experts
from reference_engine.layers.linear import Linear
from reference_engine.models.llama import LlamaAttention, LlamaForCausalLM


class SinkAttention(PagedAttention):
    """Paged attention whose softmax has one more column per head: the learned sink."""

    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int, scale: float) -> None:
        super().__init__(num_heads, num_kv_heads, head_dim, scale)
        self.sinks = nn.Parameter(torch.zeros(num_heads))

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        kv_cache: tuple[torch.Tensor, torch.Tensor],
        batch: ForwardBatch,
    ) -> torch.Tensor:
        k_cache, v_cache = kv_cache
        write_kv(k_cache, v_cache, k, v, batch.slot_mapping)
        if batch.attention_scores is not None:  # H2O requests (sink column left out)
            accumulate(q, k_cache, batch, self.scale, self.sliding_window)
        out = torch.empty_like(q)
        group = self.num_heads // self.num_kv_heads
        for i, lo in enumerate(_starts(batch.query_lens_cpu)):  # one sequence at a time
            n, ctx = batch.query_lens_cpu[i], batch.context_lens_cpu[i]
            used = batch.block_tables[i][: -(-ctx // batch.block_size)]
            keys = gather_kv(k_cache, used)[:ctx].repeat_interleave(group, dim=1)  # [C, H, D]
            values = gather_kv(v_cache, used)[:ctx].repeat_interleave(group, dim=1)
            policy = batch.kv_policies[i] if batch.kv_policies else None
            q_pos = torch.arange(ctx - n, ctx, device=q.device)
            mask = visible(q_pos, torch.arange(ctx, device=q.device), self.sliding_window, policy)
            logits = torch.einsum("nhd,chd->hnc", q[lo : lo + n], keys) * self.scale
            logits = logits.masked_fill(~mask[None], float("-inf"))
            sink = self.sinks.to(logits.dtype)[:, None, None].expand(-1, n, 1)
            probs = torch.softmax(torch.cat([logits, sink], dim=-1), dim=-1)[..., :-1]
            out[lo : lo + n] = torch.einsum("hnc,chd->nhd", probs, values)
        return out


class GptOssAttention(LlamaAttention):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        self.attn = SinkAttention(
            self.num_heads, self.num_kv_heads, self.head_dim, scale=self.head_dim**-0.5
        )


class GptOssExperts(FusedMoE):
    """FusedMoE with GPT-OSS's biases, clamped SwiGLU and fused 3-D checkpoint tensors."""

    def __init__(self, cfg: ModelConfig) -> None:
        raw = cfg.hf_config
        super().__init__(
            num_experts=int(raw["num_local_experts"]),
            top_k=int(raw["num_experts_per_tok"]),
            hidden_size=cfg.hidden_size,
            intermediate_size=cfg.intermediate_size,
            renormalize=True,  # softmax over the top-k logits
        )
        if self.tp.world_size > 1 or self.ep.world_size > 1:
            raise ConfigError("GPT-OSS experts run in one process only (no TP/EP here)")
        e, inter = self.num_experts, cfg.intermediate_size
        self.w13_bias = nn.Parameter(torch.zeros(e, 2 * inter))
        self.w2_bias = nn.Parameter(torch.zeros(e, cfg.hidden_size))
        self.alpha = float(raw.get("swiglu_alpha", 1.702))
        self.limit = float(raw.get("swiglu_limit", 7.0))

    def activation(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        gate = gate.clamp(max=self.limit)
        up = up.clamp(min=-self.limit, max=self.limit)
        return (up + 1) * gate * torch.sigmoid(gate * self.alpha)

    def forward(self, x: torch.Tensor, router_logits: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        routing = select_experts(router_logits, self.top_k, renormalize=True)
        token_idx = torch.arange(x.shape[0], device=x.device).repeat_interleave(self.top_k)
        expert_idx = routing.ids.reshape(-1)
        y = grouped_experts(
            x, token_idx, expert_idx, self.w13_weight, self.w2_weight,
            self.w13_bias, self.w2_bias, self.activation,
        )  # fmt: skip
        y = y * routing.weights.reshape(-1, 1)
        return torch.zeros_like(x).index_add_(0, token_idx, y)

    # checkpoint: mlp.experts.{gate_up_proj [E, H, 2I] (gate, up interleaved), down_proj
    # [E, I, H]} and their biases, each one tensor for all experts
    def checkpoint_shards(self, param: str) -> list[str | None]:
        return [None]

    def load_checkpoint_tensor(self, param: str, shard: str | None, tensor: object) -> None:
        data: torch.Tensor = tensor.read()  # type: ignore[attr-defined]
        if param == "w13_weight":  # [E, H, 2I] -> [E, 2I, H], gate rows then up rows
            data = torch.cat([data[..., 0::2], data[..., 1::2]], dim=-1).transpose(1, 2)
        elif param == "w13_bias":
            data = torch.cat([data[..., 0::2], data[..., 1::2]], dim=-1)
        elif param == "w2_weight":  # [E, I, H] -> [E, H, I]
            data = data.transpose(1, 2)
        target = getattr(self, param).data
        if tuple(data.shape) != tuple(target.shape):
            raise ConfigError(f"{param}: checkpoint shape {tuple(data.shape)} does not fit")
        target.copy_(data)


class GptOssMLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.router = Linear(cfg.hidden_size, int(cfg.hf_config["num_local_experts"]), bias=True)
        self.experts = GptOssExperts(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.experts(x, self.router(x))


def gpt_oss_mlp(cfg: ModelConfig, layer_idx: int) -> nn.Module:
    return GptOssMLP(cfg)


_EXPERT_TENSORS = {
    "gate_up_proj": "w13_weight",
    "gate_up_proj_bias": "w13_bias",
    "down_proj": "w2_weight",
    "down_proj_bias": "w2_bias",
}


class GptOssForCausalLM(LlamaForCausalLM):
    attention_cls = GptOssAttention
    make_mlp = staticmethod(gpt_oss_mlp)

    def map_checkpoint_name(self, hf_name: str) -> tuple[str, str | None]:
        prefix, _, last = hf_name.rpartition(".")
        if prefix.endswith(".mlp.experts") and last in _EXPERT_TENSORS:
            return f"{prefix}.{_EXPERT_TENSORS[last]}", None
        if last == "sinks":  # self_attn.sinks lives on the attention kernel module
            return f"{prefix}.attn.sinks", None
        return super().map_checkpoint_name(hf_name)
