"""Multimodal RoPE positions of a prompt (transformers' get_rope_index for Qwen3.5).

Text tokens count up by one on all three axes. An image's tokens, one per merge square of
an h x w patch grid, all take temporal position p (the next free one) and rows p..p+h'-1,
columns p..p+w'-1 (h' = h / merge, w' = w / merge); the text after it resumes at
p + max(h', w'). Positions thus grow with the image's side, not its token count, and
generated tokens continue at index + delta (MultiModalInputs.mrope_delta).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from reference_engine.multimodal.inputs import PlaceholderRange


def mrope_positions(
    num_tokens: int,
    placeholders: Sequence[PlaceholderRange],
    grids: Sequence[tuple[int, int, int]],
    merge: int,
) -> tuple[torch.Tensor, int]:
    """([3, num_tokens] int64 positions, delta for the tokens after the prompt)."""
    cols: list[torch.Tensor] = []
    next_pos = 0
    cursor = 0
    for ph, (t, h, w) in zip(placeholders, grids, strict=True):
        if ph.offset > cursor:  # text before the image
            n = ph.offset - cursor
            cols.append((torch.arange(n) + next_pos).expand(3, -1))
            next_pos += n
        gh, gw = h // merge, w // merge
        tt, hh, ww = torch.meshgrid(
            torch.arange(t), torch.arange(gh), torch.arange(gw), indexing="ij"
        )
        cols.append(torch.stack([tt.flatten(), hh.flatten(), ww.flatten()]) + next_pos)
        next_pos += max(gh, gw)
        cursor = ph.end
    if num_tokens > cursor:
        cols.append((torch.arange(num_tokens - cursor) + next_pos).expand(3, -1))
        next_pos += num_tokens - cursor
    positions = torch.cat(cols, dim=1) if cols else torch.zeros(3, 0, dtype=torch.int64)
    return positions.contiguous(), next_pos - num_tokens
