"""Plain data describing pinned snapshots. Later stages depend only on this module."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Folders a wheel never ships; a reference into them can't be checked against a release.
REPO_ONLY_TOP_DIRS = ("csrc", "docs", "tests", "benchmarks", "examples", "cmake", "docker", ".github")


class SnapshotError(Exception):
    """Any failure to pin, fetch or open a snapshot; the message is shown to the user."""


@dataclass(frozen=True, slots=True)
class SnapshotRef:
    """`vllm@0.30.0` (a release) or `mytree@<name>` (a git pin added by name)."""

    project: str
    version: str

    @classmethod
    def parse(cls, text: str) -> SnapshotRef:
        project, sep, version = text.partition("@")
        if not sep or not project or not version:
            raise SnapshotError(f"expected PROJECT@VERSION (e.g. vllm@0.30.0), got {text!r}")
        return cls(project.strip().lower(), version.strip())

    def __str__(self) -> str:
        return f"{self.project}@{self.version}"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A fetched, immutable source tree.

    `tree` is the extracted tree as stored. Release (wheel) snapshots hold the
    package layout (`vllm/...`, `sglang/...`); git snapshots hold the repository
    layout. `layout_prefix` is where the package sits inside the upstream
    repository ("" for vLLM, "python/" for SGLang), so repository paths and
    package paths convert both ways.
    """

    ref: SnapshotRef
    kind: str  # "release" | "git"
    tree: Path
    layout_prefix: str
    # Full SHA where known. Releases record what the artifact records: vLLM's
    # `__commit_id__` is a 9-digit abbreviation; SGLang wheels record none.
    upstream_commit: str | None
    store_commit: str  # commit of this tree in the local git store
    packages: tuple[str, ...] = field(default=())  # top-level import packages, e.g. ("vllm",)
    source: str = ""  # artifact file name (release) or repository URL (git pin)

    @property
    def name(self) -> str:
        return str(self.ref)

    @property
    def package_root(self) -> Path:
        """Directory under which `vllm/...` (or `sglang/...`) lives."""
        if self.kind == "git" and self.layout_prefix:
            return self.tree / self.layout_prefix.rstrip("/")
        return self.tree

    def repo_to_package_path(self, repo_path: str) -> str | None:
        """`python/sglang/x.py` -> `sglang/x.py`; None when the path lies outside the package."""
        repo_path = repo_path.lstrip("/")
        if not self.layout_prefix:
            return repo_path
        if repo_path.startswith(self.layout_prefix):
            return repo_path[len(self.layout_prefix):]
        return None

    def resolve_repo_path(self, repo_path: str) -> Path | None:
        """The file a repository path (`python/sglang/srt/x.py`) names in this tree,
        or None when it lies outside the package or the snapshot lacks it."""
        package_path = self.repo_to_package_path(repo_path)
        if package_path is None:
            return None
        path = self.package_root / package_path
        return path if path.exists() else None

    def package_to_repo_path(self, package_path: str) -> str:
        return self.layout_prefix + package_path.lstrip("/")

    def python_files(self) -> Iterator[str]:
        """Package-relative POSIX paths of every `.py` file (files, not packages:
        SGLang has many folders without `__init__.py`)."""
        root = self.package_root
        for path in sorted(root.rglob("*.py")):
            if path.is_file() and not path.is_symlink():
                yield path.relative_to(root).as_posix()


@dataclass(frozen=True, slots=True)
class LockEntry:
    """One pinned release from a lock file in `snapshots/` (see snapshots/README.md)."""

    ref: SnapshotRef
    package: str  # distribution name on the package index, e.g. "vllm"
    version: str
    artifact: str  # exact file name: a wheel (`.whl`) or an sdist (`.tar.gz`)
    sha256: str
    layout_prefix: str  # "" for vLLM, "python/" for SGLang
    upstream_commit: str | None = None  # as the artifact records it (may be abbreviated)
    commit_source: str = ""  # where in the artifact the commit was read, for the reader
    repository: str = ""  # upstream repository URL, informational
    lock_file: Path | None = None

    @property
    def kind(self) -> str:
        return "sdist" if self.artifact.endswith((".tar.gz", ".tgz")) else "wheel"


@dataclass(frozen=True, slots=True)
class GitPin:
    """A git checkout pinned by `atlas snapshot add`; recorded in the user's store."""

    ref: SnapshotRef
    url: str
    commit: str  # full SHA
    layout_prefix: str = ""
