"""A client that leaves mid-request aborts it, and every KV block comes back to the pool.

This module's server runs without prefix caching, so "back" means exactly: the
free list holds every block again, as it did before the first request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_fixtures import MODEL, LiveServer, start_server

LONG = {"model": MODEL, "prompt": "a long one " * 4, "max_tokens": 400, "ignore_eos": True}


@pytest.fixture(scope="module")
def bare(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(server_cache_dir, prefix_caching="none", max_model_len=512)
    yield srv
    srv.stop()


def _aborts(live: LiveServer) -> float:
    for line in live.http.get("/metrics").text.splitlines():
        if line.startswith("atlas_client_aborts_total "):
            return float(line.split()[1])
    raise AssertionError("no atlas_client_aborts_total in /metrics")


def _assert_all_blocks_back(live: LiveServer, initial_free: int) -> None:
    report = live.wait_idle()
    assert report["idle"], report
    assert report["num_free_blocks"] == initial_free == report["num_blocks"], report
    assert report["num_block_tables"] == 0 and report["integrity"] == "ok", report
    # The engine thread's published snapshot (what /metrics shows) agrees; it is refreshed
    # just after the command drain that answered /debug/kv, so give it a moment.
    deadline = time.monotonic() + 5
    while live.engine.snapshot.num_free_blocks != initial_free and time.monotonic() < deadline:
        time.sleep(0.01)
    assert live.engine.snapshot.num_free_blocks == initial_free
    assert live.engine.snapshot.num_blocks_held == 0


def test_streaming_client_disconnect_frees_blocks(bare: LiveServer) -> None:
    initial = bare.kv()
    assert initial["num_free_blocks"] == initial["num_blocks"]
    aborts_before = _aborts(bare)
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST", bare.base_url + "/v1/completions", json={**LONG, "stream": True}
        ) as resp,
    ):
        assert resp.status_code == 200
        lines = resp.iter_lines()
        got = 0
        for line in lines:
            if line.startswith("data: "):
                got += 1
            if got == 5:
                break
        during = bare.kv()  # mid-stream: the request really holds blocks
        assert during["num_blocks_held"] > 0 and during["num_unfinished_requests"] == 1
    # Leaving the `with` closed the connection after 5 of 400 tokens.
    _assert_all_blocks_back(bare, initial["num_free_blocks"])
    assert _aborts(bare) == aborts_before + 1


def test_non_streaming_client_disconnect_frees_blocks(bare: LiveServer) -> None:
    initial_free = bare.kv()["num_blocks"]
    aborts_before = _aborts(bare)
    t0 = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        bare.http.post("/v1/completions", json=LONG, timeout=httpx.Timeout(30, read=0.3))
    assert time.monotonic() - t0 < 30  # generous: the CPU is shared
    _assert_all_blocks_back(bare, initial_free)
    assert _aborts(bare) == aborts_before + 1


def test_many_clients_leaving_at_once(bare: LiveServer) -> None:
    initial_free = bare.kv()["num_blocks"]

    async def leave_after(client: httpx.AsyncClient, i: int, chunks: int) -> int:
        body = {**LONG, "prompt": f"client {i} " * 3, "stream": True, "n": 1 + i % 2}
        async with client.stream("POST", bare.base_url + "/v1/completions", json=body) as resp:
            seen = 0
            async for line in resp.aiter_lines():
                seen += line.startswith("data: ")
                if seen >= chunks:
                    return seen
        return seen

    async def main() -> list[int]:
        async with httpx.AsyncClient(timeout=30) as client:
            return await asyncio.gather(*(leave_after(client, i, 2 + i % 5) for i in range(12)))

    assert all(n >= 2 for n in asyncio.run(main()))
    _assert_all_blocks_back(bare, initial_free)
    # And the server still serves.
    resp = bare.http.post(
        "/v1/completions",
        json={"model": MODEL, "prompt": "x", "max_tokens": 2},
        timeout=30,
    )
    assert resp.status_code == 200
