"""ApproxRadixTree: what each worker has probably cached, guessed from what was sent to it.

The router cannot see the workers' prefix caches, so it keeps its own radix tree over
the requests it routed (SGLang's router does the same): each node lists the workers
("tenants") that were sent its path, with when. A request's longest match tells which
worker most likely still holds its prefix. Keys are sequences of characters (text
prompts) or of token ids; edges split where two keys diverge.

Each tenant's share is bounded (`max_size_per_tenant` elements), like a worker's real
cache: past it, the tenant leaves its least recently used leaves first. Approximate by
design: a worker may have evicted what the tree still credits it with, or hold what
another route left there; a wrong guess costs a cache miss, never a wrong answer.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

Key = tuple[Hashable, ...]


@dataclass(slots=True, eq=False)
class _Node:
    key: Key
    parent: _Node | None
    children: dict[Hashable, _Node] = field(default_factory=dict)
    tenants: dict[str, int] = field(default_factory=dict)  # tenant -> last access tick


def _common(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class ApproxRadixTree:
    def __init__(self, max_size_per_tenant: int = 1 << 20) -> None:
        self.max_size_per_tenant = max_size_per_tenant
        self.root = _Node((), None)
        self._size: dict[str, int] = {}
        self._clock = itertools.count(1)

    def size(self, tenant: str) -> int:
        return self._size.get(tenant, 0)

    # --- insert -----------------------------------------------------------------------
    def insert(self, key: Sequence[Hashable], tenant: str) -> None:
        key = tuple(key)
        now = next(self._clock)
        node, pos = self.root, 0
        while pos < len(key):
            child = node.children.get(key[pos])
            if child is None:
                leaf = _Node(key[pos:], node)
                node.children[key[pos]] = leaf
                self._credit(leaf, tenant, now)
                break
            common = _common(child.key, key[pos:])
            if common < len(child.key):
                child = self._split(child, common)
            self._credit(child, tenant, now)
            node, pos = child, pos + common
        if self.size(tenant) > self.max_size_per_tenant:
            self.evict(tenant, self.max_size_per_tenant)

    def _credit(self, node: _Node, tenant: str, now: int) -> None:
        if tenant not in node.tenants:
            self._size[tenant] = self.size(tenant) + len(node.key)
        node.tenants[tenant] = now

    def _split(self, child: _Node, at: int) -> _Node:
        parent = child.parent
        assert parent is not None
        upper = _Node(child.key[:at], parent, tenants=dict(child.tenants))
        child.key = child.key[at:]
        child.parent = upper
        upper.children[child.key[0]] = child
        parent.children[upper.key[0]] = upper
        return upper

    # --- match --------------------------------------------------------------------------
    def match(self, key: Sequence[Hashable], tenants: Iterable[str]) -> tuple[str | None, int]:
        """The eligible tenant with the longest cached prefix of `key`, and its length
        (most recent access breaks ties); (None, 0) when none shares even one element."""
        eligible = set(tenants)
        key = tuple(key)
        best: str | None = None
        node, pos = self.root, 0
        while pos < len(key):
            child = node.children.get(key[pos])
            if child is None:
                break
            present = [t for t in child.tenants if t in eligible]
            if not present:
                break
            best = max(present, key=lambda t: child.tenants[t])
            common = _common(child.key, key[pos:])
            pos += common
            if common < len(child.key):
                break
            node = child
        return best, pos if best is not None else 0

    def match_each(self, key: Sequence[Hashable], tenants: Iterable[str]) -> dict[str, int]:
        """How long a prefix of `key` each tenant probably holds (0 for none): what a cost
        model needs to weigh one worker's hit against another's queue."""
        out = dict.fromkeys(tenants, 0)
        key = tuple(key)
        node, pos = self.root, 0
        while pos < len(key):
            child = node.children.get(key[pos])
            if child is None:
                break
            present = [t for t in child.tenants if t in out]
            if not present:
                break
            common = _common(child.key, key[pos:])
            pos += common
            for t in present:  # a tenant on a node is on all its ancestors
                out[t] = pos
            if common < len(child.key):
                break
            node = child
        return out

    # --- eviction -----------------------------------------------------------------------
    def evict(self, tenant: str, target_size: int) -> None:
        """Drop `tenant` from its least recently used leaves until its size <= target."""
        heap = [(n.tenants[tenant], id(n), n) for n in self._nodes() if self._is_leaf_of(n, tenant)]
        heapq.heapify(heap)
        while heap and self.size(tenant) > target_size:
            _, _, node = heapq.heappop(heap)
            parent = node.parent
            self._drop(node, tenant)
            if parent is not None and parent is not self.root and self._is_leaf_of(parent, tenant):
                heapq.heappush(heap, (parent.tenants[tenant], id(parent), parent))

    def remove_tenant(self, tenant: str) -> None:
        """Forget a worker entirely (it was removed; its cache is gone or unknown)."""
        for node in self._nodes():
            if tenant in node.tenants:
                self._drop(node, tenant)
        self._size.pop(tenant, None)

    def _is_leaf_of(self, node: _Node, tenant: str) -> bool:
        return tenant in node.tenants and not any(
            tenant in c.tenants for c in node.children.values()
        )

    def _drop(self, node: _Node, tenant: str) -> None:
        del node.tenants[tenant]
        self._size[tenant] = self.size(tenant) - len(node.key)
        if not node.tenants and not node.children and node.parent is not None:
            del node.parent.children[node.key[0]]
            node.parent = None

    def _nodes(self) -> list[_Node]:
        out, stack = [], list(self.root.children.values())
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children.values())
        return out
