"""One streamed request, timed token by token (httpx, async)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from reference_engine.loadtest.workload import LoadRequest


@dataclass(slots=True)
class RequestResult:
    ok: bool
    start: float  # time.perf_counter() when the request was sent
    latency_s: float = 0.0  # send -> [DONE]
    ttft_s: float | None = None  # send -> first chunk carrying tokens
    itl_s: list[float] = field(default_factory=list)  # gaps between chunks carrying tokens
    prompt_tokens: int = 0
    output_tokens: int = 0
    error: str = ""

    @property
    def tpot_s(self) -> float | None:
        """Time per output token after the first (None for one-token outputs)."""
        if self.ttft_s is None or self.output_tokens < 2:
            return None
        return (self.latency_s - self.ttft_s) / (self.output_tokens - 1)


@dataclass(frozen=True, slots=True)
class Target:
    base_url: str  # e.g. http://127.0.0.1:8000 (with or without /v1)
    model: str
    endpoint: str = "completions"  # or "chat"
    extra_body: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        root = self.base_url.rstrip("/")
        root = root if root.endswith("/v1") else root + "/v1"
        return root + ("/chat/completions" if self.endpoint == "chat" else "/completions")

    def body(self, req: LoadRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": req.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            **self.extra_body,
        }
        if self.endpoint == "chat":
            body["messages"] = [{"role": "user", "content": req.prompt}]
        else:
            body["prompt"] = req.prompt
        return body


def _carries_tokens(chunk: dict[str, Any]) -> bool:
    """A chunk with choices is a token delivery, even when its text is empty (a token can
    end mid-character and its text arrive with the next); the chat opening chunk that only
    announces the role is not."""
    choices = chunk.get("choices") or []
    return any("role" not in (c.get("delta") or {}) for c in choices)


async def send(client: httpx.AsyncClient, target: Target, req: LoadRequest) -> RequestResult:
    start = time.perf_counter()
    result = RequestResult(ok=False, start=start)
    last: float | None = None
    done = False
    try:
        async with client.stream("POST", target.url, json=target.body(req)) as resp:
            if resp.status_code != 200:
                body = (await resp.aread()).decode("utf-8", "replace")
                result.error = f"HTTP {resp.status_code}: {_error_message(body)}"
                return result
            async for line in resp.aiter_lines():
                if not line.startswith("data: "):
                    continue
                data = line[6:]
                if data == "[DONE]":
                    done = True
                    break
                chunk = json.loads(data)
                if "error" in chunk:
                    result.error = f"stream error: {_error_message(data)}"
                    return result
                now = time.perf_counter()
                if _carries_tokens(chunk):
                    if result.ttft_s is None:
                        result.ttft_s = now - start
                    elif last is not None:
                        result.itl_s.append(now - last)
                    last = now
                usage = chunk.get("usage")
                if usage:
                    result.prompt_tokens = int(usage.get("prompt_tokens", 0))
                    result.output_tokens = int(usage.get("completion_tokens", 0))
    except (httpx.HTTPError, json.JSONDecodeError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        return result
    result.latency_s = time.perf_counter() - start
    if not done:
        result.error = "the stream ended without [DONE]"
        return result
    result.ok = True
    return result


def _error_message(body: str) -> str:
    try:
        return str(json.loads(body)["error"]["message"])
    except (json.JSONDecodeError, KeyError, TypeError):
        return body[:200]
