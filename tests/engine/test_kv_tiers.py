"""Hierarchical KV: blocks evicted from the device come back from host memory or disk and
give the tokens of generating each request alone; the disk tier survives a restart; a
damaged entry is detected and recomputed, never used."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.engine import Engine
from reference_engine.kv_tiers import EntryError, decode_entry, encode_entry
from reference_engine.sampling_params import SamplingParams

BLOCK = 4


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


def make(model_dir: Path, **kw: Any) -> Engine:
    cfg: dict[str, Any] = {"dtype": "float64", "block_size": BLOCK, "num_gpu_blocks": 24,
                           "max_model_len": 128, "max_num_seqs": 4}  # fmt: skip
    return Engine(EngineConfig(model=str(model_dir), **{**cfg, **kw}))


def generate(
    engine: Engine, prompts: list[list[int]], params: list[SamplingParams]
) -> list[list[int]]:
    """One request at a time (each alone), returning its sampled tokens."""
    out = []
    for i, (prompt, p) in enumerate(zip(prompts, params, strict=True)):
        rid = f"req-{id(engine)}-{engine.stats().num_steps}-{i}"
        engine.add_request(rid, prompt, p)
        last = None
        while engine.has_unfinished_requests():
            for o in engine.step():
                last = o
        assert last is not None and last.finished
        out.append(last.outputs[0].token_ids)
    return out


def workload(seed: int, num: int = 10) -> tuple[list[list[int]], list[SamplingParams]]:
    rng = random.Random(seed)
    systems = [[rng.randrange(3, 200) for _ in range(rng.randrange(16, 40))] for _ in range(5)]
    prompts, params = [], []
    for _ in range(num):
        prompts.append(
            rng.choice(systems) + [rng.randrange(3, 200) for _ in range(rng.randrange(1, 12))]
        )
        seeded = rng.random() < 0.5
        params.append(SamplingParams(max_tokens=rng.randrange(1, 8), ignore_eos=True,
                                     temperature=0.8 if seeded else 0.0, seed=rng.randrange(99) if seeded else None))  # fmt: skip
    return prompts, params


@pytest.mark.parametrize("cache", ["hash", "radix"])
@pytest.mark.parametrize("policy", ["write_back", "write_through"])
def test_tiered_hits_give_solo_tokens(
    model_dir: Path, tmp_path: Path, cache: str, policy: str
) -> None:
    solo = make(model_dir, prefix_caching="none")
    tiered = make(model_dir, prefix_caching=cache, kv_host_blocks=12, kv_disk_dir=str(tmp_path),
                  kv_disk_blocks=4096, kv_tier_policy=policy)  # fmt: skip
    prompts, params = workload(0, 16)
    expected = generate(solo, prompts, params)
    # The device holds 40 blocks: three system prompts and their requests keep evicting.
    assert generate(tiered, prompts, params) == expected
    tiers = tiered.kv_tiers
    assert tiers is not None and tiers.num_promoted > 0
    assert tiers.host is not None and tiers.host.stats.evicted > 0  # the host overflowed...
    assert tiers.disk is not None and tiers.disk.stats.hits > 0  # ...and disk served some
    # Promoted blocks were real hits: far fewer prompt tokens computed than sent.
    computed = tiered.stats().num_prompt_tokens_computed
    assert computed < sum(len(p) for p in prompts) - 2 * 4 * BLOCK
    tiered.check_integrity()


def test_disk_tier_survives_a_restart(model_dir: Path, tmp_path: Path) -> None:
    prompts, params = workload(1, 3)
    first = make(model_dir, kv_disk_dir=str(tmp_path), kv_tier_policy="write_through")
    expected = generate(first, prompts, params)
    del first
    again = make(model_dir, kv_disk_dir=str(tmp_path), kv_tier_policy="write_through")
    before = again.stats().num_prompt_tokens_computed
    assert generate(again, prompts[:1], params[:1]) == expected[:1]
    assert (
        again.kv_tiers is not None and again.kv_tiers.num_promoted == (len(prompts[0]) - 1) // BLOCK
    )
    assert (
        again.stats().num_prompt_tokens_computed - before
        == len(prompts[0]) - (len(prompts[0]) - 1) // BLOCK * BLOCK
    )


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_damaged_entry_is_detected_and_recomputed(
    model_dir: Path, tmp_path: Path, damage: str
) -> None:
    prompt = list(range(10, 10 + 6 * BLOCK + 1))
    params = [SamplingParams(max_tokens=4, temperature=0, ignore_eos=True)]
    expected = generate(make(model_dir, prefix_caching="none"), [prompt], params)
    generate(
        make(model_dir, kv_disk_dir=str(tmp_path), kv_tier_policy="write_through"), [prompt], params
    )
    engine = make(model_dir, kv_disk_dir=str(tmp_path), kv_tier_policy="write_through")
    tiers = engine.kv_tiers
    assert tiers is not None and tiers.disk is not None
    from reference_engine.kv_tiers.hierarchy import chain_keys

    third = tiers.disk._index[chain_keys(prompt, BLOCK, 3)[2]]  # the prompt's third block
    data = third.read_bytes()
    third.write_bytes(
        data[:-1] + bytes([data[-1] ^ 1]) if damage == "flip" else data[: len(data) // 2]
    )
    before = engine.stats().num_prompt_tokens_computed
    assert generate(engine, [prompt], params) == expected
    assert tiers.disk.stats.corrupt == 1  # dropped, never used...
    decode_entry(third.read_bytes(), tiers.layout)  # ...and written again, whole, once recomputed
    assert tiers.num_promoted == 2  # the two blocks before it came back; the rest was computed
    assert engine.stats().num_prompt_tokens_computed - before == len(prompt) - 2 * BLOCK


def test_entries_refuse_another_layout_and_garbage() -> None:
    layers = [torch.arange(24, dtype=torch.float32).reshape(2, 1, 3, 1, 4)]
    data = encode_entry(layers, "layout-a")
    assert torch.equal(decode_entry(data, "layout-a")[0], layers[0])
    for bad, layout in ((data, "layout-b"), (b"nonsense", "layout-a"), (data[:-3], "layout-a")):
        with pytest.raises(EntryError):
            decode_entry(bad, layout)


def test_tiers_need_prefix_caching_and_a_known_policy(model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="need prefix caching"):
        make(model_dir, prefix_caching="none", kv_host_blocks=4)
    with pytest.raises(ConfigError, match="write_back or write_through"):
        make(model_dir, kv_host_blocks=4, kv_tier_policy="lazy")


def test_write_through_with_speculative_decoding_stores_only_real_blocks(
    model_dir: Path, tmp_path: Path
) -> None:
    """Accepted drafts count as computed before they are appended: the blocks written
    through must hold exactly the tokens their keys name (a restart then hits them)."""
    spec = {"method": "ngram", "num_speculative_tokens": 3}
    prompt = [5, 6, 7, 8] * 6 + [9]
    params = [SamplingParams(max_tokens=24, temperature=0, ignore_eos=True)]
    expected = generate(make(model_dir, prefix_caching="none"), [prompt], params)
    kw: dict[str, Any] = {"kv_disk_dir": str(tmp_path), "kv_tier_policy": "write_through"}
    first = make(model_dir, speculative_config=spec, **kw)
    assert generate(first, [prompt], params) == expected
    assert (
        first.kv_tiers is not None
        and first.kv_tiers.num_written_through >= (len(prompt) + 20) // BLOCK
    )
    # A later request whose prompt is the whole first answer reads those blocks back.
    longer = prompt + expected[0][:-1]
    reference = generate(make(model_dir, prefix_caching="none"), [longer], params[:1])
    again = make(model_dir, **kw)
    assert generate(again, [longer], params[:1]) == reference
    assert again.kv_tiers is not None and again.kv_tiers.num_promoted == (len(longer) - 1) // BLOCK


def test_write_through_refuses_async_scheduling(model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="async scheduling"):
        make(
            model_dir,
            kv_disk_dir=str(tmp_path),
            kv_tier_policy="write_through",
            async_scheduling=True,
        )


def test_write_back_under_async_scheduling_gives_solo_tokens(
    model_dir: Path, tmp_path: Path
) -> None:
    solo = make(model_dir, prefix_caching="none")
    tiered = make(model_dir, kv_host_blocks=12, kv_disk_dir=str(tmp_path), async_scheduling=True)
    prompts, params = workload(2, 12)
    assert generate(tiered, prompts, params) == generate(solo, prompts, params)
    assert tiered.kv_tiers is not None and tiered.kv_tiers.num_promoted > 0


def test_tier_copies_wait_for_the_forward_in_flight(model_dir: Path, tmp_path: Path) -> None:
    """A slow forward widens the window in which the next request's promotion (and the
    evictions it causes) run while the last step is still in flight: a copy that did not
    wait for it would read blocks not yet written or be overwritten by it."""
    solo = make(model_dir, prefix_caching="none")
    tiered = make(model_dir, kv_host_blocks=12, kv_disk_dir=str(tmp_path), async_scheduling=True)
    forward = tiered._forward

    def slow_forward(*args: Any, **kw: Any) -> torch.Tensor:
        time.sleep(0.02)
        return forward(*args, **kw)

    tiered._forward = slow_forward  # type: ignore[method-assign]
    prompts, params = workload(2, 12)
    assert generate(tiered, prompts, params) == generate(solo, prompts, params)
    tiers = tiered.kv_tiers
    assert tiers is not None and tiers.num_promoted > 0 and tiers.num_demoted > 0
