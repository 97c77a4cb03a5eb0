"""`atlas snapshot ...` end to end through Typer (offline)."""

from __future__ import annotations

import json
from pathlib import Path

from snapshot_builders import build_wheel, sha256


def test_fetch_then_noop_then_path_and_list(cli, demo_release) -> None:
    locks = str(demo_release.lock_dir)
    first = cli(
        "snapshot", "fetch", "demo@1.0", "--wheel", str(demo_release.wheel), "--lock-dir", locks
    )
    assert first.exit_code == 0, first.output
    assert "fetched into" in first.output
    again = cli("snapshot", "fetch", "demo@1.0", "--lock-dir", locks)
    assert again.exit_code == 0
    assert "already fetched (nothing to do)" in again.output

    path = cli("snapshot", "path", "demo@1.0")
    tree = Path(path.stdout.strip())
    assert (tree / "demo" / "core.py").is_file()

    listed = json.loads(cli("snapshot", "list", "--json", "--lock-dir", locks).stdout)
    assert [(r["name"], r["fetched"], r["kind"]) for r in listed] == [("demo@1.0", True, "release")]
    assert listed[0]["upstream_commit"] == "abc1234de"
    table = cli("snapshot", "list", "--lock-dir", locks)
    assert table.exit_code == 0 and "demo@1.0" in table.stdout and "yes" in table.stdout


def test_fetch_json_and_all(cli, demo_release) -> None:
    result = cli(
        "snapshot", "fetch", "--all", "--find-links", str(demo_release.wheelhouse),
        "--lock-dir", str(demo_release.lock_dir), "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(d["ref"], d["already_fetched"], d["packages"]) for d in data] == [
        ("demo@1.0", False, ["demo"])
    ]


def test_errors_are_one_line_without_traceback(cli, demo_release, tmp_path: Path) -> None:
    missing = cli("snapshot", "path", "demo@1.0")
    assert missing.exit_code == 2
    assert "not fetched; run `atlas snapshot fetch demo@1.0`" in missing.output
    assert "Traceback" not in missing.output

    other = build_wheel(tmp_path / "other.whl", {"demo/__init__.py": "x = 2\n"})
    bad = cli(
        "snapshot",
        "fetch",
        "demo@1.0",
        "--wheel",
        str(other),
        "--lock-dir",
        str(demo_release.lock_dir),
    )
    assert bad.exit_code == 2
    assert sha256(other) in bad.output and sha256(demo_release.wheel) in bad.output
    assert "Traceback" not in bad.output

    garbage = cli("snapshot", "diff", "nonsense", "demo@1.0")
    assert garbage.exit_code == 2 and "expected PROJECT@VERSION" in garbage.output


def test_add_diff_remove(cli, upstream_repo) -> None:
    repo, (first, second) = upstream_repo
    url = str(repo.working_tree_dir)
    added = cli(
        "snapshot", "add", "demo@v1", "--git", url, "--commit", first[:7], "--layout-prefix", "python", "--json"
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    info = json.loads(added.stdout)
    assert info["upstream_commit"] == first and info["added"] is True
    assert cli("snapshot", "add", "demo@v2", "--git", url, "--commit", second).exit_code == 0
    again = cli("snapshot", "add", "demo@v1", "--git", url, "--commit", first)
    assert "already pinned (nothing to do)" in again.stdout

    stat = cli("snapshot", "diff", "demo@v1", "demo@v2", "--stat")
    assert stat.exit_code == 0 and "old_name.py => new_name.py" in stat.stdout.replace(
        "{", ""
    ).replace("}", "")
    changes = json.loads(cli("snapshot", "diff", "demo@v1", "demo@v2", "--json").stdout)
    assert {
        "status": "R",
        "old_path": "python/demo/old_name.py",
        "new_path": "python/demo/new_name.py",
    }.items() <= next(c for c in changes if c["status"] == "R").items()

    package = cli("snapshot", "path", "demo@v1", "--package")
    assert Path(package.stdout.strip()).name == "python"

    unknown = cli("snapshot", "add", "demo@v3", "--git", url, "--commit", "0000000")
    assert unknown.exit_code == 2 and "not found" in unknown.output

    removed = cli("snapshot", "remove", "demo@v1")
    assert removed.exit_code == 0 and "git pin demo@v1" in removed.stdout
    assert cli("snapshot", "path", "demo@v1").exit_code == 2
