"""The repository's lock files and the lock-file reader's error handling."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.snapshots.locks import LOCK_DIR_ENV, default_lock_dir, load_locks, normalise_prefix
from analyzer.snapshots.models import SnapshotError


def test_repository_locks_pin_the_four_releases() -> None:
    locks = load_locks()
    assert {"vllm@0.30.0", "vllm@0.33.0", "sglang@0.5.20", "sglang@0.5.23"} <= set(locks)
    for name, entry in locks.items():
        assert entry.artifact.startswith(f"{entry.package}-{entry.version}-"), name
        assert entry.kind == "wheel"
        assert entry.lock_file is not None and entry.lock_file.parent == default_lock_dir()
    assert locks["vllm@0.30.0"].layout_prefix == ""
    assert locks["sglang@0.5.20"].layout_prefix == "python/"
    # vLLM records an abbreviated commit in _version.py; SGLang wheels record none.
    assert locks["vllm@0.30.0"].upstream_commit == "ced6857af"
    assert locks["vllm@0.33.0"].upstream_commit == "4ba787ec9"
    assert locks["sglang@0.5.20"].upstream_commit is None


def test_default_lock_dir_is_the_repository_folder_or_the_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert default_lock_dir() == Path(__file__).resolve().parents[2] / "snapshots"
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    assert default_lock_dir() == tmp_path
    assert load_locks() == {}


def _lock(tmp_path: Path, text: str, name: str = "x.toml") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    return tmp_path


GOOD = (
    'project = "demo"\n[releases."1.0"]\nartifact = "demo-1.0-py3-none-any.whl"\nsha256 = "%s"\n'
    % ("ab" * 32)
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("project = [", "not valid TOML"),
        (GOOD.replace("ab" * 32, "xyz"), "64 hex digits"),
        (
            GOOD.replace("demo-1.0-py3-none-any.whl", "../evil.whl"),
            "must be a wheel or .tar.gz file name",
        ),
        (GOOD.replace("demo-1.0-py3-none-any.whl", "demo.exe"), "must be a wheel"),
        (GOOD + 'upstream_commit = "zz"\n', "7 to 40 hex digits"),
        (GOOD.replace('project = "demo"', 'project = "../x"'), "invalid snapshot name"),
        (GOOD + 'layout_prefix = "../up"\n', "invalid layout prefix"),
        (GOOD.replace('project = "demo"\n', ""), "`project` must be a string"),
    ],
)
def test_bad_lock_files_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SnapshotError, match=message):
        load_locks(_lock(tmp_path, text))


def test_a_release_pinned_twice_is_an_error(tmp_path: Path) -> None:
    _lock(tmp_path, GOOD, "a.toml")
    _lock(tmp_path, GOOD, "b.toml")
    with pytest.raises(SnapshotError, match="pinned twice"):
        load_locks(tmp_path)


def test_layout_prefix_normalisation() -> None:
    assert normalise_prefix("python") == "python/"
    assert normalise_prefix("/python/") == "python/"
    assert normalise_prefix("") == ""
    with pytest.raises(SnapshotError):
        normalise_prefix("a/../b")
