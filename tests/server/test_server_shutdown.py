"""`python -m reference_engine.server` as a real process: SIGTERM ends it cleanly, even with a
stream in flight (the stream is ended, the process exits 0, no traceback).

SIGINT takes the very same path (uvicorn's handler, then our drain); it is not repeated here
because each run pays a fresh torch import, but benchmarks/serve_bench.py stops its server
with SIGINT and fails unless the exit is clean.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from server_fixtures import MODEL


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_sigterm_stops_the_server_cleanly(server_cache_dir: Path) -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "ATLAS_CACHE_DIR": str(server_cache_dir)}
    cmd = [sys.executable, "-m", "reference_engine.server", "--port", str(port)]
    cmd += ["--torch-threads", "1", "--graceful-timeout", "1", "--max-model-len", "512"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.1)
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
