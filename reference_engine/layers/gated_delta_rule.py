"""The gated delta rule (Gated DeltaNet, Qwen3-Next / Qwen3.5 linear attention), three ways.

Per head, a [Dk, Dv] state S replaces the KV cache. Token t decays it by exp(g_t) (g <= 0),
then writes its value with the delta rule, learning rate beta_t in (0, 1):

    S'  = exp(g_t) S                           (forget a little)
    u_t = beta_t (v_t - S'^T k_t)              (what S' mispredicts for k_t)
    S_t = S' + k_t u_t^T                       (correct it)
    o_t = S_t^T q_t

q and k are L2-normalised per head and q scaled by Dk^-0.5 before any of this.

- `gated_delta_sequential`: the recurrence above, one token at a time (the reference);
- `gated_delta_step`: one token for a batch of sequences, each with its own state (decode);
- `gated_delta_chunked`: a chunk of C tokens at once (prefill). Unrolling the recurrence in
  a chunk, with G_i = g_1 + ... + g_i:

      S_i = e^{G_i} S_0 + sum_{j<=i} e^{G_i - G_j} k_j u_j^T
      u_i + beta_i sum_{j<i} e^{G_i - G_j} (k_i . k_j) u_j = beta_i (v_i - e^{G_i} S_0^T k_i)

  The second line is a unit lower-triangular C x C system for all u at once (one
  triangular solve), after which outputs and the chunk's final state are matmuls:

      o_i = e^{G_i} S_0^T q_i + sum_{j<=i} e^{G_i - G_j} (q_i . k_j) u_j

  Every exponent is <= 0, so nothing overflows. Chunks run one after another, each starting
  from the previous one's final state. This is the formulation the fla kernels vLLM and
  SGLang call (chunk_gated_delta_rule) compute blockwise on a GPU.

All three compute in at least float32 and agree to rounding (tests/engine/test_model_hybrid.py).
"""

from __future__ import annotations

import torch


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    return torch.promote_types(x.dtype, torch.float32)


def gated_delta_step(
    q: torch.Tensor,  # [B, H, Dk], normalised and scaled
    k: torch.Tensor,  # [B, H, Dk], normalised
    v: torch.Tensor,  # [B, H, Dv]
    g: torch.Tensor,  # [B, H], log decay (<= 0)
    beta: torch.Tensor,  # [B, H]
    state: torch.Tensor,  # [B, H, Dk, Dv], updated in place
) -> torch.Tensor:  # [B, H, Dv]
    """One token per sequence; each sequence's state advances by that token."""
    state.mul_(g.exp()[..., None, None])
    predicted = torch.einsum("bhkv,bhk->bhv", state, k)
    u = beta[..., None] * (v - predicted)
    state.add_(k[..., :, None] * u[..., None, :])
    return torch.einsum("bhkv,bhk->bhv", state, q)


def gated_delta_sequential(
    q: torch.Tensor,  # [T, H, Dk]
    k: torch.Tensor,
    v: torch.Tensor,  # [T, H, Dv]
    g: torch.Tensor,  # [T, H]
    beta: torch.Tensor,  # [T, H]
    state: torch.Tensor,  # [H, Dk, Dv], updated in place
) -> torch.Tensor:  # [T, H, Dv]
    """The reference: the recurrence, token by token, for one sequence."""
    out = [
        gated_delta_step(q[t, None], k[t, None], v[t, None], g[t, None], beta[t, None], state[None])
        for t in range(q.shape[0])
    ]
    return torch.cat(out)


def gated_delta_chunked(
    q: torch.Tensor,  # [T, H, Dk]
    k: torch.Tensor,
    v: torch.Tensor,  # [T, H, Dv]
    g: torch.Tensor,  # [T, H]
    beta: torch.Tensor,  # [T, H]
    state: torch.Tensor,  # [H, Dk, Dv], updated in place
    chunk_size: int = 64,
) -> torch.Tensor:  # [T, H, Dv]
    """The same recurrence for one sequence, `chunk_size` tokens per triangular solve."""
    out = v.new_empty(v.shape)
    for lo in range(0, q.shape[0], chunk_size):
        hi = min(lo + chunk_size, q.shape[0])
        out[lo:hi] = _chunk(q[lo:hi], k[lo:hi], v[lo:hi], g[lo:hi], beta[lo:hi], state)
    return out


def _chunk(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    state: torch.Tensor,
) -> torch.Tensor:
    # Heads first: [H, C, D].
    q, k, v = (x.transpose(0, 1) for x in (q, k, v))
    g, beta = g.transpose(0, 1), beta.transpose(0, 1)  # [H, C]
    c = q.shape[1]
    cum = g.cumsum(-1)  # G_i
    causal = torch.ones(c, c, dtype=torch.bool, device=q.device).tril()
    # e^{G_i - G_j} for j <= i, 0 above the diagonal (masked before exp: no overflow).
    decay = (cum[:, :, None] - cum[:, None, :]).masked_fill(~causal, float("-inf")).exp()
    start = cum.exp()[..., None]  # e^{G_i}, [H, C, 1]
    # (I + A) u = beta (v - e^{G_i} S0^T k_i), A strictly lower: beta_i e^{G_i-G_j} k_i.k_j
    a = beta[..., None] * (k @ k.transpose(1, 2)) * decay
    a = a.tril(-1) + torch.eye(c, dtype=a.dtype, device=a.device)
    rhs = beta[..., None] * (v - start * (k @ state))
    u = torch.linalg.solve_triangular(a, rhs, upper=False, unitriangular=True)  # [H, C, Dv]
    out = start * (q @ state) + ((q @ k.transpose(1, 2)) * decay) @ u
    # S_C = e^{G_C} S0 + sum_j e^{G_C - G_j} k_j u_j^T
    tail = (cum[:, -1:] - cum).exp()[..., None]  # [H, C, 1]
    state.mul_(cum[:, -1].exp()[:, None, None]).add_((k * tail).transpose(1, 2) @ u)
    return out.transpose(0, 1)


def l2_normalize(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """x / sqrt(sum(x^2) + eps) over the last axis (the fla kernels' epsilon placement)."""
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)
