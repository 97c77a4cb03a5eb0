"""Where the engine keeps what it generates (the tiny model, trained checkpoints): the
atlas cache folder, `$ATLAS_CACHE_DIR` or the platform's per-user cache.

The engine stands alone (it never imports `analyzer/`); the analyzer's settings take
their default from here so both sides agree on one folder.
"""

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
class CacheSettings:
    """What the engine's commands need of the CLI's settings. Owned by the command that builds it."""

    cache_dir: Path
