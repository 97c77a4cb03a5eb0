"""Fetched fake releases (vllm@1.0, vllm@2.0, sglang@1.0) and a mappings folder per test."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from mappings.fixtures import SGLANG_FILES, build_release, vllm_files, write_locks

from analyzer.settings import Settings
from analyzer.snapshots import fetch_snapshot
from analyzer.snapshots.locks import LOCK_DIR_ENV


@dataclass(frozen=True)
class FakePins:
    settings: Settings
    lock_dir: Path


@pytest.fixture(scope="session")
def fake_pins(tmp_path_factory: pytest.TempPathFactory) -> FakePins:
    """Built and fetched once per session: the store and index are read-only afterwards."""
    root = tmp_path_factory.mktemp("fake-pins")
    house = root / "wheelhouse"
    house.mkdir()
    releases: dict[str, list[tuple[str, Path, str]]] = {"vllm": [], "sglang": []}
    for version in ("1.0", "2.0"):
        wheel, digest = build_release(house, "vllm", version, vllm_files(version))
        releases["vllm"].append((version, wheel, digest))
    wheel, digest = build_release(house, "sglang", "1.0", SGLANG_FILES)
    releases["sglang"].append(("1.0", wheel, digest))
    lock_dir = write_locks(root / "locks", releases)
    settings = Settings(cache_dir=root / "cache")
    for project, entries in releases.items():
        for version, wheel, _ in entries:
            fetch_snapshot(settings, f"{project}@{version}", wheel=wheel, lock_dir=lock_dir)
    return FakePins(settings, lock_dir)


@pytest.fixture
def pins(fake_pins: FakePins, monkeypatch: pytest.MonkeyPatch) -> FakePins:
    monkeypatch.setenv(LOCK_DIR_ENV, str(fake_pins.lock_dir))
    return fake_pins


def write_mapping(folder: Path, concept: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{concept}.toml"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path
