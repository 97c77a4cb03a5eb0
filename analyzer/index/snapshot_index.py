"""`SnapshotIndex`: the facts of every file of one tree, with symbol lookup."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from analyzer.index.codec import Summary, decode_facts
from analyzer.index.extract import module_name
from analyzer.index.models import Class, FileError, Function, ModuleFacts


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    path: str  # package-relative
    module: str  # dotted module name
    qualname: str  # module-relative; "" for the module itself
    kind: str  # "module" | "class" | "function" | "method"
    line: int
    end_line: int

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.qualname}" if self.qualname else self.module


@dataclass(slots=True)
class IndexStats:
    files: int = 0
    cache_hits: int = 0
    extracted: int = 0
    seconds: float = 0.0
    manifest_hit: bool = False


class LazyModules(Mapping[str, ModuleFacts]):
    """path -> ModuleFacts, decoding a file's cached blob on first access.

    Decoding every fact of both upstream trees costs seconds and a few hundred
    MB; most commands touch a handful of modules, so nothing is decoded up front.
    """

    def __init__(
        self,
        blobs: dict[str, tuple[str, bytes | None]],
        reader: Callable[[str], bytes] | None = None,
    ) -> None:
        self._blobs = blobs  # path -> (sha256, blob); blob None: ask `reader` for it
        self._reader = reader
        self._decoded: dict[str, ModuleFacts] = {}

    def __getitem__(self, path: str) -> ModuleFacts:
        facts = self._decoded.get(path)
        if facts is None:
            sha, blob = self._blobs[path]
            if blob is None:
                if self._reader is None:
                    raise KeyError(path)
                blob = self._reader(sha)
            facts = decode_facts(blob, path, module_name(path), sha)
            self._decoded[path] = facts
        return facts

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)

    def __contains__(self, path: object) -> bool:
        return path in self._blobs


@dataclass(slots=True)
class SnapshotIndex:
    name: str
    modules: Mapping[str, ModuleFacts]  # keyed by package-relative path; a dict works too
    errors: list[FileError] = field(default_factory=list)
    layout_prefix: str = ""  # "python/" for SGLang: repository paths -> package paths
    stats: IndexStats = field(default_factory=IndexStats)
    # path -> Summary; built from `modules` when not supplied (cached runs supply it).
    summaries: dict[str, Summary] = field(default_factory=dict)
    _by_module: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.summaries:
            self.summaries = {path: Summary.of(facts) for path, facts in self.modules.items()}
        self._by_module = {module_name(path): path for path in self.modules}

    # -- lookup -------------------------------------------------------------
    def by_module(self, dotted: str) -> ModuleFacts | None:
        path = self._by_module.get(dotted)
        return self.modules[path] if path is not None else None

    def by_path(self, path: str) -> ModuleFacts | None:
        package_path = self._package_path(path)
        return self.modules.get(package_path) if package_path is not None else None

    def fact(self, match: SymbolMatch) -> ModuleFacts | Class | Function | None:
        """The Class / Function / ModuleFacts a match names."""
        facts = self.modules.get(match.path)
        if facts is None or match.kind == "module":
            return facts
        pool: list[Class] | list[Function] = facts.classes if match.kind == "class" else facts.functions
        for item in pool:
            if item.qualname == match.qualname and item.line == match.line:
                return item
        return None

    def find_symbol(self, query: str) -> list[SymbolMatch]:
        """Every symbol `query` names: a dotted qualified name, a repository or package
        path, `path:Qual.name`, or a bare suffix such as `Scheduler.schedule`."""
        query = query.strip()
        if not query:
            return []
        if ":" in query:
            path_part, _, symbol = query.partition(":")
            path = self._package_path(path_part)
            if path is None:
                return []
            return [m for m in self._symbols(path) if m.qualname == symbol.strip()]
        if query.endswith(".py") or "/" in query:
            path = self._package_path(query)
            return [self._module_match(path)] if path is not None else []
        exact = self._dotted_exact(query)
        if exact:
            return exact
        # Bare suffix at a dot boundary: `Scheduler.schedule`, `Scheduler`.
        tail = "." + query
        last = query.rsplit(".", 1)[-1]
        out = []
        for path, summary in self.summaries.items():
            module = module_name(path)
            if module == query or module.endswith(tail):
                out.append(self._module_match(path))
            for qualname, kind, line, end_line in summary.symbols:
                # cheap test first: the last name must match before building dotted names
                if qualname.endswith(last) and f"{module}.{qualname}".endswith(tail):
                    out.append(SymbolMatch(path, module, qualname, kind, line, end_line))
        return out

    def _dotted_exact(self, query: str) -> list[SymbolMatch]:
        parts = query.split(".")
        for i in range(len(parts), 0, -1):
            path = self._by_module.get(".".join(parts[:i]))
            if path is None:
                continue
            rest = ".".join(parts[i:])
            if not rest:
                return [self._module_match(path)]
            found = [m for m in self._symbols(path) if m.qualname == rest]
            if found:
                return found
        return []

    def _package_path(self, path: str) -> str | None:
        path = path.strip().lstrip("/")
        if path.startswith("./"):
            path = path[2:]
        candidates = [path]
        if self.layout_prefix and path.startswith(self.layout_prefix):
            candidates.insert(0, path[len(self.layout_prefix) :])
        for candidate in candidates:
            if candidate in self.modules:
                return candidate
            if not candidate.endswith(".py") and f"{candidate.rstrip('/')}/__init__.py" in self.modules:
                return f"{candidate.rstrip('/')}/__init__.py"
        return None

    def _module_match(self, path: str) -> SymbolMatch:
        return SymbolMatch(path, module_name(path), "", "module", 1, max(self.summaries[path].lines, 1))

    def _symbols(self, path: str) -> Iterator[SymbolMatch]:
        module = module_name(path)
        for qualname, kind, line, end_line in self.summaries[path].symbols:
            yield SymbolMatch(path, module, qualname, kind, line, end_line)

    # -- totals -------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        totals = dict.fromkeys(("classes", "functions", "methods", "call_sites", "accesses", "lines"), 0)
        for summary in self.summaries.values():
            totals["call_sites"] += summary.calls
            totals["accesses"] += summary.accesses
            totals["lines"] += summary.lines
            for _, kind, _, _ in summary.symbols:
                totals[{"class": "classes", "function": "functions", "method": "methods"}[kind]] += 1
        return {
            "files": len(self.modules) + len(self.errors),
            "modules": len(self.modules),
            **totals,
            "errors": len(self.errors),
            "cache_hits": self.stats.cache_hits,
        }
