"""Disaggregated serving gives the tokens of colocated serving, token by token, and the
decode instance never recomputes the prompt.

Random workloads (shared system prompts, greedy and seeded sampling, n > 1, completions
and chat) go prefill -> KV over ZeroMQ -> decode, several at once; the reference is a
colocated server answering each request alone.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from disagg_fixtures import DTYPE, prefill_then_decode, tokens_of
from server_fixtures import MODEL, LiveServer, start_server

COMPLETIONS, CHAT = "/v1/completions", "/v1/chat/completions"
BLOCK = 8


@pytest.fixture(scope="module", params=["radix", "hash"])
def trio(
    request: pytest.FixtureRequest, server_cache_dir: Path
) -> Iterator[tuple[LiveServer, ...]]:
    cache = request.param
    kw: dict[str, Any] = {"dtype": DTYPE, "block_size": BLOCK, "prefix_caching": cache}
    servers = (
        start_server(server_cache_dir, serve_options={"role": "prefill"}, **kw),
        start_server(server_cache_dir, serve_options={"role": "decode"}, **kw),
        start_server(server_cache_dir, **kw),
    )
    yield servers
    for s in servers:
        s.stop()


def random_workload(rng: random.Random, num: int) -> list[tuple[str, dict[str, Any]]]:
    systems = [[rng.randrange(3, 500) for _ in range(rng.randrange(5, 30))] for _ in range(3)]
    work = []
    for i in range(num):
        sampling: dict[str, Any] = (
            {"temperature": 0}
            if rng.random() < 0.5
            else {"temperature": 0.9, "top_p": 0.9, "top_k": 40, "seed": rng.randrange(1 << 20)}
        )
        common = {"model": MODEL, "max_tokens": rng.randrange(1, 12), "ignore_eos": True,
                  "n": rng.choice([1, 1, 2]), **sampling}  # fmt: skip
        if i % 4 == 3:
            words = " ".join(rng.choice(["alpha", "beta", "kv", "cache", "page"]) for _ in range(6))
            msgs = [
                {"role": "system", "content": "shared rules"},
                {"role": "user", "content": words},
            ]
            work.append((CHAT, {**common, "messages": msgs, "logprobs": True, "top_logprobs": 0}))
        else:
            tail = [rng.randrange(3, 500) for _ in range(rng.randrange(1, 40))]
            prompt = rng.choice(systems) + tail
            work.append((COMPLETIONS, {**common, "prompt": prompt, "logprobs": 0}))
    return work


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_disaggregated_tokens_equal_colocated_alone(
    trio: tuple[LiveServer, ...], seed: int
) -> None:
    prefill, decode, colocated = trio
    work = random_workload(random.Random(seed), 12)
    computed_before = decode.engine.engine.stats().num_prompt_tokens_computed
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda w: prefill_then_decode(prefill, decode, *w), work))
    expected = []
    for path, body in work:  # one at a time: each request alone
        resp = colocated.http.post(path, json=body)
        assert resp.status_code == 200, resp.text
        expected.append(resp)
    radix = decode.engine.engine.config.prefix_caching == "radix"
    most_computed = num_seqs = 0
    for (path, body), (resp, params), ref in zip(work, results, expected, strict=True):
        assert resp.status_code == 200, resp.text
        assert tokens_of(resp) == tokens_of(ref), (path, body)
        p = resp.json()["usage"]["prompt_tokens"]
        assert params is not None and params["num_tokens"] == (p if radix else p // BLOCK * BLOCK)
        # What the decode side computes of the prompt: the last token (radix: token-exact
        # hit), or the tail past the last full block (hashed blocks); an n > 1 sibling
        # forks sample 0's full blocks and computes that tail at most, as when colocated.
        tail = p - (p - 1) // BLOCK * BLOCK
        most_computed += (1 if radix else tail) + (body["n"] - 1) * tail
        num_seqs += body["n"]
    computed = decode.engine.engine.stats().num_prompt_tokens_computed - computed_before
    assert num_seqs <= computed <= most_computed
    for srv in (prefill, decode):
        report = srv.wait_idle()
        assert report["num_blocks_held"] == 0 and report["integrity"] == "ok", report
    role = prefill.server.config.app.state.disagg  # nothing pinned once every decode said done
    assert role.num_pinned == 0 and role.counters.sent >= len(work)
