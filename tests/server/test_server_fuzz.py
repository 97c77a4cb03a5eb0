"""Schema-driven fuzzing of request bodies: whatever arrives, no 5xx, and the server lives on.

Each body mixes plausible values of the real fields with junk of every JSON type
and unknown keys. The context is small (MAX_MODEL_LEN) so even accepted fuzzed
requests finish fast.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_fixtures import MODEL, LiveServer

JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_ANY = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)


# Integers at the edges of int32 / int64: values that reach tensors must never crash a step.
EDGE_INTS = st.sampled_from([2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1])


def _field(plausible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(plausible, plausible, EDGE_INTS, JSON_ANY)


SAMPLING: dict[str, st.SearchStrategy[Any]] = {
    "model": _field(st.sampled_from([MODEL, MODEL, "other-model", ""])),
    "max_tokens": _field(st.integers(-3, 6) | st.integers()),
    "temperature": _field(st.floats(-1, 3)),
    "top_p": _field(st.floats(-0.5, 1.5)),
    "top_k": _field(st.integers(-3, 50)),
    "min_p": _field(st.floats(-0.5, 1.5)),
    "n": _field(st.integers(-1, 6)),
    "seed": _field(st.integers()),
    "stop": _field(st.text(max_size=3) | st.lists(st.text(max_size=3), max_size=3)),
    "stream": _field(st.booleans()),
    "stream_options": _field(st.fixed_dictionaries({"include_usage": st.booleans()})),
    "presence_penalty": _field(st.floats(-3, 3)),
    "frequency_penalty": _field(st.floats(-3, 3)),
    "repetition_penalty": _field(st.floats(-1, 3)),
    "min_tokens": _field(st.integers(-2, 8)),
    "ignore_eos": _field(st.booleans()),
    "stop_token_ids": _field(st.lists(st.integers(-5, 600) | EDGE_INTS, max_size=3)),
    "logit_bias": _field(st.dictionaries(st.text(max_size=3), st.floats(-5, 5), max_size=2)),
}
COMPLETION = {
    **SAMPLING,
    "prompt": _field(
        st.text(max_size=40)
        | st.lists(st.integers(-5, 600) | EDGE_INTS, max_size=8)
        | st.lists(st.text(max_size=5), max_size=2)
    ),
    "logprobs": _field(st.integers(-2, 25)),
    "echo": _field(st.booleans()),
}
MESSAGE = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "system", "assistant", "robot"]),
        "content": st.text(max_size=30) | st.none(),
    }
)
CHAT = {
    **SAMPLING,
    "messages": _field(st.lists(MESSAGE, max_size=3)),
    "logprobs": _field(st.booleans()),
    "top_logprobs": _field(st.integers(-2, 25)),
    "max_completion_tokens": _field(st.integers(-3, 6) | st.integers()),
}


def _body(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={**fields, "unknown_knob": JSON_ANY},
    )


def _check(live: LiveServer, path: str, body: dict[str, Any]) -> None:
    resp = live.http.post(path, content=json.dumps(body))
    assert resp.status_code < 500, (body, resp.text)
    if resp.status_code >= 400:
        assert set(resp.json()["error"]) == {"message", "type", "param", "code"}
    elif resp.headers["content-type"].startswith("text/event-stream"):
        events = [line for line in resp.text.split("\n\n") if line]
        assert events[-1] == "data: [DONE]", resp.text
        for event in events[:-1]:
            assert "error" not in json.loads(event.removeprefix("data: ")), event
    else:
        assert resp.json()["choices"], resp.text


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


@FUZZ
@given(body=_body(COMPLETION))
def test_fuzzed_completions_never_5xx(live: LiveServer, body: dict[str, Any]) -> None:
    _check(live, "/v1/completions", body)


@FUZZ
@given(body=_body(CHAT))
def test_fuzzed_chat_never_5xx(live: LiveServer, body: dict[str, Any]) -> None:
    _check(live, "/v1/chat/completions", body)


@FUZZ
@given(raw=st.binary(max_size=64) | JSON_ANY.map(lambda v: json.dumps(v).encode()))
def test_fuzzed_raw_bodies_never_5xx(live: LiveServer, raw: bytes) -> None:
    resp = live.http.post("/v1/completions", content=raw)
    assert resp.status_code == 400, resp.text


def test_server_alive_and_clean_after_fuzzing(live: LiveServer) -> None:
    assert live.http.get("/health").status_code == 200
    resp = live.http.post(
        "/v1/completions",
        json={"model": MODEL, "prompt": "after", "max_tokens": 3},
        timeout=30,
    )
    assert resp.status_code == 200
    report = live.wait_idle()
    assert report["num_blocks_held"] == 0 and report["integrity"] == "ok"
    assert report["num_block_tables"] == 0
