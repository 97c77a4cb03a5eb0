"""Tree drafts: tree attention over the paged KV cache equals standard attention on every
root-to-leaf path; the accepted path's K/V, moved into place, equal a chain's; and tree
speculation leaves greedy output unchanged on random workloads."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from reference_engine.engine import Engine
from reference_engine.forward_batch import SeqInput, ancestor_mask, build_forward_batch, tree_depths
from reference_engine.spec_decode.ngram_proposer import prompt_lookup_branches
from reference_engine.spec_decode.tree import (
    build_token_tree,
    compact_path,
    path_tokens,
    prune_tree,
    walk_tree,
)
from tests.engine.test_spec_decode_exact import repetitive_workload
from tests.engine.test_verify_random_workloads import (
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    tight_engine,
)

# Root (row 0) with three branches, one of which forks again:
#        0
#      / | \
#     1  2  3
#    / \     \
#   4   5     6
#   |
#   7
PARENTS = [-1, 0, 0, 0, 1, 1, 3, 4]


def leaves(parents: list[int]) -> list[int]:
    return [i for i in range(len(parents)) if i not in parents]


def rows_to(parents: list[int], row: int) -> list[int]:
    out = []
    while row != -1:
        out.append(row)
        row = parents[row]
    return out[::-1]


def test_tree_helpers() -> None:
    assert tree_depths(PARENTS) == [0, 1, 1, 1, 2, 2, 2, 3]
    mask = ancestor_mask(PARENTS)
    assert mask[7].tolist() == [True, True, False, False, True, False, False, True]
    assert mask.diagonal().all() and not mask.triu(1).any()
    with pytest.raises(ValueError):
        tree_depths([-1, 2, 0])  # a parent after its child
    tokens, parents = build_token_tree([[5, 6, 7], [5, 8], [9]], max_nodes=10)
    assert tokens == [5, 6, 7, 8, 9] and parents == [0, 1, 2, 1, 0]
    assert path_tokens([0, *tokens], [-1, *parents], 4) == [5, 8]
    assert prune_tree(tokens, parents, max_depth=2, max_nodes=10) == ([5, 6, 8, 9], [0, 1, 1, 0])
    assert prune_tree(tokens, parents, max_depth=3, max_nodes=2) == ([5, 6], [0, 1])
    # The target draws 5 at the root, 8 after it (a child), then 1 (no such child).
    assert walk_tree([0, *tokens], [-1, *parents], [5, 8, 0, 0, 1, 0]) == ([5, 8, 1], [1, 4])
    assert walk_tree([0, *tokens], [-1, *parents], [3, 0, 0, 0, 0, 0]) == ([3], [])
    branches = prompt_lookup_branches([1, 2, 3, 1, 2, 4, 1, 2], 2, 1, 2, width=3)
    assert branches == [[4, 1], [3, 1]]


def deepseek_dir(tmp_path_factory: pytest.TempPathFactory, random_checkpoint: Any) -> Path:
    import shutil

    from tests.engine.test_model_mla import write_deepseek

    folder = tmp_path_factory.mktemp("deepseek-spec")
    write_deepseek(folder, 512)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        src = random_checkpoint("qwen3") / name
        if src.is_file():
            shutil.copy(src, folder / name)
    return folder


@pytest.mark.parametrize("family", ["qwen3", "llama", "deepseek_v3"])
def test_tree_attention_equals_each_path(
    family: str,
    random_checkpoint: Callable,
    make_runner: Callable,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Paged attention and DeepSeek-V3's latent attention (MLA) alike."""
    if family == "deepseek_v3":
        folder = deepseek_dir(tmp_path_factory, random_checkpoint)
    else:
        folder = random_checkpoint(family)
    runner = make_runner(folder, num_blocks=32, block_size=4)
    rng = random.Random(family)
    context = [rng.randrange(3, 512) for _ in range(9)]
    tree_tokens = [rng.randrange(3, 512) for _ in PARENTS]
    table = [7, 3, 12, 20, 9]
    other = [rng.randrange(3, 512) for _ in range(6)]
    other_table = [1, 2]
    runner.execute_model(build_forward_batch([SeqInput(context, 0, table),
                                              SeqInput(other[:5], 0, other_table)], 4))  # fmt: skip
    start = len(context)
    # The tree, batched with another sequence's decode and a plain chunk.
    batch = build_forward_batch(
        [
            SeqInput(other[5:], 5, other_table),
            SeqInput(tree_tokens, start, table, want_prompt_logits=True, tree_parents=PARENTS),
        ],
        4,
    )
    tree_logits = runner.execute_model(batch)[1:]  # the decode's row comes first
    tree_cache = [tuple(c.clone() for c in layer) for layer in runner.kv_caches]
    for leaf in leaves(PARENTS):
        rows = rows_to(PARENTS, leaf)
        chain = [tree_tokens[r] for r in rows]
        got = runner.execute_model(
            build_forward_batch([SeqInput(chain, start, table, want_prompt_logits=True)], 4)
        )
        torch.testing.assert_close(tree_logits[rows], got, rtol=0, atol=1e-10)
        # The chain wrote its K/V at start .. start + depth; the tree's, moved into place
        # by compact_path, must be the same.
        chain_cache = [tuple(c.clone() for c in layer) for layer in runner.kv_caches]
        moved = [tuple(c.clone() for c in layer) for layer in tree_cache]
        compact_path(moved, table, start, rows[1:], 4)
        slots = [table[p // 4] * 4 + p % 4 for p in range(start, start + len(rows))]
        for chain_layer, moved_layer in zip(chain_cache, moved, strict=True):
            for c, m in zip(chain_layer, moved_layer, strict=True):
                flat_c, flat_m = c.view(-1, *c.shape[2:]), m.view(-1, *m.shape[2:])
                torch.testing.assert_close(flat_m[slots], flat_c[slots], rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


@pytest.mark.parametrize(("cache", "preemption"), [("hash", "recompute"), ("radix", "swap")])
def test_tree_greedy_equals_plain_decoding(model_dir: Path, cache: str, preemption: str) -> None:
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    rng = random.Random(f"tree-{cache}")
    solo_cache: dict[Any, list[list[int]]] = {}
    tree_steps = 0
    for _ in range(6):
        reqs = repetitive_workload(rng)
        spec = {"method": "ngram", "num_speculative_tokens": 3, "tree_width": 3}
        engine: Engine = tight_engine(model_dir, reqs, rng, cache, preemption, "fcfs",
                                      speculative_config=spec)  # fmt: skip
        original = engine.spec.sampling_rows  # type: ignore[union-attr]

        def counting(row, seq, original=original, spec=engine.spec):  # type: ignore[no-untyped-def]
            nonlocal tree_steps
            tree_steps += spec.tree_parents(seq) is not None
            return original(row, seq)

        engine.spec.sampling_rows = counting  # type: ignore[union-attr,method-assign]
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        assert_pool_restored(engine)
    assert tree_steps > 0, "the workloads were meant to verify trees"



def test_batched_verification_equals_each_sequence_alone(
    random_checkpoint: Callable, make_runner: Callable
) -> None:
    """Short queries over a cached context (drafts to verify, a tree, a small chunk) are
    attended in one padded call (forward_batch.VerifyGroup); each sequence's logits equal
    its logits run alone, where it takes the per-sequence path."""
    runner = make_runner(random_checkpoint("qwen3"), num_blocks=64, block_size=4)
    rng = random.Random("verify-group")
    contexts = [[rng.randrange(3, 512) for _ in range(n)] for n in (9, 3, 14, 6)]
    tables = [[1, 2, 3, 4, 5], [6, 7], [8, 9, 10, 11, 12, 16], [13, 14, 15]]
    runner.execute_model(build_forward_batch(
        [SeqInput(c, 0, t) for c, t in zip(contexts, tables, strict=True)], 4))  # fmt: skip
    new = [[rng.randrange(3, 512) for _ in range(n)] for n in (5, 2, len(PARENTS), 1)]
    inputs = [
        SeqInput(new[0], 9, tables[0], want_prompt_logits=True),
        SeqInput(new[1], 3, tables[1], want_prompt_logits=True),
        SeqInput(new[2], 14, tables[2], want_prompt_logits=True, tree_parents=PARENTS),
        SeqInput(new[3], 6, tables[3], want_prompt_logits=True),  # a decode, not in the group
    ]
    batch = build_forward_batch(inputs, 4)
    assert batch.verify is not None and batch.verify.seq_idx == [0, 1, 2]
    together = runner.execute_model(batch)
    lo = 0
    for s in inputs:
        alone = build_forward_batch([s], 4)
        assert alone.verify is None
        n = len(s.token_ids)
        torch.testing.assert_close(together[lo : lo + n], runner.execute_model(alone),
                                   rtol=0, atol=1e-10)  # fmt: skip
        lo += n
