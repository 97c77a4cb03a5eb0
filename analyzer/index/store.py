"""The persistent fact cache: sqlite in WAL mode, keyed by content hash + extractor version.

Every batch of worker results is its own transaction, so a run killed midway
leaves a consistent database holding everything finished before the kill.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    sha256 TEXT NOT NULL,
    version TEXT NOT NULL,
    blob BLOB,            -- codec.encode_facts, NULL when the file failed
    summary BLOB,         -- codec.Summary.encode
    error TEXT,           -- the reason a file could not be indexed
    PRIMARY KEY (sha256, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS manifests (
    key TEXT PRIMARY KEY,  -- snapshot name + store commit: the tree can never change
    paths BLOB NOT NULL    -- zlib(JSON {path: sha256})
);
"""


class StoreError(Exception):
    """The cache database cannot be opened or read; the message is shown to the user."""


@dataclass(slots=True)
class CachedFile:
    sha256: str
    blob: bytes | None
    summary: bytes | None
    error: str | None


class FactStore:
    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open index database {path}: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> FactStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lookup(self, shas: Iterable[str], version: str, *, blobs: bool = False) -> dict[str, CachedFile]:
        """Summaries and errors of the known hashes; blobs stay in the database
        (see `BlobReader`): a warm run then reads kilobytes, not the whole cache.
        `blobs`: read them too, for a caller that decodes every file (the graphs):
        a row's summary is stored after its blob, so reading the summary already
        walks the blob's pages, and a second query per file would walk them again."""
        columns = "sha256, summary, error, blob" if blobs else "sha256, summary, error"
        found: dict[str, CachedFile] = {}
        unique = list(dict.fromkeys(shas))
        for chunk in _chunks(unique, 500):  # sqlite caps bound parameters per statement
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT {columns} FROM facts WHERE version = ? AND sha256 IN ({marks})",
                [version, *chunk],
            )
            for sha, summary, error, *blob in rows:
                found[sha] = CachedFile(sha, bytes(blob[0]) if blob and blob[0] is not None else None, summary, error)
        return found

    def save(self, version: str, files: Iterable[CachedFile]) -> None:
        with self._db:  # one transaction per batch
            self._db.executemany(
                "INSERT OR REPLACE INTO facts (sha256, version, blob, summary, error) VALUES (?, ?, ?, ?, ?)",
                [(f.sha256, version, f.blob, f.summary, f.error) for f in files],
            )

    def manifest(self, key: str) -> dict[str, str] | None:
        row = self._db.execute("SELECT paths FROM manifests WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(zlib.decompress(row[0]))
        except (zlib.error, ValueError):
            return None  # a damaged manifest only costs a re-hash
        return data if isinstance(data, dict) else None

    def save_manifest(self, key: str, paths: dict[str, str]) -> None:
        blob = zlib.compress(json.dumps(paths, separators=(",", ":")).encode(), 1)
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO manifests (key, paths) VALUES (?, ?)", (key, blob))


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class BlobReader:
    """Reads cached fact blobs on demand, long after the indexing run ended."""

    def __init__(self, path: Path, version: str) -> None:
        self._path = path
        self._version = version
        self._db: sqlite3.Connection | None = None

    def __call__(self, sha: str) -> bytes:
        if self._db is None:
            self._db = sqlite3.connect(self._path, timeout=60, check_same_thread=False)
        row = self._db.execute(
            "SELECT blob FROM facts WHERE version = ? AND sha256 = ?", (self._version, sha)
        ).fetchone()
        if row is None or row[0] is None:
            raise StoreError(f"facts for {sha[:12]} vanished from {self._path}; re-run the index")
        return bytes(row[0])
