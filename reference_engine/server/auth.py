"""API keys: `Authorization: Bearer KEY` on every route but the open ones, as `vllm serve
--api-key` (VLLM_API_KEY) and SGLang's `--api-key` do.

A plain ASGI middleware rather than FastAPI's `@app.middleware("http")`: that one wraps
responses in a way that breaks streaming and the disconnect detection the server relies
on. The server and the router share it.

The keys are compared as SHA-256 digests with `hmac.compare_digest`, so the comparison
takes the same time whatever the client sent, its length included.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from starlette.types import ASGIApp, Receive, Scope, Send

from reference_engine.server.errors import error_body

API_KEY_ENV = "ATLAS_API_KEY"  # the CLIs read it (vLLM's VLLM_API_KEY)
OPEN_PATHS = frozenset({"/health", "/metrics"})  # probes and scrapers, as in vLLM


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


class APIKeyMiddleware:
    def __init__(self, app: ASGIApp, api_key: str) -> None:
        self.app = app
        self._expected = _digest(f"Bearer {api_key}".encode())

    def authorized(self, header: bytes | None) -> bool:
        return hmac.compare_digest(_digest(header or b""), self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization")
        if self.authorized(header):
            await self.app(scope, receive, send)
            return
        message = (
            "Missing API key: send it as 'Authorization: Bearer KEY'"
            if header is None
            else "Incorrect API key provided"
        )
        body = json.dumps(error_body(message, 401, code="invalid_api_key")).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
