"""Training-time Qwen3: a dense (unpaged) copy of the architecture, a seeded AdamW loop and
held-out perplexity. Used only by `trained_model.py` to train the small code model.

The serving model (`models/qwen3.py`) reads and writes a paged KV cache and is built for
inference; training wants one causal attention over whole windows and autograd. Parameter
names are Hugging Face's (`model.layers.N.self_attn.q_proj.weight`, ...), so `state_dict()`
is the checkpoint, read back by the engine's loader and by transformers alike; the tests
check that the three agree on logits and perplexity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True, slots=True)
class TrainShape:
    """The architecture and optimisation recipe of one trained variant (see trained_model.py)."""

    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    seq_len: int
    batch_size: int
    steps: int
    lr: float
    warmup: int
    weight_decay: float = 0.1
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6


class _RMSNorm(nn.Module):
    def __init__(self, n: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class _Attention(nn.Module):
    def __init__(self, s: TrainShape) -> None:
        super().__init__()
        self.s = s
        h, d = s.hidden_size, s.head_dim
        self.q_proj = nn.Linear(h, s.num_attention_heads * d, bias=False)
        self.k_proj = nn.Linear(h, s.num_key_value_heads * d, bias=False)
        self.v_proj = nn.Linear(h, s.num_key_value_heads * d, bias=False)
        self.o_proj = nn.Linear(s.num_attention_heads * d, h, bias=False)
        self.q_norm = _RMSNorm(d, s.rms_norm_eps)
        self.k_norm = _RMSNorm(d, s.rms_norm_eps)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        s = self.s
        q = self.q_norm(self.q_proj(x).view(b, t, s.num_attention_heads, s.head_dim))
        k = self.k_norm(self.k_proj(x).view(b, t, s.num_key_value_heads, s.head_dim))
        v = self.v_proj(x).view(b, t, s.num_key_value_heads, s.head_dim)
        q, k = _rope(q, cos, sin).transpose(1, 2), _rope(k, cos, sin).transpose(1, 2)
        out = F.scaled_dot_product_attention(
            q, k, v.transpose(1, 2), is_causal=True, enable_gqa=True
        )
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # neox layout, the one the engine and transformers use for Qwen3
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class _MLP(nn.Module):
    def __init__(self, s: TrainShape) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(s.hidden_size, s.intermediate_size, bias=False)
        self.up_proj = nn.Linear(s.hidden_size, s.intermediate_size, bias=False)
        self.down_proj = nn.Linear(s.intermediate_size, s.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class _Layer(nn.Module):
    def __init__(self, s: TrainShape) -> None:
        super().__init__()
        self.self_attn = _Attention(s)
        self.mlp = _MLP(s)
        self.input_layernorm = _RMSNorm(s.hidden_size, s.rms_norm_eps)
        self.post_attention_layernorm = _RMSNorm(s.hidden_size, s.rms_norm_eps)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class _Body(nn.Module):
    def __init__(self, s: TrainShape, vocab_size: int) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, s.hidden_size)
        self.layers = nn.ModuleList(_Layer(s) for _ in range(s.num_hidden_layers))
        self.norm = _RMSNorm(s.hidden_size, s.rms_norm_eps)


class TrainableQwen3(nn.Module):
    """Qwen3ForCausalLM with tied embeddings, as the small Qwen3 checkpoints ship."""

    cos: torch.Tensor  # non-persistent buffers, registered in __init__
    sin: torch.Tensor

    def __init__(self, s: TrainShape, vocab_size: int) -> None:
        super().__init__()
        self.s = s
        self.model = _Body(s, vocab_size)
        inv = 1.0 / (s.rope_theta ** (torch.arange(0, s.head_dim, 2).float() / s.head_dim))
        freqs = torch.outer(torch.arange(s.seq_len).float(), inv)
        self.register_buffer("cos", freqs.cos()[:, None, :], persistent=False)
        self.register_buffer("sin", freqs.sin()[:, None, :], persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        t = ids.shape[1]
        x = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            x = layer(x, self.cos[:t], self.sin[:t])
        return F.linear(self.model.norm(x), self.model.embed_tokens.weight)


def init_weights(model: TrainableQwen3, gen: torch.Generator) -> None:
    """GPT-2 style: N(0, 0.02), residual outputs scaled down by depth, norms at one."""
    depth_scale = (2 * model.s.num_hidden_layers) ** -0.5
    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            p.data.fill_(1.0)
            continue
        std = 0.02 * (depth_scale if name.endswith(("o_proj.weight", "down_proj.weight")) else 1)
        p.data.copy_(torch.randn(p.shape, generator=gen) * std)


def train(
    model: TrainableQwen3,
    tokens: torch.Tensor,
    seed: int,
    log: Callable[[str], None] | None = None,
) -> list[float]:
    """AdamW with linear warmup and cosine decay over random windows of `tokens`; returns
    the loss of every step. Same seed, same threads, same versions: same weights."""
    s = model.s
    gen = torch.Generator().manual_seed(seed)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    keep = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": s.weight_decay}, {"params": keep, "weight_decay": 0}],
        lr=s.lr,
        betas=(0.9, 0.95),
        foreach=False,
    )
    losses: list[float] = []
    model.train()
    for step in range(s.steps):
        lr = s.lr * min(1.0, (step + 1) / s.warmup)
        if step >= s.warmup:
            lr = s.lr * 0.5 * (1 + math.cos(math.pi * (step - s.warmup) / (s.steps - s.warmup)))
        for group in opt.param_groups:
            group["lr"] = max(lr, s.lr * 0.05)
        starts = torch.randint(0, len(tokens) - s.seq_len - 1, (s.batch_size,), generator=gen)
        window = torch.stack([tokens[i : i + s.seq_len + 1] for i in starts.tolist()])
        logits = model(window[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), window[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if log is not None and (step % 50 == 0 or step == s.steps - 1):
            log(f"step {step + 1}/{s.steps}  loss {loss.item():.3f}  lr {lr:.2e}")
    model.eval()
    return losses


@torch.no_grad()
def perplexity(
    logits_fn: Callable[[torch.Tensor], torch.Tensor], tokens: torch.Tensor, window: int
) -> float:
    """exp(mean next-token NLL) over consecutive non-overlapping windows of `tokens`.

    `logits_fn` maps ids [1, T] to logits [1, T, V]; any model (this one, transformers, the
    engine) plugs in, so the same number can be recomputed by each of them."""
    nll, count = 0.0, 0
    for start in range(0, len(tokens) - 1, window):
        chunk = tokens[start : start + window + 1]
        if len(chunk) < 2:
            break
        logits = logits_fn(chunk[None, :-1]).float()
        nll += F.cross_entropy(logits[0], chunk[1:], reduction="sum").item()
        count += len(chunk) - 1
    return math.exp(nll / count)


def unigram_perplexity(train_tokens: torch.Tensor, eval_tokens: torch.Tensor, vocab: int) -> float:
    """The baseline a trained model must beat by far: token frequencies alone (add-one)."""
    counts = torch.bincount(train_tokens, minlength=vocab).double() + 1.0
    logp = (counts / counts.sum()).log()
    return math.exp(-logp[eval_tokens[1:]].mean().item())
