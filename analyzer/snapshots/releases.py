"""What a package index offers: the files of each release, and which one to pin.

Two sources, read without pip so nothing upstream is ever built or run (pip
prepares an sdist's metadata by running its build backend):

- find-links folders: a flat folder of wheels and sdists (tests use one);
- a PEP 691 JSON simple index (`--index-url`, `$PIP_INDEX_URL`, default PyPI),
  whose entries carry the sha256 the index vouches for.

The artifact rule, stated once and applied to every release (so two machines
lock the same file): a pure-Python wheel (`*-none-any.whl`); else a Linux
x86_64 wheel (manylinux / musllinux / linux), the newest CPython tag first,
then `abi3` before a version-specific ABI, then the newest platform tag; else
the sdist; else any other wheel. Ties fall to the file name. Wheels of one
release carry the same Python sources; only the compiled parts differ.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from analyzer.snapshots.models import SnapshotError

DEFAULT_INDEX = "https://pypi.org/simple"
_JSON_ACCEPT = "application/vnd.pypi.simple.v1+json"
_TIMEOUT_S = 60
_WHEEL_RE = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)
_SDIST_SUFFIXES = (".tar.gz", ".tgz")


def normalise_name(name: str) -> str:
    """PEP 503: `SGLang_x.y` and `sglang-x-y` are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One downloadable artifact of one release."""

    filename: str
    version: Version
    location: str  # a local path or a URL
    sha256: str | None = None  # what the index vouches for; None for plain folders

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """Where releases are looked up: pip's option names, pip's meaning."""

    find_links: tuple[Path, ...] = ()
    index_url: str | None = None  # None: $PIP_INDEX_URL, else PyPI
    no_index: bool = False

    def index(self) -> str | None:
        if self.no_index:
            return None
        return (self.index_url or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX).rstrip("/")


def _parse_filename(filename: str, package: str) -> Version | None:
    """The release version a file belongs to, or None when it is another project's."""
    match = _WHEEL_RE.match(filename)
    if match is not None:
        name, version = match["name"], match["version"]
    elif filename.endswith(_SDIST_SUFFIXES):
        stem = filename.removesuffix(".tar.gz").removesuffix(".tgz")
        name, sep, version = stem.rpartition("-")
        if not sep:
            return None
    else:
        return None
    if normalise_name(name) != normalise_name(package):
        return None
    try:
        return Version(version)
    except InvalidVersion:
        return None


def _folder_files(folder: Path, package: str) -> list[IndexFile]:
    if not folder.is_dir():
        raise SnapshotError(f"--find-links {folder}: no such folder")
    files = []
    for path in sorted(folder.iterdir()):
        version = _parse_filename(path.name, package) if path.is_file() else None
        if version is not None:
            files.append(IndexFile(path.name, version, str(path)))
    return files


def _index_files(index: str, package: str) -> list[IndexFile]:
    url = f"{index}/{normalise_name(package)}/"
    request = urllib.request.Request(url, headers={"Accept": _JSON_ACCEPT})
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
            kind = response.headers.get("Content-Type", "")
            body = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return []
        raise SnapshotError(f"package index {url} answered HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise SnapshotError(f"could not reach the package index {url}: {exc}") from None
    if "json" not in kind:
        raise SnapshotError(
            f"package index {url} does not speak the JSON simple API (PEP 691); "
            "use --find-links with a folder of artifacts instead"
        )
    try:
        entries = json.loads(body)["files"]
    except (ValueError, KeyError, TypeError):
        raise SnapshotError(f"package index {url} sent a page that is not PEP 691 JSON") from None
    files = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("yanked"):
            continue
        filename = str(entry.get("filename", ""))
        version = _parse_filename(filename, package)
        if version is None:
            continue
        sha = (entry.get("hashes") or {}).get("sha256")
        files.append(
            IndexFile(filename, version, urllib.parse.urljoin(url, str(entry.get("url", ""))), sha)
        )
    return files


def list_files(package: str, options: IndexOptions) -> list[IndexFile]:
    """Every artifact of `package`: find-links folders first, then the index."""
    files: dict[str, IndexFile] = {}
    for folder in options.find_links:
        for f in _folder_files(folder, package):
            files.setdefault(f.filename, f)
    index = options.index()
    if index is not None:
        for f in _index_files(index, package):
            files.setdefault(f.filename, f)
    return list(files.values())


def versions(files: list[IndexFile]) -> list[Version]:
    return sorted({f.version for f in files})


def latest(files: list[IndexFile]) -> Version | None:
    """The newest final release; the newest pre-release only when there is no final one."""
    found = versions(files)
    finals = [v for v in found if not v.is_prerelease and not v.is_devrelease]
    candidates = finals or found
    return candidates[-1] if candidates else None


def nearest(requested: str, found: list[Version], count: int = 3) -> list[Version]:
    """The versions just below and just above `requested` (for an error message)."""
    try:
        wanted = Version(requested)
    except InvalidVersion:
        return found[-2 * count :]
    below = [v for v in found if v < wanted][-count:]
    above = [v for v in found if v > wanted][:count]
    return below + above


def _wheel_rank(filename: str) -> tuple[int, tuple[object, ...]]:
    match = _WHEEL_RE.match(filename)
    if match is None:
        return 4, ()
    py, abi, plat = match["py"], match["abi"], match["plat"]
    if plat == "any":
        return 0, ()
    if "linux" not in plat or not plat.endswith("x86_64"):
        return 3, ()
    cp = max(
        (int(t[2:]) for t in py.split(".") if t.startswith("cp") and t[2:].isdigit()), default=0
    )
    glibc = tuple(int(n) for n in re.findall(r"\d+", plat.removesuffix("_x86_64")))
    # Sort keys ascend: negate so the newest CPython / platform comes first.
    return 1, (-cp, 0 if abi == "abi3" else 1, tuple(-n for n in glibc))


def choose_artifact(files: list[IndexFile], version: Version) -> IndexFile:
    """The one file of `version` to pin, by the rule in this module's docstring."""
    candidates = [f for f in files if f.version == version]
    if not candidates:
        raise SnapshotError(f"no artifact of version {version}")

    def key(f: IndexFile) -> tuple[object, ...]:
        if f.is_wheel:
            group, detail = _wheel_rank(f.filename)
        else:
            group, detail = 2, ()
        return (group, detail, f.filename)

    return min(candidates, key=key)


def download(file: IndexFile, dest: Path) -> Path:
    """Copy or download one artifact into `dest` (a folder); returns its path.
    The caller verifies it."""
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / file.filename
    if "://" not in file.location:
        shutil.copyfile(file.location, target)
        return target
    try:
        with (
            urllib.request.urlopen(file.location, timeout=_TIMEOUT_S) as response,
            target.open("wb") as out,
        ):
            shutil.copyfileobj(response, out, 1 << 20)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise SnapshotError(f"could not download {file.location}: {exc}") from None
    return target
