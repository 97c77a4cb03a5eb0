"""Each sampling knob against a plain per-row Python reference (float64).

The sampler's processed distribution is observed through its public API:
`Sampler(logprobs_mode="processed")` with logprobs = vocab size returns the
log-probabilities of every token it would sample from.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.sampler import Sampler, SamplingMetadata, SamplingRow, request_generator
from reference_engine.sampling_params import SamplingParams

NEG_INF = float("-inf")
VOCAB = 12


def _softmax(x: list[float]) -> list[float]:
    m = max(x)
    if m == NEG_INF:
        return [0.0] * len(x)
    e = [math.exp(v - m) if v != NEG_INF else 0.0 for v in x]
    s = sum(e)
    return [v / s for v in e]


def reference_processed(
    logits: list[float],
    params: SamplingParams,
    prompt: list[int],
    output: list[int],
    eos: list[int],
) -> list[float]:
    """The distribution to sample from, one row, written the long way."""
    x = list(logits)
    vocab = len(x)
    if len(output) < params.min_tokens:
        for t in [*params.stop_token_ids, *([] if params.ignore_eos else eos)]:
            x[t] = NEG_INF
    seen = set(prompt) | set(output)
    counts = Counter(output)
    for t in range(vocab):
        if t in seen:
            x[t] = (
                x[t] / params.repetition_penalty if x[t] > 0 else x[t] * params.repetition_penalty
            )
        x[t] -= params.frequency_penalty * counts[t]
        x[t] -= params.presence_penalty * (1.0 if counts[t] else 0.0)
    if params.greedy:
        return x
    x = [v / params.temperature for v in x]
    if params.min_p > 0:
        probs = _softmax(x)
        top = max(probs)
        x = [NEG_INF if p < params.min_p * top else v for v, p in zip(x, probs, strict=True)]
    if 0 < params.top_k < vocab:
        kth = sorted(x, reverse=True)[params.top_k - 1]
        x = [v if v >= kth else NEG_INF for v in x]
    if params.top_p < 1.0:
        probs = _softmax(x)
        kept, mass = set(), 0.0
        for t in sorted(range(vocab), key=lambda t: -probs[t]):
            if mass < params.top_p:
                kept.add(t)
            mass += probs[t]
        x = [v if t in kept else NEG_INF for t, v in enumerate(x)]
    return x


def _log_softmax(x: list[float]) -> list[float]:
    return [math.log(p) if p > 0 else NEG_INF for p in _softmax(x)]


def _processed_logprobs(
    logits: torch.Tensor, rows: list[SamplingRow]
) -> tuple[list[int], list[list[float]]]:
    out = Sampler(logprobs_mode="processed", seed=0)(logits, SamplingMetadata.build(rows))
    dists = []
    for entry in out.logprobs:
        assert entry is not None
        dists.append([entry[t].logprob for t in range(logits.shape[1])])
    return out.token_ids(), dists


def _assert_same_distribution(got: list[float], want: list[float]) -> None:
    assert [g == NEG_INF for g in got] == [w == NEG_INF for w in want], (got, want)
    for g, w in zip(got, want, strict=True):
        if w != NEG_INF:
            assert g == pytest.approx(w, abs=1e-9)


params_strategy = st.builds(
    SamplingParams,
    temperature=st.sampled_from([0.0, 0.3, 1.0, 1.7]),
    top_p=st.sampled_from([1.0, 0.95, 0.6, 0.2, 0.01]),
    top_k=st.sampled_from([-1, 0, 1, 3, 7, VOCAB, VOCAB + 5]),
    min_p=st.sampled_from([0.0, 0.05, 0.3]),
    repetition_penalty=st.sampled_from([1.0, 0.7, 1.3, 2.0]),
    presence_penalty=st.sampled_from([0.0, 0.5, -0.8, 2.0]),
    frequency_penalty=st.sampled_from([0.0, 0.4, -1.1]),
    min_tokens=st.sampled_from([0, 2, 5]),
    stop_token_ids=st.sampled_from([[], [3], [4, 9]]),
    ignore_eos=st.booleans(),
    logprobs=st.just(VOCAB),
)


@settings(max_examples=100, deadline=None)
@given(
    params=st.lists(params_strategy, min_size=1, max_size=5),
    seed=st.integers(0, 2**31),
    data=st.data(),
)
def test_processed_distribution_matches_reference(
    params: list[SamplingParams], seed: int, data: st.DataObject
) -> None:
    torch.manual_seed(seed)
    logits = torch.randn(len(params), VOCAB, dtype=torch.float64) * 3
    tokens = st.lists(st.integers(0, VOCAB - 1), max_size=8)
    prompts = [data.draw(tokens.filter(bool)) for _ in params]
    outputs = [data.draw(tokens) for _ in params]
    eos = [1]
    rows = [
        SamplingRow(p, pr, o, request_generator(seed + i), eos_token_ids=eos)
        for i, (p, pr, o) in enumerate(zip(params, prompts, outputs, strict=True))
    ]
    sampled, dists = _processed_logprobs(logits, rows)
    for i, p in enumerate(params):
        want = reference_processed(logits[i].tolist(), p, prompts[i], outputs[i], eos)
        _assert_same_distribution(dists[i], _log_softmax(want))
        if p.greedy:
            assert sampled[i] == max(range(VOCAB), key=lambda t: want[t])
        else:
            assert want[sampled[i]] != NEG_INF, "sampled a token the reference masks out"


def test_repetition_penalty_divides_positive_and_multiplies_negative() -> None:
    logits = torch.tensor([[2.0, -2.0, 2.0, -2.0, 0.5]], dtype=torch.float64)
    params = SamplingParams(temperature=0.0, repetition_penalty=2.0, logprobs=5)
    # Token 0 only in the prompt, token 1 only in the output: both are penalised.
    rows = [SamplingRow(params, [0], [1])]
    _, dists = _processed_logprobs(logits, rows)
    expected = _log_softmax([1.0, -4.0, 2.0, -2.0, 0.5])
    _assert_same_distribution(dists[0], expected)


def test_presence_and_frequency_ignore_the_prompt() -> None:
    logits = torch.zeros(1, 4, dtype=torch.float64)
    params = SamplingParams(
        temperature=0.0, presence_penalty=1.0, frequency_penalty=0.5, logprobs=4
    )
    rows = [SamplingRow(params, [0, 0, 0], [2, 2, 3])]
    _, dists = _processed_logprobs(logits, rows)
    # token 2: presence 1 + 2 * 0.5; token 3: 1 + 0.5; token 0 (prompt only): untouched.
    _assert_same_distribution(dists[0], _log_softmax([0.0, 0.0, -2.0, -1.5]))


def test_greedy_picks_argmax_after_penalties() -> None:
    logits = torch.tensor([[3.0, 2.9, 0.0]], dtype=torch.float64)
    params = SamplingParams(temperature=0.0, repetition_penalty=1.2)
    out = Sampler()(logits, SamplingMetadata.build([SamplingRow(params, [0], [])]))
    assert out.token_ids() == [1]  # 3.0 / 1.2 = 2.5 < 2.9


def test_min_tokens_blocks_stop_and_eos_until_reached() -> None:
    logits = torch.tensor([[0.0, 5.0, 4.0, 1.0]], dtype=torch.float64)  # 1 = eos, 2 = stop id
    params = SamplingParams(temperature=0.0, min_tokens=2, stop_token_ids=[2])

    def pick(output: list[int], ignore_eos: bool = False) -> int:
        p = SamplingParams(temperature=0.0, min_tokens=2, stop_token_ids=[2], ignore_eos=ignore_eos)
        row = SamplingRow(p, [0], output, eos_token_ids=[1])
        return Sampler()(logits, SamplingMetadata.build([row])).token_ids()[0]

    assert params.min_tokens == 2
    assert pick([]) == 3
    assert pick([3]) == 3
    assert pick([3, 3]) == 1
    assert pick([3], ignore_eos=True) == 1  # eos is not a stop token then


def test_seeded_samples_follow_the_distribution() -> None:
    """Frequencies over many seeds approach the processed probabilities."""
    logits = torch.tensor([1.0, 0.5, 0.0, -0.5, -1.0, 2.0], dtype=torch.float64)
    params = SamplingParams(temperature=0.8, top_k=4)
    n = 4000
    rows = [SamplingRow(params, [0], [], request_generator(seed)) for seed in range(n)]
    out = Sampler()(logits.repeat(n, 1), SamplingMetadata.build(rows))
    freq = Counter(out.token_ids())
    want = _softmax(reference_processed(logits.tolist(), params, [0], [], []))
    for t, p in enumerate(want):
        if p == 0:
            assert freq[t] == 0
        else:
            assert freq[t] / n == pytest.approx(p, abs=0.035)
