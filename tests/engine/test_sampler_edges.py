"""Edge cases: disabled knobs stay disabled, masked rows never turn into NaN."""

from __future__ import annotations

import math

import pytest
import torch

from reference_engine.sampler import (
    Sampler,
    SamplingMetadata,
    SamplingRow,
    apply_top_k,
    apply_top_p,
    request_generator,
)
from reference_engine.sampling_params import SamplingParams

NEG_INF = float("-inf")


def _processed(logits: torch.Tensor, params: SamplingParams) -> tuple[int, list[float]]:
    vocab = logits.shape[-1]
    params.logprobs = vocab
    row = SamplingRow(params, [0], [], request_generator(0))
    out = Sampler(logprobs_mode="processed")(logits.view(1, -1), SamplingMetadata.build([row]))
    entry = out.logprobs[0]
    assert entry is not None
    return out.token_ids()[0], [entry[t].logprob for t in range(vocab)]


def test_top_p_one_keeps_a_tail_that_rounds_away_in_the_cumsum() -> None:
    # In float32 the cumulative mass hits 1.0 after the first token; top_p=1 must still keep all.
    logits = torch.tensor([60.0, 0.0, 0.0, -10.0], dtype=torch.float32)
    _, lps = _processed(logits, SamplingParams(temperature=1.0, top_p=1.0))
    assert all(lp > NEG_INF for lp in lps)


def test_top_p_keeps_at_least_the_best_token() -> None:
    logits = torch.tensor([[1.0, 3.0, 2.0]], dtype=torch.float64)
    out = apply_top_p(logits, torch.tensor([1e-9], dtype=torch.float64))
    assert out.tolist() == [[NEG_INF, 3.0, NEG_INF]]


@pytest.mark.parametrize("k", [-1, 0, 5, 6, 1000])
def test_top_k_off_or_at_least_vocab_keeps_everything(k: int) -> None:
    logits = torch.randn(2, 5, dtype=torch.float64)
    assert torch.equal(apply_top_k(logits, torch.tensor([k, k])), logits)


def test_top_k_keeps_ties_with_the_kth_value() -> None:
    logits = torch.tensor([[1.0, 2.0, 2.0, 0.0]])
    out = apply_top_k(logits, torch.tensor([2]))
    assert out.tolist() == [[NEG_INF, 2.0, 2.0, NEG_INF]]


def test_top_k_one_equals_greedy() -> None:
    torch.manual_seed(0)
    logits = torch.randn(8, 40, dtype=torch.float64)
    rows = [
        SamplingRow(SamplingParams(temperature=1.5, top_k=1), [0], [], request_generator(i))
        for i in range(8)
    ]
    out = Sampler()(logits, SamplingMetadata.build(rows))
    assert out.token_ids() == logits.argmax(dim=-1).tolist()


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(temperature=1.0),
        SamplingParams(temperature=0.0),
        SamplingParams(temperature=0.7, top_p=0.1, top_k=2, min_p=0.5),
        SamplingParams(temperature=1.0, repetition_penalty=1.5, frequency_penalty=1.0),
    ],
)
def test_all_masked_row_gives_a_valid_token_and_no_nan(params: SamplingParams) -> None:
    logits = torch.full((6,), NEG_INF, dtype=torch.float64)
    token, lps = _processed(logits, params)
    assert 0 <= token < 6
    assert not any(math.isnan(lp) for lp in lps)


def test_partially_masked_vocab_is_never_sampled() -> None:
    # Models pad the vocabulary; padded ids carry -inf and must stay unreachable.
    logits = torch.cat([torch.randn(10), torch.full((6,), NEG_INF)]).repeat(200, 1)
    rows = [
        SamplingRow(SamplingParams(temperature=2.0, top_p=0.99), [0], [], request_generator(s))
        for s in range(200)
    ]
    out = Sampler()(logits, SamplingMetadata.build(rows))
    assert max(out.token_ids()) < 10


def test_min_tokens_blocking_every_finite_token_falls_back_to_the_model() -> None:
    logits = torch.tensor([NEG_INF, 1.0, NEG_INF, 0.5], dtype=torch.float64)  # only 1 and 3 live
    params = SamplingParams(temperature=1.0, min_tokens=3, stop_token_ids=[3])
    row = SamplingRow(params, [0], [], request_generator(0), eos_token_ids=[1])
    out = Sampler()(logits.view(1, -1), SamplingMetadata.build([row]))
    assert out.token_ids()[0] in (1, 3)


def test_tiny_temperature_behaves_like_greedy() -> None:
    torch.manual_seed(3)
    logits = torch.randn(16, 100)
    rows = [
        SamplingRow(SamplingParams(temperature=1e-4), [0], [], request_generator(i))
        for i in range(16)
    ]
    out = Sampler()(logits, SamplingMetadata.build(rows))
    assert out.token_ids() == logits.argmax(dim=-1).tolist()


def test_out_of_vocab_history_and_stop_ids_are_ignored() -> None:
    # Token ids past the logits' width (e.g. added tokens the head lacks) must not crash.
    params = SamplingParams(
        temperature=0.0, repetition_penalty=1.3, min_tokens=2, stop_token_ids=[99]
    )
    row = SamplingRow(params, [0, 50], [70], eos_token_ids=[120])
    out = Sampler()(torch.randn(1, 8), SamplingMetadata.build([row]))
    assert 0 <= out.token_ids()[0] < 8


def test_empty_batch_and_prompt_only_batch() -> None:
    out = Sampler()(torch.zeros(0, 8), SamplingMetadata.build([]))
    assert out.token_ids() == [] and out.logprobs == []
    row = SamplingRow(SamplingParams(), [1, 2, 3], [], num_prompt_logprob_rows=2, do_sample=False)
    out = Sampler()(torch.zeros(2, 8), SamplingMetadata.build([row]))
    assert out.token_ids() == [-1]
    assert out.prompt_logprobs == [None]  # the request did not ask for prompt logprobs


def _top_p_by_full_sort(x: torch.Tensor, top_p: float) -> torch.Tensor:
    probs, order = torch.softmax(x, dim=-1).sort(dim=-1, descending=True)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < top_p
    keep = torch.zeros_like(keep_sorted).scatter_(1, order, keep_sorted)
    return x.masked_fill(~keep, NEG_INF)


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0, 12.0])
@pytest.mark.parametrize("top_p", [0.5, 0.9, 0.999])
def test_top_p_window_widening_equals_a_full_sort(scale: float, top_p: float) -> None:
    """A large vocabulary: flat rows need thousands of tokens, peaked rows a few."""
    gen = torch.Generator().manual_seed(int(scale * 10 + top_p * 1000))
    x = torch.randn(3, 5000, generator=gen, dtype=torch.float64) * scale
    got = apply_top_p(x, torch.full((3,), top_p, dtype=torch.float64))
    assert torch.equal(got, _top_p_by_full_sort(x, top_p))


def test_top_p_leaves_inactive_rows_alone_in_a_mixed_batch() -> None:
    x = torch.randn(2, 3000, dtype=torch.float64)
    got = apply_top_p(x, torch.tensor([1.0, 0.8], dtype=torch.float64))
    assert torch.equal(got[0], x[0])
    assert torch.equal(got[1], _top_p_by_full_sort(x[1:], 0.8)[0])
