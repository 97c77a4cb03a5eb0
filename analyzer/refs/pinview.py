"""What the checker needs to know about one pinned snapshot, in a compact, cacheable form.

Built once from the snapshot, its index and its flags (see `build.py`), then
loaded from a JSON file: a warm check never touches the full index.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
# Preferred kinds when a name matches several entries: a definition beats a re-export.
_KIND_RANK = {"class": 0, "function": 0, "module": 1, "attribute": 2, "import": 3}


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


@dataclass(frozen=True, slots=True)
class FlagEntry:
    flag: str
    aliases: tuple[str, ...] = ()
    dest: str | None = None
    defined_at: str | None = None


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
    symbols: list[SymbolEntry]
    flags: list[FlagEntry]
    envs: list[EnvEntry]
    upstream_commit: str | None = None
    store_commit: str | None = None
    tree: str | None = None  # package root on disk, for reading lines behind anchors
    by_last: dict[str, list[SymbolEntry]] = field(init=False, repr=False)
    by_full: dict[str, list[SymbolEntry]] = field(init=False, repr=False)
    by_path: dict[str, list[SymbolEntry]] = field(init=False, repr=False)
    children: dict[str, list[SymbolEntry]] = field(init=False, repr=False)
    dirs: frozenset[str] = field(init=False, repr=False)
    flag_map: dict[str, FlagEntry] = field(init=False, repr=False)
    env_map: dict[str, EnvEntry] = field(init=False, repr=False)
    deprecated_env: dict[str, EnvEntry] = field(init=False, repr=False)
    # Pools for closest-name suggestions, built on first use (most checks never need them).
    _defined_names: list[str] | None = field(init=False, repr=False, default=None)
    _path_pool: list[str] | None = field(init=False, repr=False, default=None)
    _basenames: dict[str, list[str]] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        by_last: dict[str, list[SymbolEntry]] = defaultdict(list)
        by_full: dict[str, list[SymbolEntry]] = defaultdict(list)
        by_path: dict[str, list[SymbolEntry]] = defaultdict(list)
        children: dict[str, list[SymbolEntry]] = defaultdict(list)
        for entry in self.symbols:
            children[entry.full.rsplit(".", 1)[0]].append(entry)
            if entry.kind in {"class", "function"}:
                by_path[entry.path].append(entry)
            by_last[entry.full.rsplit(".", 1)[-1]].append(entry)
            by_full[entry.full].append(entry)
        for entries in (*by_last.values(), *by_full.values()):
            entries.sort(key=lambda e: (_KIND_RANK.get(e.kind, 9), len(e.path), e.path, e.line))
        self.by_last, self.by_full, self.by_path = dict(by_last), dict(by_full), dict(by_path)
        self.children = dict(children)
        dirs: set[str] = set()
        for path in self.files:
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
        exact = self.by_full.get(query)
        if exact:
            return exact
        if query.split(".", 1)[0] in self.packages:
            return []  # a dotted module path must match in full
        last = query.rsplit(".", 1)[-1]
        suffix = "." + query
        return [e for e in self.by_last.get(last, ()) if e.full.endswith(suffix)]

    def symbols_under(self, full: str) -> list[SymbolEntry]:
        """Direct members of a class or module (`Foo` -> `Foo.bar`, `Foo.x`)."""
        return self.children.get(full, [])

    def defined_names(self) -> list[str]:
        """Last components of every class and function name."""
        if self._defined_names is None:
            self._defined_names = [
                name for name, entries in self.by_last.items() if any(e.kind in {"class", "function"} for e in entries)
            ]
        return self._defined_names

    def path_pool(self) -> list[str]:
        """Python files and folders: candidates for a path that moved."""
        if self._path_pool is None:
            self._path_pool = sorted({f for f in self.files if f.endswith(".py")} | self.dirs)
        return self._path_pool

    def files_named(self, basename: str) -> list[str]:
        if self._basenames is None:
            index: dict[str, list[str]] = defaultdict(list)
            for f in sorted(self.files):
                index[f.rsplit("/", 1)[-1]].append(f)
            self._basenames = dict(index)
        return self._basenames.get(basename, [])

    def has_path(self, path: str) -> bool:
        return path in self.files or path in self.dirs

    def read_lines(self, path: str) -> list[str] | None:
        if self.tree is None:
            return None
        file = Path(self.tree) / path
        try:
            return file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None

    def definitions_in(self, path: str) -> list[SymbolEntry]:
        """Classes and functions defined in one file, for checking line anchors."""
        return sorted(self.by_path.get(path, ()), key=lambda e: e.line)

    # ----- persistence -----------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        paths = sorted({e.path for e in self.symbols})
        index = {p: i for i, p in enumerate(paths)}
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
            "files": sorted(self.files),
            "symbol_paths": paths,
            # Compact rows: a warm load of ~100k symbols must stay well under a second.
            "symbols": [
                [e.full, index[e.path], e.line, e.end_line, e.kind, *([list(e.bases)] if e.bases else [])]
                for e in self.symbols
            ],
            "flags": [[f.flag, list(f.aliases), f.dest, f.defined_at] for f in self.flags],
            "envs": [[v.name, v.defined_at, list(v.deprecated_names)] for v in self.envs],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PinView:
        if data.get("version") != FORMAT_VERSION:
            raise ValueError("pin view cache has another format version")
        paths = data["symbol_paths"]
        symbols = [
            SymbolEntry(row[0], paths[row[1]], row[2], row[3], row[4], tuple(row[5]) if len(row) > 5 else ())
            for row in data["symbols"]
        ]
        return cls(
            pin=data["pin"],
            project=data["project"],
            kind=data["kind"],
            layout_prefix=data["layout_prefix"],
            packages=tuple(data["packages"]),
            files=frozenset(data["files"]),
            symbols=symbols,
            flags=[FlagEntry(f[0], tuple(f[1]), f[2], f[3]) for f in data["flags"]],
            envs=[EnvEntry(v[0], v[1], tuple(v[2])) for v in data["envs"]],
            upstream_commit=data.get("upstream_commit"),
            store_commit=data.get("store_commit"),
            tree=data.get("tree"),
        )

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_json(), separators=(",", ":")), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> PinView:
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))
