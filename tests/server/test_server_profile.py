"""`atlas engine serve --profile TRACE`: the first steps of traffic are profiled on the engine
thread, the trace is written with every phase of a step, and the engine steps plainly after."""

from __future__ import annotations

import time
from pathlib import Path

from server_fixtures import MODEL, start_server

from reference_engine.engine import Engine
from reference_engine.profiler import trace_ranges


def test_served_steps_are_profiled_then_plain(server_cache_dir: Path, tmp_path: Path) -> None:
    trace = tmp_path / "served.json"
    srv = start_server(server_cache_dir, serve_options={"profile": trace, "profile_steps": 3})
    try:
        assert srv.engine.engine.step.__func__ is not Engine.step  # the window is armed
        body = {"model": MODEL, "prompt": "x y z", "max_tokens": 6, "ignore_eos": True,
                "temperature": 0.0}  # fmt: skip
        first = srv.http.post("/v1/completions", json=body)
        assert first.status_code == 200, first.text
        deadline = time.monotonic() + 30
        while not trace.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        ranges = trace_ranges(trace)
        for phase in ("step", "schedule", "prepare_inputs", "forward", "sample", "detokenize"):
            assert ranges.get(phase, 0.0) > 0, phase
        assert srv.engine.engine.step.__func__ is Engine.step  # put back after 3 steps
        again = srv.http.post("/v1/completions", json=body)
        assert again.json()["choices"][0]["text"] == first.json()["choices"][0]["text"]
    finally:
        srv.stop()
