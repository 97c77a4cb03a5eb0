"""A book project: `atlas init` writes atlas.toml, and commands run in the folder
use its manuscript, pins and lock folder by default (synthetic releases only)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from snapshot_builders import build_wheel
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.report.run import default_columns
from analyzer.snapshots.locks import default_lock_dir, load_locks


def _release(folder: Path, version: str, module: str) -> None:
    files = {
        "demo/__init__.py": "",
        f"demo/{module}.py": "def run() -> int:\n    return 1\n",
        "demo/_version.py": f"__commit_id__ = 'g{version.replace('.', '') * 4}aa'\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    build_wheel(folder / f"demo-{version}-py3-none-any.whl", files, version=version)


@pytest.fixture
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "book"
    (root / "chapters").mkdir(parents=True)
    (root / "chapters" / "ch1.md").write_text(
        "# One\n\nThe loop lives in `demo/core.py`; `demo.core.run` returns one.\n"
    )
    (root / "README.md").write_text("# the book's repository\n")
    _release(tmp_path / "index", "1.0", "core")
    _release(tmp_path / "index", "1.1", "engine")  # core.py renamed
    monkeypatch.chdir(root)
    return root


def _atlas(tmp_path: Path, *args: str) -> object:
    cache = str(tmp_path / "cache")
    return CliRunner().invoke(app, ["--cache-dir", cache, *args], catch_exceptions=False)


def test_init_lock_check_in_the_book_folder_use_the_book_settings(
    book: Path, tmp_path: Path
) -> None:
    result = _atlas(tmp_path, "init", "--pin", "demo@1.0")
    assert result.exit_code == 0, result.output
    assert "demo@1.0 is not locked yet" in result.output
    config = tomllib.loads((book / "atlas.toml").read_text())
    assert config["book"] == {"manuscript": ["chapters"], "lock_dir": "locks"}
    assert config["check"]["pins"] == ["demo@1.0"]

    index = str(tmp_path / "index")
    result = _atlas(tmp_path, "snapshot", "lock", "demo@1.0", "demo@1.1", "-f", index, "--no-index")
    assert result.exit_code == 0, result.output
    assert sorted(load_locks(book / "locks")) == ["demo@1.0", "demo@1.1"]  # the book's folder
    assert "demo@1.0" not in load_locks(default_lock_dir())  # not the toolkit's

    result = _atlas(tmp_path, "check", "--json")  # no paths: the manuscript atlas.toml names
    assert result.exit_code == 0, result.output
    findings = json.loads(result.stdout)
    findings = findings["findings"] if isinstance(findings, dict) else findings
    assert {f["status"] for f in findings} == {"ok"} and len(findings) == 2

    result = _atlas(tmp_path, "check", "--pin", "demo@1.1", "--json")  # the newer one breaks it
    assert result.exit_code == 1, result.output
    findings = json.loads(result.stdout)
    findings = findings["findings"] if isinstance(findings, dict) else findings
    assert "broken" in {f["status"] for f in findings}

    (book / "atlas.toml").write_text("[book]\nmanuscript = 3\n")
    result = _atlas(tmp_path, "check")
    assert result.exit_code == 2 and "must be a list of strings" in result.output


def test_init_copies_the_toolkit_locks_of_the_pins_and_refuses_to_overwrite(
    book: Path, tmp_path: Path
) -> None:
    result = _atlas(tmp_path, "init", "--pin", "vllm@0.30.0", "--pin", "sglang@0.5.20")
    assert result.exit_code == 0, result.output
    toolkit = load_locks(default_lock_dir())
    mine = load_locks(book / "locks")
    assert mine["vllm@0.30.0"].sha256 == toolkit["vllm@0.30.0"].sha256
    assert mine["sglang@0.5.20"].layout_prefix == "python/"  # the project defaults came along
    assert load_locks()["vllm@0.30.0"].lock_file == book / "locks" / "vllm.toml"  # the book's wins
    assert "vllm@0.33.0" in load_locks()  # the toolkit's others stay visible

    result = _atlas(tmp_path, "init")
    assert result.exit_code == 2 and "already exists" in result.output
    result = _atlas(tmp_path, "init", str(book / "nowhere"))
    assert result.exit_code == 2


def test_report_columns_default_to_the_book_pins(book: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (book / "atlas.toml").write_text('[check]\npins = ["sglang@0.5.23", "vllm@0.31.0", "demo@1"]\n')
    columns, why = default_columns()
    assert columns == ["vllm@0.31.0", "sglang@0.5.23"] and str(book / "atlas.toml") in why
    monkeypatch.chdir(book.parent)  # no book here: the sample book's pins, newer one option away
    columns, why = default_columns()
    assert columns == ["vllm@0.30.0", "sglang@0.5.20"]
    assert "--newest" in why


def test_check_against_latest_says_where_each_reference_broke_and_went(
    book: Path, tmp_path: Path
) -> None:
    _release(tmp_path / "index", "1.2", "engine")
    (book / "atlas.toml").write_text('[book]\nmanuscript = ["chapters"]\n[check]\npins = ["demo@1.0"]\n')
    index = str(tmp_path / "index")
    locked = _atlas(tmp_path, "snapshot", "lock", "demo@1.0", "demo@1.1", "demo@1.2", "-f", index, "--no-index")
    assert locked.exit_code == 0, locked.output
    result = _atlas(tmp_path, "check", "--against", "latest", "--json")
    assert result.exit_code == 1, result.output
    payload = json.loads(result.stdout)
    assert payload["followed"] == ["demo@1.1", "demo@1.2"]
    path = next(r for r in payload["references"] if r["text"] == "demo/core.py")
    assert path["broke_in"] == "demo@1.1"  # the first release where it broke, not the last
    assert path["statuses"] == {"demo@1.1": "broken", "demo@1.2": "broken"}
    assert path["went_to"].startswith("demo/engine.py")  # git saw the rename

    result = _atlas(tmp_path, "check", "--against", "demo@1.0")  # nothing newer: nothing breaks
    assert result.exit_code == 0 and "no newer release" in result.output
    result = _atlas(tmp_path, "check", "--against", "other@2")
    assert result.exit_code == 2 and "pins no release of that project" in result.output


def test_watch_locks_the_newest_and_fails_with_sarif_when_something_broke(
    book: Path, tmp_path: Path
) -> None:
    (book / "atlas.toml").write_text('[book]\nmanuscript = ["chapters"]\n[check]\npins = ["demo@1.0"]\n')
    index = str(tmp_path / "index")
    assert _atlas(tmp_path, "snapshot", "lock", "demo@1.0", "-f", index, "--no-index").exit_code == 0
    result = _atlas(tmp_path, "watch", "-f", index, "--no-index", "--sarif", "out.sarif")
    assert result.exit_code == 1, result.output
    assert "demo@1.1 (locked)" in result.output
    assert "demo@1.1" in load_locks(book / "locks")
    sarif = json.loads((book / "out.sarif").read_text())
    texts = {r["message"]["text"] for r in sarif["runs"][0]["results"]}
    assert any("demo/core.py" in t for t in texts)

    (book / "chapters" / "ch1.md").write_text("Nothing cited from upstream here but `demo/__init__.py`.\n")
    result = _atlas(tmp_path, "watch", "-f", index, "--no-index", "--sarif", "out.sarif")
    assert result.exit_code == 0, result.output
    assert json.loads((book / "out.sarif").read_text())["runs"][0]["results"] == []


def test_a_changelog_limited_to_what_the_book_cites(book: Path) -> None:
    from analyzer.diff.models import SymbolMove, VersionDiff
    from analyzer.follow import limit_to_cited

    (book / "chapters" / "ch1.md").write_text(
        "The loop is `Scheduler.schedule` in `demo/core.py`; start it with `--max-num-seqs`"
        " and `VLLM_LOGGING_LEVEL`.\n"
    )
    diff = VersionDiff(
        "demo@1.0",
        "demo@1.1",
        added=["demo.core.Planner", "demo.other.Thing"],
        removed=["demo.sched.Scheduler", "demo.sched.Budget", "demo.core.helper"],
        moved=[
            SymbolMove("demo.core.run", "demo.engine.run", "moved", ()),
            SymbolMove("demo.misc.x", "demo.misc.y", "renamed", ()),
        ],
        flags_added=["--max-num-batched-tokens"],
        flags_removed=["--max_num_seqs", "--block-size"],
        envs_removed=["VLLM_LOGGING_LEVEL", "VLLM_OTHER"],
    )
    limited = limit_to_cited(diff, [book / "chapters"])
    assert limited.removed == ["demo.sched.Scheduler", "demo.core.helper"]  # cited inside; cited module
    assert [m.old for m in limited.moved] == ["demo.core.run"]
    assert limited.added == ["demo.core.Planner"]
    assert limited.flags_removed == ["--max_num_seqs"] and limited.flags_added == []
    assert limited.envs_removed == ["VLLM_LOGGING_LEVEL"]
    assert "cites" in limited.warnings[-1]


def test_diff_with_one_release_compares_it_with_the_book_pin(book: Path, tmp_path: Path) -> None:
    (book / "atlas.toml").write_text('[check]\npins = ["demo@1.0"]\n')
    result = _atlas(tmp_path, "diff", "other@2.0")
    assert result.exit_code == 2 and "pins no other release" in result.output
    from analyzer.diff.commands import _book_pin_for

    assert _book_pin_for("demo@1.1") == "demo@1.0"
