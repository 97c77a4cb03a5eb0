"""Fixtures: tiny-model engine servers behind a router (see router_fixtures.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from reference_engine.tiny_model import ensure_tiny_model


@pytest.fixture(scope="session", autouse=True)
def _single_torch_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def server_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("atlas-router-cache")
    ensure_tiny_model(cache)
    return cache
