"""Getting the exact artifact a lock names: a local file, a wheelhouse, or pip."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from analyzer.snapshots.models import LockEntry, SnapshotError

_WHEEL_RE = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-(?P<build>\d[^-]*))?"
    r"-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$"
)
_PIP_TIMEOUT_S = 1800  # a 300 MB wheel over a slow link


@dataclass(frozen=True, slots=True)
class WheelTags:
    python: str  # e.g. "cp311" or "cp38"
    abi: str  # e.g. "cp311" or "abi3"
    platform: str  # e.g. "manylinux_2_34_x86_64"


def wheel_tags(filename: str) -> WheelTags:
    match = _WHEEL_RE.match(filename)
    if match is None:
        raise SnapshotError(f"{filename!r} is not a wheel file name")
    return WheelTags(match["python"], match["abi"], match["platform"])


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    actual = sha256_file(path)
    if actual != expected.lower():
        raise SnapshotError(
            f"sha256 mismatch for {path.name}: the lock expects {expected.lower()}, "
            f"the file has {actual}"
        )


def pip_download_command(entry: LockEntry, dest: Path, find_links: Path | None) -> list[str]:
    """Ask pip for exactly the locked artifact, whatever interpreter runs atlas:
    the platform/ABI options come from the artifact's own wheel tags."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check"]
    cmd += ["--dest", str(dest)]
    if find_links is not None:
        cmd += ["--find-links", str(find_links)]
    if entry.kind == "sdist":
        cmd += ["--no-binary=:all:"]
    else:
        tags = wheel_tags(entry.artifact)
        cmd += ["--only-binary=:all:", "--platform", tags.platform, "--abi", tags.abi]
        if tags.python.startswith("cp") and tags.python[2:].isdigit():
            cmd += ["--implementation", "cp"]
            # abi3 wheels serve every later CPython: ask as the running one so pip's
            # Requires-Python check sees a realistic version.
            if tags.abi != "abi3":
                digits = tags.python[2:]
                cmd += ["--python-version", f"{digits[0]}.{digits[1:]}"]
    cmd.append(f"{entry.package}=={entry.version}")
    return cmd


def pip_download(entry: LockEntry, dest: Path, find_links: Path | None = None) -> Path:
    """Download the locked artifact into `dest` with pip and return its path."""
    cmd = pip_download_command(entry, dest, find_links)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SnapshotError(f"pip download of {entry.ref} timed out") from None
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
        raise SnapshotError(f"pip could not download {entry.package}=={entry.version}:\n{tail}")
    target = dest / entry.artifact
    if not target.is_file():
        got = ", ".join(sorted(p.name for p in dest.iterdir())) or "nothing"
        raise SnapshotError(
            f"pip fetched {got}, but the lock for {entry.ref} names {entry.artifact}"
        )
    return target


def locate_artifact(
    entry: LockEntry, dest: Path, *, wheel: Path | None, find_links: Path | None
) -> Path:
    """The artifact as a local file: `wheel` as given, the exact name in the
    wheelhouse (no pip, works offline), else pip. Not yet verified."""
    if wheel is not None:
        if not wheel.is_file():
            raise SnapshotError(f"--wheel {wheel}: no such file")
        return wheel
    if find_links is not None:
        if not find_links.is_dir():
            raise SnapshotError(f"--find-links {find_links}: no such folder")
        local = find_links / entry.artifact
        if local.is_file():
            return local
    dest.mkdir(parents=True, exist_ok=True)
    return pip_download(entry, dest, find_links)
