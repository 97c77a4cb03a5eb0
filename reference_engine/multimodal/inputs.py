"""What a request's images become, from admission to the forward pass.

- `ProcessedImage`: one image's patches, grid and content hash (image_processor.py).
- `MultiModalInputs`: a request's images, where their placeholder tokens sit in the prompt
  and the prompt's multimodal RoPE positions. Written once at admission by the
  MultiModalManager and read-only afterwards; the request's Sequences share it.
- `SeqMultiModal`: one sequence's share of a step (SeqInput.multimodal).
- `MultiModalBatch`: the packed step's (ForwardBatch.multimodal), what the model reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

# Prefix-cache keys of image tokens start here, above every vocabulary id and LoRA namespace
# (Sequence.cache_token_ids), so no text token ever equals one.
MM_CACHE_KEY_BASE = 1 << 80


@dataclass(frozen=True, slots=True)
class ProcessedImage:
    pixel_values: torch.Tensor  # [t * h * w, C * temporal * patch * patch] float32
    grid_thw: tuple[int, int, int]  # patches along time (1 for an image), height, width
    mm_hash: str  # content hash: the encoder cache's and the prefix cache's key
    merge_size: int

    @property
    def num_tokens(self) -> int:
        """Placeholder tokens (= encoder output rows): one per merge square."""
        t, h, w = self.grid_thw
        return t * h * w // self.merge_size**2

    @property
    def cache_key(self) -> int:
        return MM_CACHE_KEY_BASE + int(self.mm_hash[:20], 16)


@dataclass(frozen=True, slots=True)
class PlaceholderRange:
    """Prompt tokens [offset, offset + length) stand for one image (vLLM's name)."""

    offset: int
    length: int

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass(frozen=True, slots=True)
class MultiModalInputs:
    images: tuple[ProcessedImage, ...]
    placeholders: tuple[PlaceholderRange, ...]  # one per image, in prompt order
    mrope_positions: torch.Tensor  # [3, prompt length] int64 (mrope.py)
    # Tokens after the prompt sit at index + delta on all three axes (negative: an image
    # takes fewer positions than tokens).
    mrope_delta: int

    def positions(self, start: int, end: int) -> torch.Tensor:
        """[3, end - start] positions of tokens [start, end) (prompt or generated)."""
        num_prompt = self.mrope_positions.shape[1]
        head = self.mrope_positions[:, start : min(end, num_prompt)]
        if end <= num_prompt:
            return head
        tail = torch.arange(max(start, num_prompt), end) + self.mrope_delta
        return torch.cat([head, tail.expand(3, -1)], dim=1)

    def cache_view(self, token_ids: list[int]) -> list[int]:
        """Token ids as the prefix caches see them: each image's placeholder tokens replaced
        by a key derived from its content, so the same text with another image never
        matches a block holding this one's KV (SGLang pads with such a hash; vLLM mixes the
        hash into the block hash)."""
        out = list(token_ids)
        for image, ph in zip(self.images, self.placeholders, strict=True):
            if ph.offset >= len(out):
                break
            out[ph.offset : min(ph.end, len(out))] = [image.cache_key] * (
                min(ph.end, len(out)) - ph.offset
            )
        return out


@dataclass(slots=True)
class SeqMultiModal:
    positions: torch.Tensor  # [3, n] of this step's new tokens
    # (row among this step's new tokens, embeddings [k, hidden]) per image slice in the step
    embeds: list[tuple[int, torch.Tensor]] = field(default_factory=list)


@dataclass(slots=True)
class MultiModalBatch:
    positions: torch.Tensor  # [3, T] int64 over the flat token axis
    rows: torch.Tensor  # [R] int64 rows whose input embedding is an image's
    embeds: torch.Tensor | None  # [R, hidden]; None when R == 0

    def to(self, device: torch.device | str) -> MultiModalBatch:
        embeds = None if self.embeds is None else self.embeds.to(device)
        return MultiModalBatch(self.positions.to(device), self.rows.to(device), embeds)


def pack(
    parts: Sequence[SeqMultiModal | None],
    positions: Sequence[Sequence[int]],
    query_start: Sequence[int],
    device: torch.device | str,
) -> MultiModalBatch | None:
    """The step's MultiModalBatch, or None when no sequence has images (text-only batches
    take the plain RoPE path). A text-only sequence's three axes are its 1D positions."""
    if all(p is None for p in parts):
        return None
    cols: list[torch.Tensor] = []
    rows: list[torch.Tensor] = []
    embeds: list[torch.Tensor] = []
    for part, pos, start in zip(parts, positions, query_start, strict=False):
        if part is None:
            cols.append(torch.tensor(list(pos), dtype=torch.int64).expand(3, -1))
            continue
        cols.append(part.positions)
        for row, e in part.embeds:
            rows.append(torch.arange(start + row, start + row + e.shape[0]))
            embeds.append(e)
    return MultiModalBatch(
        positions=torch.cat(cols, dim=1).to(device),
        rows=(torch.cat(rows) if rows else torch.zeros(0, dtype=torch.int64)).to(device),
        embeds=torch.cat(embeds).to(device) if embeds else None,
    )
