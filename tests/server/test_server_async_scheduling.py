"""The OpenAI server on an engine with overlap scheduling (--async-scheduling): concurrent
streaming and plain requests give the plain engine's text, aborts by disconnect included,
and the KV pool is clean once idle."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_fixtures import MAX_MODEL_LEN, MODEL, LiveServer, start_server

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams

PROMPTS = [f"request number {i} says" for i in range(6)]


@pytest.fixture(scope="module")
def overlap_server(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(server_cache_dir, async_scheduling=True)
    yield srv
    srv.stop()


def test_concurrent_requests_equal_plain(overlap_server: LiveServer, server_cache_dir: Path) -> None:
    def ask(i: int) -> str:
        body = {"model": MODEL, "prompt": PROMPTS[i], "max_tokens": 12 + i, "temperature": 0.0,
                "ignore_eos": True, "stop": ["zz"] if i % 2 else None}  # fmt: skip
        return str(overlap_server.http.post("/v1/completions", json=body).json()["choices"][0]["text"])

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        got = list(pool.map(ask, range(6)))
    plain = Engine(EngineConfig(cache_dir=server_cache_dir, max_model_len=MAX_MODEL_LEN, block_size=8))
    for i, prompt in enumerate(PROMPTS):
        plain.add_request(str(i), prompt, SamplingParams(
            temperature=0.0, max_tokens=12 + i, ignore_eos=True, stop=["zz"] if i % 2 else []))  # fmt: skip
    texts = {}
    while plain.has_unfinished_requests():
        for out in plain.step():
            if out.finished:
                texts[out.request_id] = out.outputs[0].text
    assert got == [texts[str(i)] for i in range(6)]
    # A streaming client that goes away mid-stream: its request is aborted in flight.
    with overlap_server.http.stream("POST", "/v1/completions", json={
            "model": MODEL, "prompt": "abandoned", "max_tokens": 100, "stream": True,
            "ignore_eos": True}) as resp:  # fmt: skip
        next(resp.iter_lines())
    report = overlap_server.wait_idle()
    assert report["idle"] and report["num_blocks_held"] == 0 and report["integrity"] == "ok", report
