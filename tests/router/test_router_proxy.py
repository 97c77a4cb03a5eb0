"""The router in front of real engine servers: passthrough, policies, P/D pairs, keys."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from router_fixtures import Running, post, sse_data, start_router
from server_fixtures import MODEL, LiveServer, start_server

from reference_engine.router.launch import make_pool
from reference_engine.router.proxy import Router

BODY = {"model": MODEL, "prompt": "shared system prompt, then a question", "max_tokens": 5,
        "temperature": 0, "ignore_eos": True}  # fmt: skip
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3,
        "temperature": 0}  # fmt: skip


@pytest.fixture(scope="module")
def workers(server_cache_dir: Path) -> Iterator[list[LiveServer]]:
    servers = [start_server(server_cache_dir, prefix_caching="radix") for _ in range(2)]
    yield servers
    for s in servers:
        s.stop()


@pytest.fixture
def routed(
    workers: list[LiveServer], request: pytest.FixtureRequest
) -> Iterator[tuple[Running, Router]]:
    policy = getattr(request, "param", "cache_aware")
    running, router = start_router(make_pool([w.base_url for w in workers], [], []), policy=policy)
    yield running, router
    running.stop()


def test_non_streamed_and_streamed_pass_through(
    routed: tuple[Running, Router], workers: list[LiveServer]
) -> None:
    running, _ = routed
    direct = post(workers[0].base_url, "/v1/completions", BODY).json()
    via = post(running.base_url, "/v1/completions", BODY).json()
    assert via["choices"][0]["text"] == direct["choices"][0]["text"]
    streamed = post(running.base_url, "/v1/completions", {**BODY, "stream": True})
    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = sse_data(streamed.text)
    assert events[-1] == "[DONE]"
    text = "".join(c["text"] for e in events[:-1] for c in json.loads(e)["choices"])
    assert text == direct["choices"][0]["text"]
    chat = post(running.base_url, "/v1/chat/completions", CHAT)
    assert chat.status_code == 200 and chat.json()["object"] == "chat.completion"
    models = httpx.get(running.base_url + "/v1/models").json()
    assert models["data"][0]["id"] == MODEL


def test_client_errors_come_back_unchanged(routed: tuple[Running, Router]) -> None:
    running, router = routed
    resp = post(running.base_url, "/v1/completions", {**BODY, "temperature": -1})
    assert resp.status_code == 400 and resp.json()["error"]["param"] == "temperature"
    assert router.num_retries == 0  # a bad request is not the worker's fault
    resp = httpx.post(running.base_url + "/v1/completions", content=b"{", timeout=10)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_json"


@pytest.mark.parametrize("routed", ["round_robin"], indirect=True)
def test_round_robin_alternates(routed: tuple[Running, Router]) -> None:
    running, router = routed
    for _ in range(4):
        post(running.base_url, "/v1/completions", BODY)
    assert [w.num_requests for w in router.pool.workers] == [2, 2]


@pytest.mark.parametrize("routed", ["cache_aware"], indirect=True)
def test_cache_aware_keeps_a_prefix_on_one_worker(
    routed: tuple[Running, Router], workers: list[LiveServer]
) -> None:
    running, router = routed
    tenants = ["tenant one " * 8, "tenant two " * 8]
    for i in range(6):
        body = {**BODY, "prompt": tenants[i % 2] + f"question {i}"}
        assert post(running.base_url, "/v1/completions", body).status_code == 200
    # Each tenant's requests went to one worker, and the two tenants to different ones.
    assert [w.num_requests for w in router.pool.workers] == [3, 3]
    hits = [w.engine.engine.stats().prefix_cache_hit_tokens for w in workers]
    assert all(h > 0 for h in hits)


@pytest.mark.parametrize("routed", ["least_outstanding"], indirect=True)
def test_least_outstanding_spreads_concurrent_streams(routed: tuple[Running, Router]) -> None:
    running, router = routed
    long = {**BODY, "max_tokens": 60, "stream": True}
    with (
        httpx.Client(timeout=60) as a,
        httpx.Client(timeout=60) as b,
        a.stream("POST", running.base_url + "/v1/completions", json=long) as first,
    ):
        lines = first.iter_lines()
        next(lines)  # in flight on one worker
        assert b.post(running.base_url + "/v1/completions", json=BODY).status_code == 200
        assert [w.num_requests for w in router.pool.workers] == [1, 1]  # the idle one took it
        assert [line for line in lines if line][-1] == "data: [DONE]"
    deadline = time.monotonic() + 10
    while any(w.outstanding for w in router.pool.workers):  # the relay closes after [DONE]
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_disaggregated_pair_through_the_router(
    server_cache_dir: Path, workers: list[LiveServer]
) -> None:
    kw: dict[str, Any] = {"prefix_caching": "radix"}
    prefill = start_server(server_cache_dir, serve_options={"role": "prefill"}, **kw)
    decode = start_server(server_cache_dir, serve_options={"role": "decode"}, **kw)
    running, router = start_router(make_pool([], [prefill.base_url], [decode.base_url]))
    try:
        expected = post(workers[0].base_url, "/v1/completions", BODY).json()["choices"][0]["text"]
        got = post(running.base_url, "/v1/completions", BODY).json()
        assert got["choices"][0]["text"] == expected
        streamed = post(running.base_url, "/v1/completions", {**BODY, "stream": True,
                        "stream_options": {"include_usage": True}})  # fmt: skip
        events = [json.loads(e) for e in sse_data(streamed.text)[:-1]]
        assert "".join(c["text"] for e in events for c in e["choices"]) == expected
        assert events[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] > 0  # KV came over
        chat = post(running.base_url, "/v1/chat/completions", {**CHAT, "stream": True})
        direct_chat = post(workers[0].base_url, "/v1/chat/completions", {**CHAT, "stream": True})

        def text(resp: httpx.Response) -> str:
            return "".join(c["delta"].get("content") or "" for e in sse_data(resp.text)[:-1]
                           for c in json.loads(e)["choices"])  # fmt: skip

        assert text(chat) == text(direct_chat)
        assert decode.server.config.app.state.disagg.counters.received == 3
        assert [w.num_requests for w in router.pool.workers] == [3, 3]
        assert httpx.get(running.base_url + "/health").status_code == 200
    finally:
        running.stop()
        prefill.stop()
        decode.stop()


ROUTES = [
    ("GET", "/v1/models", None),
    ("POST", "/v1/completions", BODY),
    ("POST", "/v1/chat/completions", CHAT),
    ("GET", "/workers", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_router_api_key_on_every_route(
    workers: list[LiveServer], method: str, path: str, body: dict[str, Any] | None
) -> None:
    running, _ = start_router(make_pool([workers[0].base_url], [], []), api_key="router-key")
    try:
        with httpx.Client(base_url=running.base_url, timeout=60) as http:
            for headers, status in (({}, 401), ({"Authorization": "Bearer nope"}, 401),
                                    ({"Authorization": "Bearer router-key"}, 200)):  # fmt: skip
                resp = http.request(method, path, json=body, headers=headers)
                assert resp.status_code == status, (headers, resp.text)
                if status == 401:
                    assert resp.json()["error"]["code"] == "invalid_api_key"
            assert http.get("/health").status_code == 200
            assert http.get("/metrics").status_code == 200
    finally:
        running.stop()


def test_router_refuses_oversized_and_non_object_bodies(workers: list[LiveServer]) -> None:
    running, _ = start_router(make_pool([workers[0].base_url], [], []), max_body_bytes=1024)
    try:
        resp = post(running.base_url, "/v1/completions", {**BODY, "prompt": "x" * 2000})
        assert resp.status_code == 413 and resp.json()["error"]["type"] == "invalid_request_error"
        resp = httpx.post(running.base_url + "/v1/completions", json=[1, 2], timeout=10)
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_json"
    finally:
        running.stop()
