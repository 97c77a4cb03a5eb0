"""Fixtures shared across test areas. Keep this file tiny."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from analyzer.settings import Settings


@pytest.fixture(scope="session")
def integration_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """One cache for the whole integration tier, so the real releases are fetched
    once: `$ATLAS_INTEGRATION_CACHE` when set (kept between runs), else a temp dir."""
    # Imported here: engine tests also run on machines without the analyzer's dependencies.
    from analyzer.settings import Settings

    env = os.environ.get("ATLAS_INTEGRATION_CACHE")
    cache = Path(env).expanduser() if env else tmp_path_factory.mktemp("atlas-integration-cache")
    cache.mkdir(parents=True, exist_ok=True)
    return Settings(cache_dir=cache.resolve())
