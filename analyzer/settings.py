"""Run-wide settings, passed explicitly (no module-level mutable state)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# One cache folder for both sides; the engine owns the rule (it must not import analyzer/).
from reference_engine.cache_dir import CACHE_ENV, default_cache_dir

__all__ = ["CACHE_ENV", "Settings", "default_cache_dir"]


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
