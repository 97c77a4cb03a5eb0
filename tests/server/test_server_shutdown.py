"""`python -m reference_engine.server` as a real process: SIGTERM ends it cleanly, even with a
stream in flight (the stream is ended, the process exits 0, no traceback).

SIGINT takes the very same path (uvicorn's handler, then our drain); it is not repeated here
because each run pays a fresh torch import, but benchmarks/serve_bench.py stops its server
with SIGINT and fails unless the exit is clean.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from server_fixtures import MODEL
from server_session import wait_until_healthy

from reference_engine.router.launch import free_port


@pytest.mark.slow
def test_sigterm_stops_the_server_cleanly(server_cache_dir: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "ATLAS_CACHE_DIR": str(server_cache_dir)}
    cmd = [sys.executable, "-m", "reference_engine.server", "--port", str(port)]
    cmd += ["--torch-threads", "1", "--graceful-timeout", "1", "--max-model-len", "512"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_healthy(proc, base, 60, "the server")
        body = {
            "model": MODEL,
            "prompt": "x",
            "max_tokens": 400,
            "ignore_eos": True,
            "stream": True,
        }
        seen = 0
        t0 = time.monotonic()
        with httpx.stream("POST", base + "/v1/completions", json=body, timeout=30) as resp:
            try:
                for line in resp.iter_lines():
                    seen += line.startswith("data: ")
                    if seen == 3:
                        proc.send_signal(signal.SIGTERM)
            except httpx.RemoteProtocolError:
                pass  # the server cut the stream at its graceful deadline: expected
        assert seen >= 3
        rc = proc.wait(timeout=30)
        _, err = proc.communicate()
        assert rc == 0, err
        assert "Traceback" not in err, err
        assert time.monotonic() - t0 < 20
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
