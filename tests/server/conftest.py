"""Fixtures: one live server per test module (see server_fixtures.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from server_fixtures import LiveServer, start_server

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
    cache = tmp_path_factory.mktemp("atlas-server-cache")
    ensure_tiny_model(cache)
    return cache


@pytest.fixture(scope="module")
def live(server_cache_dir: Path) -> Iterator[LiveServer]:
    """The shared server: hash prefix caching, 256 blocks of 8 tokens, max_model_len 128."""
    srv = start_server(server_cache_dir)
    yield srv
    srv.stop()
