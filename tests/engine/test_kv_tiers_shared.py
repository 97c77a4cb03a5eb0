"""The shared KV tier: a real Redis server (Debian's redis-server, started here on
127.0.0.1 without persistence) that two engine instances reach. A prefix one computed is
a hit on the other; a dead server costs hits, never requests; bad entries are dropped."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from test_kv_tiers import BLOCK, generate, make

from reference_engine.config import ConfigError
from reference_engine.kv_tiers.hierarchy import chain_keys
from reference_engine.sampling_params import SamplingParams

PROMPT = list(range(20, 20 + 7 * BLOCK + 2))
PARAMS = [SamplingParams(max_tokens=5, temperature=0.8, seed=7, ignore_eos=True)]


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None, "redis-server is missing: `make sysdeps` installs it"
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        cmd = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert self.proc.poll() is None and time.monotonic() < deadline, (
                    "redis did not start"
                )
                time.sleep(0.05)
        self.client = client

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def server() -> Iterator[RedisServer]:
    srv = RedisServer()
    yield srv
    srv.stop()


def _solo(model_dir: Path) -> list[list[int]]:
    return generate(make(model_dir, prefix_caching="none"), [PROMPT], PARAMS)


def test_a_prefix_computed_by_one_instance_is_a_hit_on_another(
    model_dir: Path, server: RedisServer
) -> None:
    expected = _solo(model_dir)
    shared: dict[str, Any] = {"kv_shared_url": server.url, "kv_tier_policy": "write_through"}
    first = make(model_dir, **shared)
    assert generate(first, [PROMPT], PARAMS) == expected
    other = make(model_dir, **shared)  # another instance: its own device cache is empty
    before = other.stats().num_prompt_tokens_computed
    assert generate(other, [PROMPT], PARAMS) == expected
    full = (len(PROMPT) - 1) // BLOCK
    assert other.kv_tiers is not None and other.kv_tiers.num_promoted == full
    assert other.stats().num_prompt_tokens_computed - before == len(PROMPT) - full * BLOCK


def test_unreachable_at_startup_is_a_clear_error(model_dir: Path) -> None:
    with pytest.raises(ConfigError, match="cannot reach the shared KV tier"):
        make(model_dir, kv_shared_url=f"redis://127.0.0.1:{_free_port()}/0")


def test_a_dead_server_costs_hits_not_requests(model_dir: Path, server: RedisServer) -> None:
    expected = _solo(model_dir)
    engine = make(model_dir, kv_shared_url=server.url, kv_tier_policy="write_through")
    server.stop()
    assert generate(engine, [PROMPT], PARAMS) == expected
    again = make(model_dir, prefix_caching="hash")
    assert generate(again, [PROMPT], PARAMS) == expected
    assert engine.kv_tiers is not None and engine.kv_tiers.shared is not None
    assert engine.kv_tiers.shared.errors > 0 and engine.kv_tiers.num_promoted == 0


def test_a_bad_shared_entry_is_dropped_and_recomputed(model_dir: Path, server: RedisServer) -> None:
    expected = _solo(model_dir)
    shared: dict[str, Any] = {"kv_shared_url": server.url, "kv_tier_policy": "write_through"}
    generate(make(model_dir, **shared), [PROMPT], PARAMS)
    engine = make(model_dir, **shared)
    tiers = engine.kv_tiers
    assert tiers is not None and tiers.shared is not None
    name = tiers.shared._name(chain_keys(PROMPT, BLOCK, 2)[1])
    value = server.client.get(name)
    assert isinstance(value, bytes)
    server.client.set(name, value[:-5])  # truncated
    before = engine.stats().num_prompt_tokens_computed
    assert generate(engine, [PROMPT], PARAMS) == expected
    assert tiers.shared.stats.corrupt == 1 and tiers.num_promoted == 1
    assert engine.stats().num_prompt_tokens_computed - before == len(PROMPT) - BLOCK
