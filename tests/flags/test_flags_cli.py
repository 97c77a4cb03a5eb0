"""`atlas flags` / `atlas envs` on fixture trees: JSON shape, errors without tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

from flags_fixtures import SGLANG_FILES, VLLM_FILES, write_tree
from typer.testing import CliRunner

from analyzer.cli import app

runner = CliRunner()


def test_flags_json(tmp_path: Path) -> None:
    root = write_tree(tmp_path, VLLM_FILES)
    result = runner.invoke(app, ["--cache-dir", str(tmp_path / "c"), "flags", str(root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, list) and len(data) == 13
    port = next(f for f in data if f["flag"] == "--port")
    for key in ("flag", "aliases", "dest", "default", "defined_at", "help", "type", "action", "choices", "group"):
        assert key in port
    assert "positional: model_tag" in result.stderr
    assert "current_platform.extend_parser" in result.stderr


def test_envs_json_and_grep(tmp_path: Path) -> None:
    root = write_tree(tmp_path, SGLANG_FILES)
    result = runner.invoke(app, ["envs", str(root), "--json", "--grep", "BAR"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [e["name"] for e in data] == ["SGLANG_BAR"]
    assert data[0]["deprecated_names"] == ["SGLANG_OLD_BAR"]


def test_table_output(tmp_path: Path) -> None:
    root = write_tree(tmp_path, SGLANG_FILES)
    result = runner.invoke(app, ["flags", str(root)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--chunked-prefill-size" in result.stdout


def test_bad_inputs_are_clear(tmp_path: Path) -> None:
    result = runner.invoke(app, ["flags", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such directory, and not a release" in result.output
    assert "Traceback" not in result.output
    other = tmp_path / "other"
    (other / "pkg").mkdir(parents=True)
    (other / "pkg" / "mod.py").write_text("X = 1\n", encoding="utf-8")
    result = runner.invoke(app, ["--cache-dir", str(tmp_path / "c"), "envs", str(other)])
    assert result.exit_code == 2 and "neither vllm/ nor sglang/" in result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["--cache-dir", str(tmp_path / "c"), "envs", str(empty)])
    assert result.exit_code == 2 and "holds no Python files" in result.output
    result = runner.invoke(app, ["--cache-dir", str(tmp_path / "c"), "flags", "vllm@9.9.9"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_flags_of_another_command(tmp_path: Path) -> None:
    from entry_fixture import write_entry_tree

    root = write_entry_tree(tmp_path / "tree")
    result = runner.invoke(app, ["--cache-dir", str(tmp_path / "c"), "flags", str(root), "--command", "sglang generate", "--json"])
    assert result.exit_code == 0, result.output
    names = {f["flag"] for f in json.loads(result.stdout)}
    assert {"--num-frames", "--flux-alpha", "--vae-config.use-tiling", "--perf-dump-path"} <= names
    assert "--component-paths.<name>" in result.stderr and "--<name>-path" in result.stderr
    serve = runner.invoke(app, ["flags", str(root), "--command", "sglang serve"], env={"COLUMNS": "200"})
    assert serve.exit_code == 0 and "read from argv by `sglang serve` itself: --help, --model-type" in serve.stdout
    missing = runner.invoke(app, ["flags", str(root), "--command", "sglang nope"])
    assert missing.exit_code == 2 and "no such command" in missing.output and "Traceback" not in missing.output
