"""Safe extraction of wheels (zip), sdists and `git archive` output (tar).

Every entry name is validated before anything is written, so a hostile archive
is refused whole and leaves nothing behind. Only source and text files are
written (see `filters.py`); binaries are never decompressed. Nothing here
imports or runs archive content.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from analyzer.snapshots.filters import is_text_path, looks_binary
from analyzer.snapshots.models import SnapshotError

MiB = 1024 * 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    """Caps against zip bombs and absurd archives. Defaults leave room for the
    real releases (largest text entry ~10 MiB, ~70 MiB of text per wheel)."""

    max_entries: int = 200_000
    max_entry_bytes: int = 128 * MiB  # one extracted file
    max_total_bytes: int = 2048 * MiB  # all extracted files together
    max_ratio: float = 1000.0  # uncompressed / compressed, for entries above `ratio_floor`
    ratio_floor: int = 1 * MiB
    max_tar_stream_bytes: int = 8192 * MiB  # declared sizes of every tar member, kept or not


@dataclass(slots=True)
class ExtractReport:
    written: int = 0
    skipped_binary: int = 0  # by name or by content
    skipped_links: int = 0  # only when links are skipped (git archives), never for releases
    bytes_written: int = 0


@dataclass(frozen=True, slots=True)
class _Entry:
    path: PurePosixPath  # validated, relative, top directory already stripped
    is_dir: bool
    size: int
    compressed: int | None  # None where the format does not say (tar)
    key: object  # ZipInfo / TarInfo


def _refuse(archive: Path, name: str, why: str) -> SnapshotError:
    return SnapshotError(f"refused archive {archive.name}: entry {name!r} {why}")


def safe_relative_path(archive: Path, name: str) -> PurePosixPath:
    """Validate an entry name: relative, no `..`, no drive letter, no `.git`."""
    if not name or name in ("/", "./"):
        raise _refuse(archive, name, "has an empty name")
    if any(ord(c) < 32 or c == "\x7f" for c in name):
        raise _refuse(archive, name, "has control characters in its name")
    if "\\" in name:
        raise _refuse(archive, name, "uses backslashes (a Windows path trick)")
    if name.startswith("/"):
        raise _refuse(archive, name, "is an absolute path")
    if len(name) >= 2 and name[1] == ":" and name[0].isalpha():
        raise _refuse(archive, name, "starts with a drive letter")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts:
        raise _refuse(archive, name, "has an empty name")
    for part in parts:
        if part == "..":
            raise _refuse(archive, name, "escapes the archive with '..'")
        if part.casefold() == ".git":
            raise _refuse(archive, name, "writes into a '.git' folder")
        if len(part.encode("utf-8", "surrogateescape")) > 255:
            raise _refuse(archive, name, "has a path component longer than 255 bytes")
    return PurePosixPath(*parts)


class _Layout:
    """Tracks names seen so duplicates and file/folder clashes are refused."""

    def __init__(self, archive: Path) -> None:
        self.archive = archive
        self.files: set[PurePosixPath] = set()
        self.dirs: set[PurePosixPath] = set()

    def add(self, path: PurePosixPath, is_dir: bool, raw: str) -> None:
        if path in self.files or (not is_dir and path in self.dirs):
            raise _refuse(self.archive, raw, "is a duplicate name")
        for parent in path.parents:
            if parent in self.files:
                raise _refuse(
                    self.archive, raw, f"lies under {parent.as_posix()!r}, which is a file"
                )
            self.dirs.add(parent)
        (self.dirs if is_dir else self.files).add(path)


def _strip_top(archive: Path, entries: list[_Entry]) -> list[_Entry]:
    """sdists and some archives wrap everything in one `name-version/` folder."""
    tops = {e.path.parts[0] for e in entries}
    if len(tops) != 1:
        raise SnapshotError(
            f"refused archive {archive.name}: expected one top-level folder, found {len(tops)}"
        )
    out = []
    for e in entries:
        if len(e.path.parts) == 1:
            if not e.is_dir:
                raise _refuse(archive, e.path.as_posix(), "sits beside the top-level folder")
            continue
        out.append(_Entry(PurePosixPath(*e.path.parts[1:]), e.is_dir, e.size, e.compressed, e.key))
    return out


# ---------------------------------------------------------------- zip (wheels)


def _zip_entries(archive: Path, zf: zipfile.ZipFile, limits: ExtractLimits) -> list[_Entry]:
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        raise SnapshotError(
            f"refused archive {archive.name}: {len(infos)} entries (limit {limits.max_entries})"
        )
    layout = _Layout(archive)
    entries = []
    for info in infos:
        path = safe_relative_path(archive, info.filename)
        mode = info.external_attr >> 16
        is_dir = info.is_dir()
        if info.create_system == 3 and mode:  # unix attributes are present
            if stat.S_ISLNK(mode):
                raise _refuse(archive, info.filename, "is a symbolic link")
            if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise _refuse(archive, info.filename, "is a special file (device, fifo or socket)")
            is_dir = is_dir or stat.S_ISDIR(mode)
        if info.flag_bits & 0x1:
            raise _refuse(archive, info.filename, "is encrypted")
        layout.add(path, is_dir, info.filename)
        entries.append(_Entry(path, is_dir, info.file_size, info.compress_size, info))
    return entries


def extract_zip(
    archive: Path, dest: Path, limits: ExtractLimits = ExtractLimits(), *, strip_top: bool = False
) -> ExtractReport:
    try:
        with zipfile.ZipFile(archive) as zf:
            entries = _zip_entries(archive, zf, limits)
            if strip_top:
                entries = _strip_top(archive, entries)
            return _write_all(archive, dest, entries, limits, lambda e: zf.open(e.key))  # type: ignore[arg-type]
    except (zipfile.BadZipFile, zlib.error) as exc:
        raise SnapshotError(f"{archive.name} is not a valid zip archive: {exc}") from None


# ---------------------------------------------------------------- tar (sdists, git archive)


def _tar_entries(
    archive: Path, members: Iterator[tarfile.TarInfo], limits: ExtractLimits, links: str
) -> tuple[list[_Entry], int]:
    layout = _Layout(archive)
    entries: list[_Entry] = []
    streamed = 0
    compressed = max(archive.stat().st_size, 1)
    skipped_links = 0
    for count, member in enumerate(members, start=1):
        if count > limits.max_entries:
            raise SnapshotError(
                f"refused archive {archive.name}: more than {limits.max_entries} entries"
            )
        # Checked as each header is read, before tarfile decompresses past the data.
        streamed += max(member.size, 0)
        if streamed > limits.max_tar_stream_bytes:
            raise _refuse(archive, member.name, "pushes the archive past its size limit")
        if streamed > limits.ratio_floor and streamed > limits.max_ratio * compressed:
            raise _refuse(archive, member.name, "has an absurd compression ratio (tar bomb?)")
        path = safe_relative_path(archive, member.name)
        if member.issym() or member.islnk():
            if links == "skip":
                skipped_links += 1
                continue
            raise _refuse(archive, member.name, "is a link")
        if member.ischr() or member.isblk() or member.isfifo() or member.isdev():
            raise _refuse(archive, member.name, "is a special file (device or fifo)")
        if not (member.isreg() or member.isdir()):
            raise _refuse(archive, member.name, f"has unsupported type {member.type!r}")
        layout.add(path, member.isdir(), member.name)
        entries.append(_Entry(path, member.isdir(), member.size, None, member.name))
    return entries, skipped_links


def extract_tar(
    archive: Path,
    dest: Path,
    limits: ExtractLimits = ExtractLimits(),
    *,
    strip_top: bool = False,
    links: str = "refuse",
) -> ExtractReport:
    """`links="skip"` is for `git archive` output, where symlinks are ordinary."""
    try:
        with tarfile.open(archive, "r:*") as tf:
            entries, skipped_links = _tar_entries(archive, iter(tf), limits, links)
            if strip_top:
                entries = _strip_top(archive, entries)
            by_name = {m.name: m for m in tf.getmembers()}

            def opener(e: _Entry) -> IO[bytes]:
                handle = tf.extractfile(by_name[e.key])  # type: ignore[index]
                if handle is None:
                    raise _refuse(archive, str(e.key), "has no data")
                return handle

            report = _write_all(archive, dest, entries, limits, opener)
            report.skipped_links = skipped_links
            return report
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise SnapshotError(f"{archive.name} is not a readable tar archive: {exc}") from None


# ---------------------------------------------------------------- writing


def _check_sizes(archive: Path, entries: list[_Entry], limits: ExtractLimits) -> list[_Entry]:
    """Declared sizes of every entry to keep, checked before anything is written.
    (A header that lies is caught while copying, in `_write_new`.)"""
    kept = [e for e in entries if not e.is_dir and is_text_path(e.path)]
    total = 0
    for entry in kept:
        raw = entry.path.as_posix()
        if entry.size > limits.max_entry_bytes:
            raise _refuse(archive, raw, f"is {entry.size} bytes (limit {limits.max_entry_bytes})")
        if (
            entry.compressed is not None
            and entry.size > limits.ratio_floor
            and entry.size > limits.max_ratio * max(entry.compressed, 1)
        ):
            raise _refuse(archive, raw, "has an absurd compression ratio (zip bomb?)")
        total += entry.size
        if total > limits.max_total_bytes:
            raise _refuse(
                archive, raw, f"pushes the extracted total past {limits.max_total_bytes} bytes"
            )
    return kept


def _write_all(
    archive: Path,
    dest: Path,
    entries: list[_Entry],
    limits: ExtractLimits,
    opener: Callable[[_Entry], IO[bytes]],
) -> ExtractReport:
    kept = _check_sizes(archive, entries, limits)
    report = ExtractReport(skipped_binary=sum(1 for e in entries if not e.is_dir) - len(kept))
    root = dest.resolve()
    root.mkdir(parents=True, exist_ok=True)
    made: set[Path] = {root}
    for entry in kept:
        target = root.joinpath(*entry.path.parts)
        if os.path.commonpath([root, target]) != str(root):  # defence in depth
            raise _refuse(archive, entry.path.as_posix(), "resolves outside the destination")
        with opener(entry) as src:
            first = src.read(_CHUNK)
            if looks_binary(first):
                report.skipped_binary += 1
                continue
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            written = _write_new(target, first, src, entry, archive, limits)
        report.written += 1
        report.bytes_written += written
    return report


def _write_new(
    target: Path, first: bytes, src: IO[bytes], entry: _Entry, archive: Path, limits: ExtractLimits
) -> int:
    # O_EXCL | O_NOFOLLOW: never overwrite, never follow a link, whatever is already there.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o644)
    except FileExistsError:  # e.g. `A.py` and `a.py` on a case-insensitive filesystem
        raise _refuse(archive, entry.path.as_posix(), "collides with another entry here") from None
    written = 0
    cap = min(entry.size, limits.max_entry_bytes)
    with os.fdopen(fd, "wb") as out:
        chunk = first
        while chunk:
            written += len(chunk)
            if written > cap:  # the header lied about the size
                raise _refuse(
                    archive, entry.path.as_posix(), "holds more data than its header declares"
                )
            out.write(chunk)
            chunk = src.read(_CHUNK)
    return written
