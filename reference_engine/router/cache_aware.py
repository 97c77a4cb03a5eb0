"""CacheAware: send a request where its prefix is most likely cached, unless that would
unbalance the load (the policy of SGLang's router).

1. If the load is unbalanced (the busiest worker has more than `balance_abs` requests
   beyond the idlest, and more than `balance_rel` times as many), only the workers within
   `balance_abs` of the least loaded stay in the running: a cache hit is worth little
   behind a long queue. (SGLang's router takes the least loaded outright; keeping the
   near-idle ones lets a prefix's affinity survive a short burst.)
2. Match the prompt in the approximate tree among those: if the best worker's match
   covers more than `cache_threshold` of the prompt, go there.
3. Else go to the worker with the least in the tree (the most room to cache a new prefix).

Every routed request is inserted into the tree under its worker.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from reference_engine.router.approx_tree import ApproxRadixTree
from reference_engine.router.policies import Policy
from reference_engine.router.worker import Worker


class CacheAware(Policy):
    name = "cache_aware"

    def __init__(
        self,
        cache_threshold: float = 0.5,
        balance_abs: int = 2,  # small: the reference setups run a few requests per worker
        balance_rel: float = 1.5,
        max_tree_size: int = 1 << 20,
    ) -> None:
        self.cache_threshold = cache_threshold
        self.balance_abs = balance_abs
        self.balance_rel = balance_rel
        self.tree = ApproxRadixTree(max_tree_size)
        self.num_cache_routed = 0  # picked for a cached prefix
        self.num_balanced = 0  # picked for load, over a cached prefix

    def pick(self, key: Sequence[Hashable], workers: list[Worker]) -> Worker:
        chosen = self._choose(key, workers)
        self.tree.insert(key, chosen.url)
        return chosen

    def _choose(self, key: Sequence[Hashable], workers: list[Worker]) -> Worker:
        least = min(w.outstanding for w in workers)
        most = max(w.outstanding for w in workers)
        if most - least > self.balance_abs and most > least * self.balance_rel:
            # Unbalanced: only workers near the least loaded compete, on their caches.
            near = [w for w in workers if w.outstanding <= least + self.balance_abs]
            self.num_balanced += len(near) < len(workers)
            workers = near
        url, matched = self.tree.match(key, (w.url for w in workers))
        if url is not None and key and matched / len(key) > self.cache_threshold:
            self.num_cache_routed += 1
            return next(w for w in workers if w.url == url)
        return min(workers, key=lambda w: (self.tree.size(w.url), w.outstanding))

    def on_removed(self, worker: Worker) -> None:
        self.tree.remove_tenant(worker.url)
