"""Sample logprobs (raw by default, processed on request) and prompt logprobs."""

from __future__ import annotations

import pytest
import torch

from reference_engine.sampler import (
    Sampler,
    SamplingMetadata,
    SamplingRow,
    prompt_logprob_layout,
    request_generator,
)
from reference_engine.sampling_params import SamplingParams

VOCAB = 30


def _check_entry(entry: dict, logprobs: torch.Tensor, chosen: int, n: int) -> None:
    """The chosen token first with its true rank, then exactly the top-n tokens."""
    keys = list(entry)
    assert keys[0] == chosen
    order = torch.argsort(logprobs, descending=True).tolist()
    assert entry[chosen].logprob == pytest.approx(logprobs[chosen].item(), abs=1e-12)
    assert entry[chosen].rank == order.index(chosen) + 1
    top = order[:n]
    assert set(keys) == {chosen, *top}
    for rank, tok in enumerate(top, start=1):
        assert entry[tok].rank == rank
        assert entry[tok].logprob == pytest.approx(logprobs[tok].item(), abs=1e-12)


def test_raw_logprobs_ignore_processing() -> None:
    torch.manual_seed(0)
    logits = torch.randn(3, VOCAB, dtype=torch.float64) * 2
    params = [
        SamplingParams(temperature=0.0, logprobs=5, repetition_penalty=1.5),
        SamplingParams(temperature=0.7, top_k=3, logprobs=0, seed=1),
        SamplingParams(temperature=1.3, top_p=0.5, presence_penalty=1.0, logprobs=VOCAB + 4),
    ]
    rows = [SamplingRow(p, [1, 2], [4, 5], request_generator(p.seed)) for p in params]
    out = Sampler()(logits, SamplingMetadata.build(rows))
    raw = torch.log_softmax(logits, dim=-1)
    for i, p in enumerate(params):
        entry = out.logprobs[i]
        assert entry is not None
        _check_entry(entry, raw[i], out.token_ids()[i], min(p.logprobs or 0, VOCAB))


def test_processed_logprobs_are_the_sampled_distribution() -> None:
    logits = torch.tensor([[4.0, 3.0, 2.0, 1.0, 0.0]], dtype=torch.float64)
    params = SamplingParams(temperature=0.5, top_k=2, logprobs=5, seed=0)
    row = SamplingRow(params, [0], [], request_generator(0))
    out = Sampler(logprobs_mode="processed")(logits, SamplingMetadata.build([row]))
    entry = out.logprobs[0]
    assert entry is not None
    want = torch.log_softmax(torch.tensor([8.0, 6.0]), dim=-1).tolist()
    assert entry[0].logprob == pytest.approx(want[0])
    assert entry[1].logprob == pytest.approx(want[1])
    assert all(entry[t].logprob == float("-inf") for t in (2, 3, 4))
    assert out.token_ids()[0] in (0, 1)


def test_no_logprobs_unless_asked() -> None:
    rows = [
        SamplingRow(SamplingParams(temperature=0.0), [0], []),
        SamplingRow(SamplingParams(temperature=0.0, logprobs=2), [0], []),
    ]
    out = Sampler()(torch.randn(2, VOCAB), SamplingMetadata.build(rows))
    assert out.logprobs[0] is None and out.logprobs[1] is not None
    assert out.prompt_logprobs == [None, None]


def test_float32_logits_give_float_logprobs_without_nan() -> None:
    logits = torch.randn(2, VOCAB, dtype=torch.float16)
    rows = [SamplingRow(SamplingParams(temperature=1.0, logprobs=3), [0], []) for _ in range(2)]
    out = Sampler(seed=0)(logits, SamplingMetadata.build(rows))
    for entry in out.logprobs:
        assert entry is not None
        assert all(lp.logprob == lp.logprob for lp in entry.values())  # not NaN


@pytest.mark.parametrize(
    ("start", "end", "length", "expected"),
    [(0, 5, 5, (4, True)), (0, 3, 5, (3, False)), (3, 5, 5, (1, True)), (4, 5, 5, (0, True))],
)
def test_prompt_logprob_layout(start: int, end: int, length: int, expected: tuple) -> None:
    assert prompt_logprob_layout(start, end, length) == expected


def test_prompt_logprob_layout_rejects_bad_chunks() -> None:
    with pytest.raises(ValueError, match="bad prefill chunk"):
        prompt_logprob_layout(3, 3, 5)
    with pytest.raises(ValueError, match="bad prefill chunk"):
        prompt_logprob_layout(0, 6, 5)


def test_prompt_logprobs_over_two_chunks_match_log_softmax() -> None:
    """A 6-token prompt prefilled in chunks [0, 4) and [4, 6), batched with a decode."""
    torch.manual_seed(1)
    prompt = [3, 7, 1, 9, 2, 5]
    all_logits = torch.randn(len(prompt), VOCAB, dtype=torch.float64)
    params = SamplingParams(temperature=0.0, prompt_logprobs=2)
    decode_row = SamplingRow(SamplingParams(temperature=0.0), [1], [2])
    decode_logits = torch.randn(1, VOCAB, dtype=torch.float64)
    collected = []
    for start, end in [(0, 4), (4, 6)]:
        n_prompt, do_sample = prompt_logprob_layout(start, end, len(prompt))
        row = SamplingRow(
            params,
            prompt,
            [],
            num_prompt_logprob_rows=n_prompt,
            prompt_logprob_start=start,
            do_sample=do_sample,
        )
        logits = torch.cat([decode_logits, all_logits[start:end]])
        out = Sampler()(logits, SamplingMetadata.build([decode_row, row]))
        assert out.token_ids()[0] == int(decode_logits.argmax())
        entries = out.prompt_logprobs[1]
        assert entries is not None
        collected.extend(entries)
        if do_sample:
            assert out.token_ids()[1] == int(all_logits[-1].argmax())
        else:
            assert out.token_ids()[1] == -1
    raw = torch.log_softmax(all_logits, dim=-1)
    assert len(collected) == len(prompt) - 1  # position 0 has nothing before it
    for pos, entry in enumerate(collected):
        _check_entry(entry, raw[pos], prompt[pos + 1], 2)


def test_wrong_number_of_logits_rows_is_a_clear_error() -> None:
    rows = [SamplingRow(SamplingParams(), [0], [])]
    with pytest.raises(ValueError, match=r"expected logits \[1, vocab\]"):
        Sampler()(torch.randn(2, VOCAB), SamplingMetadata.build(rows))
