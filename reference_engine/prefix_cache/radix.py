"""SGLang-style prefix caching: a radix tree over token ids.

Edges are token runs, split wherever two cached sequences diverge, so a hit
can end mid-block: the request then shares the full blocks and copies the
partially valid last one (copy-on-write) before writing its own tokens there.

A node covering absolute token positions [start, end) holds one pool
reference on each block those positions fall in; when a split lands inside
a block, that block is held by both halves. Where two nodes on one path both
name a block index, the deeper node's block is the one whose slots are all
valid for that path (it belongs to the request that inserted the deeper run).

Requests pin their path with `lock` (SGLang's `lock_ref`); only unpinned
leaves are evicted, least recently used first.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from reference_engine.block_pool import BlockPool
from reference_engine.prefix_cache.base import MatchResult, PrefixCache


@dataclass(slots=True, eq=False)
class RadixNode:
    key: list[int]
    start: int  # absolute position of key[0] in the sequence
    blocks: list[int]  # blocks for block indices start // bs .. (end - 1) // bs
    parent: RadixNode | None = None
    children: dict[int, RadixNode] = field(default_factory=dict)
    lock_ref: int = 0
    last_access: int = 0

    @property
    def end(self) -> int:
        return self.start + len(self.key)


def _common_prefix_len(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class RadixPrefixCache(PrefixCache):
    def __init__(self, pool: BlockPool, block_size: int) -> None:
        super().__init__(pool, block_size)
        self.root = RadixNode(key=[], start=0, blocks=[])
        self.root.lock_ref = 1  # the root is never evicted
        self._clock = itertools.count(1)  # logical time for LRU; per cache, no globals

    # --- lookup -----------------------------------------------------------
    def _walk(self, token_ids: Sequence[int], node: RadixNode | None = None) -> tuple[RadixNode, int]:
        """Descend as far as `token_ids` matches, splitting the last edge at the divergence.

        Starting from `node` (whose path must equal `token_ids[:node.end]`) skips
        re-comparing a prefix already known to be cached.
        """
        node = node or self.root
        pos = node.end
        now = next(self._clock)
        node.last_access = now
        while pos < len(token_ids):
            child = node.children.get(token_ids[pos])
            if child is None:
                break
            common = _common_prefix_len(child.key, token_ids[pos : pos + len(child.key)])
            child.last_access = now
            if common < len(child.key):
                node = self._split(child, common)
                pos += common
                break
            node, pos = child, pos + common
        return node, pos

    def _path_blocks(self, node: RadixNode, num_tokens: int) -> list[int]:
        if num_tokens == 0:
            return []
        blocks: list[int | None] = [None] * ((num_tokens - 1) // self.block_size + 1)
        path: list[RadixNode] = []
        while node is not self.root:
            assert node is not None
            path.append(node)
            node = node.parent  # type: ignore[assignment]
        for n in reversed(path):  # root to leaf: deeper nodes overwrite shared boundary blocks
            first = n.start // self.block_size
            for j, b in enumerate(n.blocks):
                blocks[first + j] = b
        assert all(b is not None for b in blocks)
        return blocks  # type: ignore[return-value]

    def match_prefix(self, token_ids: Sequence[int]) -> MatchResult:
        node, pos = self._walk(token_ids)
        return MatchResult(pos, self._path_blocks(node, pos), node)

    # --- structure ----------------------------------------------------------
    def _blocks_for(self, blocks: Sequence[int], start: int, end: int) -> list[int]:
        bs = self.block_size
        return list(blocks[start // bs : (end - 1) // bs + 1])

    def _split(self, child: RadixNode, at: int) -> RadixNode:
        """Cut `child`'s edge after `at` tokens; returns the new upper node.

        `child` stays the lower node so handles pointing at it remain valid.
        """
        parent = child.parent
        assert parent is not None and 0 < at < len(child.key)
        bs = self.block_size
        mid_end = child.start + at
        upper_blocks = child.blocks[: (mid_end - 1) // bs - child.start // bs + 1]
        lower_first = mid_end // bs - child.start // bs
        upper = RadixNode(
            key=child.key[:at],
            start=child.start,
            blocks=upper_blocks,
            parent=parent,
            lock_ref=child.lock_ref,  # every pin on child also pins its ancestors
            last_access=child.last_access,
        )
        if mid_end % bs:
            self.pool.incref(child.blocks[lower_first])  # boundary block now held by both halves
        child.key = child.key[at:]
        child.start = mid_end
        child.blocks = child.blocks[lower_first:]
        child.parent = upper
        upper.children[child.key[0]] = child
        parent.children[upper.key[0]] = upper
        return upper

    def cache_blocks(
        self, token_ids: Sequence[int], blocks: Sequence[int], num_tokens: int, handle: object | None
    ) -> object | None:
        # The request's pinned node is on its own path, so the walk can resume there.
        pinned = handle if isinstance(handle, RadixNode) else None
        node, pos = self._walk(token_ids[:num_tokens], pinned)
        if pos < num_tokens:
            bs = self.block_size
            if (
                node is pinned
                and node is not self.root
                and not node.children
                and node.lock_ref == 1
                and node.blocks[-1] == blocks[(node.end - 1) // bs]
            ):
                # Our own private leaf and its tail block is ours: grow it in place
                # instead of hanging one tiny node per decoded token under it.
                last_index = (node.end - 1) // bs
                node.key.extend(token_ids[pos:num_tokens])
                fresh = list(blocks[last_index + 1 : (num_tokens - 1) // bs + 1])
                for b in fresh:
                    self.pool.incref(b)
                node.blocks.extend(fresh)
                return node
            leaf = RadixNode(
                key=list(token_ids[pos:num_tokens]),
                start=pos,
                blocks=self._blocks_for(blocks, pos, num_tokens),
                parent=node,
                last_access=next(self._clock),
            )
            for b in leaf.blocks:
                self.pool.incref(b)
            node.children[leaf.key[0]] = leaf
            node = leaf
        # Move this request's pin to the deepest node it now covers.
        self.lock(node)
        self.unlock(handle)
        return node

    # --- pinning and eviction -------------------------------------------------
    def lock(self, handle: object | None) -> None:
        node = handle if isinstance(handle, RadixNode) else None
        while node is not None and node is not self.root:
            node.lock_ref += 1
            node = node.parent

    def unlock(self, handle: object | None) -> None:
        node = handle if isinstance(handle, RadixNode) else None
        while node is not None and node is not self.root:
            assert node.lock_ref > 0, "radix node unlocked more often than locked"
            node.lock_ref -= 1
            node = node.parent

    def _nodes(self) -> list[RadixNode]:
        out, stack = [], [self.root]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(n.children.values())
        return out[1:]

    def evict(self, num_blocks: int) -> int:
        leaves = [(n.last_access, id(n), n) for n in self._nodes() if not n.children and n.lock_ref == 0]
        heapq.heapify(leaves)
        freed = 0
        while leaves and freed < num_blocks:
            _, _, leaf = heapq.heappop(leaves)
            for b in leaf.blocks:
                freed += self.pool.decref(b)
            parent = leaf.parent
            assert parent is not None
            del parent.children[leaf.key[0]]
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(leaves, (parent.last_access, id(parent), parent))
        return freed

    def num_evictable_blocks(self) -> int:
        # A block comes free once every unpinned node naming it is gone and nothing else holds it.
        unpinned: dict[int, int] = {}
        for n in self._nodes():
            if n.lock_ref == 0:
                for b in n.blocks:
                    unpinned[b] = unpinned.get(b, 0) + 1
        return sum(1 for b, c in unpinned.items() if c == self.pool.ref_count(b))

    def block_refs(self) -> dict[int, int]:
        refs: dict[int, int] = {}
        for n in self._nodes():
            for b in n.blocks:
                refs[b] = refs.get(b, 0) + 1
        return refs

    def num_cached_tokens(self) -> int:
        return sum(len(n.key) for n in self._nodes())
