"""Session fixtures every live-server suite shares (tests/server, tests/disagg, tests/router):
each suite's conftest imports them, so pytest registers them there; and the wait for a
server process a test starts itself."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import torch

from reference_engine.tiny_model import ensure_tiny_model


@pytest.fixture(scope="session", autouse=True)
def _single_torch_thread() -> Iterator[None]:
    """Tiny models gain nothing from intra-op threads; on 2 shared cores they only spin."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def server_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder holding the built-in tiny model, built once per session."""
    cache = tmp_path_factory.mktemp("atlas-server-cache")
    ensure_tiny_model(cache)
    return cache


def wait_until_healthy(proc: subprocess.Popen[str], base: str, timeout: float, what: str) -> None:
    """Poll `base`/health until it answers 200; fail with the process's stderr if it exits
    first, or with "`what` did not come up" after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            if httpx.get(base + "/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"{what} did not come up"
        time.sleep(0.1)
