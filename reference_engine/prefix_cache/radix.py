"""SGLang-style prefix caching: a radix tree over token ids, exact to the token.

Edges are token runs compared token by token; a node is split wherever two
cached sequences diverge, at any token, whatever the block size. So a match
may end inside a KV block. The request then shares every fully matched block
and gets a fresh private block for the partial one, whose leading slots are
copied from a cached block on the device before its first forward pass
(copy-on-write at admission: `MatchResult.partial_block`, carried to the
engine as the scheduler's `blocks_to_copy`; on a pool too full for the copy's
extra block, the scheduler settles for the whole blocks). With `block_size=1`
no copy is ever needed, as in SGLang's default page size of one token.

What a node owns: one pool reference on each block whose last cached token,
along the node's path, is one of the node's. A node covering [start, end) holds
the blocks for indices start // bs .. (end - 1) // bs, except that a node
ending inside a block *and having children* does not hold that last block:
each child, starting there, holds its own block for that index, whose leading
slots hold the child's request's KV of the parent's tail. Every block index on
a path is held by exactly one node of the path, so the blocks a request's pin
keeps are those of its own block table (save, for one step, the source of its
copy or a twin request's partial block). When the last child of such a node is
evicted, the node inherits that child's first block (it holds the node's tail).

Why that is safe: a block the tree holds only partially (a leaf's last block)
is written by its one owning request, past the cached tokens, and read by
nobody else.
- A match shares only blocks its path covers completely. Their writer has
  moved past them, so they never change again.
- The partially matched block is copied, never shared. The copy reads only
  slots written in earlier steps (the tree indexes computed tokens only); later
  slots, which the owner may write in the same step, are overwritten by the new
  request before it reads them. The admitting KVCacheManager holds a reference
  on the source until the copy ran, so it cannot be evicted and reused first.
- Inserting a request's tokens adopts cached blocks (dropping its duplicates)
  only for full blocks, and a node grows in place only when its last block is
  the request's own.

Requests pin their path with `lock` (SGLang's `lock_ref`): a pinned node is
never evicted. Eviction takes unpinned leaves, least recently used first.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass, field

from reference_engine.block_pool import BlockPool
from reference_engine.prefix_cache.base import MatchResult, PrefixCache
from reference_engine.prefix_cache.hashed import _ROOT_HASH, hash_block


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(slots=True, eq=False)
class RadixNode:
    key: list[int]  # the edge's tokens (empty for the root)
    start: int  # absolute position of key[0]
    blocks: list[int]  # for block indices start // bs onwards; see the module docstring
    parent: RadixNode | None = None
    children: dict[int, RadixNode] = field(default_factory=dict)  # keyed by first token
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
        """Descend as far as `token_ids` match, splitting the edge where they stop.

        Returns the node ending where the match ends. Starting from `node`
        (whose path must equal `token_ids[:node.end]`) skips re-comparing a
        prefix already known to be cached.
        """
        node = node or self.root
        now = next(self._clock)
        node.last_access = now
        pos = node.end
        while pos < len(token_ids):
            child = node.children.get(token_ids[pos])
            if child is None:
                break
            common = _common_prefix_len(child.key, token_ids[pos : pos + len(child.key)])
            child.last_access = now
            if common < len(child.key):
                return self._split(child, common)
            node, pos = child, child.end
        return node

    def _path_blocks(self, node: RadixNode) -> list[int]:
        """Block table of the path's tokens: each index is held by exactly one node on it."""
        parts: list[list[int]] = []
        while node.parent is not None:
            parts.append(node.blocks)
            node = node.parent
        return [b for part in reversed(parts) for b in part]

    def _holds_tail(self, node: RadixNode) -> bool:
        """Whether `node` ends inside a block and holds that block itself."""
        bs = self.block_size
        return node.end % bs != 0 and len(node.blocks) > node.end // bs - node.start // bs

    def _tail_block(self, node: RadixNode) -> int:
        """A block holding the KV of `node`'s tokens in its last, partial block: its own,
        or else the first block of any descendant (which starts with copies of them)."""
        if self._holds_tail(node):
            return node.blocks[-1]
        # The children start inside that block and each holds it, except those that also
        # end inside it: they hold no block at all, so look below them.
        child = next(iter(node.children.values()))
        while not child.blocks:
            child = next(iter(child.children.values()))
        return child.blocks[0]

    def match_prefix(self, token_ids: Sequence[int]) -> MatchResult:
        node = self._walk(token_ids)
        num_full = node.end // self.block_size
        blocks = self._path_blocks(node)[:num_full]
        partial = self._tail_block(node) if node.end % self.block_size else None
        return MatchResult(node.end, blocks, node, partial)

    # --- structure ----------------------------------------------------------
    def _split(self, child: RadixNode, at: int) -> RadixNode:
        """Cut `child`'s edge after `at` tokens; returns the new upper node.

        `child` stays the lower node so handles pointing at it remain valid. A
        cut inside a block leaves that block with the lower node: the upper one
        now has a child starting there.
        """
        parent = child.parent
        assert parent is not None and 0 < at < len(child.key)
        cut = child.start + at
        k = cut // self.block_size - child.start // self.block_size
        upper = RadixNode(
            key=child.key[:at],
            start=child.start,
            blocks=child.blocks[:k],
            parent=parent,
            lock_ref=child.lock_ref,  # every pin on child also pins its ancestors
            last_access=child.last_access,
        )
        child.key = child.key[at:]
        child.start = cut
        child.blocks = child.blocks[k:]
        child.parent = upper
        upper.children[child.key[0]] = child
        parent.children[upper.key[0]] = upper
        return upper

    def cache_blocks(
        self,
        token_ids: Sequence[int],
        blocks: MutableSequence[int],
        num_tokens: int,
        handle: object | None,
    ) -> object | None:
        bs = self.block_size
        pinned = handle if isinstance(handle, RadixNode) else None
        if num_tokens == 0 or (pinned is not None and pinned.end >= num_tokens):
            return handle
        # The request's pinned node is on its own path, so the walk can resume there.
        node = self._walk(token_ids[:num_tokens], pinned)
        self._adopt_full_blocks(node, pinned, blocks)
        pos = node.end
        if pos == num_tokens:
            self._take_over_tail(node, blocks)
        elif node is pinned and self._is_private_leaf(node, blocks):
            # Grow it in place rather than hang a node per step under it.
            fresh = list(blocks[_cdiv(pos, bs) : _cdiv(num_tokens, bs)])
            for b in fresh:
                self.pool.incref(b)
            node.key.extend(token_ids[pos:num_tokens])
            node.blocks.extend(fresh)
        else:
            # Starts with the request's own block for index pos // bs, which also
            # holds the KV of the path's tokens before `pos` in that block.
            fresh = list(blocks[pos // bs : _cdiv(num_tokens, bs)])
            for b in fresh:
                self.pool.incref(b)
            if self._holds_tail(node):
                self.pool.decref(node.blocks.pop())  # the new child holds that index now
            leaf = RadixNode(
                key=list(token_ids[pos:num_tokens]),
                start=pos,
                blocks=fresh,
                parent=node,
                last_access=next(self._clock),
            )
            node.children[leaf.key[0]] = leaf
            node = leaf
        # Move this request's pin to the deepest node it now covers.
        self.lock(node)
        self.unlock(handle)
        return node

    def _take_over_tail(self, node: RadixNode, blocks: Sequence[int]) -> None:
        """The request computed exactly `node`'s tokens: let `node` hold the request's own
        partial last block instead of another's, so the request's pin holds only blocks
        in its own table (the other's block stays with its owner, or comes free)."""
        if not self._holds_tail(node):
            return
        mine = blocks[(node.end - 1) // self.block_size]
        if node.blocks[-1] != mine:
            self.pool.incref(mine)
            self.pool.decref(node.blocks[-1])
            node.blocks[-1] = mine

    def _is_private_leaf(self, node: RadixNode, blocks: Sequence[int]) -> bool:
        """Only this request pins `node`, nothing hangs below it, and a partially
        filled last block is the request's own (not the block it copied from)."""
        if node.parent is None or node.children or node.lock_ref != 1:
            return False
        return node.end % self.block_size == 0 or (
            node.blocks[-1] == blocks[(node.end - 1) // self.block_size]
        )

    def _adopt_full_blocks(
        self, node: RadixNode, pinned: RadixNode | None, blocks: MutableSequence[int]
    ) -> None:
        """Swap the request's duplicates of full blocks on the path (pinned, node] for the
        cached ones and free its own copies: same tokens at the same positions, same KV.

        Only full blocks: a partially cached block may still be written by its owner.
        """
        first = (pinned.end if pinned is not None else 0) // self.block_size
        path = self._path_blocks(node)
        for i in range(first, node.end // self.block_size):
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
            parent = leaf.parent
            assert parent is not None
            del parent.children[leaf.key[0]]
            leaf.parent = None
            dropped = leaf.blocks
            first = leaf.start // self.block_size  # block index of dropped[0]
            if leaf.start % self.block_size and not parent.children:
                # The parent ends inside this block and has no other child to hold it.
                parent.blocks.append(dropped[0])
                dropped = dropped[1:]
                first += 1
            if self.evict_listener is not None:
                self._tell_evicted(parent, leaf, first, dropped)
            for b in dropped:
                freed += self.pool.decref(b)
            if parent is not self.root and not parent.children and parent.lock_ref == 0:
                heapq.heappush(leaves, (parent.last_access, id(parent), parent))
        return freed

    def _tell_evicted(self, parent: RadixNode, leaf: RadixNode, first: int, dropped: list[int]) -> None:
        """Name each full block the leaf drops by the chained hash of its path's tokens."""
        assert self.evict_listener is not None
        bs = self.block_size
        tokens = self._path_tokens(parent) + leaf.key
        key = _ROOT_HASH
        for i in range(len(tokens) // bs):
            key = hash_block(key, tokens[i * bs : (i + 1) * bs])
            if i >= first and i - first < len(dropped):
                self.evict_listener(key, dropped[i - first])

    def _path_tokens(self, node: RadixNode) -> list[int]:
        parts: list[list[int]] = []
        while node.parent is not None:
            parts.append(node.key)
            node = node.parent
        return [t for part in reversed(parts) for t in part]

    def num_evictable_blocks(self) -> int:
        # Unpinned nodes form whole subtrees, all reachable by leaf-first eviction. An upper
        # bound by at most one block per pinned node ending inside a block, which inherits
        # one from its last evicted child.
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
