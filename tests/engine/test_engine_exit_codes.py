"""The engine's commands follow the one exit-code convention of reference_engine/exit_codes.py
(0 ok, 1 ran and found problems, 2 could not run) and say what is wrong in one `error:` line.

Every case here fails before a model is built (or builds none), so the file stays fast."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from analyzer import commandline
from analyzer.cli import app
from reference_engine import exit_codes

runner = CliRunner()


def _one_error_line(result: Result) -> str:
    """The single `error:` line of a failed command (and no traceback)."""
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_one_convention_for_both_sides() -> None:
    # The analyzer takes the engine's definitions, it does not restate them.
    assert (commandline.EXIT_OK, commandline.EXIT_FINDINGS, commandline.EXIT_ERROR) == (0, 1, 2)
    assert commandline.fail is exit_codes.fail and commandline.print_error is exit_codes.print_error


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prefix-caching", "lru"], "prefix_caching must be none, hash or radix"),
        (["--speculative-config", "{x"], "--speculative-config is not valid JSON"),
        (["--structured-outputs", '{"yaml": 1}'], "--structured-outputs: unknown keys ['yaml']"),
        (["--quantization", "int3"], "quantization must be"),
        (["--tp", "2", "--cp", "2", "--ep", "2"], "not expert parallelism"),
    ],
)
def test_a_bad_setting_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["--cache-dir", str(tmp_path), "engine", "run", "-p", "x", *args])
    assert result.exit_code == 2, result.output
    assert message in _one_error_line(result)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "-p", "x", "--max-tokens", "abc"], "Invalid value for '--max-tokens'"),
        (["run", "-p", "x", "--max-tokens", "0"], "Invalid value for '--max-tokens'"),  # under its minimum
        (["run", "-p", "x", "--no-such-flag"], "No such option: --no-such-flag"),
        (["run"], "Missing option '--prompt'"),
        (["bench", "--num-prompts", "-3"], "Invalid value for '--num-prompts'"),
        (["loadtest"], "Missing argument 'url'"),
        (["router", "--port", "70000"], "Invalid value for '--port'"),
        (["no-such-command"], "No such command 'no-such-command'"),
    ],
)
def test_a_malformed_flag_exits_2_with_one_line_naming_it(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["engine", *args])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert message in line and "--help`)" in line, line
    assert "╭" not in result.output  # not click's boxed panel


def test_usage_errors_of_the_analyzers_commands_are_one_line_too() -> None:
    result = runner.invoke(app, ["calls"], prog_name="atlas")
    assert result.exit_code == 2
    assert _one_error_line(result) == "error: Missing argument 'target'. (see `atlas calls --help`)"
    result = runner.invoke(app, ["map", "verify", "--bogus"])
    assert result.exit_code == 2 and "No such option: --bogus" in _one_error_line(result)
    bare = runner.invoke(app, [])  # a bare group still prints its help
    assert "Usage" in bare.output and "error:" not in bare.output


def test_missing_or_broken_model_files_exit_2(random_checkpoint, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = random_checkpoint("llama", dtype="float32")
    cases: dict[str, tuple[Path, str]] = {}

    no_weights = tmp_path / "no-weights"
    shutil.copytree(good, no_weights)
    for weights in no_weights.glob("*.safetensors"):
        weights.unlink()
    cases["no weights"] = (no_weights, "no *.safetensors weights in")

    no_tokenizer = tmp_path / "no-tokenizer"
    shutil.copytree(good, no_tokenizer)
    (no_tokenizer / "tokenizer.json").unlink()
    cases["no tokenizer"] = (no_tokenizer, "has no tokenizer.json")

    bad_config = tmp_path / "bad-config"
    shutil.copytree(good, bad_config)
    (bad_config / "config.json").write_text("{not json", encoding="utf-8")
    cases["bad config"] = (bad_config, "config.json is not valid JSON")

    truncated = tmp_path / "truncated"
    shutil.copytree(good, truncated)
    for weights in truncated.glob("*.safetensors"):
        weights.write_bytes(weights.read_bytes()[:100])
    cases["truncated weights"] = (truncated, "cannot read")

    cases["no folder"] = (tmp_path / "nope", "is not a local folder")

    for name, (folder, message) in cases.items():
        args = ["--cache-dir", str(tmp_path), "engine", "run", "-p", "x", "--model", str(folder)]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, f"{name}: {result.output}"
        line = _one_error_line(result)
        assert message in line, f"{name}: {line}"
    # Nothing was lost: the good checkpoint still loads and runs.
    args = ["--cache-dir", str(tmp_path), "engine", "run", "-p", "x", "--max-tokens", "2"]
    assert runner.invoke(app, [*args, "--model", str(good)]).exit_code == 0


def test_router_and_cluster_bad_input_exit_2() -> None:
    result = runner.invoke(app, ["engine", "router", "--worker", "localhost:1"])
    assert result.exit_code == 2 and "must start with http://" in _one_error_line(result)
    result = runner.invoke(app, ["engine", "cluster"])
    assert result.exit_code == 2 and "give --workers N" in _one_error_line(result)


class _Failing(BaseHTTPRequestHandler):
    """A server whose every completion fails: the load test runs, and finds only errors."""

    def do_POST(self) -> None:
        body = b'{"error": {"message": "engine on fire"}}'
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def failing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_loadtest_exit_codes(failing_server: str) -> None:
    args = ["engine", "loadtest", "--no-progress", "-n", "2", "--timeout", "10"]
    # It ran, and no request completed: a finding, exit 1.
    ran = runner.invoke(app, [*args, failing_server, "--model", "m"])
    assert ran.exit_code == 1, ran.output
    assert "no request completed" in _one_error_line(ran)
    # It could not start: the server has no model list to read, exit 2.
    refused = runner.invoke(app, [*args, "http://127.0.0.1:9"])
    assert refused.exit_code == 2 and "cannot list models" in _one_error_line(refused)


def test_a_taken_port_is_one_line_before_anything_loads() -> None:
    """The listening socket is bound first: no model load, no uvicorn exit 3."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for args in (["serve", "--port", port], ["router", "--worker", "http://127.0.0.1:1", "--port", port]):
            result = runner.invoke(app, ["engine", *args])
            assert result.exit_code == 2, result.output
            assert f"cannot listen on 127.0.0.1:{port}" in _one_error_line(result)


def test_the_standalone_server_entry_follows_the_convention() -> None:
    """`python -m reference_engine.server` (no analyzer, no atlas CLI around it): a malformed
    flag is the same one line and exit 2."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "reference_engine.server", "--port", "abc"], capture_output=True,
                          text=True, timeout=120, env=env, cwd=root, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: Invalid value for '--port'"), done.stderr
