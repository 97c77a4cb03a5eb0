"""Tree drafts: several candidate continuations verified in one target forward pass.

A draft tree is laid out as rows in parent-first order: row 0 is the root (the last
sampled token), row i > 0 a draft token whose parent row is parents[i]. In the forward
pass each row sits at position start + depth and attends to the cached context plus its
own ancestors (forward_batch.ancestor_mask, PagedAttention._prefill_one), while its K/V go
to consecutive slots start, start + 1, ... in row order.

Verification walks from the root: the target draws a token at the current row (the
batched sampler, one row per node); if a child carries that token the walk moves there,
else the draw is emitted and the walk stops; at a leaf the draw is the bonus token. For
deterministic drafts this is exact sampling from the target, as for chains (see
rejection_sampler.py): each emitted token is a draw from the target at its true context.

The accepted path's K/V then sit at the slots of its rows; `compact_path` copies them to
the slots of positions start + 1, start + 2, ... so the cache is as if the path had been
decoded token by token. Rows are parent-first, so a path row's index is at least its
depth: copies only move K/V to lower slots, and never overwrite a slot still to be read.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def path_tokens(tokens: Sequence[int], parents: Sequence[int], row: int) -> list[int]:
    """The draft tokens from the root (excluded) down to `row` (included)."""
    out: list[int] = []
    while row > 0:
        out.append(tokens[row])
        row = parents[row]
    return out[::-1]


def walk_tree(
    tokens: Sequence[int], parents: Sequence[int], sampled: Sequence[int]
) -> tuple[list[int], list[int]]:
    """tokens/parents over all rows (tokens[0], the root, is unused); sampled[i] the target's
    draw at row i. Returns (emitted tokens, the accepted rows in path order)."""
    children: dict[int, dict[int, int]] = {}
    for i in range(1, len(tokens)):
        children.setdefault(parents[i], {}).setdefault(tokens[i], i)
    emitted: list[int] = []
    path: list[int] = []
    row = 0
    while True:
        draw = sampled[row]
        emitted.append(draw)
        child = children.get(row, {}).get(draw)
        if child is None:
            return emitted, path
        path.append(child)
        row = child


def compact_path(
    kv_caches: Sequence[tuple[torch.Tensor, ...]],  # per layer: K, V (MLA: one latent cache)
    block_table: Sequence[int],
    start: int,
    path: Sequence[int],
    block_size: int,
) -> None:
    """Move the accepted rows' K/V (slot start + row) to slots start + 1 .. start + len(path)."""
    moves = [(start + row, start + depth) for depth, row in enumerate(path, start=1)]
    moves = [(s, d) for s, d in moves if s != d]
    if not moves:
        return

    def flat(pos: int) -> int:
        return block_table[pos // block_size] * block_size + pos % block_size

    device = kv_caches[0][0].device
    src = torch.tensor([flat(s) for s, _ in moves], dtype=torch.int64, device=device)
    dst = torch.tensor([flat(d) for _, d in moves], dtype=torch.int64, device=device)
    for cache in (c for pair in kv_caches for c in pair):
        view = cache.view(-1, *cache.shape[2:])
        view.index_copy_(0, dst, view[src])  # gathered first: every source read before writes


def build_token_tree(branches: Sequence[Sequence[int]], max_nodes: int) -> tuple[list[int], list[int]]:
    """A trie of candidate continuations (shared prefixes merged), as (draft tokens,
    parents) over rows 1.. (parent 0 is the root), at most max_nodes drafts. Branches
    come best first, so a tight budget keeps the best ones whole."""
    tokens: list[int] = []
    parents: list[int] = []
    index: dict[tuple[int, int], int] = {}  # (parent row, token) -> row
    for branch in branches:
        row = 0
        for token in branch:
            found = index.get((row, token))
            if found is None:
                if len(tokens) >= max_nodes:
                    break
                tokens.append(token)
                parents.append(row)
                found = index[(row, token)] = len(tokens)
            row = found
    return tokens, parents


def prune_tree(
    tokens: Sequence[int], parents: Sequence[int], max_depth: int, max_nodes: int
) -> tuple[list[int], list[int]]:
    """Drop drafts deeper than max_depth, then keep the first max_nodes rows (parent-first
    order keeps every kept row's parent); parents re-indexed (0 = root)."""
    keep: dict[int, int] = {0: 0}  # old row -> new row
    depth = {0: 0}
    out_tokens: list[int] = []
    out_parents: list[int] = []
    for row, (token, parent) in enumerate(zip(tokens, parents, strict=True), start=1):
        if parent not in keep or len(out_tokens) >= max_nodes:
            continue
        d = depth[parent] + 1
        if d > max_depth:
            continue
        depth[row] = d
        out_tokens.append(token)
        out_parents.append(keep[parent])
        keep[row] = len(out_tokens)
    return out_tokens, out_parents
