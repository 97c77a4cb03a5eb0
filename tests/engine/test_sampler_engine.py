"""Sampling features end to end through the Engine on a tiny float64 model.

These check what only the whole loop can get wrong: which logits rows feed
prompt logprobs under chunked prefill, stop tokens and stop strings cutting
the streamed text, and seeded requests staying put whatever shares the batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.outputs import RequestOutput
from reference_engine.sampling_params import SamplingParams

PROMPT = [5, 17, 42, 99, 7, 300, 12, 64, 128, 33, 71]


@pytest.fixture(scope="module")
def model_dir(random_checkpoint: Callable[..., Path]) -> Path:
    return random_checkpoint("qwen3")


def _engine(model_dir: Path, **kwargs: Any) -> Engine:
    cfg: dict[str, Any] = {"dtype": "float64", "block_size": 4, "num_gpu_blocks": 128}
    cfg.update(kwargs)
    return Engine(EngineConfig(model=str(model_dir), **cfg))


def _run(
    engine: Engine, requests: dict[str, tuple[list[int], SamplingParams]]
) -> dict[str, list[RequestOutput]]:
    """All outputs of each request, in order."""
    for rid, (prompt, params) in requests.items():
        engine.add_request(rid, prompt, params)
    seen: dict[str, list[RequestOutput]] = {rid: [] for rid in requests}
    for _ in range(500):
        if not engine.has_unfinished_requests():
            break
        for out in engine.step():
            seen[out.request_id].append(out)
    assert not engine.has_unfinished_requests()
    return seen


def _final(outputs: list[RequestOutput]) -> RequestOutput:
    assert outputs and outputs[-1].finished
    return outputs[-1]


@pytest.fixture(scope="module")
def next_token_dists(model_dir: Path) -> dict[int, dict[int, Any]]:
    """For each p: the full first-sample distribution (raw logprobs) after PROMPT[:p]."""
    probe = SamplingParams(temperature=0.0, max_tokens=1, logprobs=512)
    requests = {str(p): (PROMPT[:p], probe) for p in range(1, len(PROMPT))}
    outputs = _run(_engine(model_dir, prefix_caching="none"), requests)
    dists = {}
    for rid, outs in outputs.items():
        logprobs = _final(outs).outputs[0].logprobs
        assert logprobs is not None
        dists[int(rid)] = logprobs[0]
    return dists


@pytest.mark.parametrize("budget", [4, 7, 512])
def test_prompt_logprobs_match_the_next_token_distribution(
    model_dir: Path, next_token_dists: dict[int, dict[int, Any]], budget: int
) -> None:
    """Prompt logprob of token p == first-sample logprob of that token for prompt[:p].

    The two come from different rows (prompt rows vs the sampling row), so an
    off-by-one in the layout, or a chunk boundary, would show up here.
    """
    engine = _engine(model_dir, max_num_batched_tokens=budget, prefix_caching="none")
    params = SamplingParams(temperature=0.0, max_tokens=1, prompt_logprobs=2)
    full = _final(_run(engine, {"p": (PROMPT, params)})["p"])
    plp = full.prompt_logprobs
    assert plp is not None and len(plp) == len(PROMPT)
    assert plp[0] is None
    for p in range(1, len(PROMPT)):
        entry, dist = plp[p], next_token_dists[p]
        assert entry is not None and PROMPT[p] in entry
        assert len(entry) <= 3  # the prompt token plus the top 2
        assert entry[PROMPT[p]].logprob == pytest.approx(dist[PROMPT[p]].logprob, abs=1e-9)
        assert entry[PROMPT[p]].rank == dist[PROMPT[p]].rank
        assert math.fsum(math.exp(lp.logprob) for lp in dist.values()) == pytest.approx(1.0)


def test_greedy_token_is_rank_one_in_raw_logprobs(model_dir: Path) -> None:
    params = SamplingParams(temperature=0.0, max_tokens=6, logprobs=3, ignore_eos=True)
    out = _final(_run(_engine(model_dir), {"g": (PROMPT, params)})["g"]).outputs[0]
    assert out.logprobs is not None and len(out.logprobs) == len(out.token_ids) == 6
    for token, entry in zip(out.token_ids, out.logprobs, strict=True):
        assert entry[token].rank == 1
        assert len(entry) == 3


def _greedy_text(model_dir: Path, max_tokens: int = 24) -> RequestOutput:
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, ignore_eos=True)
    return _final(_run(_engine(model_dir), {"x": (PROMPT, params)})["x"])


def test_stop_string_cuts_the_streamed_text(model_dir: Path) -> None:
    base = _greedy_text(model_dir).outputs[0]
    text = base.text
    assert len(text) >= 6, "the tiny model should produce some text"
    stop = text[3:6]
    for include in (False, True):
        params = SamplingParams(
            temperature=0.0,
            max_tokens=24,
            ignore_eos=True,
            stop=[stop],
            include_stop_str_in_output=include,
        )
        outputs = _run(_engine(model_dir), {"s": (PROMPT, params)})["s"]
        final = _final(outputs).outputs[0]
        cut = text.index(stop) + (len(stop) if include else 0)
        assert final.text == text[:cut]
        assert final.finish_reason == "stop" and final.stop_reason == stop
        assert "".join(o.outputs[0].text_delta for o in outputs) == final.text
        # The token ids run up to the token that completed the stop string.
        assert final.token_ids == base.token_ids[: len(final.token_ids)]


def test_stop_token_id_ends_generation_without_its_text(model_dir: Path) -> None:
    base = _greedy_text(model_dir).outputs[0]
    stop_id = base.token_ids[4]
    first = base.token_ids.index(stop_id)
    params = SamplingParams(
        temperature=0.0, max_tokens=24, ignore_eos=True, stop_token_ids=[stop_id]
    )
    final = _final(_run(_engine(model_dir), {"t": (PROMPT, params)})["t"]).outputs[0]
    assert final.token_ids == base.token_ids[: first + 1]
    assert final.finish_reason == "stop" and final.stop_reason == stop_id
    assert base.text.startswith(final.text)


def test_seeded_request_is_independent_of_its_batch(model_dir: Path) -> None:
    params = SamplingParams(temperature=1.0, top_p=0.9, seed=123, max_tokens=12, ignore_eos=True)
    alone = _final(_run(_engine(model_dir), {"a": (PROMPT, params)})["a"]).outputs[0].token_ids
    others = {
        f"o{i}": ([3 + i, 9, 27, 81], SamplingParams(temperature=1.2, max_tokens=8 + i))
        for i in range(4)
    }
    batched = _run(_engine(model_dir, max_num_batched_tokens=6), {**others, "a": (PROMPT, params)})
    assert _final(batched["a"]).outputs[0].token_ids == alone
