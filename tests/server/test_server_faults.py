"""A step that raises costs only the requests it ran; the server goes on serving.

The fault is injected into the model runner's forward pass (the place a CUDA error or
an out-of-memory would surface), once, while one request runs and another waits.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_fixtures import MODEL, LiveServer, start_server

from reference_engine.server.metrics import parse_prometheus

LONG = {"model": MODEL, "prompt": "x y z", "max_tokens": 100, "ignore_eos": True, "stream": True}


@pytest.fixture
def one_seq(server_cache_dir: Path) -> Iterator[LiveServer]:
    """One running sequence at a time, so a second request waits outside the step."""
    srv = start_server(server_cache_dir, max_num_seqs=1)
    yield srv
    srv.stop()


def faulty_runner(srv: LiveServer, fault: Callable[[], None]) -> threading.Event:
    """Slow every forward pass a little (so requests overlap); when the returned event is
    set, the next forward pass calls `fault()` and raises."""
    runner = srv.engine.engine.runner
    real = runner.execute_model
    armed = threading.Event()

    def execute_model(batch: Any) -> Any:
        time.sleep(0.01)
        if armed.is_set():
            armed.clear()
            fault()
            raise RuntimeError("simulated fault in a forward pass")
        return real(batch)

    runner.execute_model = execute_model  # type: ignore[method-assign]
    return armed


def _wait(cond: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_failing_step_aborts_only_its_requests(one_seq: LiveServer) -> None:
    srv = one_seq
    armed = faulty_runner(srv, lambda: None)
    waiting_body = {**LONG, "stream": False, "max_tokens": 6}
    with (
        ThreadPoolExecutor(1) as pool,
        httpx.Client(base_url=srv.base_url, timeout=60) as other,
        srv.http.stream("POST", "/v1/completions", json=LONG) as resp,
    ):
        lines = resp.iter_lines()
        first = next(line for line in lines if line.startswith("data: "))
        assert json.loads(first[6:])["choices"]  # the streaming request is running
        waiting = pool.submit(other.post, "/v1/completions", json=waiting_body)
        _wait(lambda: srv.engine.num_pending == 1)  # queued behind it, not in the step
        armed.set()
        rest = [line[6:] for line in lines if line.startswith("data: ")]
        assert rest[-1] == "[DONE]"
        error = json.loads(rest[-2])["error"]
        assert error["code"] == "engine_step_failed" and "simulated fault" in error["message"]
        done = waiting.result(timeout=60)
    assert done.status_code == 200, done.text
    assert done.json()["usage"]["completion_tokens"] == 6
    # Still serving: health, a fresh request, clean accounting.
    assert srv.http.get("/health").status_code == 200
    again = srv.http.post("/v1/completions", json={**waiting_body, "max_tokens": 3})
    assert again.status_code == 200
    report = srv.wait_idle()
    assert report["num_blocks_held"] == 0 and report["integrity"] == "ok"
    values = parse_prometheus(srv.http.get("/metrics").text)
    assert values["atlas_failed_steps_total"] == 1


def test_a_non_streaming_request_in_a_failing_step_gets_a_500(one_seq: LiveServer) -> None:
    armed = faulty_runner(one_seq, lambda: None)
    armed.set()
    resp = one_seq.http.post("/v1/completions", json={**LONG, "stream": False})
    assert resp.status_code == 500
    assert resp.json()["error"]["code"] == "engine_step_failed"
    assert one_seq.http.post("/v1/completions", json={**LONG, "stream": False}).status_code == 200


def test_a_step_that_breaks_the_block_accounting_stops_the_engine(one_seq: LiveServer) -> None:
    pool = one_seq.engine.engine.kv.pool
    armed = faulty_runner(one_seq, lambda: pool.allocate(1))  # a block nobody owns
    armed.set()
    resp = one_seq.http.post("/v1/completions", json={**LONG, "stream": False})
    assert resp.status_code == 503  # the engine can no longer vouch for its KV cache
    assert one_seq.http.get("/health").status_code == 503
