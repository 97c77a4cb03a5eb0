"""HTTP endpoints for live weight updates (SGLang's names; reference_engine/weight_update.py).

    POST /update_weights_from_disk         {"model_path", "weight_version"?, "policy"?}
    POST /init_weights_update_group        {"master_address", "master_port", "rank", "world_size"}
    POST /update_weights_from_distributed  {"names", "dtypes", "shapes", "weight_version"?, "policy"?}
    GET  /get_weight_version

`policy` "drain" (the default) holds new requests, waits up to `drain_timeout_s` for the
requests in flight to finish, updates, then lets the held ones in; "abort" and "recompute"
update at once (weight_update.py says what happens to the requests in flight). A refused
update is a 400 and the old weights keep serving. Joining the group and receiving the
broadcasts block until the trainer takes part, so they run on a worker thread; only the
apply step runs on the engine thread, between two steps.
"""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import FastAPI, Request
from pydantic import Field, ValidationError

from reference_engine.server.async_engine import AsyncEngine
from reference_engine.server.errors import APIError, from_validation_error
from reference_engine.server.protocol import _Strict

Policy = str


class UpdateFromDiskRequest(_Strict):
    model_path: Annotated[str, Field(min_length=1)]
    weight_version: str | None = None
    policy: Policy = "drain"
    drain_timeout_s: Annotated[float, Field(gt=0, le=3600)] = 60.0


class InitGroupRequest(_Strict):
    master_address: Annotated[str, Field(min_length=1)]
    master_port: Annotated[int, Field(ge=1, le=65535)]
    rank: Annotated[int, Field(ge=1)] = 1
    world_size: Annotated[int, Field(ge=2)] = 2
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 60.0


class UpdateFromDistributedRequest(_Strict):
    names: list[str]
    dtypes: list[str]
    shapes: list[list[int]]
    weight_version: str | None = None
    policy: Policy = "drain"
    drain_timeout_s: Annotated[float, Field(gt=0, le=3600)] = 60.0


def add_weight_update_routes(app: FastAPI, engine: AsyncEngine) -> None:
    lock = asyncio.Lock()  # one update at a time

    async def parse(request: Request, model: type[Any]) -> Any:
        try:
            return model.model_validate_json(await request.body())
        except ValidationError as exc:
            raise from_validation_error(exc) from None

    async def update(apply: Any, policy: str, drain_timeout_s: float) -> dict[str, Any]:
        from reference_engine.weight_update import WeightUpdateError

        if policy not in ("drain", "abort", "recompute"):
            raise APIError(f"policy must be drain, abort or recompute, got {policy!r}",
                           param="policy")  # fmt: skip
        async with lock:
            if policy == "drain":
                engine.pause_admission()
            try:
                if policy == "drain":
                    deadline = time.monotonic() + drain_timeout_s
                    while engine.num_streams and time.monotonic() < deadline:
                        await asyncio.sleep(0.02)
                    if engine.num_streams:
                        raise APIError(f"{engine.num_streams} requests still running after "
                                       f"{drain_timeout_s} s; nothing was updated", status=503)  # fmt: skip
                engine_policy = "refuse" if policy == "drain" else policy
                result = await engine.call(lambda e: apply(e, engine_policy))
            except WeightUpdateError as exc:
                raise APIError(str(exc), code="weight_update_refused") from None
            finally:
                engine.resume_admission()
        return {"success": True, "weight_version": result.version,
                "num_tensors": result.num_tensors, "num_aborted": result.num_aborted,
                "num_recomputed": result.num_recomputed}  # fmt: skip

    @app.post("/update_weights_from_disk")
    async def update_weights_from_disk(request: Request) -> dict[str, Any]:
        body = await parse(request, UpdateFromDiskRequest)
        return await update(
            lambda e, p: e.weights.update_from_disk(body.model_path, body.weight_version, p),
            body.policy, body.drain_timeout_s,
        )  # fmt: skip

    @app.post("/init_weights_update_group")
    async def init_weights_update_group(request: Request) -> dict[str, Any]:
        from reference_engine.weight_update import WeightUpdateError

        body = await parse(request, InitGroupRequest)
        weights = engine.engine.weights
        try:
            await asyncio.to_thread(weights.init_group, body.master_address, body.master_port,
                                    body.rank, body.world_size, body.timeout_s)  # fmt: skip
        except WeightUpdateError as exc:
            raise APIError(str(exc)) from None
        return {"success": True, "message": "joined the weight update group"}

    @app.post("/update_weights_from_distributed")
    async def update_weights_from_distributed(request: Request) -> dict[str, Any]:
        from reference_engine.weight_update import WeightUpdateError

        body = await parse(request, UpdateFromDistributedRequest)
        weights = engine.engine.weights
        try:  # the trainer is broadcasting now: receive first, whatever the drain takes
            staged = await asyncio.to_thread(weights.receive, body.names, body.dtypes,
                                             body.shapes)  # fmt: skip
        except WeightUpdateError as exc:
            raise APIError(str(exc)) from None
        return await update(
            lambda e, p: e.weights.apply_staged(staged, body.weight_version, p),
            body.policy, body.drain_timeout_s,
        )  # fmt: skip

    @app.get("/get_weight_version")
    async def get_weight_version() -> dict[str, Any]:
        return {"weight_version": engine.engine.weights.version}
