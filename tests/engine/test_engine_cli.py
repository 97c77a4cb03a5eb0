"""`atlas engine run` / `atlas engine bench` end to end through the real CLI app."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from analyzer.cli import app

runner = CliRunner()


def test_run_works_out_of_the_box_and_says_weights_are_random(atlas_cache_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "--cache-dir",
            str(atlas_cache_dir),
            "engine",
            "run",
            "--prompt",
            "Hello",
            "--max-tokens",
            "5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "RANDOM weights" in result.output
    assert "finish_reason=" in result.output


def test_run_json_and_stream(atlas_cache_dir: Path) -> None:
    base = ["--cache-dir", str(atlas_cache_dir), "engine", "run", "--max-tokens", "4"]
    result = runner.invoke(app, [*base, "--prompt", "a", "--prompt", "b", "--n", "2", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["random_weights"] is True
    assert [len(o["outputs"]) for o in payload["outputs"]] == [2, 2]
    assert all(len(c["token_ids"]) <= 4 for o in payload["outputs"] for c in o["outputs"])

    streamed = runner.invoke(app, [*base, "--prompt", "a", "--stream"])
    assert streamed.exit_code == 0, streamed.output
    assert "finish_reason=" in streamed.output


def test_bad_model_folder_is_one_clear_line(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "--cache-dir",
            str(tmp_path),
            "engine",
            "run",
            "--prompt",
            "x",
            "--model",
            str(tmp_path / "nope"),
        ],
    )
    assert result.exit_code == 2
    assert "is not a local folder" in result.output
    assert "Traceback" not in result.output


def test_bench_prints_figures_as_json(atlas_cache_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "--cache-dir", str(atlas_cache_dir), "engine", "bench", "--num-prompts", "4",
            "--min-prompt-len", "4", "--max-prompt-len", "12",
            "--min-output-len", "2", "--max-output-len", "5", "--json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert figures["num_requests"] == 4 and figures["output_tokens_per_s"] > 0
    assert 8 <= figures["num_output_tokens"] <= 20


def test_commands_module_does_not_import_torch() -> None:
    code = "import sys, reference_engine.commands; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_loads_a_local_checkpoint_folder(random_checkpoint, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = random_checkpoint("llama", dtype="float32", num_shards=2)
    args = ["--cache-dir", str(tmp_path), "engine", "run", "--prompt", "hi"]
    args += ["--model", str(folder), "--max-tokens", "3", "--prefix-caching", "radix", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["model"] == str(folder) and payload["random_weights"] is False
    assert len(payload["outputs"][0]["outputs"][0]["token_ids"]) <= 3
