"""Records the checker derives from a pin's sources and caches as JSON beside its view (the
words the sources spell, the dependencies they import, the commands' parsers).

A record is read back only at the format it was written in (an older one is collected
again), and written through a temporary file and `os.replace`, so a killed run leaves the
old record or the new one, never half. Writing is best effort: on a read-only cache the
caller keeps the record it collected for this run."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def read_record(path: Path, fmt: int) -> dict[str, Any] | None:
    """The record at `path` if it exists, parses and was written at format `fmt`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # missing or damaged: the caller collects again
    return data if isinstance(data, dict) and data.get("format") == fmt else None


def write_record(path: Path, fmt: int, fields: dict[str, Any]) -> None:
    """Save `fields` at format `fmt`; a cache that cannot be written is left as it is."""
    payload = json.dumps({"format": fmt, **fields})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(payload)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
