"""`atlas engine router` / `atlas engine cluster`: bad settings as one line, and the
one-command demo as real processes (prefill + decode workers and a router)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from server_session import wait_until_healthy
from typer.testing import CliRunner

from analyzer.cli import app
from reference_engine.router.launch import free_port

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "at least one --worker"),
        (["--worker", "localhost:1"], "must start with http://"),
        (["--worker", "http://a:1", "--worker", "http://a:1"], "listed twice"),
        (["--prefill", "http://a:1"], "at least one --prefill and one --decode"),
        (["--worker", "http://a:1", "--policy", "random"], "unknown routing policy"),
    ],
)
def test_router_settings_errors_are_one_line(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["engine", "router", *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_cluster_needs_a_shape() -> None:
    result = runner.invoke(app, ["engine", "cluster", "--workers", "2", "--prefill", "1"])
    assert (
        result.exit_code == 2 and "give --workers N, or --prefill P and --decode D" in result.output
    )


@pytest.mark.slow
def test_cluster_runs_a_disaggregated_pair_behind_a_router(server_cache_dir: Path) -> None:
    port = free_port()
    env = {**os.environ, "ATLAS_CACHE_DIR": str(server_cache_dir)}
    cmd = [sys.executable, "-c", "from analyzer.cli import app; app()", "engine", "cluster", "--prefill", "1",
           "--decode", "1", "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(proc, base, 120, "the cluster")
        body = {"model": "atlas-tiny-qwen3", "prompt": "a b c", "max_tokens": 4, "ignore_eos": True}
        resp = httpx.post(base + "/v1/completions", json=body, timeout=60)
        assert resp.status_code == 200, resp.text
        roles = [w["role"] for w in httpx.get(base + "/workers").json()["workers"]]
        assert roles == ["prefill", "decode"]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        # Every worker process went with it.
        children = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True)
        assert children.stdout.strip() == ""
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
