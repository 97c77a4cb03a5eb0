"""The load generator against the live server, its workload files, and its statistics."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from server_fixtures import MODEL, LiveServer
from typer.testing import CliRunner

from analyzer.cli import app
from reference_engine.loadtest.client import Target
from reference_engine.loadtest.report import distribution, percentile, summarize
from reference_engine.loadtest.runner import LoadPlan, run
from reference_engine.loadtest.workload import (
    LoadRequest,
    WorkloadError,
    load_jsonl,
    synthetic_workload,
)

EXACT = {"ignore_eos": True, "temperature": 0.0}


def test_closed_loop_counts_every_token(live: LiveServer) -> None:
    reqs = synthetic_workload(6, (3, 10), (2, 6), seed=1)
    plan = LoadPlan(reqs, concurrency=4, num_requests=12)
    result = asyncio.run(run(plan, Target(live.base_url, MODEL, "completions", EXACT)))
    report = summarize(result.results, result.wall_s, result.loop_lag_s)
    assert report.num_completed == 12 and report.num_errors == 0
    # The client watched its own event loop the whole run (one sample per ~10 ms).
    assert report.client_loop_lag_ms.count >= 1 and report.client_loop_lag_ms.min >= 0
    # The list is cycled: requests 6..11 repeat 0..5, and ignore_eos makes lengths exact.
    assert report.total_output_tokens == 2 * sum(r.max_tokens for r in reqs)
    assert report.ttft_ms.count == 12
    assert 0 < report.ttft_ms.p50 <= report.ttft_ms.p99 <= report.e2e_ms.max
    assert report.itl_ms.count == report.total_output_tokens - 12  # one gap per later token
    assert report.output_throughput > 0


def test_open_loop_and_chat(live: LiveServer) -> None:
    reqs = [LoadRequest("hello there", 3)]
    plan = LoadPlan(reqs, rate=200.0, num_requests=6, seed=3)
    result = asyncio.run(run(plan, Target(live.api_url, MODEL, "chat", EXACT)))
    report = summarize(result.results, result.wall_s)
    assert report.num_completed == 6 and report.total_output_tokens == 18
    assert report.tpot_ms.count == 6


def test_duration_bounds_a_run(live: LiveServer) -> None:
    plan = LoadPlan([LoadRequest("x", 2)], concurrency=2, duration_s=0.5)
    result = asyncio.run(run(plan, Target(live.base_url, MODEL, "completions", EXACT)))
    assert result.results and all(r.ok for r in result.results)
    assert result.wall_s < 10


def test_errors_are_reported_not_raised(live: LiveServer) -> None:
    plan = LoadPlan([LoadRequest("x", 2)], concurrency=2, num_requests=3)
    result = asyncio.run(run(plan, Target(live.base_url, "no-such-model")))
    report = summarize(result.results, result.wall_s)
    assert report.num_errors == 3 and report.num_completed == 0
    (message,) = report.errors
    assert message.startswith("HTTP 404") and "no-such-model" in message
    assert report.to_json()["ttft_ms"]["p50"] is None  # NaN never reaches JSON


def test_cli_json_and_output_file(live: LiveServer, tmp_path: Path) -> None:
    dataset = tmp_path / "prompts.jsonl"
    dataset.write_text('{"prompt": "a b c", "max_tokens": 3}\n\n{"prompt": "d e"}\n')
    out = tmp_path / "result.json"
    args = ["engine", "loadtest", live.base_url, "-n", "4", "-c", "2", "--dataset", str(dataset)]
    result = CliRunner().invoke(app, [*args, "--json", "--no-progress", "-o", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["model"] == MODEL  # found through /v1/models
    assert payload["num_completed"] == 4 and payload["num_errors"] == 0
    assert payload["total_output_tokens"] == 2 * (3 + 64)
    assert json.loads(out.read_text()) == payload


def test_cli_table_with_progress(live: LiveServer) -> None:
    args = ["engine", "loadtest", live.base_url, "-n", "3", "--max-output-len", "4"]
    result = CliRunner().invoke(app, [*args, "--min-output-len", "2", "--rate", "100"])
    assert result.exit_code == 0, result.output
    assert "TTFT" in result.output and "TPOT" in result.output


def test_cli_unreachable_server_is_one_clear_line() -> None:
    result = CliRunner().invoke(app, ["engine", "loadtest", "http://127.0.0.1:9", "-n", "1"])
    assert result.exit_code == 2
    assert "cannot list models" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("not json\n", ":1: not JSON"),
        ('{"prompt": 5}\n', ':1: expected an object with a string "prompt"'),
        ('{"prompt": "a"}\n{"prompt": "b", "max_tokens": 0}\n', ":2: max_tokens"),
        ("\n\n", "holds no requests"),
    ],
)
def test_bad_dataset_lines_are_named(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(text)
    with pytest.raises(WorkloadError, match=where.replace("(", r"\(")):
        load_jsonl(path)


def test_plan_needs_a_mode_and_a_bound() -> None:
    reqs = [LoadRequest("x", 1)]
    with pytest.raises(ValueError, match="exactly one"):
        LoadPlan(reqs, concurrency=2, rate=1.0, num_requests=1)
    with pytest.raises(ValueError, match="number of requests, a duration"):
        LoadPlan(reqs, concurrency=2)


def test_percentiles_match_linear_interpolation() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 99) == pytest.approx(99.01)
    assert percentile([7.0], 90) == 7.0
    d = distribution([0.001, 0.002, 0.003])  # seconds in, ms out
    assert (d.count, d.min, d.p50, d.max) == (
        3,
        pytest.approx(1.0),
        pytest.approx(2.0),
        pytest.approx(3.0),
    )
    assert math.isnan(distribution([]).p99)


def test_synthetic_workload_is_seeded_and_in_range() -> None:
    a = synthetic_workload(20, (2, 5), (3, 9), seed=4)
    assert a == synthetic_workload(20, (2, 5), (3, 9), seed=4)
    assert all(2 <= len(r.prompt.split()) <= 5 and 3 <= r.max_tokens <= 9 for r in a)
    with pytest.raises(WorkloadError):
        synthetic_workload(3, (5, 2), (1, 1))
