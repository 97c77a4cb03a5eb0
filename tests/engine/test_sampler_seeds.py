"""Per-request seeds: a request's samples do not depend on its batch mates."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_engine.sampler import Sampler, SamplingMetadata, SamplingRow, request_generator
from reference_engine.sampling_params import SamplingParams

VOCAB = 50


def _random_params(rng: torch.Generator, seed: int | None) -> SamplingParams:
    pick = lambda options: options[int(torch.randint(len(options), (1,), generator=rng))]  # noqa: E731
    return SamplingParams(
        temperature=pick([0.0, 0.5, 1.0, 1.5]),
        top_p=pick([1.0, 0.9, 0.5]),
        top_k=pick([-1, 5, 20]),
        min_p=pick([0.0, 0.1]),
        repetition_penalty=pick([1.0, 1.2]),
        frequency_penalty=pick([0.0, 0.3]),
        seed=seed,
    )


def _generate(
    logit_fn: list[torch.Tensor], params: list[SamplingParams], order: list[int], steps: int
) -> dict[int, list[int]]:
    """Run `steps` decode steps over the requests in `order` (one batch)."""
    gens = {i: request_generator(params[i].seed) for i in order}
    outputs: dict[int, list[int]] = {i: [] for i in order}
    sampler = Sampler(seed=1234)  # unseeded requests are not compared
    for step in range(steps):
        rows = [SamplingRow(params[i], [1, 2, 3], outputs[i], gens[i]) for i in order]
        logits = torch.stack([logit_fn[i][step] for i in order])
        tokens = sampler(logits, SamplingMetadata.build(rows)).token_ids()
        for i, t in zip(order, tokens, strict=True):
            outputs[i].append(t)
    return outputs


@settings(max_examples=25, deadline=None)
@given(
    num_requests=st.integers(2, 6),
    seed=st.integers(0, 10_000),
    data=st.data(),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_seeded_request_identical_alone_or_batched_in_any_order(
    num_requests: int, seed: int, data: st.DataObject, dtype: torch.dtype
) -> None:
    rng = torch.Generator().manual_seed(seed)
    steps = 5
    # Each request's logits per step are fixed (as a batch-invariant model would give).
    logit_fn = [
        torch.randn(steps, VOCAB, generator=rng, dtype=dtype) * 2 for _ in range(num_requests)
    ]
    params = [_random_params(rng, seed * 10 + i) for i in range(num_requests)]
    # Mix in unseeded requests: they draw from the sampler's stream, which must not disturb others.
    unseeded = data.draw(st.sets(st.integers(0, num_requests - 1), max_size=num_requests - 1))
    for i in unseeded:
        params[i] = SamplingParams(temperature=1.0, seed=None)
    order = data.draw(st.permutations(list(range(num_requests))))
    batched = _generate(logit_fn, params, list(order), steps)
    for i in range(num_requests):
        if i in unseeded:
            continue
        alone = _generate(logit_fn, params, [i], steps)
        assert alone[i] == batched[i], f"request {i} changed with its batch"


def test_different_seeds_give_different_samples() -> None:
    logits = torch.zeros(1, 1000, dtype=torch.float64)  # uniform: collisions are unlikely
    params = SamplingParams(temperature=1.0)
    draws = set()
    for seed in range(20):
        row = SamplingRow(params, [0], [], request_generator(seed))
        draws.add(Sampler()(logits, SamplingMetadata.build([row])).token_ids()[0])
    assert len(draws) > 15


def test_parallel_samples_use_distinct_streams() -> None:
    a, b = request_generator(7, index=0), request_generator(7, index=1)
    assert a is not None and b is not None
    assert not torch.equal(torch.rand(4, generator=a), torch.rand(4, generator=b))
    assert request_generator(None) is None


def test_greedy_rows_do_not_consume_their_generator() -> None:
    gen = request_generator(3)
    assert gen is not None
    before = gen.get_state().clone()
    row = SamplingRow(SamplingParams(temperature=0.0, seed=3), [0], [], gen)
    other = SamplingRow(SamplingParams(temperature=1.0), [0], [])
    Sampler()(torch.randn(2, VOCAB), SamplingMetadata.build([row, other]))
    assert torch.equal(gen.get_state(), before)


def test_sampler_seed_makes_unseeded_requests_reproducible() -> None:
    logits = torch.randn(4, VOCAB, dtype=torch.float64)
    rows = [SamplingRow(SamplingParams(temperature=1.0), [0], []) for _ in range(4)]
    md = SamplingMetadata.build(rows)
    first = [Sampler(seed=5)(logits, md).token_ids() for _ in range(3)]
    assert first[0] == first[1] == first[2]
