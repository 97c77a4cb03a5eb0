"""Structured output over HTTP: OpenAI's response_format on both endpoints, vLLM's
guided_* and structured_outputs fields; invalid constraints are 400s that name the
field, and the server keeps serving."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from server_fixtures import MODEL, LiveServer

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 6},
        "rain": {"type": "boolean"},
        "mm": {"type": "integer", "minimum": 0, "maximum": 40},
    },
    "required": ["city", "rain", "mm"],
    "additionalProperties": False,
}


def chat(live: LiveServer, **fields: Any) -> Any:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "Weather?"}],
            "max_tokens": 60, "temperature": 0.0, **fields}  # fmt: skip
    return live.http.post("/v1/chat/completions", json=body)


def complete(live: LiveServer, **fields: Any) -> Any:
    body = {"model": MODEL, "prompt": "Weather:", "max_tokens": 60, "temperature": 0.0, **fields}
    return live.http.post("/v1/completions", json=body)


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_response_format_json_schema(live: LiveServer, endpoint: str) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA, "strict": True}}
    for temperature in (0.0, 1.5):
        if endpoint == "chat":
            resp = chat(live, response_format=fmt, temperature=temperature, seed=1)
            text = resp.json()["choices"][0]["message"]["content"]
        else:
            resp = complete(live, response_format=fmt, temperature=temperature, seed=1)
            text = resp.json()["choices"][0]["text"]
        assert resp.status_code == 200, resp.text
        assert resp.json()["choices"][0]["finish_reason"] == "stop"
        jsonschema.validate(json.loads(text), SCHEMA)


def test_json_object_and_vllm_fields(live: LiveServer) -> None:
    resp = chat(live, response_format={"type": "json_object"}, max_tokens=8)
    assert resp.json()["choices"][0]["message"]["content"].startswith("{")
    text = complete(live, guided_regex="[0-9]{3}-[xy]{2}").json()["choices"][0]["text"]
    assert re.fullmatch("[0-9]{3}-[xy]{2}", text)
    text = complete(live, guided_choice=["sunny", "rainy"]).json()["choices"][0]["text"]
    assert text in ("sunny", "rainy")
    text = complete(live, guided_json=SCHEMA).json()["choices"][0]["text"]
    jsonschema.validate(json.loads(text), SCHEMA)
    grammar = 'root ::= "T=" [0-9] [0-9]? "C"'
    text = complete(live, structured_outputs={"grammar": grammar}).json()["choices"][0]["text"]
    assert re.fullmatch("T=[0-9][0-9]?C", text)
    # Streaming carries the same constrained text.
    streamed = live.http.post("/v1/completions", json={
        "model": MODEL, "prompt": "Weather:", "max_tokens": 60, "temperature": 0.0,
        "guided_choice": ["sunny", "rainy"], "stream": True}).text  # fmt: skip
    pieces = [json.loads(line[6:])["choices"][0]["text"] for line in streamed.splitlines()
              if line.startswith("data: {")]  # fmt: skip
    assert "".join(pieces) in ("sunny", "rainy")


@pytest.mark.parametrize(
    ("fields", "param", "message"),
    [
        ({"guided_json": {"type": "frobnicate"}}, "structured_outputs", "Unsupported type"),
        ({"guided_regex": "[a-"}, "structured_outputs", "invalid regex"),
        ({"structured_outputs": {"grammar": "root ::= "}}, "structured_outputs", "invalid grammar"),
        ({"response_format": {"type": "yaml"}}, "response_format", "json_object or json_schema"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
         "response_format", "json_schema.schema"),
        ({"guided_choice": []}, "guided_choice", "non-empty"),
        ({"structured_outputs": {"yaml": "x"}}, "structured_outputs", "unknown"),
        ({"guided_regex": "a", "guided_choice": ["a"]}, "guided_choice", "at most one"),
    ],
)
def test_invalid_constraints_are_400(
    live: LiveServer, fields: dict[str, Any], param: str, message: str
) -> None:
    for resp in (complete(live, **fields), chat(live, **fields)):
        assert resp.status_code == 400, resp.text
        error = resp.json()["error"]
        assert error["param"] == param and message in error["message"], error
    assert complete(live, max_tokens=2).status_code == 200  # still serving
