"""Overload control: a full waiting queue answers 429 with Retry-After, before any work."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_fixtures import MODEL, LiveServer, start_server

from reference_engine.server.metrics import parse_prometheus
from reference_engine.server.serving import ServingLimits

BODY = {"model": MODEL, "prompt": list(range(10, 30)), "max_tokens": 30, "ignore_eos": True}


@pytest.fixture
def capped(server_cache_dir: Path) -> Iterator[LiveServer]:
    """One running sequence; at most 2 waiting requests and 50 queued prompt tokens."""
    limits = ServingLimits(max_waiting_requests=2, max_queued_tokens=50, retry_after_s=3)
    srv = start_server(server_cache_dir, limits=limits, max_num_seqs=1)
    runner = srv.engine.engine.runner
    real = runner.execute_model

    def slow(batch: Any) -> Any:  # keep the queue occupied while the test looks at it
        time.sleep(0.01)
        return real(batch)

    runner.execute_model = slow  # type: ignore[method-assign]
    yield srv
    srv.stop()


def _wait(cond: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_requests_past_the_caps_get_429_and_admitted_ones_finish(capped: LiveServer) -> None:
    srv = capped
    with ThreadPoolExecutor(3) as pool, httpx.Client(base_url=srv.base_url, timeout=60) as c:
        running = pool.submit(c.post, "/v1/completions", json=BODY)
        _wait(lambda: srv.engine.num_streams == 1 and srv.engine.num_pending == 0)
        queued = [
            pool.submit(c.post, "/v1/completions", json={**BODY, "prompt": list(range(5, 25))})
        ]
        _wait(lambda: srv.engine.num_pending == 1)
        # 20 tokens queued; another 20 fit the 50-token cap, 40 would not.
        too_many_tokens = c.post("/v1/completions", json={**BODY, "prompt": list(range(40))})
        queued.append(pool.submit(c.post, "/v1/completions", json=BODY))
        _wait(lambda: srv.engine.num_pending == 2)
        too_many_requests = c.post("/v1/chat/completions", json={
            "model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
        })  # fmt: skip
        results = [running.result(60), *(f.result(60) for f in queued)]
    for resp, what in ((too_many_tokens, "prompt tokens"), (too_many_requests, "requests")):
        assert resp.status_code == 429, resp.text
        assert resp.headers["retry-after"] == "3"
        error = resp.json()["error"]
        assert error["type"] == "rate_limit_exceeded" and error["code"] == "server_overloaded"
        assert what in error["message"]
    assert [r.status_code for r in results] == [200, 200, 200]
    assert all(r.json()["usage"]["completion_tokens"] == 30 for r in results)
    report = srv.wait_idle()
    assert report["num_blocks_held"] == 0 and report["integrity"] == "ok"
    values = parse_prometheus(srv.http.get("/metrics").text)
    assert values["atlas_overloaded_requests_total"] == 2
    assert srv.engine.num_pending == 0 and srv.engine.num_pending_tokens == 0


def test_an_idle_server_takes_a_prompt_bigger_than_the_token_cap(capped: LiveServer) -> None:
    resp = capped.http.post(
        "/v1/completions", json={**BODY, "prompt": list(range(60)), "max_tokens": 2}
    )
    assert resp.status_code == 200, resp.text
