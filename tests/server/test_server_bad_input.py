"""Bad requests get an OpenAI error object with the right status; the server keeps serving."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_fixtures import MAX_MODEL_LEN, MODEL, LiveServer

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
MSGS = [{"role": "user", "content": "hi"}]


def _post(
    live: LiveServer, path: str, body: Any = None, content: bytes | None = None
) -> httpx.Response:
    return live.http.post(path, json=body, content=content)


def _error(resp: httpx.Response) -> dict[str, Any]:
    body = resp.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert set(err) == {"message", "type", "param", "code"}, err
    assert isinstance(err["message"], str) and err["message"]
    return err  # type: ignore[no-any-return]


def _ok(live: LiveServer) -> None:
    resp = _post(live, COMPLETIONS, {"model": MODEL, "prompt": "still there?", "max_tokens": 2})
    assert resp.status_code == 200, resp.text
    assert resp.json()["usage"]["completion_tokens"] >= 1


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "max_tokens": "5"}, "max_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "max_tokens": True}, "max_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "max_tokens": 2.5}, "max_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "max_tokens": -3}, "max_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "max_tokens": 0}, "max_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "max_tokens": 10**30}, "max_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "temperature": "hot"}, "temperature"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "temperature": -1}, "temperature"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "top_p": 0}, "top_p"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "n": 0}, "n"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "n": 5}, "n"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "n": 10**9}, "n"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "stream": "yes"}, "stream"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "logprobs": 99}, "logprobs"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "stop": 3}, "stop"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "stop": [""]}, "stop"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "seed": 2**70}, "seed"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "top_k": 2**63}, "top_k"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "stop_token_ids": [2**63]}, "stop_token_ids.0"),
        (COMPLETIONS, {"model": MODEL, "prompt": [2**63]}, "prompt"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "best_of": 3}, "best_of"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "suffix": "y"}, "suffix"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "logit_bias": {"5": 1}}, "logit_bias"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "frobnicate": 1}, "frobnicate"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "kv_eviction": {"recent_tokens": 0}}, "kv_eviction.recent_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "kv_eviction": {"sinks": 2}}, "kv_eviction.sinks"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "kv_eviction": {"policy": "lru"}}, "kv_eviction.policy"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "min_tokens": 9, "max_tokens": 2}, "min_tokens"),
        (COMPLETIONS, {"model": MODEL, "prompt": "x", "stream_options": {"include_usage": True}}, "stream_options"),
        (COMPLETIONS, {"model": MODEL, "prompt": ["a", "b"]}, "prompt"),
        (COMPLETIONS, {"model": MODEL, "prompt": []}, "prompt"),
        (COMPLETIONS, {"model": MODEL, "prompt": ""}, "prompt"),
        (COMPLETIONS, {"model": MODEL, "prompt": [1, 10**6]}, "prompt"),
        (COMPLETIONS, {"model": MODEL, "prompt": [1, -1]}, "prompt"),
        (COMPLETIONS, {"model": MODEL, "prompt": "word " * (2 * MAX_MODEL_LEN)}, "prompt"),
        (COMPLETIONS, {"model": MODEL}, "prompt"),
        (COMPLETIONS, {"prompt": "x"}, "model"),
        (CHAT, {"model": MODEL, "messages": []}, "messages"),
        (CHAT, {"model": MODEL, "messages": "hi"}, "messages"),
        (CHAT, {"model": MODEL, "messages": [{"role": "wizard", "content": "x"}]}, "messages.0.role"),
        (CHAT, {"model": MODEL, "messages": [{"role": "user", "content": 5}]}, "messages.0.content"),
        (CHAT, {"model": MODEL, "messages": MSGS, "max_completion_tokens": 10**6}, "max_completion_tokens"),
        (CHAT, {"model": MODEL, "messages": MSGS, "top_logprobs": 2}, "top_logprobs"),
        (CHAT, {"model": MODEL, "messages": MSGS, "response_format": {"type": "xml"}}, "response_format"),
        (CHAT, {"model": MODEL, "messages": MSGS, "tool_choice": "auto"}, "tool_choice"),
        (CHAT, {"model": MODEL, "messages": [{"role": "user", "content": "w " * 300}]}, "messages"),
    ],
)  # fmt: skip
def test_bad_fields_are_400_with_the_param(
    live: LiveServer, path: str, body: dict[str, Any], param: str
) -> None:
    resp = _post(live, path, body)
    assert resp.status_code == 400, resp.text
    err = _error(resp)
    assert err["type"] == "invalid_request_error"
    assert err["param"] == param, err


@pytest.mark.parametrize(
    "content",
    [b"{", b"not json", b"", b"[1, 2]", b'"text"', b"null", b"\xff\xfe"],
)
def test_malformed_bodies_are_400(live: LiveServer, content: bytes) -> None:
    for path in (COMPLETIONS, CHAT):
        resp = _post(live, path, content=content)
        assert resp.status_code == 400, resp.text
        assert _error(resp)["code"] == "invalid_json"
    _ok(live)


def test_non_finite_numbers_are_refused(live: LiveServer) -> None:
    # pydantic's JSON reader takes the NaN / Infinity extensions; the fields must not.
    for value in (b"NaN", b"Infinity", b"-Infinity"):
        body = b'{"model": "%s", "prompt": "x", "temperature": %s}' % (MODEL.encode(), value)
        resp = _post(live, COMPLETIONS, content=body)
        assert resp.status_code == 400, resp.text
        assert _error(resp)["param"] == "temperature"


def test_prompt_longer_than_the_context(live: LiveServer) -> None:
    resp = _post(live, COMPLETIONS, {"model": MODEL, "prompt": list(range(20, 20 + MAX_MODEL_LEN))})
    assert resp.status_code == 400
    err = _error(resp)
    assert err["code"] == "context_length_exceeded"
    assert str(MAX_MODEL_LEN) in err["message"]


def test_unknown_model_is_404(live: LiveServer) -> None:
    resp = _post(live, CHAT, {"model": "gpt-5", "messages": MSGS})
    assert resp.status_code == 404
    assert _error(resp)["code"] == "model_not_found"


def test_unknown_routes_and_methods(live: LiveServer) -> None:
    resp = live.http.get("/v1/nothing-here")
    assert resp.status_code == 404
    _error(resp)
    resp = live.http.get(COMPLETIONS)
    assert resp.status_code == 405
    _error(resp)


def test_oversized_body_is_413(live: LiveServer) -> None:
    resp = _post(live, COMPLETIONS, content=b'{"prompt": "' + b"x" * (9 << 20) + b'"}')
    assert resp.status_code == 413
    _error(resp)
    _ok(live)


def test_errors_are_counted_and_nothing_leaks(live: LiveServer) -> None:
    _ok(live)
    metrics = live.http.get("/metrics").text
    assert 'atlas_http_errors_total{status="400"}' in metrics
    report = live.wait_idle()
    assert report["num_blocks_held"] == 0
    assert report["integrity"] == "ok"


def test_kv_eviction_is_served(live: LiveServer) -> None:
    body = {"model": MODEL, "prompt": "a b c d e f g h", "max_tokens": 12, "ignore_eos": True}
    for policy in ({"sink_tokens": 2, "recent_tokens": 4}, {"policy": "h2o", "budget_blocks": 2}):
        body["kv_eviction"] = policy
        resp = _post(live, COMPLETIONS, body)
        assert resp.status_code == 200, resp.text
        assert resp.json()["usage"]["completion_tokens"] == 12
