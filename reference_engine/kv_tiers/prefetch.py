"""Prefetch: the server reads a request's tiered blocks while the request waits, off the
engine thread, so disk reads and shared-tier round trips never stall a running batch.

    engine thread: plan (device match, keys still missing)
    worker thread: fetch (read, checksum, decode, tier by tier to the first miss)
    engine thread: install (fresh device blocks, indexed in the prefix cache)
    engine thread: add_request (admission finds an ordinary prefix hit)

Outside the server (LLM, Engine) the same three run back to back inside add_request.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reference_engine.server.async_engine import AsyncEngine


async def prefetch(engine: AsyncEngine, request_id: str, token_ids: list[int]) -> int:
    """Bring the prompt's tiered blocks into the device cache; returns how many came."""
    tiers = engine.engine.kv_tiers
    assert tiers is not None
    have, keys = await engine.call(lambda e: tiers.plan(token_ids))
    loaded = await asyncio.to_thread(tiers.fetch, keys) if keys else []
    return await engine.call(lambda e: tiers.install(request_id, token_ids, have, loaded))
