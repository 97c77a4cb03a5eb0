"""Hostile and awkward archives: each class is refused with a clear message and
nothing is written anywhere (the destination stays empty, nothing lands outside)."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from snapshot_builders import build_sdist, build_wheel

from analyzer.snapshots.archive import ExtractLimits, extract_tar, extract_zip, safe_relative_path
from analyzer.snapshots.models import SnapshotError


def _zip(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return path


def _unix(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


def _files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../evil.py", "escapes the archive"),
        ("demo/../../evil.py", "escapes the archive"),
        ("/etc/evil.py", "absolute path"),
        ("C:/evil.py", "drive letter"),
        ("C:evil.py", "drive letter"),
        ("demo\\..\\evil.py", "backslashes"),
        ("demo/.git/config", ".git"),
        ("demo/evil\x01.py", "control characters"),
    ],
)
def test_zip_bad_names_are_refused(tmp_path: Path, name: str, message: str) -> None:
    archive = _zip(tmp_path / "bad.whl", [("demo/ok.py", b"x = 1\n"), (name, b"boom\n")])
    dest = tmp_path / "out" / "tree"
    with pytest.raises(SnapshotError, match=message) as info:
        extract_zip(archive, dest)
    assert "bad.whl" in str(info.value)
    assert _files_under(tmp_path / "out") == []  # refused before anything was written
    assert not (tmp_path / "evil.py").exists()


def test_zip_symlink_is_refused(tmp_path: Path) -> None:
    link = _unix("demo/link.py", stat.S_IFLNK | 0o777)
    archive = _zip(tmp_path / "bad.whl", [("demo/ok.py", b"x = 1\n"), (link, b"/etc/passwd")])
    with pytest.raises(SnapshotError, match="symbolic link"):
        extract_zip(archive, tmp_path / "tree")
    assert _files_under(tmp_path / "tree") == []


@pytest.mark.parametrize("kind", [stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK])
def test_zip_special_files_are_refused(tmp_path: Path, kind: int) -> None:
    archive = _zip(tmp_path / "bad.whl", [(_unix("demo/dev.py", kind | 0o644), b"")])
    with pytest.raises(SnapshotError, match="special file"):
        extract_zip(archive, tmp_path / "tree")


def test_zip_duplicate_names_are_refused(tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="Duplicate name"):
        archive = _zip(tmp_path / "bad.whl", [("demo/a.py", b"1\n"), ("demo/a.py", b"2\n")])
    with pytest.raises(SnapshotError, match="duplicate"):
        extract_zip(archive, tmp_path / "tree")


def test_zip_file_and_folder_clash_is_refused(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "bad.whl", [("demo/a", b"1\n"), ("demo/a/b.py", b"2\n")])
    with pytest.raises(SnapshotError, match="which is a file"):
        extract_zip(archive, tmp_path / "tree")


def test_zip_bomb_ratio_is_refused(tmp_path: Path) -> None:
    # 20 MiB of zeros deflates ~1000:1: the default ratio cap must catch it.
    archive = _zip(tmp_path / "bomb.whl", [("demo/bomb.py", b"\0" * (20 * 1024 * 1024))])
    assert archive.stat().st_size < 100_000
    with pytest.raises(SnapshotError, match="compression ratio"):
        extract_zip(archive, tmp_path / "tree")
    assert _files_under(tmp_path / "tree") == []


def test_zip_entry_and_total_size_caps(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "big.whl", [("demo/a.py", b"a" * 5000), ("demo/b.py", b"b" * 5000)])
    with pytest.raises(SnapshotError, match="limit 4000"):
        extract_zip(archive, tmp_path / "t1", ExtractLimits(max_entry_bytes=4000))
    with pytest.raises(SnapshotError, match="extracted total"):
        extract_zip(archive, tmp_path / "t2", ExtractLimits(max_total_bytes=8000))
    with pytest.raises(SnapshotError, match="entries"):
        extract_zip(archive, tmp_path / "t3", ExtractLimits(max_entries=1))


def test_not_a_zip_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "demo-1.0-py3-none-any.whl"
    bogus.write_bytes(b"this is not a zip")
    with pytest.raises(SnapshotError, match="not a valid zip"):
        extract_zip(bogus, tmp_path / "tree")


def test_zip_keeps_text_and_skips_binaries(tmp_path: Path) -> None:
    archive = build_wheel(
        tmp_path / "demo-1.0-py3-none-any.whl",
        {
            "demo/__init__.py": "",
            "demo/kernel.cuh": "// header\n",
            "demo/_C.abi3.so": b"\x7fELF\x00",
            "demo/logo.png": b"\x89PNG\r\n",
            "demo/sneaky.py": b"looks like python\x00but is not",
            "demo/.gitignore": "*\n",
        },
    )
    report = extract_zip(archive, tmp_path / "tree")
    kept = sorted(
        p.relative_to(tmp_path / "tree").as_posix() for p in _files_under(tmp_path / "tree")
    )
    assert kept == [
        "demo-1.0.dist-info/METADATA",
        "demo-1.0.dist-info/RECORD",
        "demo-1.0.dist-info/WHEEL",
        "demo-1.0.dist-info/top_level.txt",
        "demo/__init__.py",
        "demo/kernel.cuh",
    ]
    assert report.skipped_binary == 4
    assert (tmp_path / "tree" / "demo" / "kernel.cuh").read_text() == "// header\n"


# ------------------------------------------------------------------ tar


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tf.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (_member("demo-1.0/link.py", tarfile.SYMTYPE, "/etc/passwd"), "is a link"),
        (_member("demo-1.0/hard.py", tarfile.LNKTYPE, "demo-1.0/ok.py"), "is a link"),
        (_member("demo-1.0/dev", tarfile.CHRTYPE), "special file"),
        (_member("demo-1.0/disk", tarfile.BLKTYPE), "special file"),
        (_member("demo-1.0/pipe", tarfile.FIFOTYPE), "special file"),
        (_member("/abs/evil.py"), "absolute path"),
        (_member("demo-1.0/../../evil.py"), "escapes the archive"),
    ],
)
def test_tar_hostile_members_are_refused(
    tmp_path: Path, member: tarfile.TarInfo, message: str
) -> None:
    archive = _tar(
        tmp_path / "demo-1.0.tar.gz", [(_member("demo-1.0/ok.py"), b"x = 1\n"), (member, b"boom")]
    )
    with pytest.raises(SnapshotError, match=message):
        extract_tar(archive, tmp_path / "out" / "tree", strip_top=True)
    assert _files_under(tmp_path / "out") == []
    assert not (tmp_path / "evil.py").exists()


def test_tar_duplicates_and_huge_members_are_refused(tmp_path: Path) -> None:
    dup = _tar(tmp_path / "dup.tar.gz", [(_member("d/a.py"), b"1"), (_member("d/a.py"), b"2")])
    with pytest.raises(SnapshotError, match="duplicate"):
        extract_tar(dup, tmp_path / "t1")
    big = _tar(tmp_path / "big.tar.gz", [(_member("d/a.bin"), b"\0" * 3000)])
    with pytest.raises(SnapshotError, match="size limit"):
        extract_tar(big, tmp_path / "t2", ExtractLimits(max_tar_stream_bytes=2000))


def test_sdist_top_folder_is_stripped_and_must_be_single(tmp_path: Path) -> None:
    good = build_sdist(tmp_path / "demo-1.0.tar.gz", {"demo/__init__.py": "", "setup.py": "pass\n"})
    extract_tar(good, tmp_path / "tree", strip_top=True)
    assert (tmp_path / "tree" / "demo" / "__init__.py").is_file()
    assert (tmp_path / "tree" / "setup.py").is_file()
    two_tops = build_sdist(tmp_path / "two.tar.gz", {"a/x.py": "", "b/y.py": ""}, top="")
    with pytest.raises(SnapshotError, match="one top-level folder"):
        extract_tar(two_tops, tmp_path / "tree2", strip_top=True)


def test_links_are_skipped_only_when_asked(tmp_path: Path) -> None:
    archive = _tar(
        tmp_path / "src.tar",
        [
            (_member("pkg/ok.py"), b"x = 1\n"),
            (_member("pkg/alias.py", tarfile.SYMTYPE, "ok.py"), b""),
        ],
    )
    report = extract_tar(archive, tmp_path / "tree", links="skip")
    assert report.skipped_links == 1
    assert (tmp_path / "tree" / "pkg" / "ok.py").is_file()
    assert not (tmp_path / "tree" / "pkg" / "alias.py").exists()


def test_size_caps_refuse_before_writing_anything(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "big.whl", [("demo/a.py", b"a" * 5000), ("demo/b.py", b"b" * 5000)])
    with pytest.raises(SnapshotError, match="extracted total"):
        extract_zip(archive, tmp_path / "tree", ExtractLimits(max_total_bytes=8000))
    assert _files_under(tmp_path / "tree") == []  # a.py fitted, but nothing was written


def test_zip_header_lying_about_its_size_is_refused(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "liar.whl", [("demo/a.py", b"x = 1\n" * 1000)])
    data = bytearray(archive.read_bytes())
    central = data.index(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")  # declared: 10 bytes
    archive.write_bytes(bytes(data))
    with pytest.raises(SnapshotError, match=r"liar\.whl"):
        extract_zip(archive, tmp_path / "tree")


def test_tar_bomb_ratio_is_refused(tmp_path: Path) -> None:
    bomb = _tar(tmp_path / "bomb.tar.gz", [(_member("d/zeros.txt"), b"\0" * (8 * 1024 * 1024))])
    assert bomb.stat().st_size < 100_000
    with pytest.raises(SnapshotError, match="compression ratio"):
        extract_tar(bomb, tmp_path / "tree", ExtractLimits(max_ratio=100))


@given(st.text(alphabet=st.sampled_from(list("ab./\\:C.\x00 -_")), min_size=0, max_size=24))
@settings(max_examples=300, deadline=None)
def test_any_accepted_name_stays_inside_the_destination(name: str) -> None:
    root = Path("/store/tmp/tree")
    try:
        rel = safe_relative_path(Path("x.whl"), name)
    except SnapshotError:
        return
    target = Path(os.path.normpath(root.joinpath(*rel.parts)))
    assert target.is_relative_to(root) and target != root
    assert ".." not in rel.parts and not rel.is_absolute()
    assert "\\" not in name and "\x00" not in name
