"""One pinned tree, the object every analyzer stage takes.

A `PinnedTree` is a source tree at one fixed state: a pinned release
(`vllm@0.30.0`, fetched into the snapshot store), our reference engine, or a
plain package directory (a test fixture). It knows where its files are and
gives, each built on first use and cached (on disk where building costs
minutes): the index facts, the call and state graphs, the server flags and env
vars, and permalinks into the upstream repository.

`open_tree` turns what a user types (`vllm@0.30.0`, `reference`, a folder)
into one; `release_tree`, `reference_tree` and `directory_tree` are the three
ways in. Stages wrap `TreeError` in their own error type when they need to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.paths import reference_root
from analyzer.settings import Settings

if TYPE_CHECKING:
    from analyzer.flags.entry_flags import EntryFlags
    from analyzer.flags.models import EnvReport, EnvVar, Flag, FlagReport
    from analyzer.graphs.callgraph import Unresolved
    from analyzer.graphs.store import Graphs, Target
    from analyzer.index import SnapshotIndex, SymbolMatch
    from analyzer.snapshots.models import Snapshot

REFERENCE = "reference"  # the project name of our engine (mappings' side name)
UPSTREAMS = ("vllm", "sglang")  # projects whose server flags and env vars are read
REPOSITORIES = {
    "vllm": "https://github.com/vllm-project/vllm",
    "sglang": "https://github.com/sgl-project/sglang",
}
SUGGESTIONS = 3
_HEADINGS = {REFERENCE: "Reference engine", "vllm": "vLLM", "sglang": "SGLang"}


class TreeError(Exception):
    """A tree that cannot be opened, indexed or read; the message is shown to the user."""


@dataclass(frozen=True, slots=True)
class Permalinks:
    """Links into the upstream repository at one pinned revision."""

    repository: str
    revision: str  # a commit (possibly abbreviated) or, failing that, the release tag
    layout_prefix: str  # "python/" for SGLang: package paths -> repository paths
    is_commit: bool

    def repo_path(self, package_path: str) -> str:
        return self.layout_prefix + package_path.lstrip("/")

    def url(self, package_path: str, line: int = 0, end_line: int = 0) -> str:
        anchor = ""
        if line:
            anchor = f"#L{line}" if not end_line or end_line == line else f"#L{line}-L{end_line}"
        return f"{self.repository}/blob/{self.revision}/{self.repo_path(package_path)}{anchor}"

    def site_url(self, site: str) -> str | None:
        """`pkg/mod.py:120` -> a link to that line."""
        path, _, line = site.rpartition(":")
        return self.url(path, int(line)) if path and line.isdigit() else None

    @property
    def tree_url(self) -> str:
        return f"{self.repository}/tree/{self.revision}"


def heading(project: str, version: str | None) -> str:
    base = _HEADINGS.get(project, project)
    return f"{base} {version}" if version else base


def release_permalinks(project: str, version: str, commit: str | None, layout_prefix: str) -> Permalinks:
    """At the commit the artifact records; SGLang wheels record none, so the tag `v<version>`."""
    repo = REPOSITORIES.get(project, "")
    if commit:
        return Permalinks(repo, commit, layout_prefix, True)
    return Permalinks(repo, f"v{version}", layout_prefix, False)


@dataclass(slots=True)
class PinnedTree:
    """One source tree at a fixed state. Owned by the stage that opened it; the
    index, graphs and knobs are filled on first use and never change after."""

    settings: Settings
    label: str  # "vllm@0.30.0", "reference", or the directory as given
    project: str  # "vllm" | "sglang" | "reference" | a fixture's own name
    version: str | None  # None for the reference engine and plain directories
    root: Path  # the index's package-relative paths are relative to this
    target: Target | None  # the graphs cache's key for this tree; None: no graphs (an index alone)
    snapshot: Snapshot | None = None  # the stored release behind it, if any
    permalinks: Permalinks | None = None
    progress: bool = False  # show progress bars while indexing / building graphs
    read_knobs: bool = True  # read server flags and env vars (upstream projects only)
    jobs: int | None = None  # indexing worker processes (None: the CPU count)
    warnings: list[str] = field(default_factory=list)  # from reading flags and env vars
    notes: list[str] = field(default_factory=list)  # for a reader: where links point, what was not read
    _index: SnapshotIndex | None = field(default=None, repr=False)
    _graphs: Graphs | None = field(default=None, repr=False)
    _flags: dict[str, Flag] | None = field(default=None, repr=False)
    _envs: dict[str, EnvVar] | None = field(default=None, repr=False)
    _flag_list: list[Flag] = field(default_factory=list, repr=False)
    _env_list: list[EnvVar] = field(default_factory=list, repr=False)

    # ----- what is built on first use --------------------------------------
    def prepare(self) -> PinnedTree:
        """Index the tree and read its knobs now, so a broken pin fails before any
        work on it (graphs stay lazy: a cold build takes minutes)."""
        _ = self.index, self.flags
        return self

    @property
    def index(self) -> SnapshotIndex:
        """Every module's facts (the index stage's cache makes a second open cheap)."""
        if self._index is None:
            self._index = self._build_index()
        return self._index

    def _build_index(self) -> SnapshotIndex:
        from analyzer.index import index_snapshot, index_tree
        from analyzer.index.store import StoreError

        try:
            if self.snapshot is not None:
                return index_snapshot(self.settings, self.snapshot, jobs=self.jobs, progress=self.progress)
            if self.target is None:
                raise TreeError(f"{self.label}: no index and no files to build one from")
            # The directory's own name (`atlas index .` reads as the folder, not "").
            name = Path(self.target.label).name
            return index_tree(self.root, list(self.target.paths or ()), db=self.settings.index_db,
                              jobs=self.jobs, progress=self.progress, name=name)
        except StoreError as exc:
            raise TreeError(str(exc)) from None

    @property
    def graphs_loaded(self) -> bool:
        return self._graphs is not None

    @property
    def graphs(self) -> Graphs:
        """The call and state graphs, from the graphs cache (built on first use: minutes for a release)."""
        if self._graphs is None:
            self._graphs = self._load_graphs(rebuild=False)
        return self._graphs

    def rebuild_graphs(self) -> Graphs:
        """The graphs built anew, ignoring (and replacing) the cached ones."""
        self._graphs = self._load_graphs(rebuild=True)
        return self._graphs

    def _load_graphs(self, *, rebuild: bool) -> Graphs:
        from analyzer.graphs.store import GraphError, load_graphs

        try:
            return load_graphs(self.settings, self._graph_target(), rebuild=rebuild, progress=self.progress)
        except GraphError as exc:
            raise TreeError(str(exc)) from None

    def _graph_target(self) -> Target:
        if self.target is None:
            raise TreeError(f"{self.label}: an index alone, no files to build graphs from")
        return self.target

    def unresolved_calls(self) -> list[Unresolved]:
        """The call sites the last graph build resolved to nothing, each with its reason."""
        from analyzer.graphs.store import load_unresolved

        return load_unresolved(self.settings, self._graph_target())

    @property
    def flags(self) -> dict[str, Flag]:
        """The server's flags by every spelling it accepts (aliases, `--no-` forms, hidden ones); {} for
        trees that are not vLLM or SGLang. TreeError when they cannot be read."""
        if self._flags is None:
            self._read_knobs()
        assert self._flags is not None
        return self._flags

    @property
    def envs(self) -> dict[str, EnvVar]:
        """The env vars the tree reads, by name and by each deprecated name."""
        if self._envs is None:
            self._read_knobs()
        assert self._envs is not None
        return self._envs

    @property
    def flag_list(self) -> list[Flag]:
        """The server's flags once each, in the order the parser registers them."""
        _ = self.flags
        return self._flag_list

    @property
    def env_list(self) -> list[EnvVar]:
        """The env vars once each, in the order their registry lists them."""
        _ = self.envs
        return self._env_list

    def flag_report(self, project: str | None = None) -> FlagReport:
        """The server's flags as the flags stage reports them (positionals, warnings).
        `project` (vllm or sglang) overrides the tree's own; a folder holding one of
        vllm/ or sglang/ is recognised. TreeError when they cannot be read."""
        from analyzer.flags import FlagsError, flag_report

        try:
            return flag_report(self.root, project or self._knob_project())
        except FlagsError as exc:
            raise TreeError(str(exc)) from None

    def command_report(self, command: str) -> EntryFlags:
        """The parser of another command of the tree (`sglang generate`), read statically."""
        from analyzer.flags import FlagsError, command_report

        try:
            return command_report(self.root, command)
        except FlagsError as exc:
            raise TreeError(str(exc)) from None

    def env_report(self, project: str | None = None) -> EnvReport:
        """The env vars the tree reads, as the flags stage reports them (retired ones, warnings)."""
        from analyzer.flags import FlagsError, env_report

        try:
            return env_report(self.root, project or self._knob_project())
        except FlagsError as exc:
            raise TreeError(str(exc)) from None

    def _knob_project(self) -> str | None:
        return self.project if self.project in UPSTREAMS else None

    def _read_knobs(self) -> None:
        self._flags, self._envs = {}, {}
        if not self.read_knobs or self.project not in UPSTREAMS:
            return
        flags, envs = self.flag_report(), self.env_report()
        self._flag_list, self._env_list = list(flags.flags), list(envs.envs)
        for flag in flags.flags:
            for name in (flag.flag, *flag.aliases, *flag.negative_aliases, *flag.hidden_aliases):
                self._flags.setdefault(name, flag)
        for env in envs.envs:
            for name in (env.name, *env.deprecated_names):
                self._envs.setdefault(name, env)
        self.warnings.extend([*flags.warnings, *envs.warnings])

    # ----- describing ---------------------------------------------------------
    @property
    def heading(self) -> str:
        """`vLLM 0.30.0`, `Reference engine`: the tree's name on a page."""
        return heading(self.project, self.version)

    @property
    def source_line(self) -> str:
        """Where the code comes from: the commit or tag links point at, or the local tree."""
        if self.permalinks is None:
            return f"local tree {self.root}"
        kind = "commit" if self.permalinks.is_commit else "tag (the artifact records no commit)"
        return f"{kind} {self.permalinks.revision}"

    # ----- reading ----------------------------------------------------------
    def read_lines(self, package_path: str) -> list[str] | None:
        try:
            return (self.root / package_path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None

    def resolve(self, name: str) -> SymbolMatch | None:
        """The definition `name` names exactly (no suffix guessing), else None."""
        for match in self.index.find_symbol(name):
            if match.dotted == name:
                return match
        return self._module_attribute(name)

    def _module_attribute(self, name: str) -> SymbolMatch | None:
        # Type aliases and constants (`BlockHash = NewType(...)`) are symbols too.
        from analyzer.index import SymbolMatch

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


# ----- the ways in ---------------------------------------------------------
def release_tree(settings: Settings, ref: str, *, fetch: bool = True, progress: bool = False) -> PinnedTree:
    """A pinned release (`vllm@0.30.0`), fetched first if `fetch` and not stored yet."""
    from analyzer.graphs.store import snapshot_target
    from analyzer.snapshots import SnapshotError, ensure_snapshot, open_snapshot

    try:
        snap = ensure_snapshot(settings, ref) if fetch else open_snapshot(settings, ref)
    except SnapshotError as exc:
        raise TreeError(str(exc)) from None
    project, version = snap.ref.project, snap.ref.version
    links = release_permalinks(project, version, snap.upstream_commit, snap.layout_prefix)
    return PinnedTree(settings, snap.name, project, version, snap.package_root, snapshot_target(snap),
                      snapshot=snap, permalinks=links, progress=progress)


def directory_tree(
    settings: Settings,
    package_dir: Path,
    project: str,
    *,
    version: str | None = None,
    permalinks: Permalinks | None = None,
    read_knobs: bool = True,
    progress: bool = False,
    as_package: bool = True,
) -> PinnedTree:
    """A package directory, indexed from its parent so names read `pkg.mod.Class`
    (a folder without `__init__.py`, or any with `as_package=False`: names relative to it)."""
    from analyzer.graphs.store import GraphError, directory_target

    try:
        target = directory_target(package_dir, as_package=as_package)
    except GraphError as exc:
        raise TreeError(str(exc)) from None
    return PinnedTree(settings, str(package_dir), project, version, target.root, target,
                      permalinks=permalinks, progress=progress, read_knobs=read_knobs)


def tree_from_index(label: str, project: str, version: str | None, index: SnapshotIndex) -> PinnedTree:
    """A tree known only by its index (tests, or facts read from elsewhere): no files
    behind it, so no graphs and no knobs."""
    tree = PinnedTree(Settings(cache_dir=Path()), label, project, version, Path(), None, read_knobs=False)
    tree._index = index
    return tree


def reference_tree(settings: Settings, *, progress: bool = False) -> PinnedTree:
    """Our engine, read as files (never imported), so names read `reference_engine.scheduler.Scheduler`."""
    tree = directory_tree(settings, reference_root(), REFERENCE, progress=progress)
    tree.label = REFERENCE
    return tree


def open_tree(settings: Settings, text: str, *, fetch: bool = True, progress: bool = False) -> PinnedTree:
    """What a user names on the command line: `reference`, a directory (a package, or a
    folder of code), or a release like `vllm@0.30.0` (fetched first unless `fetch` is off).
    A directory wins over a release ref, so a path with an `@` in it still opens."""
    if text == REFERENCE:
        return reference_tree(settings, progress=progress)
    path = Path(text).expanduser()
    if path.is_dir():
        return directory_tree(settings, path, path.resolve().name, progress=progress)
    if "@" in text:
        return release_tree(settings, text, fetch=fetch, progress=progress)
    raise TreeError(f"{text!r}: no such directory, and not a release like vllm@0.30.0 or `reference`")
