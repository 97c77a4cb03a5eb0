"""Lock files: the releases this project pins, read from `snapshots/*.toml`.

One TOML file per project. Top-level keys are the project's defaults; each
`[releases."VERSION"]` table pins one artifact and may override them:

    project = "sglang"            # PROJECT in PROJECT@VERSION
    package = "sglang"            # distribution name on the package index
    layout_prefix = "python/"     # where the package sits in the git repository
    repository = "https://github.com/sgl-project/sglang"
    commit_source = "..."         # where the artifact records its commit, if anywhere

    [releases."0.5.20"]
    artifact = "sglang-0.5.20-cp311-cp311-manylinux_2_34_x86_64.whl"
    sha256 = "<64 hex digits>"
    upstream_commit = "<hex>"     # optional: only what the artifact records

The folder is found next to the `analyzer` package (editable installs and
source checkouts), or through `$ATLAS_LOCK_DIR`, or `--lock-dir`.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from analyzer.paths import bundled_dir
from analyzer.snapshots.models import LockEntry, SnapshotError, SnapshotRef

LOCK_DIR_ENV = "ATLAS_LOCK_DIR"
_PROJECT_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")
_VERSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+!-]*")
_SHA256_RE = re.compile(r"[0-9a-f]{64}")
_HEX_RE = re.compile(r"[0-9a-f]{7,40}")


def check_ref(ref: SnapshotRef) -> SnapshotRef:
    """Refs become git tag names and folder names: keep them to a safe alphabet."""
    text = str(ref)
    if (
        not _PROJECT_RE.fullmatch(ref.project)
        or not _VERSION_RE.fullmatch(ref.version)
        or ".." in text
        or text.endswith((".", ".lock"))
    ):
        raise SnapshotError(
            f"invalid snapshot name {text!r}: use letters, digits and . _ + ! - (e.g. vllm@0.30.0)"
        )
    return ref


def normalise_prefix(prefix: str) -> str:
    prefix = prefix.strip().strip("/")
    if not prefix:
        return ""
    if any(part in ("", ".", "..") for part in prefix.split("/")) or "\\" in prefix:
        raise SnapshotError(
            f"invalid layout prefix {prefix!r}: expected a relative folder like python/"
        )
    return prefix + "/"


def default_lock_dir() -> Path:
    """The toolkit's own lock files (`$ATLAS_LOCK_DIR` replaces them)."""
    env = os.environ.get(LOCK_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return bundled_dir("snapshots")


def project_lock_dir() -> Path | None:
    """The lock folder of the book project around the working directory, if any."""
    from analyzer.project import ProjectError, find_project

    try:
        project = find_project()
    except ProjectError as exc:
        raise SnapshotError(str(exc)) from None
    return project.lock_dir if project is not None else None


def write_lock_dir(explicit: Path | None = None) -> Path:
    """Where `atlas snapshot lock` records a release: --lock-dir, else the book
    project's lock folder, else the toolkit's own."""
    return explicit or project_lock_dir() or default_lock_dir()


def load_locks(lock_dir: Path | None = None) -> dict[str, LockEntry]:
    """Every pinned release, keyed `project@version`. Without `lock_dir`: the
    toolkit's lock files, then the book project's (which win where both pin a
    release). A missing default folder yields no locks; a missing folder named
    explicitly is an error."""
    if lock_dir is None:
        entries = _load_folder(default_lock_dir())
        book = project_lock_dir()
        if book is not None and book != default_lock_dir():
            entries |= _load_folder(book)
        return entries
    if not lock_dir.is_dir():
        raise SnapshotError(f"lock folder {lock_dir} does not exist")
    return _load_folder(lock_dir)


def _load_folder(folder: Path) -> dict[str, LockEntry]:
    if not folder.is_dir():
        return {}
    entries: dict[str, LockEntry] = {}
    for path in sorted(folder.glob("*.toml")):
        for entry in _read_lock_file(path):
            key = str(entry.ref)
            if key in entries:
                raise SnapshotError(f"{key} is pinned twice: {entries[key].lock_file} and {path}")
            entries[key] = entry
    return entries


def _read_lock_file(path: Path) -> list[LockEntry]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"lock file {path} is not valid TOML: {exc}") from None
    releases = data.get("releases", {})
    if not isinstance(releases, dict):
        raise SnapshotError(f"lock file {path}: [releases] must be a table of versions")
    return [_entry(path, data, version, table) for version, table in releases.items()]


def _entry(path: Path, defaults: dict[str, Any], version: str, table: Any) -> LockEntry:
    where = f"lock file {path}, release {version!r}"
    if not isinstance(table, dict):
        raise SnapshotError(f"{where}: expected a table")
    merged = {k: v for k, v in defaults.items() if k != "releases"} | table

    def text(key: str, default: str | None = None) -> str:
        value = merged.get(key, default)
        if not isinstance(value, str):
            raise SnapshotError(f"{where}: `{key}` must be a string")
        return value

    project = text("project")
    ref = check_ref(SnapshotRef(project.lower(), version))
    artifact = text("artifact")
    if "/" in artifact or "\\" in artifact or not artifact.endswith((".whl", ".tar.gz", ".tgz")):
        raise SnapshotError(
            f"{where}: `artifact` must be a wheel or .tar.gz file name, got {artifact!r}"
        )
    sha = text("sha256").lower()
    if not _SHA256_RE.fullmatch(sha):
        raise SnapshotError(f"{where}: `sha256` must be 64 hex digits")
    commit = merged.get("upstream_commit")
    if commit is not None and (not isinstance(commit, str) or not _HEX_RE.fullmatch(commit)):
        raise SnapshotError(f"{where}: `upstream_commit` must be 7 to 40 hex digits")
    return LockEntry(
        ref=ref,
        package=text("package", project),
        version=version,
        artifact=artifact,
        sha256=sha,
        layout_prefix=normalise_prefix(text("layout_prefix", "")),
        upstream_commit=commit,
        commit_source=text("commit_source", ""),
        repository=text("repository", ""),
        lock_file=path,
    )


# ------------------------------------------------------------------ writing


_DEFAULT_KEYS = ("package", "repository", "layout_prefix", "commit_source")


def project_defaults(project: str, *lock_dirs: Path | None) -> dict[str, str]:
    """Top-level keys of the first lock file naming `project` in these folders
    (the book's, then the toolkit's own): a new lock file starts from them."""
    for folder in lock_dirs:
        if folder is None or not folder.is_dir():
            continue
        path = lock_file_for(folder, project)
        if path is None:
            continue
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return {k: str(data[k]) for k in _DEFAULT_KEYS if isinstance(data.get(k), str)}
    return {}


def lock_file_for(folder: Path, project: str) -> Path | None:
    """The lock file whose top-level `project` is `project`, if any."""
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SnapshotError(f"lock file {path} is not valid TOML: {exc}") from None
        if str(data.get("project", "")).lower() == project:
            return path
    return None


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def record_release(
    folder: Path,
    ref: SnapshotRef,
    *,
    artifact: str,
    sha256: str,
    upstream_commit: str | None,
    defaults: dict[str, str],
) -> Path:
    """Append a `[releases."VERSION"]` table to the project's lock file in
    `folder` (created with `defaults` when missing). Comments and other tables
    are kept as written; the file is replaced atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    path = lock_file_for(folder, ref.project)
    if path is None:
        path = folder / f"{ref.project}.toml"
        if path.exists():
            raise SnapshotError(f"{path} exists but pins another project; rename it first")
        lines = [
            f"# Pinned {ref.project} releases, written by `atlas snapshot lock`.",
            "# Format: see snapshots/README.md in Serving Atlas.",
            f"project = {_toml_str(ref.project)}",
        ]
        lines += [f"{k} = {_toml_str(v)}" for k, v in defaults.items() if k in _DEFAULT_KEYS]
        text = "\n".join(lines) + "\n"
    else:
        text = path.read_text(encoding="utf-8")
        if not text.endswith("\n"):
            text += "\n"
    table = [
        "",
        f"[releases.{_toml_str(ref.version)}]",
        f"artifact = {_toml_str(artifact)}",
        f"sha256 = {_toml_str(sha256)}",
    ]
    if upstream_commit:
        table.append(f"upstream_commit = {_toml_str(upstream_commit)}")
    else:
        table.append("# the artifact records no upstream commit")
    text += "\n".join(table) + "\n"
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # e.g. the version is already a table there
        raise SnapshotError(f"could not add {ref} to {path}: {exc}") from None
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
