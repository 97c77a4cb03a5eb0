"""One column's raw material: a source tree, its index, its graphs, its flags and env vars.

`snapshot_side` opens a pinned release (fetching it if needed); `tree_side`
opens a package directory (the reference engine, or a test fixture). Both give
a `SideSource`, so the page builder never knows where the code came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from analyzer.flags.models import EnvVar, Flag
from analyzer.graphs.store import Graphs, directory_target, load_graphs
from analyzer.index import SnapshotIndex, index_snapshot, index_tree
from analyzer.settings import Settings

REPOSITORIES = {
    "vllm": "https://github.com/vllm-project/vllm",
    "sglang": "https://github.com/sgl-project/sglang",
}


class ReportError(Exception):
    """A report that cannot be built; the message is shown to the user."""


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


def release_permalinks(project: str, version: str, commit: str | None, layout_prefix: str) -> Permalinks:
    """At the commit the artifact records; SGLang wheels record none, so the tag `v<version>`."""
    repo = REPOSITORIES.get(project, "")
    if commit:
        return Permalinks(repo, commit, layout_prefix, True)
    return Permalinks(repo, f"v{version}", layout_prefix, False)


@dataclass(slots=True)
class SideSource:
    project: str  # reference | vllm | sglang
    heading: str  # "Reference engine", "vLLM 0.33.0"
    version: str | None  # None for the reference engine (mappings' `releases` do not apply)
    root: Path  # the index's paths are relative to this
    index: SnapshotIndex
    graphs: Graphs | None
    permalinks: Permalinks | None = None
    flags: dict[str, Flag] = field(default_factory=dict)  # by every option string
    envs: dict[str, EnvVar] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def source_line(self) -> str:
        if self.permalinks is None:
            return f"local tree {self.root}"
        kind = "commit" if self.permalinks.is_commit else "tag (the artifact records no commit)"
        return f"{kind} {self.permalinks.revision}"

    def read_lines(self, package_path: str) -> list[str] | None:
        try:
            return (self.root / package_path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None


_HEADINGS = {"reference": "Reference engine", "vllm": "vLLM", "sglang": "SGLang"}


def heading(project: str, version: str | None) -> str:
    base = _HEADINGS.get(project, project)
    return f"{base} {version}" if version else base


def tree_side(
    settings: Settings,
    project: str,
    package_dir: Path,
    *,
    version: str | None = None,
    permalinks: Permalinks | None = None,
    knobs: bool = True,
) -> SideSource:
    """A package directory: indexed from its parent so names read `pkg.mod.Class`."""
    from analyzer.graphs.store import GraphError

    try:
        target = directory_target(package_dir)
    except GraphError as exc:
        raise ReportError(str(exc)) from None
    index = index_tree(target.root, list(target.paths or ()), db=settings.index_db)
    graphs = load_graphs(settings, target)
    side = SideSource(project, heading(project, version), version, target.root, index, graphs, permalinks)
    if knobs and project in REPOSITORIES:
        _read_knobs(side)
    return side


def snapshot_side(settings: Settings, ref: str, *, progress: bool = False) -> SideSource:
    """A pinned release (`vllm@0.33.0`), fetched and indexed on first use."""
    from analyzer.graphs.store import GraphError, open_target
    from analyzer.snapshots import SnapshotError, ensure_snapshot

    try:
        snap = ensure_snapshot(settings, ref)
        index = index_snapshot(settings, snap, progress=progress)
        graphs = load_graphs(settings, open_target(settings, ref), progress=progress)
    except (SnapshotError, GraphError) as exc:
        raise ReportError(f"{ref}: {exc}") from None
    project, version = snap.ref.project, snap.ref.version
    links = release_permalinks(project, version, snap.upstream_commit, snap.layout_prefix)
    side = SideSource(project, heading(project, version), version, snap.package_root, index, graphs, links)
    if not links.is_commit:
        side.notes.append(f"{snap.name}: the wheel records no commit; links point at tag {links.revision}")
    _read_knobs(side)
    return side


def _read_knobs(side: SideSource) -> None:
    from analyzer.flags import FlagsError, env_report, flag_report

    try:
        flags = flag_report(side.root, side.project)
        envs = env_report(side.root, side.project)
    except FlagsError as exc:
        side.notes.append(f"{side.heading}: flags and env vars not read: {exc}")
        return
    for flag in flags.flags:
        for name in (flag.flag, *flag.aliases):
            side.flags.setdefault(name, flag)
    for env in envs.envs:
        side.envs.setdefault(env.name, env)
