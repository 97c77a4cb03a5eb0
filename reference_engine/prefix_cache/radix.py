"""SGLang-style prefix caching: a radix tree over token ids.

Edges are token runs compared token by token; a node is split wherever two
cached sequences diverge. Like SGLang with `page_size > 1`, the tree keeps
whole KV blocks: matches and splits are rounded down to a block boundary, so
every node owns a disjoint run of full blocks (`len(key) // block_size` of
them) and no block is ever half one request's and half another's. With
`block_size=1` the match is exact to the token, as in SGLang's default.

Requests pin their path with `lock` (SGLang's `lock_ref`): a pinned node is
never evicted. Eviction takes unpinned leaves, least recently used first.
When a request computed tokens the tree already holds (two identical prompts
in one step, or a recompute), inserting it swaps its duplicate blocks for the
cached ones, so its pin covers only blocks it really uses.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass, field

from reference_engine.block_pool import BlockPool
from reference_engine.prefix_cache.base import MatchResult, PrefixCache


@dataclass(slots=True, eq=False)
class RadixNode:
    key: list[int]  # a multiple of block_size tokens (empty for the root)
    start: int  # absolute position of key[0]; a multiple of block_size
    blocks: list[int]  # one per block_size tokens of key
    parent: RadixNode | None = None
    # Keyed by the child's first block of tokens: siblings may share a first token
    # but never a whole first block (they would be one edge then).
    children: dict[tuple[int, ...], RadixNode] = field(default_factory=dict)
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
    def _walk(self, token_ids: Sequence[int], node: RadixNode | None = None) -> RadixNode:
        """Descend as far as whole blocks of `token_ids` match, splitting an edge where they stop.

        Starting from `node` (whose path must equal `token_ids[:node.end]`) skips
        re-comparing a prefix already known to be cached.
        """
        bs = self.block_size
        node = node or self.root
        now = next(self._clock)
        node.last_access = now
        pos = node.end
        while len(token_ids) - pos >= bs:
            child = node.children.get(tuple(token_ids[pos : pos + bs]))
            if child is None:
                break
            common = _common_prefix_len(child.key, token_ids[pos : pos + len(child.key)])
            common -= common % bs
            if common == 0:
                break
            child.last_access = now
            if common < len(child.key):
                return self._split(child, common)
            node, pos = child, pos + common
        return node

    def _edge(self, key: Sequence[int]) -> tuple[int, ...]:
        return tuple(key[: self.block_size])

    def _path_blocks(self, node: RadixNode) -> list[int]:
        parts: list[list[int]] = []
        while node.parent is not None:
            parts.append(node.blocks)
            node = node.parent
        return [b for part in reversed(parts) for b in part]

    def match_prefix(self, token_ids: Sequence[int]) -> MatchResult:
        node = self._walk(token_ids)
        return MatchResult(node.end, self._path_blocks(node), node)

    # --- structure ----------------------------------------------------------
    def _split(self, child: RadixNode, at: int) -> RadixNode:
        """Cut `child`'s edge after `at` tokens (a block multiple); returns the new upper node.

        `child` stays the lower node so handles pointing at it remain valid.
        """
        parent = child.parent
        assert parent is not None and 0 < at < len(child.key) and at % self.block_size == 0
        k = at // self.block_size
        upper = RadixNode(
            key=child.key[:at],
            start=child.start,
            blocks=child.blocks[:k],
            parent=parent,
            lock_ref=child.lock_ref,  # every pin on child also pins its ancestors
            last_access=child.last_access,
        )
        child.key = child.key[at:]
        child.start += at
        child.blocks = child.blocks[k:]
        child.parent = upper
        upper.children[self._edge(child.key)] = child
        parent.children[self._edge(upper.key)] = upper
        return upper

    def cache_blocks(
        self,
        token_ids: Sequence[int],
        blocks: MutableSequence[int],
        num_tokens: int,
        handle: object | None,
    ) -> object | None:
        bs = self.block_size
        num_tokens -= num_tokens % bs  # a partial block is still being written
        pinned = handle if isinstance(handle, RadixNode) else None
        if num_tokens == 0 or (pinned is not None and pinned.end >= num_tokens):
            return handle
        # The request's pinned node is on its own path, so the walk can resume there.
        node = self._walk(token_ids[:num_tokens], pinned)
        self._adopt_cached_blocks(node, pinned, blocks)
        pos = node.end
        if pos < num_tokens:
            fresh = list(blocks[pos // bs : num_tokens // bs])
            for b in fresh:
                self.pool.incref(b)
            if (
                node is pinned
                and node.parent is not None
                and not node.children
                and node.lock_ref == 1
            ):
                # Our own private leaf: grow it in place rather than hang a node per block under it.
                node.key.extend(token_ids[pos:num_tokens])
                node.blocks.extend(fresh)
                return node
            leaf = RadixNode(
                key=list(token_ids[pos:num_tokens]),
                start=pos,
                blocks=fresh,
                parent=node,
                last_access=next(self._clock),
            )
            node.children[self._edge(leaf.key)] = leaf
            node = leaf
        # Move this request's pin to the deepest node it now covers.
        self.lock(node)
        self.unlock(handle)
        return node

    def _adopt_cached_blocks(
        self, node: RadixNode, pinned: RadixNode | None, blocks: MutableSequence[int]
    ) -> None:
        """Swap the request's duplicates of blocks found on the path (pinned, node] for the
        cached ones and free its own copies: same tokens at the same positions, same KV."""
        first = (pinned.end if pinned is not None else 0) // self.block_size
        path = self._path_blocks(node)
        for i in range(first, len(path)):
            if blocks[i] != path[i]:
                self.pool.incref(path[i])
                self.pool.decref(blocks[i])
                blocks[i] = path[i]

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
        leaves = [
            (n.last_access, id(n), n) for n in self._nodes() if not n.children and n.lock_ref == 0
        ]
        heapq.heapify(leaves)
        freed = 0
        while leaves and freed < num_blocks:
            _, _, leaf = heapq.heappop(leaves)
            for b in leaf.blocks:
                freed += self.pool.decref(b)
            parent = leaf.parent
            assert parent is not None
            del parent.children[self._edge(leaf.key)]
            leaf.parent = None
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(leaves, (parent.last_access, id(parent), parent))
        return freed

    def num_evictable_blocks(self) -> int:
        # Unpinned nodes form whole subtrees, all reachable by leaf-first eviction.
        return sum(
            1
            for n in self._nodes()
            if n.lock_ref == 0
            for b in n.blocks
            if self.pool.ref_count(b) == 1
        )

    def block_refs(self) -> dict[int, int]:
        refs: dict[int, int] = {}
        for n in self._nodes():
            for b in n.blocks:
                refs[b] = refs.get(b, 0) + 1
        return refs

    def num_cached_tokens(self) -> int:
        return sum(len(n.key) for n in self._nodes())
