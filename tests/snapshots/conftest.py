"""Fixtures for the snapshot tests: a locked demo wheel, an upstream git repository, the CLI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import git
import pytest
import typer
from snapshot_builders import DEMO_FILES, build_wheel, commit_files, write_lock

from analyzer.settings import Settings
from analyzer.snapshots import commands


@dataclass
class DemoRelease:
    settings: Settings
    lock_dir: Path
    wheel: Path
    wheelhouse: Path
    ref: str = "demo@1.0"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache")


@pytest.fixture
def demo_release(tmp_path: Path, settings: Settings) -> DemoRelease:
    """A locked `demo@1.0` wheel in a wheelhouse (no network anywhere)."""
    house = tmp_path / "wheelhouse"
    house.mkdir()
    wheel = build_wheel(house / "demo-1.0-py3-none-any.whl", DEMO_FILES)
    lock_dir = tmp_path / "locks"
    write_lock(lock_dir, "demo", "1.0", wheel, upstream_commit="abc1234de")
    return DemoRelease(settings, lock_dir, wheel, house)


@pytest.fixture
def upstream_repo(tmp_path: Path) -> tuple[git.Repo, list[str]]:
    """An SGLang-shaped repository (package under python/) with two commits;
    the second renames a module (with a small edit) and adds one."""
    repo = git.Repo.init(tmp_path / "upstream")
    body = "".join(f"def f{i}(x: int) -> int:\n    return x + {i}\n\n" for i in range(30))
    first = commit_files(
        repo,
        {
            "python/demo/__init__.py": "",
            "python/demo/old_name.py": body,
            "python/pyproject.toml": "[project]\nname = 'demo'\n",
            "README.md": "# demo\n",
        },
        "first",
    )
    repo.git.mv("python/demo/old_name.py", "python/demo/new_name.py")
    second = commit_files(
        repo,
        {
            "python/demo/new_name.py": body + "def extra() -> None:\n    pass\n",
            "python/demo/added.py": "X = 1\n",
        },
        "rename old_name -> new_name",
    )
    return repo, [first, second]


@pytest.fixture
def cli(settings: Settings) -> Callable[..., object]:
    """Invoke `atlas snapshot ...` through a root app built like analyzer.cli's
    (other stages' commands are left out so their state can't break these tests)."""
    from typer.testing import CliRunner

    app = typer.Typer()

    @app.callback()
    def main(ctx: typer.Context) -> None:
        ctx.obj = settings

    commands.register(app)
    runner = CliRunner()

    def invoke(*args: str) -> object:
        return runner.invoke(app, list(args), catch_exceptions=False)

    return invoke
