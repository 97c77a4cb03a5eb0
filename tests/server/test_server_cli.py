"""`atlas engine serve` / `atlas engine loadtest` wiring: help, and bad settings as one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from analyzer.cli import app

runner = CliRunner()


def test_engine_help_lists_serve_and_loadtest() -> None:
    result = runner.invoke(app, ["engine", "--help"])
    assert result.exit_code == 0
    assert "serve" in result.output and "loadtest" in result.output


def test_serve_with_a_missing_model_folder_is_one_clear_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["engine", "serve", "--model", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "is not a local folder" in result.output
    assert "Traceback" not in result.output


def test_serve_with_a_bad_knob_is_one_clear_line(server_cache_dir: Path) -> None:
    args = ["--cache-dir", str(server_cache_dir), "engine", "serve", "--prefix-caching", "lru"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "prefix_caching must be none, hash or radix" in result.output


def test_elastic_ep_and_tbo_without_expert_parallelism_are_one_clear_line(
    server_cache_dir: Path,
) -> None:
    base = ["--cache-dir", str(server_cache_dir), "engine", "serve"]
    for flag, message in [
        ("--elastic-ep", "elastic expert parallelism needs expert_parallel_size > 1"),
        ("--enable-two-batch-overlap", "two-batch overlap needs expert parallelism"),
    ]:
        result = runner.invoke(app, [*base, flag])
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output


def test_commands_module_loads_neither_torch_nor_the_web_stack() -> None:
    code = (
        "import sys, reference_engine.commands; "
        "print(sorted(m for m in ('torch', 'fastapi', 'uvicorn', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_decode_role_without_prefix_caching_is_one_clear_line(server_cache_dir: Path) -> None:
    args = ["--cache-dir", str(server_cache_dir), "engine", "serve", "--role", "decode",
            "--prefix-caching", "none"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "needs prefix caching" in result.output and "Traceback" not in result.output
