"""Symbol tables behind a pin view: in memory (built, or in tests) or in a SQLite file (cached).

A warm check must not pay for loading 100k+ symbols per pin: the SQLite table
is queried per name instead (an indexed lookup is tens of microseconds), so
opening a cached pin costs milliseconds whatever the size of the snapshot.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# Preferred kinds when a name matches several entries: a definition beats a re-export.
_KIND_RANK = {"class": 0, "function": 0, "module": 1, "attribute": 2, "import": 3}
_DEFINITIONS = ("class", "function")


@dataclass(frozen=True, slots=True)
class SymbolEntry:
    full: str  # `vllm.v1.core.sched.scheduler.Scheduler.schedule`
    path: str  # package-relative file
    line: int
    end_line: int
    kind: str  # module | class | function | attribute | import
    bases: tuple[str, ...] = ()  # classes only: base expressions as written

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def last(self) -> str:
        return self.full.rsplit(".", 1)[-1]

    @property
    def parent(self) -> str:
        return self.full.rsplit(".", 1)[0] if "." in self.full else ""


def ranked(entries: Iterable[SymbolEntry]) -> list[SymbolEntry]:
    return sorted(entries, key=lambda e: (_KIND_RANK.get(e.kind, 9), len(e.path), e.path, e.line))


class SymbolTable(Protocol):
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[SymbolEntry]: ...
    def named(self, full: str) -> list[SymbolEntry]: ...
    def ending_with(self, last: str) -> list[SymbolEntry]: ...
    def matching(self, query: str) -> list[SymbolEntry]: ...
    def members(self, parent: str) -> list[SymbolEntry]: ...
    def definitions_in(self, path: str) -> list[SymbolEntry]: ...
    def defined_names(self) -> list[str]: ...


class MemorySymbols:
    """Dict-indexed list: for views being built and for tests."""

    def __init__(self, entries: Iterable[SymbolEntry]) -> None:
        self._entries = list(entries)
        self._full: dict[str, list[SymbolEntry]] = defaultdict(list)
        self._last: dict[str, list[SymbolEntry]] = defaultdict(list)
        self._parent: dict[str, list[SymbolEntry]] = defaultdict(list)
        self._path: dict[str, list[SymbolEntry]] = defaultdict(list)
        for e in self._entries:
            self._full[e.full].append(e)
            self._last[e.last].append(e)
            self._parent[e.parent].append(e)
            if e.kind in _DEFINITIONS:
                self._path[e.path].append(e)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[SymbolEntry]:
        return iter(self._entries)

    def named(self, full: str) -> list[SymbolEntry]:
        return ranked(self._full.get(full, ()))

    def ending_with(self, last: str) -> list[SymbolEntry]:
        return ranked(self._last.get(last, ()))

    def matching(self, query: str) -> list[SymbolEntry]:
        """Entries named `query` in full or ending in `.query`."""
        suffix = "." + query
        return ranked(e for e in self._last.get(query.rsplit(".", 1)[-1], ()) if e.full == query or e.full.endswith(suffix))

    def members(self, parent: str) -> list[SymbolEntry]:
        return list(self._parent.get(parent, ()))

    def definitions_in(self, path: str) -> list[SymbolEntry]:
        return sorted(self._path.get(path, ()), key=lambda e: e.line)

    def defined_names(self) -> list[str]:
        return sorted({e.last for e in self._entries if e.kind in _DEFINITIONS})


_SCHEMA = """
CREATE TABLE symbols (full TEXT, last TEXT, parent TEXT, path TEXT, line INT, end_line INT, kind TEXT, bases TEXT);
CREATE INDEX symbols_full ON symbols(full);
CREATE INDEX symbols_last ON symbols(last);
CREATE INDEX symbols_parent ON symbols(parent);
CREATE INDEX symbols_path ON symbols(path);
CREATE TABLE names (last TEXT);
"""
_COLUMNS = "full, path, line, end_line, kind, bases"


def _row(row: tuple[str, str, int, int, str, str]) -> SymbolEntry:
    full, path, line, end_line, kind, bases = row
    return SymbolEntry(full, path, line, end_line, kind, tuple(bases.split("\x1f")) if bases else ())


class SqliteSymbols:
    """Read-only table in a pin view's cache file; queried per name."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._count: int | None = None
        self._names: list[str] | None = None
        # Answers by (query kind, argument): a book cites the same names chapter after chapter,
        # and the table is read-only. Callers get a copy (some sort what they get).
        self._answers: dict[tuple[str, str], list[SymbolEntry]] = {}

    def _query(self, where: str, arg: str) -> list[SymbolEntry]:
        key = (where, arg)
        found = self._answers.get(key)
        if found is None:
            found = [_row(r) for r in self._conn.execute(f"SELECT {_COLUMNS} FROM symbols WHERE {where} = ?", (arg,))]
            self._answers[key] = found
        return list(found)

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._conn.execute("SELECT count(*) FROM symbols").fetchone()[0]
        return self._count

    def __iter__(self) -> Iterator[SymbolEntry]:
        return (_row(r) for r in self._conn.execute(f"SELECT {_COLUMNS} FROM symbols ORDER BY rowid"))

    def named(self, full: str) -> list[SymbolEntry]:
        return ranked(self._query("full", full))

    def ending_with(self, last: str) -> list[SymbolEntry]:
        return ranked(self._query("last", last))

    def matching(self, query: str) -> list[SymbolEntry]:
        """Entries named `query` in full or ending in `.query`, filtered inside SQLite:
        a common last name (`forward`) has thousands of rows not worth building."""
        key = ("matching", query)
        found = self._answers.get(key)
        if found is None:
            suffix = "." + query
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM symbols WHERE last = ? AND (full = ? OR substr(full, -?) = ?)",
                (query.rsplit(".", 1)[-1], query, len(suffix), suffix),
            )
            found = ranked(_row(r) for r in rows)
            self._answers[key] = found
        return list(found)

    def members(self, parent: str) -> list[SymbolEntry]:
        return self._query("parent", parent)

    def definitions_in(self, path: str) -> list[SymbolEntry]:
        return sorted((e for e in self._query("path", path) if e.kind in _DEFINITIONS), key=lambda e: e.line)

    def defined_names(self) -> list[str]:
        if self._names is None:
            self._names = [r[0] for r in self._conn.execute("SELECT last FROM names")]
        return self._names


def write_symbols(conn: sqlite3.Connection, table: SymbolTable) -> None:
    conn.executescript(_SCHEMA)
    conn.executemany(
        "INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ((e.full, e.last, e.parent, e.path, e.line, e.end_line, e.kind, "\x1f".join(e.bases)) for e in table),
    )
    # Precomputed: a DISTINCT over every row would cost a sort on each suggestion run.
    conn.executemany("INSERT INTO names VALUES (?)", ((n,) for n in table.defined_names()))


def open_readonly(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)
