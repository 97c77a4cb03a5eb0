"""The encoder cache: vision-encoder outputs by image hash (vLLM's EncoderCacheManager and
the runner's encoder_cache in one).

Owned by the MultiModalManager. An image's embeddings are computed once and reused while the
request that needs them prefills, by later chunks of its prompt, by a recompute after
preemption and by any other request showing the same image. A request holds a reference
from the step that first needs the image until its prompt has passed the image (or it
ends); unreferenced entries stay cached, least recently used first out, until the capacity
(counted in embedding rows, i.e. image tokens) needs their room. Referenced entries are never
evicted; the scheduler keeps them within the capacity (MultiModalManager.limit_tokens: a
chunk stops before an image there is no room for), so only a caller building its own
batches can overfill it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import torch


@dataclass(slots=True)
class _Entry:
    embeds: torch.Tensor  # [num image tokens, hidden]
    refs: set[str] = field(default_factory=set)  # request ids still reading it


@dataclass(slots=True)
class EncoderCacheStats:
    hits: int = 0
    misses: int = 0


class EncoderCache:
    def __init__(self, capacity_tokens: int) -> None:
        if capacity_tokens < 1:
            raise ValueError(f"encoder cache capacity must be positive, got {capacity_tokens}")
        self.capacity = capacity_tokens
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # least recently used first
        self.num_tokens = 0
        self.stats = EncoderCacheStats()

    def __contains__(self, mm_hash: str) -> bool:
        return mm_hash in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, mm_hash: str, request_id: str) -> torch.Tensor | None:
        """The cached embeddings (a reference taken for `request_id`), or None on a miss."""
        entry = self._entries.get(mm_hash)
        if entry is None:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        entry.refs.add(request_id)
        self._entries.move_to_end(mm_hash)
        return entry.embeds

    def peek(self, mm_hash: str) -> torch.Tensor:
        """An entry's embeddings, without a reference or a hit counted."""
        return self._entries[mm_hash].embeds

    def put(self, mm_hash: str, embeds: torch.Tensor, request_id: str) -> None:
        """File freshly computed embeddings, referenced by `request_id`, evicting
        unreferenced entries while over capacity."""
        old = self._entries.pop(mm_hash, None)
        if old is not None:  # encoded again (evicted and needed once more): replaced
            self.num_tokens -= old.embeds.shape[0]
        self._entries[mm_hash] = _Entry(embeds, {request_id} | (old.refs if old else set()))
        self.num_tokens += embeds.shape[0]
        for key in [k for k, e in self._entries.items() if not e.refs]:
            if self.num_tokens <= self.capacity:
                break
            self.num_tokens -= self._entries.pop(key).embeds.shape[0]

    def release(self, mm_hash: str, request_id: str) -> None:
        entry = self._entries.get(mm_hash)
        if entry is not None:
            entry.refs.discard(request_id)

    def release_request(self, request_id: str) -> None:
        for entry in self._entries.values():
            entry.refs.discard(request_id)

    def check_integrity(self, live_request_ids: set[str]) -> None:
        """Raise unless the row count adds up and only live requests hold references."""
        total = sum(e.embeds.shape[0] for e in self._entries.values())
        if total != self.num_tokens:
            raise AssertionError(f"encoder cache counts {self.num_tokens} rows, holds {total}")
        for key, entry in self._entries.items():
            if entry.refs - live_request_ids:
                raise AssertionError(f"image {key} referenced by ended requests {entry.refs}")

    def referenced_tokens(self) -> int:
        """Rows held by entries some request still reads (the ones eviction cannot take)."""
        return sum(e.embeds.shape[0] for e in self._entries.values() if e.refs)

    def referenced_by(self, request_id: str) -> list[str]:
        return [k for k, e in self._entries.items() if request_id in e.refs]
