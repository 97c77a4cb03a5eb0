"""CacheAware: send a request where its time to first token is probably shortest, which is
usually where its prefix is cached, unless that worker is busy computing other prompts.

SGLang's router decides in two steps: if the outstanding counts are unbalanced, take the
least loaded; else take the best match of the approximate tree if it covers enough of the
prompt. Outstanding counts are a poor load signal here: a request that is decoding costs
a newcomer little, while one whose long prompt is still being prefilled (a tenant's first
request, a cache miss) holds it up for the whole prefill. Measured on router_bench, the
two-step rule sent a tenant's burst to the worker busy prefilling, and TTFT p99 was worse
than round robin's.

So this policy scores each worker by an estimated cost, in prompt elements (characters
or token ids, as the key is), the unit a prefill costs (as llm-d's scorers weigh a
prefix-cache match against queue depth):

    cost(w) = queued_prefill(w)         prompt work routed to w with no first token yet
            + len(key) - match(w)       this prompt's part that w probably lacks
                                        (match: 0 unless over cache_threshold of it)
            + load_weight * outstanding(w)   a little for each request w is decoding

`queued_prefill` is what the router charged each request it sent (its uncached part on
that worker), released when the request's first token streams back (proxy.Router._try).
The cheapest worker wins; ties go to the longer match (keep the prefix's affinity), then
to the smaller tree (the most room to cache a new prefix). Every routed request is
inserted into the tree under its worker.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from reference_engine.router.approx_tree import ApproxRadixTree
from reference_engine.router.policies import Policy
from reference_engine.router.worker import Worker


class CacheAware(Policy):
    name = "cache_aware"

    def __init__(
        self, cache_threshold: float = 0.5, load_weight: float = 8.0, max_tree_size: int = 1 << 20
    ) -> None:
        # cache_threshold (SGLang's): a match over at most this share of the prompt counts
        # as none. It is shared boilerplate ("You are"), worth less than it looks (caches
        # hit in whole blocks), and placing a new prefix by the smallest tree keeps room.
        self.cache_threshold = cache_threshold
        # load_weight: prompt elements one in-flight request is worth, about what its share
        # of a decode step delays a newcomer's prefill; small next to a prompt's prefill.
        self.load_weight = load_weight
        self.tree = ApproxRadixTree(max_tree_size)
        self.num_cache_routed = 0  # sent where most of the prompt is probably cached
        self.num_balanced = 0  # sent elsewhere: the workers holding it were too busy

    def pick(self, key: Sequence[Hashable], workers: list[Worker]) -> Worker:
        return self.route(key, workers)[0]

    def route(self, key: Sequence[Hashable], workers: list[Worker]) -> tuple[Worker, int]:
        matched = {
            url: m if key and m / len(key) > self.cache_threshold else 0
            for url, m in self.tree.match_each(key, (w.url for w in workers)).items()
        }
        chosen = min(workers, key=lambda w: self._rank(w, len(key) - matched[w.url]))
        if max(matched.values()):  # some worker probably holds most of it
            if matched[chosen.url]:
                self.num_cache_routed += 1
            else:
                self.num_balanced += 1
        self.tree.insert(key, chosen.url)
        return chosen, len(key) - matched[chosen.url]

    def cost(self, worker: Worker, uncached: int) -> float:
        """Estimated work ahead of this request's first token on `worker`."""
        return worker.queued_prefill + uncached + self.load_weight * worker.outstanding

    def _rank(self, worker: Worker, uncached: int) -> tuple[float, int, int]:
        return (self.cost(worker, uncached), uncached, self.tree.size(worker.url))

    def on_removed(self, worker: Worker) -> None:
        self.tree.remove_tenant(worker.url)
