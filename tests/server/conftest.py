"""Fixtures: one live server per test module (see server_fixtures.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server_fixtures import LiveServer, start_server
from server_session import _single_torch_thread, server_cache_dir


@pytest.fixture(scope="module")
def live(server_cache_dir: Path) -> Iterator[LiveServer]:
    """The shared server: hash prefix caching, 256 blocks of 8 tokens, max_model_len 128."""
    srv = start_server(server_cache_dir)
    yield srv
    srv.stop()


__all__ = ["_single_torch_thread", "live", "server_cache_dir"]
