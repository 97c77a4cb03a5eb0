"""What `map verify` checks a mapping against: one `PinView` per pinned tree.

A view answers three questions about one tree (a release, or our reference
engine): does this dotted name resolve, which flags does its server accept,
which env vars does it read. Building a view from a real release indexes it
(cached) and reads its flags; tests build views over tiny fixture trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.index import SnapshotIndex, SymbolMatch
from analyzer.mappings.models import REFERENCE
from analyzer.paths import reference_root
from analyzer.settings import Settings

SUGGESTIONS = 3


@dataclass(slots=True)
class PinView:
    project: str  # "reference", "vllm", "sglang"
    version: str | None  # None for the reference engine (one tree, no pins)
    index: SnapshotIndex
    flags: frozenset[str] = frozenset()  # every option string the server parser accepts
    envs: frozenset[str] = frozenset()
    warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.project}@{self.version}" if self.version else self.project

    def resolve(self, name: str) -> SymbolMatch | None:
        """The definition `name` names exactly (no suffix guessing), else None."""
        for match in self.index.find_symbol(name):
            if match.dotted == name:
                return match
        return self._module_attribute(name)

    def _module_attribute(self, name: str) -> SymbolMatch | None:
        # Type aliases and constants (`BlockHash = NewType(...)`) are symbols too.
        module, _, attr = name.rpartition(".")
        facts = self.index.by_module(module) if module else None
        if facts is None:
            return None
        for assignment in facts.module_attributes:
            if assignment.target == attr:
                return SymbolMatch(facts.path, facts.module, attr, "attribute", assignment.line, assignment.line)
        return None

    def suggest(self, name: str) -> list[str]:
        """Where a stale name may have gone: definitions with the same last one or
        two components (a move keeps `Class.method`; a rename of the module keeps the class)."""
        parts = name.split(".")
        out: list[str] = []
        for tail_len in (2, 1):
            if len(parts) < tail_len + 1:
                continue
            tail = ".".join(parts[-tail_len:])
            for match in self.index.find_symbol(tail):
                if match.dotted != name and match.dotted not in out and match.kind != "module":
                    out.append(match.dotted)
            if out:
                break
        if not out:
            out = self._close_siblings(name)
        return sorted(out)[:SUGGESTIONS]

    def _close_siblings(self, name: str) -> list[str]:
        """Spelling neighbours in the same module or class (`Sched` -> `Scheduler`)."""
        from rapidfuzz import fuzz, process

        parent, _, last = name.rpartition(".")
        owner = self.resolve(parent) if parent else None
        if owner is None or owner.kind not in ("module", "class"):
            return []
        prefix = "" if owner.kind == "module" else owner.qualname + "."
        siblings = {
            f"{owner.module}.{qualname}": qualname[len(prefix):]
            for qualname, _, _, _ in self.index.summaries[owner.path].symbols
            if qualname.startswith(prefix) and "." not in qualname[len(prefix):]
        }
        found = process.extract(last, siblings, scorer=fuzz.WRatio, limit=SUGGESTIONS, score_cutoff=75)
        return [dotted for _, _, dotted in found]


def reference_view(settings: Settings, *, jobs: int | None = None, progress: bool = False) -> PinView:
    """Our engine, indexed from its files so names read `reference_engine.scheduler.Scheduler`."""
    from analyzer.index import index_tree
    from analyzer.index.runner import list_python_files

    root = reference_root()
    paths = [f"{root.name}/{p}" for p in list_python_files(root)]
    index = index_tree(root.parent, paths, db=settings.index_db, jobs=jobs, progress=progress, name=root.name)
    return PinView(project=REFERENCE, version=None, index=index)


def release_view(
    settings: Settings, ref: str, *, jobs: int | None = None, progress: bool = False, fetch: bool = True
) -> PinView:
    """A pinned release: its index (cached after the first run), flags and env vars.

    Raises SnapshotError (not pinned / not fetched) or FlagsError."""
    from analyzer.flags import env_report, flag_report
    from analyzer.index import index_snapshot
    from analyzer.snapshots import ensure_snapshot, open_snapshot

    snapshot = ensure_snapshot(settings, ref) if fetch else open_snapshot(settings, ref)
    project = snapshot.ref.project
    index = index_snapshot(settings, snapshot, jobs=jobs, progress=progress)
    flags = flag_report(snapshot.package_root, project)
    envs = env_report(snapshot.package_root, project)
    names = {name for f in flags.flags for name in (f.flag, *f.aliases, *f.negative_aliases)}
    env_names = {name for e in envs.envs for name in (e.name, *e.deprecated_names)}
    return PinView(
        project=project,
        version=snapshot.ref.version,
        index=index,
        flags=frozenset(names),
        envs=frozenset(env_names),
        warnings=[*flags.warnings, *envs.warnings],
    )
