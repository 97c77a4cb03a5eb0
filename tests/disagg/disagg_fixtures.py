"""Prefill and decode servers in this process (each its own engine and threads), talking
over real TCP: HTTP for requests, ZeroMQ for KV. `pd_complete` plays the router's part."""

from __future__ import annotations

from typing import Any

import httpx
from server_fixtures import LiveServer

DTYPE = "float64"  # batching never flips an argmax tie, so token equality is exact


def prefill_then_decode(
    prefill: LiveServer, decode: LiveServer, path: str, body: dict[str, Any], timeout_s: float = 60
) -> tuple[httpx.Response, dict[str, Any] | None]:
    """The request's two legs: prefill (max_tokens 1, not streamed), then decode."""
    with httpx.Client(timeout=timeout_s) as http:
        first = http.post(
            prefill.base_url + path,
            json={**body, "stream": False, "kv_transfer_params": {"do_remote_decode": True}},
        )
        assert first.status_code == 200, first.text
        params = first.json()["kv_transfer_params"]
        second = http.post(decode.base_url + path, json={**body, "kv_transfer_params": params})
    return second, params


def tokens_of(resp: httpx.Response) -> list[list[str]]:
    """Each choice's sampled tokens (as the logprobs report them), in choice order."""
    choices = sorted(resp.json()["choices"], key=lambda c: c["index"])
    out = []
    for c in choices:
        lp = c["logprobs"]
        out.append(lp["tokens"] if "tokens" in lp else [t["token"] for t in lp["content"]])
    return out
