"""The FastAPI app: OpenAI-compatible routes, /health, /metrics, /debug/kv; and `serve()`.

Every failure a client can cause becomes an OpenAI error object with a 4xx
status; only our own bugs are 5xx, and even those leave the engine thread and
every other request running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from reference_engine.disagg import DecodeRole, PrefillRole
from reference_engine.kv_tiers.prefetch import prefetch
from reference_engine.server.async_engine import AsyncEngine, EngineDeadError, RequestStream
from reference_engine.server.auth import APIKeyMiddleware
from reference_engine.server.errors import APIError, error_body, from_validation_error
from reference_engine.server.metrics import ServerMetrics
from reference_engine.server.protocol import (
    ChatCompletionRequest,
    CompletionRequest,
    LoadLoRAAdapterRequest,
    UnloadLoRAAdapterRequest,
)
from reference_engine.server.serving import ReqT, Serving, ServingLimits
from reference_engine.server.serving_chat import ChatServing
from reference_engine.server.serving_completion import CompletionServing
from reference_engine.server.weight_update_api import add_weight_update_routes

if TYPE_CHECKING:
    from reference_engine.engine import Engine

log = logging.getLogger("atlas.server")
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

MAX_BODY_BYTES = 8 << 20


@dataclass(frozen=True, slots=True)
class ServerOptions:
    model_name: str
    limits: ServingLimits = field(default_factory=ServingLimits)
    max_body_bytes: int = MAX_BODY_BYTES
    api_key: str | None = None  # None: no authentication (see auth.py)
    disagg: PrefillRole | DecodeRole | None = None  # None: colocated


class _ClientGone(Exception):
    pass


class _AbortingStream(StreamingResponse):
    """A streaming response that always releases its request, even when the client left
    before the first chunk (the body generator then never starts, so its own cleanup
    would never run)."""

    def __init__(self, content: AsyncIterator[str], stream: RequestStream) -> None:
        super().__init__(content, media_type="text/event-stream")
        self._stream = stream
        self.headers["Cache-Control"] = "no-cache"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._stream.close()


def build_app(engine: AsyncEngine, options: ServerOptions) -> FastAPI:
    metrics = ServerMetrics(options.model_name)
    role = options.disagg
    # Typed apart so each branch below names the role's own methods.
    prefill_role: PrefillRole | None = role if isinstance(role, PrefillRole) else None
    decode_role: DecodeRole | None = role if isinstance(role, DecodeRole) else None
    if role is not None:
        metrics.sources.append(role.metric_samples)
    tiers = getattr(engine.engine, "kv_tiers", None)
    if tiers is not None:  # read racily from the event loop: counters, fine for a scrape
        metrics.sources.append(tiers.metric_samples)
    completion = CompletionServing(engine, options.model_name, metrics, options.limits)
    chat = ChatServing(engine, options.model_name, metrics, options.limits)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine.start()
        try:
            yield
        finally:
            await engine.stop()
            if role is not None:
                role.close()

    app = FastAPI(title="atlas reference engine", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.engine = engine
    add_weight_update_routes(app, engine)
    app.state.metrics = metrics
    app.state.disagg = role

    @app.exception_handler(APIError)
    async def on_api_error(request: Request, exc: APIError) -> JSONResponse:
        metrics.count_error(exc.status)
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers())

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        metrics.count_error(exc.status_code)
        return JSONResponse(error_body(str(exc.detail), exc.status_code), exc.status_code)

    @app.exception_handler(EngineDeadError)
    async def on_engine_dead(request: Request, exc: EngineDeadError) -> JSONResponse:
        metrics.count_error(503)
        return JSONResponse(error_body(str(exc), 503), status_code=503)

    @app.exception_handler(_ClientGone)
    async def on_client_gone(request: Request, exc: _ClientGone) -> Response:
        return Response(status_code=499)  # nginx's "client closed request"; nobody reads it

    @app.exception_handler(Exception)
    async def on_bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error in %s", request.url.path)
        metrics.count_error(500)
        return JSONResponse(error_body(f"internal error: {exc}", 500), status_code=500)

    async def parse(request: Request, model: type[M]) -> M:
        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > options.max_body_bytes:
            raise APIError(f"the body is over {options.max_body_bytes} bytes", status=413)
        # Read chunk by chunk: a chunked upload without Content-Length is cut off at the
        # limit instead of being buffered whole.
        parts: list[bytes] = []
        received = 0
        async for part in request.stream():
            received += len(part)
            if received > options.max_body_bytes:
                raise APIError(f"the body is over {options.max_body_bytes} bytes", status=413)
            parts.append(part)
        body = b"".join(parts)
        try:
            return model.model_validate_json(body)
        except ValidationError as exc:
            raise from_validation_error(exc) from None

    @app.get("/health")
    async def health() -> Response:
        if engine.is_running:
            return Response(status_code=200)
        reason = str(engine.error) if engine.error else "the engine is not running"
        return JSONResponse(error_body(reason, 503), status_code=503)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        # LoRA adapters are models of their own whose parent is the base (vLLM's listing).
        adapters = [
            {"id": a.lora_name, "object": "model", "created": 0, "owned_by": "atlas",
             "root": a.lora_path, "parent": options.model_name,
             "max_model_len": engine.max_model_len}
            for a in await engine.call(lambda e: e.list_loras())
        ]  # fmt: skip
        return {
            "object": "list",
            "data": [
                {
                    "id": options.model_name,
                    "object": "model",
                    "created": 0,
                    "owned_by": "atlas",
                    "max_model_len": engine.max_model_len,
                    "random_weights": engine.engine.random_weights,
                },
                *adapters,
            ],
        }

    @app.post("/v1/load_lora_adapter")
    async def load_lora_adapter(request: Request) -> Response:
        body = await parse(request, LoadLoRAAdapterRequest)
        await lora_call(lambda e: load_lora(e, body.lora_name, body.lora_path))
        return Response(f"Success: LoRA adapter '{body.lora_name}' added successfully.")

    @app.post("/v1/unload_lora_adapter")
    async def unload_lora_adapter(request: Request) -> Response:
        body = await parse(request, UnloadLoRAAdapterRequest)
        if not await lora_call(lambda e: e.remove_lora(body.lora_name)):
            raise APIError(f"The LoRA adapter `{body.lora_name}` is not loaded.", status=404,
                           param="lora_name", code="model_not_found")  # fmt: skip
        return Response(f"Success: LoRA adapter '{body.lora_name}' removed successfully.")

    async def lora_call(fn: Callable[[Any], T]) -> T:
        from reference_engine.engine import RequestError

        try:
            return await engine.call(fn)
        except RequestError as exc:  # rank above max_lora_rank, bad folder, in use, LoRA off
            raise APIError(str(exc), param="lora_path") from None

    def load_lora(e: Any, name: str, path: str) -> None:
        from reference_engine.engine import RequestError
        from reference_engine.lora import LoRARequest

        if name == options.model_name or (e.lora is not None and name in e.lora.registry):
            raise RequestError(f"The LoRA adapter `{name}` has already been loaded.")
        e.add_lora(LoRARequest(name, len(e.list_loras()) + 1, path))

    async def serve(request: Request, serving: Serving[ReqT], model: type[ReqT]) -> Response:
        """One request through a serving front end: parse, submit, then stream or collect."""
        arrival = time.monotonic()
        serving.check_overload(0)  # a full queue refuses before parsing or tokenizing anything
        req = await parse(request, model)
        prep = await serving.prepare_async(req, arrival)
        if tiers is not None and tiers.wants(prep.params, prep.lora_request):
            await prefetch(engine, prep.request_id, prep.token_ids)  # off the engine thread
        hook = await disaggregate(request, req, prep)
        stream = await serving.submit(prep, hook)
        if req.stream:
            return _AbortingStream(serving.stream(req, prep, stream), stream)
        final = await _unless_disconnected(request, serving.collect(stream, prep), stream)
        body = serving.response(req, prep, final)
        if hook is not None and prefill_role is not None:
            body["kv_transfer_params"] = prefill_role.response_params(prep.request_id)
        return JSONResponse(body)

    async def disaggregate(request: Request, req: Any, prep: Any) -> Any:
        """The request's part in prefill/decode disaggregation: a hook for the engine, or None."""
        params = req.kv_transfer_params
        if params is None:
            return None
        if role is None:
            raise APIError(
                "kv_transfer_params needs a server started with --role prefill or --role decode",
                param="kv_transfer_params",
            )
        if prep.images:
            # The decode side would need the images' multimodal positions, which the KV
            # transfer does not carry.
            raise APIError(
                "images are not supported with prefill/decode disaggregation", param="messages"
            )
        if prefill_role is not None:
            if params.get("do_remote_decode") is not True:
                raise APIError(
                    'a prefill server takes kv_transfer_params {"do_remote_decode": true}',
                    param="kv_transfer_params",
                )
            if req.stream:
                raise APIError("the prefill leg of a disaggregated request cannot stream", param="stream")
            prep.params = prefill_role.prefill_params(prep.params)
            return prefill_role.hook(prep.request_id)
        assert decode_role is not None
        try:
            work = decode_role.receive(prep.request_id, prep.token_ids, params)
            return await _unless_disconnected(request, work)
        except ValueError as exc:
            raise APIError(str(exc), param="kv_transfer_params") from None

    @app.post("/v1/completions")
    async def completions(request: Request) -> Response:
        return await serve(request, completion, CompletionRequest)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        return await serve(request, chat, ChatCompletionRequest)

    @app.get("/metrics")
    async def prometheus() -> PlainTextResponse:
        text = metrics.render(engine.snapshot, engine.num_streams, engine.num_failed_steps)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get("/debug/kv")
    async def debug_kv() -> dict[str, Any]:
        """Block accounting, computed on the engine thread between steps."""
        return await engine.call(kv_report)

    if options.api_key is not None:
        app.add_middleware(APIKeyMiddleware, api_key=options.api_key)
    return app


def kv_report(engine: Engine) -> dict[str, Any]:
    kv = engine.kv
    idle = not engine.has_unfinished_requests()
    integrity = "not checked (requests in flight)"
    if idle:
        try:
            engine.check_integrity()
            integrity = "ok"
        except Exception as exc:  # the report's whole point is to show this
            integrity = f"FAILED: {exc}"
    cached = kv.cache.num_evictable_blocks()
    return {
        "num_blocks": kv.num_blocks,
        "num_free_blocks": kv.pool.num_free,
        "num_cached_blocks": cached,
        "num_blocks_held": kv.num_blocks - kv.pool.num_free - cached,
        "num_block_tables": len(kv.block_tables) + len(kv.host_block_tables),
        "num_unfinished_requests": len(engine.requests),
        "idle": idle,
        "integrity": integrity,
    }


async def _unless_disconnected(
    request: Request, work: Awaitable[T], stream: RequestStream | None = None
) -> T:
    """Await `work` unless the client disconnects first; then cancel it, and close the
    request's `stream` if it has one (which aborts the request in the engine)."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, _ClientGone):
                await task
            if stream is not None:
                stream.close()
    if task.cancelled():
        raise _ClientGone
    return task.result()


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return
