"""H2O eviction (heavy_hitters.py): blocks with the least accumulated attention go first.

- the tokens of an H2O request equal transformers' model run over the same tokens with the
  request's eviction record as a custom attention mask (each evicted block invisible from
  the position it was evicted at on);
- what the request holds stays within its budget after the prompt;
- random workloads mixing H2O, StreamingLLM and plain requests, with preemption (recompute
  replays the record, swap keeps it), equal solo runs token by token.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch
from test_verify_random_workloads import (
    BLOCK_SIZE,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    tight_engine,
)

from reference_engine.kv_window import H2O, StreamingLLM
from reference_engine.sampling_params import SamplingParams

transformers = pytest.importorskip("transformers")


def test_h2o_tokens_equal_dense_attention_with_its_eviction_record(random_checkpoint: Any) -> None:
    folder = random_checkpoint("qwen3")
    engine = make_engine(folder, prefix_caching="none")
    rng = random.Random(21)
    prompt = [rng.randrange(3, 500) for _ in range(18)]
    policy = H2O(budget_blocks=4, recent_tokens=6)
    params = SamplingParams(temperature=0.0, max_tokens=30, ignore_eos=True, kv_eviction=policy)
    engine.add_request("r", prompt, params)
    seq = engine.requests["r"].seqs[0]
    held = []
    out = None
    while engine.has_unfinished_requests():
        for o in engine.step():
            out = o
        if engine.kv.block_tables.get("r") and seq.num_computed_tokens >= len(prompt):
            held.append(engine.kv.num_blocks_held("r"))
        engine.check_integrity()
    assert out is not None and out.finished
    record = dict(seq.h2o.evicted)
    assert len(record) >= 4, record  # it really evicted
    assert max(held) <= policy.budget_blocks + 1, held  # +1: the step that grows a block
    tokens = prompt + out.outputs[0].token_ids
    pos = torch.arange(len(tokens) - 1)
    allowed = pos[None, :] <= pos[:, None]
    for block, blind_from in record.items():
        in_block = (pos // BLOCK_SIZE) == block
        allowed &= ~(in_block[None, :] & (pos[:, None] >= blind_from))
    bias = torch.zeros(allowed.shape, dtype=torch.float64)
    bias[~allowed] = torch.finfo(torch.float64).min
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float64)
    hf.config._attn_implementation = "eager"
    with torch.no_grad():
        logits = hf(torch.tensor([tokens[:-1]]), attention_mask=bias[None, None]).logits[0]
        dense = hf(torch.tensor([tokens[:-1]])).logits[0]
    want = logits[len(prompt) - 1 :].argmax(-1).tolist()
    assert want == out.outputs[0].token_ids
    assert not torch.allclose(logits[len(prompt) :], dense[len(prompt) :], atol=1e-6)
    assert_pool_restored(engine)


CONFIGS = [("recompute", "fcfs"), ("swap", "priority")]


@pytest.mark.slow
@pytest.mark.parametrize(("preemption", "policy"), CONFIGS)
def test_h2o_workloads_equal_solo(random_checkpoint: Any, preemption: str, policy: str) -> None:
    folder = random_checkpoint("qwen3")
    solo = make_engine(folder, prefix_caching="none", max_num_seqs=8)
    rng = random.Random(f"h2o-{preemption}-{policy}")
    solo_cache: dict[Any, list[list[int]]] = {}
    evictions = preemptions = 0
    for _ in range(6):
        reqs = random_workload(rng)
        for r in reqs:
            r.params.max_tokens = rng.randrange(6, 24)
            roll = rng.random()
            if roll < 0.5:
                r.params.kv_eviction = H2O(rng.choice([2, 3]), rng.choice([3, 6]))
            elif roll < 0.65:
                r.params.kv_eviction = StreamingLLM(2, 5)
        engine = tight_engine(folder, reqs, rng, "hash", preemption, policy)
        evict = engine.kv.evict_blocks

        def counting(seq_id: str, indices: Any, evict: Any = evict) -> int:
            nonlocal evictions
            n = int(evict(seq_id, indices))
            evictions += n
            return n

        engine.kv.evict_blocks = counting  # type: ignore[method-assign]
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        preemptions += engine.stats().num_preemptions
        assert_pool_restored(engine)
    assert preemptions > 0 and evictions > 0
