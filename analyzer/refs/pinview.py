"""What the checker needs to know about one pinned snapshot, in a compact, cacheable form.

Built once from the snapshot, its index and its flags (see `loader.py`), then
kept as one SQLite file per pin: opening it reads the small parts (files,
flags, env vars) and leaves the symbols on disk, queried by name.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.refs.fuzzy import NamePool
from analyzer.refs.symbols import (
    MemorySymbols,
    SqliteSymbols,
    SymbolEntry,
    SymbolTable,
    open_readonly,
    write_symbols,
)
from analyzer.refs.words import SourceWords, load_or_collect

FORMAT_VERSION = 17

__all__ = ["EnvEntry", "FlagEntry", "PinView", "SymbolEntry"]


# As `analyzer.index.native.NATIVE_SUFFIXES` (not imported: `analyzer.index` pulls in libcst).
_NATIVE_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl", ".rs")


def is_native(path: str) -> bool:
    """A C, C++, CUDA or Rust source (its symbols come from tree-sitter, not libcst)."""
    return path.lower().endswith(_NATIVE_SUFFIXES)


_LOWER_OR_DIGIT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _last_word(name: str) -> str:
    """The last CamelCase word, lower-cased (`DecodeCudaGraphRunner` -> `runner`); the name itself
    when it ends in none. Scanned from the end: a regex anchored at `$` tries every start, and
    this runs once per defined name."""
    i = len(name)
    while i and name[i - 1] in _LOWER_OR_DIGIT:
        i -= 1
    if i and name[i - 1] in _UPPER:
        i -= 1
    return (name[i:] or name).lower()


@dataclass(frozen=True, slots=True)
class FlagEntry:
    flag: str
    aliases: tuple[str, ...] = ()
    dest: str | None = None
    defined_at: str | None = None
    choices: tuple[str, ...] = ()  # the values argparse accepts, where the parser lists them
    # Where argparse takes any string: the values the config checks it against, as a type
    # checker's `Literal` lists them (`Flag.typed_values`; plugins may register more).
    typed_values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EnvEntry:
    name: str
    defined_at: str | None = None
    deprecated_names: tuple[str, ...] = ()


@dataclass(slots=True)
class PinView:
    pin: str  # `vllm@0.30.0`
    project: str
    kind: str  # "release" (wheel: package layout only) | "git" (whole repository)
    layout_prefix: str  # "" for vLLM, "python/" for SGLang
    packages: tuple[str, ...]
    files: frozenset[str]  # package-relative paths of every file in the snapshot
    symbols: SymbolTable | Iterable[SymbolEntry]
    flags: list[FlagEntry]
    envs: list[EnvEntry]
    upstream_commit: str | None = None
    store_commit: str | None = None
    tree: str | None = None  # package root on disk, for reading lines behind anchors
    # Every `"VLLM_..."` / `"SGLANG_..."` string literal in the sources: env vars read through
    # helpers (`get_bool_env_var("SGLANG_X")`) that the env var index does not list.
    env_literals: frozenset[str] = frozenset()
    # Ops the sources register with torch under the project's namespace (`op_name="x"` of
    # `direct_register_custom_op`, `custom_op("vllm::x")`), name -> where: `build.custom_ops`.
    custom_ops: dict[str, str] = field(default_factory=dict)
    # HTTP routes the sources declare, route -> the capitalised names its handlers' parameters
    # are annotated with, outside imports left out (`routes.module_routes`): `fields.route_classes`.
    routes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Names in capitals the sources write as strings (`"FP8_PB_WO"`): values, `build.source_literals`.
    values: frozenset[str] = frozenset()
    # A git pin whose package sits below the repository root (SGLang's `python/`): the files
    # outside the package (`sgl-kernel/csrc/...`, `sgl-router/src/...`), repository-relative,
    # and the repository's root on disk. Their native symbols carry these paths too.
    outside_files: frozenset[str] = frozenset()
    repo_tree: str | None = None
    # Classes a call builds at import time whose field list the index cannot follow in full
    # (`analyzer.index.made_classes`): class -> why; a member missing from them is not checkable.
    open_classes: dict[str, str] = field(default_factory=dict)
    # Where the identifiers of the sources are cached (`words.py`), set by the loader; None for
    # a view made in memory, whose undefined names then stay unjudged.
    words_path: str | None = None
    table: SymbolTable = field(init=False, repr=False)
    dirs: frozenset[str] = field(init=False, repr=False)
    flag_map: dict[str, FlagEntry] = field(init=False, repr=False)
    env_map: dict[str, EnvEntry] = field(init=False, repr=False)
    deprecated_env: dict[str, EnvEntry] = field(init=False, repr=False)
    # Pools for closest-name suggestions, built on first use (most checks never need them).
    _name_pool: NamePool | None = field(init=False, repr=False, default=None)
    _path_pool: NamePool | None = field(init=False, repr=False, default=None)
    _basenames: dict[str, list[str]] | None = field(init=False, repr=False, default=None)
    # Tables derived from the view on first use, keyed by what they hold: flags of non-server
    # commands (`vllm bench serve`), request fields, the pin's dependencies, ...
    memo: dict[str, Any] = field(init=False, repr=False, default_factory=dict)
    _by_last_word: dict[str, list[str]] | None = field(init=False, repr=False, default=None)
    _words: SourceWords | None = field(init=False, repr=False, default=None)
    _words_read: bool = field(init=False, repr=False, default=False)

    def __post_init__(self) -> None:
        symbols = self.symbols
        self.table = symbols if isinstance(symbols, MemorySymbols | SqliteSymbols) else MemorySymbols(symbols)
        self.symbols = self.table
        dirs: set[str] = set()
        for path in (*self.files, *self.outside_files):
            parts = path.split("/")
            for i in range(1, len(parts)):
                dirs.add("/".join(parts[:i]))
        self.dirs = frozenset(dirs)
        self.flag_map = {}
        for flag in self.flags:
            for spelling in (flag.flag, *flag.aliases):
                self.flag_map.setdefault(spelling, flag)
        self.env_map = {env.name: env for env in self.envs}
        self.deprecated_env = {old: env for env in self.envs for old in env.deprecated_names}

    # ----- lookups ---------------------------------------------------------
    def find_symbol(self, query: str) -> list[SymbolEntry]:
        """Entries named `query`: a full dotted name, or a suffix of one
        (`Scheduler.schedule`, `Scheduler`), best first."""
        if query.split(".", 1)[0] in self.packages:
            # A dotted module path must match in full; only a C++ namespace of the package's
            # name (`vllm::paged_attention_v1_kernel`) matches inside a native file.
            return self.table.named(query) or [e for e in self.table.matching(query) if is_native(e.path)]
        return self.table.matching(query)

    def symbols_under(self, full: str) -> list[SymbolEntry]:
        """Direct members of a class or module (`Foo` -> `Foo.bar`, `Foo.x`)."""
        return self.table.members(full)

    def definitions_in(self, path: str) -> list[SymbolEntry]:
        """Classes and functions defined in one file, by line."""
        return self.table.definitions_in(path)

    def defined_names(self) -> NamePool:
        """Last components of every class and function name."""
        if self._name_pool is None:
            self._name_pool = NamePool(self.table.defined_names())
        return self._name_pool

    def path_pool(self) -> NamePool:
        """Python files and folders: candidates for a path that moved."""
        if self._path_pool is None:
            self._path_pool = NamePool(sorted({f for f in self.files if f.endswith(".py")} | self.dirs))
        return self._path_pool

    def names_ending_like(self, name: str) -> list[str]:
        """Defined names whose last CamelCase word is `name`'s (`DecodeCudaGraphRunner` for
        `CudaGraphRunner`), from an index built on first use."""
        if self._by_last_word is None:
            index: dict[str, list[str]] = defaultdict(list)
            for n in self.defined_names()._all():
                index[_last_word(n)].append(n)
            self._by_last_word = dict(index)
        return self._by_last_word.get(_last_word(name), [])

    def source_words(self) -> SourceWords | None:
        """Every identifier the sources spell (collected on first use, then cached beside the
        view); None when the view has no tree on disk to read."""
        if not self._words_read:
            self._words_read = True
            roots = [Path(r) for r in (self.repo_tree or self.tree,) if r]
            if self.words_path and roots:
                self._words = load_or_collect(Path(self.words_path), roots)
        return self._words

    def mentions(self, name: str) -> bool | None:
        """Whether the sources spell `name` anywhere (a definition, a use, a string); None
        when unknown."""
        words = self.source_words()
        return None if words is None else name in words.words

    def quotes(self, value: str) -> bool | None:
        """Whether a string literal of the sources is `value`, whole (a registry's key, a
        `Literal`'s member); None when unknown."""
        words = self.source_words()
        return None if words is None else value in words.quoted

    def reads_member(self, obj: str, member: str) -> bool | None:
        """Whether the sources write `obj.member` (an object of two words or more, `self.` or not);
        None when unknown."""
        words = self.source_words()
        return None if words is None else f"{obj}.{member}" in words.members

    def files_named(self, basename: str) -> list[str]:
        if self._basenames is None:
            index: dict[str, list[str]] = defaultdict(list)
            for f in sorted(self.files | self.outside_files):
                index[f.rsplit("/", 1)[-1]].append(f)
            self._basenames = dict(index)
        return self._basenames.get(basename, [])

    def has_path(self, path: str) -> bool:
        return path in self.files or path in self.dirs or path in self.outside_files

    def read_lines(self, path: str) -> list[str] | None:
        root = self.repo_tree if path in self.outside_files else self.tree
        if root is None:
            return None
        try:
            return (Path(root) / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None

    # ----- persistence -----------------------------------------------------
    def _header(self) -> dict[str, object]:
        return {
            "version": FORMAT_VERSION,
            "pin": self.pin,
            "project": self.project,
            "kind": self.kind,
            "layout_prefix": self.layout_prefix,
            "packages": list(self.packages),
            "upstream_commit": self.upstream_commit,
            "store_commit": self.store_commit,
            "tree": self.tree,
            "flags": [[f.flag, list(f.aliases), f.dest, f.defined_at, list(f.choices), list(f.typed_values)] for f in self.flags],
            "envs": [[v.name, v.defined_at, list(v.deprecated_names)] for v in self.envs],
            "env_literals": sorted(self.env_literals),
            "custom_ops": dict(sorted(self.custom_ops.items())),
            "routes": {k: list(v) for k, v in sorted(self.routes.items())},
            "values": sorted(self.values),
            "repo_tree": self.repo_tree,
            "open_classes": self.open_classes,
        }

    def save(self, path: Path) -> None:
        """Write to a temporary file beside `path`, then rename: readers see all or nothing."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            conn = sqlite3.connect(tmp)
            try:
                conn.execute("CREATE TABLE meta (header TEXT)")
                conn.execute("INSERT INTO meta VALUES (?)", (json.dumps(self._header()),))
                conn.execute("CREATE TABLE files (path TEXT)")
                conn.executemany("INSERT INTO files VALUES (?)", ((f,) for f in sorted(self.files)))
                conn.execute("CREATE TABLE outside (path TEXT)")
                conn.executemany("INSERT INTO outside VALUES (?)", ((f,) for f in sorted(self.outside_files)))
                write_symbols(conn, self.table)
                conn.commit()
            finally:
                conn.close()
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> PinView:
        """Open a saved view; ValueError when it is missing, damaged or of another format."""
        if not path.is_file():
            raise ValueError(f"{path}: no such pin view")
        conn = open_readonly(path)
        try:
            header = json.loads(conn.execute("SELECT header FROM meta").fetchone()[0])
            if header.get("version") != FORMAT_VERSION:
                raise ValueError("pin view cache has another format version")
            files = frozenset(r[0] for r in conn.execute("SELECT path FROM files"))
            outside = frozenset(r[0] for r in conn.execute("SELECT path FROM outside"))
        except (sqlite3.DatabaseError, TypeError, KeyError, json.JSONDecodeError) as exc:
            conn.close()
            raise ValueError(f"{path}: unreadable pin view ({exc})") from None
        return cls(
            pin=header["pin"],
            project=header["project"],
            kind=header["kind"],
            layout_prefix=header["layout_prefix"],
            packages=tuple(header["packages"]),
            files=files,
            symbols=SqliteSymbols(conn),
            flags=[FlagEntry(f[0], tuple(f[1]), f[2], f[3], tuple(f[4]), tuple(f[5])) for f in header["flags"]],
            envs=[EnvEntry(v[0], v[1], tuple(v[2])) for v in header["envs"]],
            env_literals=frozenset(header.get("env_literals", ())),
            custom_ops=dict(header.get("custom_ops", {})),
            routes={k: tuple(v) for k, v in header.get("routes", {}).items()},
            values=frozenset(header.get("values", ())),
            upstream_commit=header.get("upstream_commit"),
            store_commit=header.get("store_commit"),
            tree=header.get("tree"),
            outside_files=outside,
            repo_tree=header.get("repo_tree"),
            open_classes=dict(header.get("open_classes", {})),
        )
