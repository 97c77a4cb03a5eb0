"""Which past tokens a query still sees: sliding-window layers and StreamingLLM eviction.

A key drops out of a query's view for one of two reasons:

- its layer slides (Mistral, Gemma 3, GPT-OSS, Qwen2/Qwen3 `layer_types`): the query at
  position q sees keys q-W+1 .. q, W the layer's `sliding_window`;
- its request asked for KV eviction (`SamplingParams.kv_eviction`, a `StreamingLLM`
  policy): q sees the first `sink_tokens` positions (the attention sinks) and the last
  `recent_tokens` ones, nothing in between.

Both are rules on positions alone, so a query sees the same keys whether its request runs
alone or batched, whole or in chunks, and after a recompute. Because the rules only ever
move the window forward, a block no future query of the request can see in any layer is
dead: `dead_blocks` names them and the KVCacheManager frees them while the request runs
(vLLM's SlidingWindowManager does the same with its null block), which keeps a request's
memory bounded by its window rather than its length. The attention masks those positions
anyway; a freed block's table entry only has to point somewhere readable.

Positions are the original ones: cached keys keep the rotation of the position they were
written at (StreamingLLM's paper re-numbers positions inside the cache; that would need
keys stored before RoPE). H2O, eviction by accumulated attention, lives in heavy_hitters.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # tensor methods only: sampling_params imports this module without torch
    import torch

# A block-table entry whose block was freed: the request will never read those slots again.
FREED_BLOCK = -1


class KVPolicy(Protocol):
    """A per-request visibility rule on top of causality (SeqInput.kv_policy)."""

    def narrow(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """q [..., Q, 1], k [..., 1, K] positions -> bool keep mask."""
        ...


@dataclass(frozen=True, slots=True)
class StreamingLLM:
    """Per-request KV eviction: keep `sink_tokens` first tokens and `recent_tokens` last ones."""

    sink_tokens: int = 4
    recent_tokens: int = 256

    def __post_init__(self) -> None:
        if self.sink_tokens < 0 or self.recent_tokens < 1:
            raise ValueError(
                "kv_eviction needs sink_tokens >= 0 and recent_tokens >= 1, got "
                f"{self.sink_tokens} and {self.recent_tokens}"
            )

    def narrow(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return (k < self.sink_tokens) | (k > q - self.recent_tokens)


@dataclass(frozen=True, slots=True)
class H2O:
    """Per-request KV eviction by accumulated attention (heavy_hitters.py): hold at most
    `budget_blocks` blocks once the prompt is done, never evicting the last `recent_tokens`."""

    budget_blocks: int = 16
    recent_tokens: int = 64

    def __post_init__(self) -> None:
        if self.budget_blocks < 1 or self.recent_tokens < 1:
            raise ValueError(
                "H2O needs budget_blocks >= 1 and recent_tokens >= 1, got "
                f"{self.budget_blocks} and {self.recent_tokens}"
            )


def visible(
    q_pos: torch.Tensor,
    k_pos: torch.Tensor,
    layer_window: int | None,
    policy: KVPolicy | None,
) -> torch.Tensor:
    """Bool mask [..., Q, K]: query positions q_pos [..., Q] against key positions
    k_pos [..., K], causal, then narrowed by the layer's window and the request's policy."""
    q, k = q_pos[..., :, None], k_pos[..., None, :]
    mask = k <= q
    if layer_window is not None:
        mask &= k > q - layer_window
    if policy is not None:
        mask &= policy.narrow(q, k)
    return mask


def needs_mask(layer_window: int | None, policies: Sequence[KVPolicy | None]) -> bool:
    return layer_window is not None or any(p is not None for p in policies)


def dead_blocks(
    num_computed_tokens: int,
    block_size: int,
    layer_windows: Sequence[int | None],
    policy: object | None,
) -> range:
    """Block indices no query at position >= num_computed_tokens sees in any layer.

    The widest view over layers decides: a full-attention layer without a policy keeps
    everything; otherwise the next query sees back `span` positions (plus the sinks).
    """
    if not isinstance(policy, StreamingLLM):
        policy = None  # H2O frees by score (heavy_hitters.py), not by position
    windows = list(layer_windows) or [None]
    widest = None if any(w is None for w in windows) else max(w for w in windows if w)
    span = min(
        (s for s in (widest, policy.recent_tokens if policy else None) if s is not None),
        default=None,
    )
    if span is None:
        return range(0)
    sinks = policy.sink_tokens if policy else 0
    first = -(-sinks // block_size)  # blocks holding a sink stay
    # The next query is at num_computed_tokens and sees keys > num_computed_tokens - span.
    end = max(0, (num_computed_tokens - span + 1) // block_size)
    return range(first, max(first, end))


def max_len_in_pool(
    num_blocks: int,
    block_size: int,
    layer_windows: Sequence[int | None],
    max_chunk_tokens: int,
    chunked_prefill: bool,
) -> int | None:
    """The longest sequence a pool of `num_blocks` can carry alone: the pool's size, unless
    every layer slides and prefill is chunked. Then a sequence never holds more than its
    window plus one step's chunk (dead blocks are freed after every step), so when that fits,
    the pool bounds no length at all (None)."""
    windows = list(layer_windows)
    pool = num_blocks * block_size
    if not windows or any(w is None for w in windows) or not chunked_prefill:
        return pool
    widest = max(w for w in windows if w is not None)
    need = -(-(widest + max_chunk_tokens) // block_size) + 2  # + partial blocks at both ends
    return None if need <= num_blocks else pool
