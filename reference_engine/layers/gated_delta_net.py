"""Gated DeltaNet: the linear-attention layer of Qwen3.5 / Qwen3-Next hybrids.

Instead of a KV cache that grows with the context, each request carries a fixed-size state
per layer, in two parts:

- `conv_state` [slots, kernel - 1, conv_dim]: the last kernel-1 inputs of the short causal
  depthwise convolution q, k and v pass through first;
- `ssm_state` [slots, value heads, key dim, value dim]: the gated delta rule's memory
  (layers/gated_delta_rule.py).

Both live in this module's state pools, one row ("slot") per running request; the
KVCacheManager hands out slots beside block tables (vLLM's MambaManager, SGLang's
MambaPool / HybridReqToTokenPool) and the batch says which slot each sequence owns
(`ForwardBatch.state_slots`). A sequence whose chunk starts at position 0 starts from zero
state, one resuming from a prefix hit from the hit's checkpoint row; any later chunk or
decode continues from its slot and writes the state back. When the step crosses a block
boundary the KVCacheManager may ask for a snapshot there (`state_checkpoints`): the chunk is
split at the boundary and the state copied into that row (prefix_cache/state_checkpoints.py).
Prefill chunks take the chunked form, decode rows one batched step.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.forward_batch import ForwardBatch
from reference_engine.layers.attention import _starts
from reference_engine.layers.gated_delta_rule import (
    gated_delta_chunked,
    gated_delta_step,
    l2_normalize,
)
from reference_engine.layers.linear import Linear


class GatedRMSNorm(nn.Module):
    """RMSNorm of the rule's output, then gated by silu(z) (z: another projection of x)."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        compute = torch.promote_types(x.dtype, torch.float32)
        xf = x.to(compute)
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        out = self.weight * xf.to(x.dtype)
        return (out * F.silu(z.to(compute))).to(x.dtype)


class GatedDeltaNet(nn.Module):
    """Names follow transformers' Qwen3_5GatedDeltaNet, so checkpoints load 1:1."""

    def __init__(
        self,
        hidden_size: int,
        num_k_heads: int,
        num_v_heads: int,
        head_k_dim: int,
        head_v_dim: int,
        conv_kernel: int,
        eps: float,
    ) -> None:
        super().__init__()
        self.num_k_heads, self.num_v_heads = num_k_heads, num_v_heads
        self.head_k_dim, self.head_v_dim = head_k_dim, head_v_dim
        self.key_dim, self.value_dim = num_k_heads * head_k_dim, num_v_heads * head_v_dim
        self.conv_dim = 2 * self.key_dim + self.value_dim
        self.conv_kernel = conv_kernel
        self.in_proj_qkv = Linear(hidden_size, self.conv_dim, bias=False)
        self.in_proj_z = Linear(hidden_size, self.value_dim, bias=False)
        self.in_proj_b = Linear(hidden_size, num_v_heads, bias=False)
        self.in_proj_a = Linear(hidden_size, num_v_heads, bias=False)
        # Depthwise: one kernel per channel, as nn.Conv1d(groups=conv_dim) stores it.
        self.conv1d = nn.Conv1d(
            self.conv_dim, self.conv_dim, conv_kernel, groups=self.conv_dim, bias=False
        )
        self.dt_bias = nn.Parameter(torch.ones(num_v_heads))
        self.A_log = nn.Parameter(torch.zeros(num_v_heads))
        self.norm = GatedRMSNorm(head_v_dim, eps)
        self.out_proj = Linear(self.value_dim, hidden_size, bias=False)
        self.conv_state = torch.empty(0)
        self.ssm_state = torch.empty(0)

    def allocate_state(self, num_slots: int, dtype: torch.dtype, device: torch.device) -> None:
        """One state row per slot (the runner sizes it to max_num_seqs). The recurrent state
        is kept in at least float32, as the rule computes in it."""
        state_dtype = torch.promote_types(dtype, torch.float32)
        self.conv_state = torch.zeros(
            num_slots, self.conv_kernel - 1, self.conv_dim, dtype=dtype, device=device
        )
        self.ssm_state = torch.zeros(
            num_slots,
            self.num_v_heads,
            self.head_k_dim,
            self.head_v_dim,
            dtype=state_dtype,
            device=device,
        )

    def forward(self, x: torch.Tensor, batch: ForwardBatch) -> torch.Tensor:
        mixed, z, b, a = self.project(x)  # mixed: [T, conv_dim], before the convolution
        beta = b.sigmoid()
        compute = torch.promote_types(x.dtype, torch.float32)
        g = -self.A_log.to(compute).exp() * F.softplus(a.to(compute) + self.dt_bias.to(compute))
        core = x.new_empty(x.shape[0], self.num_v_heads, self.head_v_dim)
        slots = batch.state_slots
        checkpoints = batch.state_checkpoints
        if batch.num_decodes:
            rows = batch.query_start_loc[batch.decode_seq_idx]
            seqs = batch.decode_seq_idx.tolist()
            for i in seqs:  # a one-token chunk may be a prompt's first (or first after a hit)
                self._start(batch, i, batch.context_lens_cpu[i] == 1)
            slot_ids = torch.tensor([slots[i] for i in seqs], device=x.device)
            core[rows] = self._decode(mixed[rows], g[rows], beta[rows], slot_ids)
            for i in seqs:  # the step ended on a block boundary: snapshot for the cache
                if checkpoints and checkpoints[i] >= 0:
                    self._copy_row(slots[i], checkpoints[i])
        starts = _starts(batch.query_lens_cpu)
        for i in batch.prefill_seq_idx:
            lo, n = starts[i], batch.query_lens_cpu[i]
            start = batch.context_lens_cpu[i] - n
            self._start(batch, i, start == 0)
            # Split at the last block boundary the chunk crosses when it is to be snapshot.
            snapshot = checkpoints[i] if checkpoints else -1
            cut = n if snapshot < 0 else (start + n) // batch.block_size * batch.block_size - start
            head = slice(lo, lo + cut)
            core[head] = self._prefill(mixed[head], g[head], beta[head], slots[i])
            if snapshot >= 0:
                self._copy_row(slots[i], snapshot)
                if cut < n:
                    tail = slice(lo + cut, lo + n)
                    core[tail] = self._prefill(mixed[tail], g[tail], beta[tail], slots[i])
        out = self.norm(core.reshape(-1, self.head_v_dim), z.reshape(-1, self.head_v_dim))
        return self.out_proj(out.view(x.shape[0], -1))

    def project(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """x -> q|k|v (the convolution's input), z [T, Hv, Dv], b and a [T, Hv]. Qwen3.5
        keeps four projections; Qwen3-Next fuses them (models/qwen3_next.py)."""
        z = self.in_proj_z(x).view(-1, self.num_v_heads, self.head_v_dim)
        return self.in_proj_qkv(x), z, self.in_proj_b(x), self.in_proj_a(x)

    # --- per kind of row ----------------------------------------------------------
    def _start(self, batch: ForwardBatch, i: int, fresh: bool) -> None:
        """Sequence i's state before its rows: zero at position 0, a prefix hit's checkpoint
        when it resumes from one, else what its slot holds from its previous step."""
        slot = batch.state_slots[i]
        restore = batch.state_restores[i] if batch.state_restores else -1
        if restore >= 0:
            self._copy_row(restore, slot)
        elif fresh:
            self.conv_state[slot].zero_()
            self.ssm_state[slot].zero_()

    def _copy_row(self, src: int, dst: int) -> None:
        self.conv_state[dst].copy_(self.conv_state[src])
        self.ssm_state[dst].copy_(self.ssm_state[src])

    def _prefill(
        self, mixed: torch.Tensor, g: torch.Tensor, beta: torch.Tensor, slot: int
    ) -> torch.Tensor:
        qkv = self._conv(mixed[None], self.conv_state[slot : slot + 1])[0]
        q, k, v = self._split(qkv)
        state = self.ssm_state[slot]
        out = gated_delta_chunked(q, k, v, g, beta.to(state.dtype), state)
        return out.to(mixed.dtype)

    def _decode(
        self, mixed: torch.Tensor, g: torch.Tensor, beta: torch.Tensor, slots: torch.Tensor
    ) -> torch.Tensor:
        conv = self.conv_state.index_select(0, slots)
        qkv = self._conv(mixed[:, None], conv)[:, 0]
        self.conv_state.index_copy_(0, slots, conv)
        q, k, v = self._split(qkv)
        state = self.ssm_state.index_select(0, slots)
        out = gated_delta_step(q, k, v, g, beta.to(state.dtype), state)
        self.ssm_state.index_copy_(0, slots, state)
        return out.to(mixed.dtype)

    def _conv(self, mixed: torch.Tensor, conv_state: torch.Tensor) -> torch.Tensor:
        """mixed [B, n, C] after conv_state [B, K-1, C] (updated in place) -> silu(conv) [B, n, C]."""
        n = mixed.shape[1]
        seq = torch.cat([conv_state, mixed.to(conv_state.dtype)], dim=1)  # [B, K-1+n, C]
        conv_state.copy_(seq[:, -(self.conv_kernel - 1) :])
        out = F.conv1d(seq.transpose(1, 2), self.conv1d.weight, groups=self.conv_dim)
        return F.silu(out[..., -n:]).transpose(1, 2)

    def _split(self, qkv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """[..., conv_dim] -> q, k [..., Hv, Dk] (normalised, key heads shared by value heads
        in groups), v [..., Hv, Dv], in the rule's compute dtype."""
        compute = torch.promote_types(qkv.dtype, torch.float32)
        q, k, v = qkv.to(compute).split([self.key_dim, self.key_dim, self.value_dim], dim=-1)
        lead = qkv.shape[:-1]
        q = l2_normalize(q.reshape(*lead, self.num_k_heads, self.head_k_dim))
        k = l2_normalize(k.reshape(*lead, self.num_k_heads, self.head_k_dim))
        group = self.num_v_heads // self.num_k_heads
        if group > 1:
            q = q.repeat_interleave(group, dim=-2)
            k = k.repeat_interleave(group, dim=-2)
        v = v.reshape(*lead, self.num_v_heads, self.head_v_dim)
        return q * self.head_k_dim**-0.5, k, v
