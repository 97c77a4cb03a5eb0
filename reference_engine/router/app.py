"""The router's FastAPI app: /v1/completions and /v1/chat/completions through the Router,
/v1/models from a worker, /health (200 while a request could be served), /metrics, and
/workers (the pool's state). `--api-key` guards every route but /health and /metrics."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from reference_engine.router.proxy import Router
from reference_engine.server.auth import APIKeyMiddleware
from reference_engine.server.errors import error_body


def build_router_app(router: Router) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await router.health.check_all()  # start from the workers' real state
        router.health.start()
        try:
            yield
        finally:
            await router.close()

    app = FastAPI(title="atlas router", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.router = router
    limit = router.cfg.max_body_bytes

    async def read_json(request: Request) -> dict[str, Any] | Response:
        received = bytearray()
        async for part in request.stream():
            received += part
            if len(received) > limit:
                return JSONResponse(
                    error_body(f"the body is over {limit} bytes", 413), status_code=413
                )
        try:
            body = json.loads(received)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return JSONResponse(
                error_body(f"the body is not valid JSON: {exc}", 400, code="invalid_json"), 400
            )
        if not isinstance(body, dict):
            return JSONResponse(
                error_body("the body must be a JSON object", 400, code="invalid_json"), 400
            )
        return body

    async def proxy(request: Request, path: str) -> Response:
        body = await read_json(request)
        if isinstance(body, Response):
            return body
        return await router.forward(path, body)

    @app.post("/v1/completions")
    async def completions(request: Request) -> Response:
        return await proxy(request, "/v1/completions")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        return await proxy(request, "/v1/chat/completions")

    @app.get("/v1/models")
    async def models() -> Response:
        for worker in router.pool.workers:
            if worker.healthy and worker.role != "prefill":
                try:
                    resp = await router.client.get(
                        worker.url + "/v1/models", headers=router.headers
                    )
                except httpx.HTTPError:  # the next worker may answer
                    continue
                return Response(resp.content, resp.status_code, media_type="application/json")
        return JSONResponse(error_body("no healthy worker", 503), status_code=503)

    @app.get("/health")
    async def health() -> Response:
        if router.pool.ready():
            return Response(status_code=200)
        return JSONResponse(
            error_body("no healthy worker can serve a request", 503), status_code=503
        )

    @app.get("/metrics")
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(
            router.metrics_text(), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    @app.get("/workers")
    async def workers() -> JSONResponse:
        return JSONResponse(router.state())

    if router.cfg.api_key is not None:
        app.add_middleware(APIKeyMiddleware, api_key=router.cfg.api_key)
    return app
