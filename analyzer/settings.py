"""Run-wide settings, passed explicitly (no module-level mutable state)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

CACHE_ENV = "ATLAS_CACHE_DIR"


def default_cache_dir() -> Path:
    """`$ATLAS_CACHE_DIR` if set, else the platform's per-user cache folder."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path(user_cache_dir("serving-atlas"))


@dataclass(frozen=True, slots=True)
class Settings:
    cache_dir: Path
    json_output: bool = False

    @property
    def snapshot_store(self) -> Path:
        return self.cache_dir / "snapshots"

    @property
    def index_db(self) -> Path:
        return self.cache_dir / "index.sqlite"

    @property
    def model_cache(self) -> Path:
        return self.cache_dir / "models"
