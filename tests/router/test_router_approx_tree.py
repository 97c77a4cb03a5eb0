"""The router's approximate radix tree: longest match per worker, splits, LRU eviction."""

from __future__ import annotations

import random

from reference_engine.router.approx_tree import ApproxRadixTree


def test_longest_match_wins_and_splits_keep_both_paths() -> None:
    tree = ApproxRadixTree()
    tree.insert("system prompt A: hello", "w1")
    tree.insert("system prompt B: hi", "w2")
    assert tree.match("system prompt A: bye", ["w1", "w2"]) == ("w1", len("system prompt A: "))
    assert tree.match("system prompt B: bye", ["w1", "w2"]) == ("w2", len("system prompt B: "))
    # Only eligible workers count: w1 is out, so w2's shorter shared prefix is the best.
    assert tree.match("system prompt A: bye", ["w2"]) == ("w2", len("system prompt "))
    assert tree.match("unrelated", ["w1", "w2"]) == (None, 0)
    assert tree.size("w1") == len("system prompt A: hello")


def test_token_id_keys() -> None:
    tree = ApproxRadixTree()
    tree.insert([1, 2, 3, 4], "w1")
    tree.insert([1, 2, 9], "w2")
    assert tree.match([1, 2, 3, 7], ["w1", "w2"]) == ("w1", 3)


def test_most_recent_tenant_breaks_ties() -> None:
    tree = ApproxRadixTree()
    tree.insert("abc", "w1")
    tree.insert("abc", "w2")
    assert tree.match("abcd", ["w1", "w2"])[0] == "w2"
    tree.insert("abc", "w1")
    assert tree.match("abcd", ["w1", "w2"])[0] == "w1"


def test_match_each_gives_every_tenant_its_own_prefix_length() -> None:
    tree = ApproxRadixTree()
    tree.insert("system prompt A: hello", "w1")
    tree.insert("system prompt B: hi", "w2")
    tree.insert("system", "w3")
    got = tree.match_each("system prompt A: bye", ["w1", "w2", "w3", "w4"])
    assert got == {"w1": len("system prompt A: "), "w2": len("system prompt "),
                   "w3": len("system"), "w4": 0}  # fmt: skip
    assert tree.match_each("system prompt A: bye", ["w2"]) == {"w2": len("system prompt ")}
    assert tree.match_each("unrelated", ["w1"]) == {"w1": 0}


def test_eviction_bounds_each_tenant_and_drops_the_oldest_first() -> None:
    tree = ApproxRadixTree(max_size_per_tenant=20)
    tree.insert("aaaaaaaaaa", "w1")  # 10
    tree.insert("bbbbbbbbbb", "w1")  # 20
    tree.insert("cccccccccc", "w1")  # 30 > 20: "a..." goes
    assert tree.size("w1") == 20
    assert tree.match("aaaaaaaaaa", ["w1"]) == (None, 0)
    assert tree.match("cccccccccc", ["w1"]) == ("w1", 10)


def test_sizes_stay_exact_under_random_inserts_evictions_and_removals() -> None:
    rng = random.Random(0)
    tree = ApproxRadixTree(max_size_per_tenant=200)
    for _ in range(400):
        key = "".join(rng.choice("ab") for _ in range(rng.randrange(1, 30)))
        tenant = rng.choice(["w1", "w2", "w3"])
        tree.insert(key, tenant)
        if rng.random() < 0.02:
            tree.remove_tenant(rng.choice(["w1", "w2", "w3"]))
        for t in ("w1", "w2", "w3"):
            real = sum(len(n.key) for n in tree._nodes() if t in n.tenants)
            assert tree.size(t) == real <= 200
        # A tenant on a node is on every ancestor (matches walk down from the root).
        for node in tree._nodes():
            parent = node.parent
            assert parent is not None
            if parent is not tree.root:
                assert set(node.tenants) <= set(parent.tenants)
