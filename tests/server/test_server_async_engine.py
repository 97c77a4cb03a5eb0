"""The engine thread's edges: a step that raises, draining at shutdown, catching up."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_fixtures import MODEL, LiveServer, start_server

from reference_engine.outputs import CompletionOutput, RequestOutput
from reference_engine.server.async_engine import RequestStream

LONG = {"model": MODEL, "prompt": "x y z", "max_tokens": 100, "ignore_eos": True, "stream": True}


@pytest.fixture
def fresh(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(server_cache_dir)
    yield srv
    srv.stop()


def _events(text: str) -> list[str]:
    return [e.removeprefix("data: ") for e in text.split("\n\n") if e]


def test_a_failing_step_fails_streams_and_marks_the_server_unhealthy(fresh: LiveServer) -> None:
    def boom() -> Any:
        raise RuntimeError("simulated bug in a step")

    fresh.engine.engine.step = boom  # type: ignore[method-assign]
    resp = fresh.http.post("/v1/completions", json=LONG)
    assert resp.status_code == 200  # headers were out before the step failed
    events = _events(resp.text)
    assert events[-1] == "[DONE]"
    error = json.loads(events[-2])["error"]
    assert error["type"] == "server_error" and "simulated bug" in error["message"]
    health = fresh.http.get("/health")
    assert health.status_code == 503 and "simulated bug" in health.json()["error"]["message"]
    again = fresh.http.post("/v1/completions", json={**LONG, "stream": False})
    assert again.status_code == 503


def test_drain_ends_open_streams_and_refuses_new_requests(fresh: LiveServer) -> None:
    loop = fresh.engine._loop
    assert loop is not None
    with fresh.http.stream("POST", "/v1/completions", json=LONG) as resp:
        lines = resp.iter_lines()
        first = next(line for line in lines if line.startswith("data: "))
        assert json.loads(first[6:])["choices"]
        asyncio.run_coroutine_threadsafe(fresh.engine.drain(0.0), loop).result(timeout=10)
        rest = [line[6:] for line in lines if line.startswith("data: ")]
    assert rest[-1] == "[DONE]"
    finishes = [c["finish_reason"] for e in rest[:-1] for c in json.loads(e)["choices"]]
    assert "length" not in finishes  # cut short, not run to max_tokens
    refused = fresh.http.post("/v1/completions", json={**LONG, "stream": False})
    assert refused.status_code == 503 and "shutting down" in refused.json()["error"]["message"]
    assert fresh.http.get("/health").status_code == 503
    report = fresh.wait_idle()
    assert report["num_blocks_held"] == 0 and report["integrity"] == "ok"


class _Owner:
    def __init__(self) -> None:
        self.forgotten: list[tuple[str, bool]] = []

    def _forget(self, request_id: str, abort: bool) -> None:
        self.forgotten.append((request_id, abort))


def _out(n: int, finished: bool) -> RequestOutput:
    completion = CompletionOutput(0, "t" * n, list(range(n)), "length" if finished else None)
    return RequestOutput("r", None, [1], [completion], finished)


def test_ready_hands_over_everything_waiting_and_stops_at_the_end() -> None:
    async def go() -> tuple[list[int], list[int], bool]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        owner = _Owner()
        stream = RequestStream(owner, "r", queue)  # type: ignore[arg-type]
        for i in range(1, 4):
            queue.put_nowait(_out(i, finished=i == 3))
        queue.put_nowait(_out(9, finished=True))  # never read: the stream already finished
        first = await stream.__anext__()
        rest = stream.ready()
        stream.close()
        return (
            [len(first.outputs[0].token_ids)],
            [len(o.outputs[0].token_ids) for o in rest],
            (
                owner.forgotten == [("r", False)]  # finished: closing must not abort
            ),
        )

    first, rest, not_aborted = asyncio.run(go())
    assert first == [1] and rest == [2, 3] and not_aborted


def test_closing_an_unfinished_stream_aborts_it() -> None:
    async def go() -> list[tuple[str, bool]]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        owner = _Owner()
        stream = RequestStream(owner, "r", queue)  # type: ignore[arg-type]
        queue.put_nowait(_out(1, finished=False))
        await stream.__anext__()
        stream.close()
        stream.close()  # idempotent
        return owner.forgotten

    assert asyncio.run(go()) == [("r", True)]


def test_metrics_are_prometheus_text(fresh: LiveServer) -> None:
    fresh.http.post("/v1/completions", json={**LONG, "stream": False, "max_tokens": 3})
    resp = fresh.http.get("/metrics")
    assert resp.headers["content-type"].startswith("text/plain; version=0.0.4")
    from reference_engine.server.metrics import parse_prometheus

    values = parse_prometheus(resp.text)
    assert values["atlas_time_to_first_token_seconds_count"] == 1
    assert values["atlas_e2e_request_latency_seconds_count"] == 1
    assert values["atlas_inter_token_latency_seconds_count"] == 2  # 3 tokens, 2 gaps
    assert values['atlas_time_to_first_token_seconds_bucket{le="+Inf"}'] == 1
    assert values["atlas_generation_tokens_total"] == 3
    assert values['atlas_request_success_total{finished_reason="length"}'] == 1
    for name in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc",
                 "prefix_cache_hit_rate", "num_preemptions_total"):  # fmt: skip
        assert f"atlas_{name}" in values
    # Histogram buckets are cumulative and end at the count.
    buckets = [
        v for k, v in values.items() if k.startswith("atlas_e2e_request_latency_seconds_bucket")
    ]
    assert buckets == sorted(buckets) and buckets[-1] == 1
    # Every sample belongs to a declared metric family.
    declared = {line.split()[2] for line in resp.text.splitlines() if line.startswith("# TYPE")}
    for key in values:
        family = key.split("{")[0]
        base = family.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count")
        assert family in declared or base in declared, key
