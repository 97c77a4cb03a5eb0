"""Either side giving up mid-transfer: nothing leaks on either instance, and a request
whose transfer failed still gets the right tokens (the decode side computes its prompt).

Mid-transfer is made deterministic by wrapping the prefill role's block read, which the
sender's thread runs between the decode side's handshake and its receipt of the KV.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from disagg_fixtures import DTYPE, prefill_then_decode, tokens_of
from server_fixtures import MODEL, LiveServer, start_server
from server_session import wait_until_healthy

from reference_engine.router.launch import free_port

KW: dict[str, Any] = {"dtype": DTYPE, "block_size": 8, "prefix_caching": "radix"}
BODY = {"model": MODEL, "prompt": list(range(7, 40)), "max_tokens": 6, "temperature": 0,
        "ignore_eos": True, "logprobs": 0}  # fmt: skip
PREFILL_ONLY = {**BODY, "kv_transfer_params": {"do_remote_decode": True}}


@pytest.fixture(scope="module")
def pair(server_cache_dir: Path) -> Iterator[tuple[LiveServer, LiveServer]]:
    prefill = start_server(server_cache_dir, serve_options={"role": "prefill"}, **KW)
    decode = start_server(
        server_cache_dir, serve_options={"role": "decode", "kv_timeout_s": 2}, **KW
    )
    yield prefill, decode
    prefill.stop()
    decode.stop()


def _role(srv: LiveServer) -> Any:
    return srv.server.config.app.state.disagg


def _wait(cond: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _assert_clean(*servers: LiveServer) -> None:
    for srv in servers:
        report = srv.wait_idle()
        assert report["num_blocks_held"] == 0, report
        assert report["num_block_tables"] == 0 and report["integrity"] == "ok", report


@pytest.fixture
def reads(pair: tuple[LiveServer, LiveServer]) -> Iterator[list[Callable[[str], None]]]:
    """Callables run (in order, one per read) before the prefill's next block reads."""
    role = _role(pair[0])
    real = role.read
    before: list[Callable[[str], None]] = []

    def read(transfer_id: str) -> Any:
        if before:
            before.pop(0)(transfer_id)
        return real(transfer_id)

    role.read = read
    yield before
    role.read = real


def test_reference_run(pair: tuple[LiveServer, LiveServer]) -> None:
    resp, _ = prefill_then_decode(*pair, "/v1/completions", BODY)
    assert resp.status_code == 200
    _assert_clean(*pair)


def test_decode_client_leaving_mid_transfer(
    pair: tuple[LiveServer, LiveServer], reads: list[Any]
) -> None:
    prefill, decode = pair
    in_read = threading.Event()
    reads.append(lambda tid: (in_read.set(), time.sleep(1.0)))
    aborted_before = _role(prefill).counters.aborted
    cancelled_before = _role(decode).counters.cancelled
    params = prefill.http.post("/v1/completions", json=PREFILL_ONLY).json()["kv_transfer_params"]
    assert _role(prefill).num_pinned == 1
    with httpx.Client(timeout=0.5) as impatient, pytest.raises(httpx.ReadTimeout):
        impatient.post(
            decode.base_url + "/v1/completions", json={**BODY, "kv_transfer_params": params}
        )
    assert in_read.is_set()  # it left while the KV was being read and sent
    _wait(lambda: _role(decode).counters.cancelled == cancelled_before + 1)
    _wait(lambda: _role(prefill).counters.aborted == aborted_before + 1)  # the decode side said so
    assert _role(prefill).num_pinned == 0
    _assert_clean(prefill, decode)
    resp, _ = prefill_then_decode(prefill, decode, "/v1/completions", BODY)  # still serving
    assert resp.status_code == 200


def test_sender_releasing_mid_transfer_falls_back_to_recompute(
    pair: tuple[LiveServer, LiveServer], reads: list[Any]
) -> None:
    prefill, decode = pair
    expected, _ = prefill_then_decode(prefill, decode, "/v1/completions", BODY)
    reads.append(lambda tid: _role(prefill).release(tid, "abort"))  # gone before the read
    failed_before = _role(decode).counters.failed
    computed_before = decode.engine.engine.stats().num_prompt_tokens_computed
    resp, _ = prefill_then_decode(prefill, decode, "/v1/completions", BODY)
    assert resp.status_code == 200
    assert tokens_of(resp) == tokens_of(expected)
    assert _role(decode).counters.failed == failed_before + 1
    assert "released" in (_role(decode).last_error or "") or "unknown" in (
        _role(decode).last_error or ""
    )
    # The fallback computed the prompt here (less whatever the decode's own cache held).
    assert decode.engine.engine.stats().num_prompt_tokens_computed > computed_before
    _assert_clean(prefill, decode)


def test_layout_mismatch_is_refused_and_recomputed(
    pair: tuple[LiveServer, LiveServer], server_cache_dir: Path
) -> None:
    prefill, decode = pair
    other = start_server(
        server_cache_dir, serve_options={"role": "decode"}, **{**KW, "block_size": 16}
    )
    try:
        expected, _ = prefill_then_decode(prefill, decode, "/v1/completions", BODY)
        resp, _ = prefill_then_decode(prefill, other, "/v1/completions", BODY)
        assert resp.status_code == 200 and tokens_of(resp) == tokens_of(expected)
        assert "block_size" in (_role(other).last_error or "")
        _assert_clean(prefill, other)
        assert _role(prefill).num_pinned == 0  # the refusing side aborted the transfer
    finally:
        other.stop()


@pytest.mark.parametrize(
    ("which", "body", "param"),
    [
        (
            "decode",
            {**BODY, "kv_transfer_params": {"do_remote_prefill": True}},
            "kv_transfer_params",
        ),
        (
            "decode",
            {**BODY, "kv_transfer_params": {"do_remote_decode": True}},
            "kv_transfer_params",
        ),
        (
            "prefill",
            {**BODY, "kv_transfer_params": {"do_remote_prefill": True}},
            "kv_transfer_params",
        ),
        ("prefill", {**PREFILL_ONLY, "stream": True}, "stream"),
    ],
)
def test_bad_transfer_params_are_400(
    pair: tuple[LiveServer, LiveServer], which: str, body: dict[str, Any], param: str
) -> None:
    srv = pair[0] if which == "prefill" else pair[1]
    resp = srv.http.post("/v1/completions", json=body)
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["param"] == param


@pytest.mark.slow
def test_a_killed_decode_instance_leaves_nothing_pinned(server_cache_dir: Path) -> None:
    prefill = start_server(
        server_cache_dir, serve_options={"role": "prefill", "kv_lease_s": 3.0}, **KW
    )
    role = _role(prefill)
    real = role.read
    in_read = threading.Event()

    def slow_read(transfer_id: str) -> Any:
        in_read.set()
        time.sleep(1.0)  # the decode process is killed meanwhile
        return real(transfer_id)

    role.read = slow_read
    port = free_port()
    env = {**os.environ, "ATLAS_CACHE_DIR": str(server_cache_dir)}
    cmd = [sys.executable, "-m", "reference_engine.server", "--port", str(port), "--role", "decode",
           "--torch-threads", "1", "--dtype", DTYPE, "--block-size", "8", "--prefix-caching", "radix"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(proc, base, 60, "the decode server")
        params = prefill.http.post("/v1/completions", json=PREFILL_ONLY).json()[
            "kv_transfer_params"
        ]
        body = {**BODY, "kv_transfer_params": params}

        def post() -> None:
            with contextlib.suppress(httpx.HTTPError):  # its server is killed under it
                httpx.post(base + "/v1/completions", json=body, timeout=30)

        client = threading.Thread(target=post, daemon=True)
        client.start()
        assert in_read.wait(30)
        proc.kill()  # mid-transfer: it never says done or abort
        proc.wait(10)
        assert role.num_pinned == 1
        _wait(lambda: role.num_pinned == 0, timeout_s=20)  # the lease ran out
        assert role.counters.expired == 1
        _assert_clean(prefill)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        prefill.stop()


def test_a_quantized_kv_cache_moves_as_stored(server_cache_dir: Path) -> None:
    """int8 KV rows carry their scales: the bytes move as they are, tokens equal colocated."""
    kw = {**KW, "kv_cache_dtype": "int8"}
    servers = [
        start_server(server_cache_dir, serve_options={"role": role}, **kw)
        for role in ("prefill", "decode", "colocated")
    ]
    try:
        prefill, decode, colocated = servers
        for prompt in (list(range(3, 30)), list(range(50, 61))):
            body = {**BODY, "prompt": prompt}
            resp, params = prefill_then_decode(prefill, decode, "/v1/completions", body)
            assert params is not None and params["num_tokens"] == len(prompt)
            assert tokens_of(resp) == tokens_of(colocated.http.post("/v1/completions", json=body))
        assert _role(decode).counters.received == 2 and _role(decode).counters.failed == 0
    finally:
        for srv in servers:
            srv.stop()


def test_a_dead_prefill_instance_costs_one_timeout(pair: tuple[LiveServer, LiveServer]) -> None:
    prefill, decode = pair
    params = prefill.http.post("/v1/completions", json=PREFILL_ONLY).json()["kv_transfer_params"]
    _role(prefill).release(params["transfer_id"], "abort")
    dead = {**params, "remote_port": free_port()}  # nobody listens there
    failed = _role(decode).counters.failed
    start = time.monotonic()
    resp = decode.http.post("/v1/completions", json={**BODY, "kv_transfer_params": dead})
    assert resp.status_code == 200  # computed here instead
    assert 1.5 < time.monotonic() - start < 30
    assert _role(decode).counters.failed == failed + 1
    assert "no answer" in (_role(decode).last_error or "")
    _assert_clean(prefill, decode)
