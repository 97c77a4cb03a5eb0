"""Speculative sampling keeps the target distribution, checked statistically.

Each test draws many seeded samples and runs a chi-square goodness-of-fit test against
the exact target distribution, at a fixed false-alarm rate ALPHA (the seeds are fixed,
so a pass is reproducible; a correct sampler would fail one seed set in 1/ALPHA).
A sampler that ignored q (accepting every draft) or drew the correction from p instead
of the residual fails these tests by a wide margin (see test_the_test_has_power).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.spec_decode.rejection_sampler import accept_by_sampling, rejection_sample
from reference_engine.spec_decode.tree import path_tokens, walk_tree

ALPHA = 1e-3
V = 3  # a small vocabulary: every 3-token sequence is a cell


def chi_square_p_value(counts: dict[tuple[int, ...], int], probs: dict[tuple[int, ...], float]) -> float:
    n = sum(counts.values())
    stat = sum((counts.get(c, 0) - n * p) ** 2 / (n * p) for c, p in probs.items() if p > 0)
    assert all(c in probs and probs[c] > 0 for c in counts), "a sample outside the support"
    dof = sum(1 for p in probs.values() if p > 0) - 1
    # Survival function of chi-square(dof): the regularized upper incomplete gamma.
    return float(torch.special.gammaincc(torch.tensor(dof / 2.0), torch.tensor(stat / 2.0)))


# --- the sampler alone, on a context-dependent toy model -------------------------------


def toy_model(seed: int, sharp: float) -> Callable[[tuple[int, ...]], torch.Tensor]:
    """next-token distribution over V tokens as a function of the whole prefix."""
    cache: dict[tuple[int, ...], torch.Tensor] = {}

    def probs(prefix: tuple[int, ...]) -> torch.Tensor:
        if prefix not in cache:
            g = torch.Generator().manual_seed(hash((seed, prefix)) % (2**31))
            logits = torch.randn(V, generator=g, dtype=torch.float64) * sharp
            cache[prefix] = torch.softmax(logits, dim=0)
        return cache[prefix]

    return probs


def generate(
    target: Callable[[tuple[int, ...]], torch.Tensor],
    draft: Callable[[tuple[int, ...]], torch.Tensor] | None,
    length: int,
    k: int,
    generator: torch.Generator,
    sampler: str = "rejection",
) -> tuple[int, ...]:
    out: tuple[int, ...] = ()
    while len(out) < length:
        if sampler == "tree":  # a fixed token tree: root -> 0 -> 2, root -> 1
            tokens, parents = [0, 0, 1, 2], [-1, 0, 0, 1]
            rows = [tuple(path_tokens(tokens, parents, r)) for r in range(4)]
            draws = [int(torch.multinomial(target(out + r), 1, generator=generator)) for r in rows]
            out = out + tuple(walk_tree(tokens, parents, draws)[0])
            continue
        drafts: list[int] = []
        qs = []
        for _ in range(k):
            ctx = out + tuple(drafts)
            if draft is None:  # deterministic drafter: always proposes token 0
                drafts.append(0)
                qs.append(torch.nn.functional.one_hot(torch.tensor(0), V).double())
            else:
                q = draft(ctx)
                drafts.append(int(torch.multinomial(q, 1, generator=generator)))
                qs.append(q)
        p = torch.stack([target(out + tuple(drafts[:j])) for j in range(k + 1)])
        if sampler == "rejection":
            emitted = rejection_sample(p, drafts, torch.stack(qs), generator)
        elif sampler == "by_sampling":
            draws = [int(torch.multinomial(p[j], 1, generator=generator)) for j in range(k + 1)]
            emitted = accept_by_sampling(drafts, draws)
        else:  # a wrong sampler: accept every draft
            emitted = [*drafts, int(torch.multinomial(p[k], 1, generator=generator))]
        out = out + tuple(emitted)
    return out[:length]


def exact_joint(target: Callable[[tuple[int, ...]], torch.Tensor], length: int) -> dict:
    joint = {}
    for seq in itertools.product(range(V), repeat=length):
        joint[seq] = math.prod(float(target(seq[:i])[seq[i]]) for i in range(length))
    return joint


@pytest.mark.parametrize(
    ("drafter", "sampler"),
    [("model", "rejection"), ("fixed", "rejection"), ("fixed", "by_sampling"), ("fixed", "tree")],
)
def test_rejection_sampling_keeps_the_target_distribution(drafter: str, sampler: str) -> None:
    target = toy_model(0, sharp=1.0)
    draft = toy_model(1, sharp=1.5) if drafter == "model" else None
    g = torch.Generator().manual_seed(1234)
    counts = Counter(generate(target, draft, 3, 2, g, sampler) for _ in range(6000))
    p_value = chi_square_p_value(counts, exact_joint(target, 3))
    assert p_value > ALPHA, f"chi-square p = {p_value:.2e}"


def test_the_test_has_power() -> None:
    """Accepting drafts without the p/q test must be detected."""
    target = toy_model(0, sharp=1.0)
    g = torch.Generator().manual_seed(1234)
    counts = Counter(generate(target, toy_model(1, 1.5), 3, 2, g, "accept-all") for _ in range(6000))
    assert chi_square_p_value(counts, exact_joint(target, 3)) < ALPHA


# --- the whole engine: a draft model at temperature > 0 ---------------------------------

TEMPERATURE, TOP_K = 3.0, 3


@pytest.mark.slow
@pytest.mark.parametrize("drafter", ["draft_model", "ngram"])
def test_engine_speculative_sampling_matches_target(random_checkpoint, drafter: str) -> None:  # type: ignore[no-untyped-def]
    """The joint distribution of 3 sampled tokens (top_k=3, so 27 cells) from the engine
    with a draft model of other weights (stochastic drafts, the p/q rule) or n-gram lookup
    (deterministic drafts, the target's own draws) equals the target's, computed exactly
    from the plain engine's raw logprobs."""
    target_dir: Path = random_checkpoint("qwen3", dtype="float64")
    draft_dir: Path = random_checkpoint("qwen3", dtype="float64", seed=1)
    prompt = [17, 99, 3, 250, 41]
    plain = Engine(EngineConfig(model=str(target_dir), dtype="float64", block_size=4))

    def next_probs(prefix: tuple[int, ...]) -> dict[int, float]:
        plain.add_request("p", prompt + list(prefix), SamplingParams(
            temperature=0.0, max_tokens=1, logprobs=TOP_K, ignore_eos=True))  # fmt: skip
        out = None
        while plain.has_unfinished_requests():
            out = plain.step() or out
        assert out is not None and out[0].outputs[0].logprobs is not None
        top = {t: lp.logprob for t, lp in out[0].outputs[0].logprobs[0].items() if lp.rank <= TOP_K}
        z = torch.softmax(torch.tensor(list(top.values()), dtype=torch.float64) / TEMPERATURE, 0)
        return dict(zip(top, z.tolist(), strict=True))

    if drafter == "ngram":
        # Put the likely first tokens in the prompt, each followed by something, so prompt
        # lookup finds them after the first sample and drafts the second token.
        prompt = [x for pair in zip(next_probs(()), (7, 8, 9), strict=True) for x in pair] + prompt
    joint: dict[tuple[int, ...], float] = {}
    for t1, p1 in next_probs(()).items():
        for t2, p2 in next_probs((t1,)).items():
            for t3, p3 in next_probs((t1, t2)).items():
                joint[(t1, t2, t3)] = p1 * p2 * p3

    spec_config: dict[str, Any] = (
        {"model": str(draft_dir), "num_speculative_tokens": 2, "num_draft_blocks": 1024}
        if drafter == "draft_model"
        else {"method": "ngram", "num_speculative_tokens": 2}
    )
    spec = Engine(EngineConfig(
        model=str(target_dir), dtype="float64", block_size=4, max_num_seqs=128,
        max_num_batched_tokens=1024, num_gpu_blocks=1024, prefix_caching="hash",
        speculative_config=spec_config,
    ))  # fmt: skip
    n = 2000
    for i in range(n):
        spec.add_request(str(i), prompt, SamplingParams(
            temperature=TEMPERATURE, top_k=TOP_K, max_tokens=3, seed=i, ignore_eos=True))  # fmt: skip
    counts: Counter[tuple[int, ...]] = Counter()
    while spec.has_unfinished_requests():
        for out in spec.step():
            if out.finished:
                counts[tuple(out.outputs[0].token_ids)] += 1
    stats = spec.stats().spec_decoding
    assert stats is not None and stats.num_draft_tokens > n // 4
    assert 0 < stats.num_accepted_tokens < stats.num_draft_tokens  # both paths taken
    p_value = chi_square_p_value(counts, joint)
    print(f"engine: p = {p_value:.3f}, {stats}")
    assert p_value > ALPHA, f"chi-square p = {p_value:.2e}, counts {counts}"
