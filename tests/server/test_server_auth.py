"""--api-key: every route but /health and /metrics needs `Authorization: Bearer KEY`;
request bodies over the limit are refused before they are read whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_fixtures import MODEL, LiveServer, start_server
from typer.testing import CliRunner

from analyzer.cli import app
from reference_engine.server.auth import APIKeyMiddleware

KEY = "sk-atlas-test"
ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/v1/models", None),
    ("POST", "/v1/completions", {"model": MODEL, "prompt": "a b", "max_tokens": 2}),
    (
        "POST",
        "/v1/chat/completions",
        {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
    ),
    ("GET", "/debug/kv", None),
]


@pytest.fixture(scope="module")
def keyed(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(server_cache_dir, api_key=KEY)
    yield srv
    srv.stop()


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, 401),
        ({"Authorization": "Bearer wrong-key"}, 401),
        ({"Authorization": KEY}, 401),  # the key without its scheme
        ({"Authorization": f"Bearer {KEY}x"}, 401),
        ({"Authorization": f"Bearer {KEY}"}, 200),
    ],
)
def test_every_route_needs_the_key(
    keyed: LiveServer,
    method: str,
    path: str,
    body: dict[str, Any] | None,
    headers: dict[str, str],
    expected: int,
) -> None:
    with httpx.Client(base_url=keyed.base_url, timeout=60) as bare:
        resp = bare.request(method, path, json=body, headers=headers)
    assert resp.status_code == expected, resp.text
    if expected == 401:
        error = resp.json()["error"]
        assert error["type"] == "invalid_request_error" and error["code"] == "invalid_api_key"
        assert resp.headers["www-authenticate"] == "Bearer"


def test_health_and_metrics_stay_open(keyed: LiveServer) -> None:
    with httpx.Client(base_url=keyed.base_url, timeout=60) as bare:
        assert bare.get("/health").status_code == 200
        assert bare.get("/metrics").status_code == 200


def test_a_refused_request_does_no_work(keyed: LiveServer) -> None:
    before = keyed.engine.engine.stats().num_prompt_tokens_computed
    with httpx.Client(base_url=keyed.base_url, timeout=60) as bare:
        bare.post("/v1/completions", json=ROUTES[1][2])
    assert keyed.engine.engine.stats().num_prompt_tokens_computed == before


def test_the_middleware_compares_whole_keys() -> None:
    mw = APIKeyMiddleware(None, KEY)  # type: ignore[arg-type]
    assert mw.authorized(f"Bearer {KEY}".encode())
    for header in (None, b"", b"Bearer", f"Bearer {KEY[:-1]}".encode(), f"bearer {KEY}".encode()):
        assert not mw.authorized(header)


def test_chunked_body_over_the_limit_is_413(keyed: LiveServer) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the server counts as it reads
        yield b'{"model": "x", "prompt": "'
        for _ in range(10):
            yield b"y" * (1 << 20)
        yield b'"}'

    resp = keyed.http.post("/v1/completions", content=chunks())
    assert resp.status_code == 413
    assert resp.json()["error"]["type"] == "invalid_request_error"


def test_serve_takes_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import reference_engine.server.launch as launch

    seen: dict[str, Any] = {}
    monkeypatch.setattr(launch, "serve", lambda kwargs, cfg, on_ready=None: seen.update(cfg=cfg))
    result = CliRunner().invoke(app, ["engine", "serve"], env={"ATLAS_API_KEY": "from-env"})
    assert result.exit_code == 0, result.output
    assert seen["cfg"].api_key == "from-env"
    result = CliRunner().invoke(
        app, ["engine", "serve", "--api-key", "flag"], env={"ATLAS_API_KEY": "from-env"}
    )
    assert seen["cfg"].api_key == "flag"

