"""Workers failing under the router: retries before the first token, removal and
re-admission by health checks, overload redirects, a worker dying mid-stream."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from router_fixtures import FakeWorker, post, sse_data, start_router
from server_fixtures import MODEL, LiveServer, start_server

from reference_engine.router.launch import make_pool

BODY = {"model": MODEL, "prompt": "a b c", "max_tokens": 4, "temperature": 0, "ignore_eos": True}


@pytest.fixture(scope="module")
def real(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(server_cache_dir)
    yield srv
    srv.stop()


@pytest.fixture
def fake() -> Iterator[FakeWorker]:
    worker = FakeWorker().start()
    yield worker
    worker.stop()


def _wait(cond: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("mode", ["killed", "500", "503"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_failing_worker_is_retried_elsewhere(
    real: LiveServer, fake: FakeWorker, mode: str, stream: bool
) -> None:
    fake.mode = mode
    running, router = start_router(
        make_pool([fake.url, real.base_url], [], []), policy="round_robin"
    )
    if mode == "killed":
        fake.stop()  # connections are refused from now on
    try:
        for _ in range(4):
            resp = post(running.base_url, "/v1/completions", {**BODY, "stream": stream})
            assert resp.status_code == 200, resp.text
            if stream:
                assert sse_data(resp.text)[-1] == "[DONE]" and "error" not in resp.text
        failures = httpx.get(running.base_url + "/workers").json()["workers"][0]["num_failures"]
        assert router.num_retries == failures
        if mode == "killed":  # refused connections, or removed by the health checks first
            assert not router.pool.workers[0].healthy
        else:
            assert failures == fake.calls >= 1
    finally:
        running.stop()


def test_overloaded_workers_redirect_then_shed(real: LiveServer, fake: FakeWorker) -> None:
    fake.mode = "429"
    running, router = start_router(
        make_pool([fake.url, real.base_url], [], []), policy="round_robin"
    )
    try:
        for _ in range(3):
            assert post(running.base_url, "/v1/completions", BODY).status_code == 200
        assert router.pool.workers[0].healthy  # overloaded is not dead
    finally:
        running.stop()
    running, router = start_router(make_pool([fake.url], [], []))
    try:
        resp = post(running.base_url, "/v1/completions", BODY)
        assert resp.status_code == 429 and resp.headers["retry-after"] == "7"
        assert resp.json()["error"]["message"] == "fake 429"
    finally:
        running.stop()


def test_a_worker_dying_mid_stream_ends_the_stream_with_an_error(fake: FakeWorker) -> None:
    fake.mode = "die_mid_stream"
    running, _ = start_router(make_pool([fake.url], [], []))
    try:
        resp = post(running.base_url, "/v1/completions", {**BODY, "stream": True})
        events = sse_data(resp.text)
        assert json.loads(events[0])["choices"][0]["text"] == "fake"  # the token got through
        assert "mid-stream" in json.loads(events[1])["error"]["message"]
        assert events[-1] == "[DONE]"
    finally:
        running.stop()


def test_health_checks_remove_and_readmit(real: LiveServer, fake: FakeWorker) -> None:
    running, router = start_router(make_pool([fake.url, real.base_url], [], []), unhealthy_after=2)
    try:
        worker = router.pool.workers[0]
        fake.healthy = False
        _wait(lambda: not worker.healthy)
        calls = fake.calls
        for _ in range(3):
            assert post(running.base_url, "/v1/completions", BODY).status_code == 200
        assert fake.calls == calls  # removed: nothing was sent to it
        fake.healthy = True
        _wait(lambda: worker.healthy)
        assert router.health.num_removals == 1 and router.health.num_readmissions == 1
        metrics = httpx.get(running.base_url + "/metrics").text
        assert "atlas_router_worker_readmissions_total 1" in metrics
    finally:
        running.stop()


def test_no_healthy_worker_is_503_and_health_says_so(fake: FakeWorker) -> None:
    running, router = start_router(make_pool([fake.url], [], []))
    try:
        fake.stop()  # killed
        _wait(lambda: not router.pool.workers[0].healthy)
        assert httpx.get(running.base_url + "/health").status_code == 503
        resp = post(running.base_url, "/v1/completions", BODY)
        assert resp.status_code == 503 and resp.json()["error"]["type"] == "server_error"
    finally:
        running.stop()
