"""Router: an OpenAI-compatible HTTP proxy in front of engine servers.

Per request: read the body, pick a worker with the policy, forward, and pass the answer
through (SSE chunks as they come). Before the first token reaches the client a request
can still move: a worker that cannot be reached, answers 5xx, says it is overloaded
(429) or fails the request's first step is left for the next one, until every worker has
been tried; the last refusal is what the client gets (a 429 keeps its Retry-After). After
the first token the stream belongs to that worker; if it dies, the client gets an error
event and [DONE].

With prefill and decode workers (disaggregated), each request takes two legs: a prefill
worker (chosen by the policy: that is where prefixes are cached) computes the prompt,
then a decode worker (least outstanding) pulls its KV and streams the answer. Both legs
retry on another worker of their kind.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Hashable
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi.responses import JSONResponse, Response, StreamingResponse

from reference_engine.loadtest.client import _carries_tokens
from reference_engine.router.health import HealthChecker
from reference_engine.router.policies import LeastOutstanding, Policy, make_policy
from reference_engine.router.worker import Worker, WorkerPool
from reference_engine.server.errors import error_body

_PASSED_HEADERS = ("content-type", "retry-after")


@dataclass(frozen=True, slots=True)
class RouterConfig:
    policy: str = "cache_aware"
    api_key: str | None = None  # what clients must send (the router's own key)
    worker_api_key: str | None = None  # what the router sends to workers
    health_interval_s: float = 2.0
    unhealthy_after: int = 2
    request_timeout_s: float = 600.0
    max_body_bytes: int = 8 << 20


@dataclass(slots=True)
class _Retry:
    """A worker that did not take the request; `answer` is its refusal, if it gave one."""

    answer: Response | None = None


def request_key(body: dict[str, Any]) -> tuple[Hashable, ...]:
    """What the cache-aware policy matches on: the prompt's characters or token ids, or the
    chat messages' text in order (a shared system prompt is then a shared prefix)."""
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if isinstance(prompt, str):
        return tuple(prompt)
    if isinstance(prompt, list) and all(isinstance(t, int) for t in prompt):
        return tuple(prompt)
    parts: list[str] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(f"<{message.get('role')}>{content if isinstance(content, str) else ''}")
    return tuple("".join(parts))


def _first_token_seen(head: bytes) -> str | None:
    """'token', 'error' or 'done' once the buffered SSE events show one, else None."""
    for event in head.split(b"\n\n")[:-1]:  # complete events only
        if not event.startswith(b"data: "):
            continue
        data = event[6:]
        if data == b"[DONE]":
            return "done"
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            continue
        if "error" in chunk:
            return "error"
        if _carries_tokens(chunk):
            return "token"
    return None


class Router:
    """Owns the pool, the policies and the counters; runs on the app's event loop."""

    def __init__(self, pool: WorkerPool, cfg: RouterConfig) -> None:
        self.pool = pool
        self.cfg = cfg
        self.policy: Policy = make_policy(cfg.policy)
        self.decode_policy: Policy = LeastOutstanding()
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(cfg.request_timeout_s, connect=5.0),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
        )
        self.health = HealthChecker(
            pool, [self.policy, self.decode_policy], self.client, cfg.health_interval_s,
            unhealthy_after=cfg.unhealthy_after,
        )  # fmt: skip
        self.headers = {"content-type": "application/json"}
        if cfg.worker_api_key:
            self.headers["authorization"] = f"Bearer {cfg.worker_api_key}"
        self.num_retries = 0
        self.num_unroutable = 0  # no worker could take the request

    async def close(self) -> None:
        await self.health.stop()
        await self.client.aclose()

    # --- one request ------------------------------------------------------------------
    async def forward(self, path: str, body: dict[str, Any]) -> Response:
        key = request_key(body)
        stream = body.get("stream") is True
        if not self.pool.disaggregated:
            return await self._route("colocated", self.policy, key, path, body, stream)
        # Prefill leg: compute the prompt, get where its KV waits.
        prefill_body = {k: v for k, v in body.items() if k != "stream_options"}
        prefill_body.update(stream=False, kv_transfer_params={"do_remote_decode": True})
        first = await self._route("prefill", self.policy, key, path, prefill_body, False)
        if first.status_code != 200:
            return first
        params = json.loads(bytes(first.body)).get("kv_transfer_params")
        decode_body = {**body, "kv_transfer_params": params} if params else body
        return await self._route("decode", self.decode_policy, key, path, decode_body, stream)

    async def _route(
        self,
        role: str,
        policy: Policy,
        key: tuple[Hashable, ...],
        path: str,
        body: dict[str, Any],
        stream: bool,
    ) -> Response:
        content = json.dumps(body).encode()
        tried: set[str] = set()
        refusal: Response | None = None
        while candidates := self.pool.available(role, tried):
            worker, prefill = policy.route(key, candidates)
            tried.add(worker.url)
            outcome = await self._try(worker, path, content, stream, prefill)
            if isinstance(outcome, Response):
                return outcome
            refusal = outcome.answer or refusal
            self.num_retries += 1
        self.num_retries -= bool(tried)  # the last attempt was not followed by a retry
        self.num_unroutable += 1
        if refusal is not None:
            return refusal
        why = (
            f"no healthy {role} worker could take the request"
            if tried
            else f"no healthy {role} worker"
        )
        return JSONResponse(error_body(why, 503), status_code=503, headers={"Retry-After": "1"})

    async def _try(
        self, worker: Worker, path: str, content: bytes, stream: bool, prefill: int = 0
    ) -> Response | _Retry:
        worker.outstanding += 1
        worker.num_requests += 1
        worker.queued_prefill += prefill
        done = False
        prefilled = False

        def first_token() -> None:  # the prompt is computed: its prefill left the queue
            nonlocal prefilled
            if not prefilled:
                prefilled = True
                worker.queued_prefill -= prefill

        def release() -> None:
            nonlocal done
            first_token()
            if not done:
                done = True
                worker.outstanding -= 1

        try:
            request = self.client.build_request(
                "POST", worker.url + path, content=content, headers=self.headers
            )
            resp = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            release()
            return self._failed(worker, f"{type(exc).__name__}: {exc}")
        try:
            if resp.status_code == 429 or resp.status_code >= 500:
                answer = self._answer(resp, await resp.aread())
                await resp.aclose()
                release()
                if resp.status_code != 429:
                    return self._failed(worker, f"answered {resp.status_code}", answer)
                return _Retry(answer)
            if resp.status_code != 200 or not stream:
                answer = self._answer(resp, await resp.aread())
                await resp.aclose()
                release()
                return answer
            chunks = resp.aiter_raw()
            head = b""
            seen = None
            async for chunk in chunks:
                head += chunk
                if seen := _first_token_seen(head):
                    first_token()
                    break
            if seen in (None, "error"):  # ended or failed before any token: try elsewhere
                await resp.aclose()
                release()
                return self._failed(worker, "the stream failed before its first token", None)
        except httpx.HTTPError as exc:
            await resp.aclose()
            release()
            return self._failed(worker, f"{type(exc).__name__}: {exc}")
        return StreamingResponse(
            self._relay(head, chunks, resp, worker, release), media_type="text/event-stream"
        )

    async def _relay(
        self,
        head: bytes,
        chunks: AsyncIterator[bytes],
        resp: httpx.Response,
        worker: Worker,
        release: Any,
    ) -> AsyncIterator[bytes]:
        try:
            yield head
            try:
                async for chunk in chunks:
                    yield chunk
            except httpx.HTTPError as exc:
                self._failed(worker, f"{type(exc).__name__} mid-stream")
                message = f"the worker serving this request failed mid-stream: {type(exc).__name__}"
                yield f"data: {json.dumps(error_body(message, 502))}\n\ndata: [DONE]\n\n".encode()
        finally:
            await resp.aclose()
            release()

    def _failed(self, worker: Worker, why: str, answer: Response | None = None) -> _Retry:
        worker.num_failures += 1
        self.health.mark_failed(worker, why)
        return _Retry(answer)

    @staticmethod
    def _answer(resp: httpx.Response, data: bytes) -> Response:
        headers = {k: v for k, v in resp.headers.items() if k.lower() in _PASSED_HEADERS}
        return Response(data, status_code=resp.status_code, headers=headers)

    # --- introspection -------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {
            "policy": self.policy.name,
            "workers": [
                {"url": w.url, "role": w.role, "healthy": w.healthy, "outstanding": w.outstanding,
                 "queued_prefill": w.queued_prefill, "num_requests": w.num_requests, "num_failures": w.num_failures, "last_error": w.last_error}
                for w in self.pool.workers
            ],
            "num_retries": self.num_retries,
            "num_unroutable": self.num_unroutable,
        }  # fmt: skip

    def metrics_text(self) -> str:
        lines: list[str] = []

        def family(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]) -> None:
            lines.extend((f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"))
            lines.extend(f"{name}{labels} {value:g}" for labels, value in samples)

        def per_worker(attr: str) -> list[tuple[str, float]]:
            return [
                (f'{{worker="{w.url}",role="{w.role}"}}', float(getattr(w, attr)))
                for w in self.pool.workers
            ]

        family(
            "atlas_router_requests_total",
            "counter",
            "Requests sent to each worker.",
            per_worker("num_requests"),
        )
        family(
            "atlas_router_outstanding",
            "gauge",
            "Requests in flight per worker.",
            per_worker("outstanding"),
        )
        family(
            "atlas_router_queued_prefill",
            "gauge",
            "Prompt elements (characters or tokens) routed to each worker, not yet prefilled.",
            per_worker("queued_prefill"),
        )
        family(
            "atlas_router_worker_healthy",
            "gauge",
            "1 while the worker is in the pool.",
            per_worker("healthy"),
        )
        family(
            "atlas_router_worker_failures_total",
            "counter",
            "Requests a worker failed to take.",
            per_worker("num_failures"),
        )
        family(
            "atlas_router_retries_total",
            "counter",
            "Requests moved to another worker.",
            [("", self.num_retries)],
        )
        family(
            "atlas_router_unroutable_total",
            "counter",
            "Requests no worker could take.",
            [("", self.num_unroutable)],
        )
        family(
            "atlas_router_worker_removals_total",
            "counter",
            "Workers removed from the pool.",
            [("", self.health.num_removals)],
        )
        family(
            "atlas_router_worker_readmissions_total",
            "counter",
            "Workers re-admitted.",
            [("", self.health.num_readmissions)],
        )
        return "\n".join(lines) + "\n"
