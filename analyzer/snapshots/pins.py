"""Git pins: a repository URL and commit recorded in the user's store.

Sources are cloned bare into `mirrors/` (so re-adding or re-materialising a pin
needs no network), the commit is resolved there (short SHAs accepted), and its
tree leaves through `git archive` into the same safe tar extraction as sdists.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tomllib
from pathlib import Path

import git

from analyzer.snapshots.gitstore import GitStore, discard
from analyzer.snapshots.locks import check_ref
from analyzer.snapshots.models import GitPin, SnapshotError, SnapshotRef

PINS_FILE = "pins.toml"
_SHA_RE = re.compile(r"[0-9a-fA-F]{4,40}")
_URL_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://")


def check_url(url: str) -> str:
    """Plain paths and ordinary transports only: no `ext::` or option-like values."""
    url = url.strip()
    if not url or url.startswith("-"):
        raise SnapshotError(f"invalid repository URL {url!r}")
    if "::" in url:
        raise SnapshotError(
            f"unsupported repository URL {url!r} (transport helpers are not allowed)"
        )
    if "://" in url and not url.startswith(_URL_SCHEMES):
        raise SnapshotError(
            f"unsupported repository URL {url!r}: use https, ssh, git, file or a path"
        )
    if "://" not in url and ":" not in url.split("/")[0]:
        path = Path(url).expanduser()
        if not path.exists():
            raise SnapshotError(f"repository {url} does not exist")
        return str(path.resolve())
    return url


def check_sha(text: str) -> str:
    if not _SHA_RE.fullmatch(text.strip()):
        raise SnapshotError(f"--commit {text!r} is not a commit SHA (4 to 40 hex digits)")
    return text.strip().lower()


def pin_ref(name: str, full_sha: str) -> SnapshotRef:
    """`vllm@5cecfc0` stays as given; a bare `mytree` becomes `mytree@<sha12>`."""
    if "@" in name:
        return check_ref(SnapshotRef.parse(name))
    return check_ref(SnapshotRef(name.strip().lower(), full_sha[:12]))


# ------------------------------------------------------------------ the pins file


def load_pins(store_root: Path) -> dict[str, GitPin]:
    path = store_root / PINS_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"pins file {path} is not valid TOML: {exc}") from None
    pins: dict[str, GitPin] = {}
    for name, table in data.get("pins", {}).items():
        try:
            ref = check_ref(SnapshotRef.parse(name))
            pins[str(ref)] = GitPin(
                ref, str(table["url"]), str(table["commit"]), str(table.get("layout_prefix", ""))
            )
        except (KeyError, TypeError) as exc:
            raise SnapshotError(f"pins file {path}: entry {name!r} is incomplete ({exc})") from None
    return pins


def save_pins(store_root: Path, pins: dict[str, GitPin]) -> None:
    """Rewrite the whole file atomically (temp file + rename)."""
    lines = ["# Git pins added with `atlas snapshot add`. Written by atlas; edit with care.", ""]
    for name in sorted(pins):
        pin = pins[name]
        lines.append(f"[pins.{_toml_str(name)}]")
        lines.append(f"url = {_toml_str(pin.url)}")
        lines.append(f"commit = {_toml_str(pin.commit)}")
        lines.append(f"layout_prefix = {_toml_str(pin.layout_prefix)}")
        lines.append("")
    store_root.mkdir(parents=True, exist_ok=True)
    tmp = store_root / f".{PINS_FILE}.{os.getpid()}.tmp"
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.replace(tmp, store_root / PINS_FILE)


def _toml_str(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes (ensure_ascii=False
    # avoids \\ud83d-style surrogate pairs, which TOML rejects).
    return json.dumps(value, ensure_ascii=False)


# ------------------------------------------------------------------ mirrors


def mirror_path(store: GitStore, url: str) -> Path:
    return store.root / "mirrors" / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".git")


def ensure_mirror(store: GitStore, url: str) -> Path:
    path = mirror_path(store, url)
    if (path / "HEAD").exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = store.staging_dir("mirror-") / "repo.git"
    try:
        git.Git().clone("--bare", "--quiet", "--", url, str(staged))
    except git.GitCommandError as exc:
        discard(staged.parent)
        raise SnapshotError(f"could not clone {url}: {_stderr(exc)}") from None
    staged.rename(path)
    discard(staged.parent)
    return path


def update_mirror(mirror: Path, url: str) -> None:
    try:
        git.Git(str(mirror)).fetch(
            "--quiet", "--", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"
        )
    except git.GitCommandError as exc:
        raise SnapshotError(f"could not fetch from {url}: {_stderr(exc)}") from None


def resolve_commit(mirror: Path, sha: str) -> str | None:
    """Full SHA for a (short) SHA, None when unknown; ambiguity is an error."""
    try:
        out = git.Git(str(mirror)).rev_parse("--verify", "--quiet", f"{sha}^{{commit}}")
    except git.GitCommandError as exc:
        if "ambiguous" in exc.stderr:
            raise SnapshotError(f"short SHA {sha} is ambiguous; give more digits") from None
        return None
    return out.strip() or None


def find_commit(store: GitStore, url: str, sha: str) -> tuple[Path, str]:
    """Resolve in the mirror, fetching only when it does not know the SHA yet."""
    mirror = ensure_mirror(store, url)
    full = resolve_commit(mirror, sha)
    if full is None:
        update_mirror(mirror, url)
        full = resolve_commit(mirror, sha)
    if full is None:
        raise SnapshotError(
            f"commit {sha} not found in {url} (searched every branch and tag after fetching)"
        )
    return mirror, full


def check_git_ref(name: str) -> str:
    """A tag or branch name as git allows it, and never option-like."""
    name = name.strip()
    if (
        not name
        or name.startswith(("-", "/"))
        or ".." in name
        or any(c in name for c in " ~^:?*[\\")
        or any(ord(c) < 32 for c in name)
        or name.endswith((".", "/", ".lock"))
    ):
        raise SnapshotError(f"--ref {name!r} is not a valid tag or branch name")
    return name


def resolve_named_ref(store: GitStore, url: str, name: str) -> tuple[Path, str]:
    """The commit a tag or branch names now: the mirror is always fetched first,
    since branches move (and tags occasionally do)."""
    mirror = ensure_mirror(store, url)
    update_mirror(mirror, url)
    for candidate in (f"refs/tags/{name}", f"refs/heads/{name}"):
        full = resolve_commit(mirror, candidate)
        if full is not None:
            return mirror, full
    raise SnapshotError(f"{url} has no tag or branch named {name!r}")


def export_commit(mirror: Path, commit: str, dest_tar: Path) -> None:
    with dest_tar.open("wb") as out:
        try:
            git.Git(str(mirror)).archive("--format=tar", commit, output_stream=out)
        except git.GitCommandError as exc:
            raise SnapshotError(f"git archive of {commit[:12]} failed: {_stderr(exc)}") from None


def _stderr(exc: git.GitCommandError) -> str:
    text = exc.stderr if isinstance(exc.stderr, str) else str(exc.stderr)
    return text.strip().removeprefix("stderr:").strip().strip("'").strip() or str(exc)


def remove_mirror_if_unused(store: GitStore, url: str, pins: dict[str, GitPin]) -> None:
    if not any(p.url == url for p in pins.values()):
        shutil.rmtree(mirror_path(store, url), ignore_errors=True)
