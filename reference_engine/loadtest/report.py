"""Summaries of a load run: throughput and latency percentiles (milliseconds)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from reference_engine.loadtest.client import RequestResult

PERCENTILES = (50, 90, 95, 99)


@dataclass(frozen=True, slots=True)
class Distribution:
    count: int
    mean: float
    min: float
    max: float
    p50: float
    p90: float
    p95: float
    p99: float


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    if not sorted_values:
        return math.nan
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def distribution(values_s: list[float]) -> Distribution:
    """Seconds in, milliseconds out (NaN everywhere when there is nothing to summarise)."""
    ms = sorted(v * 1000.0 for v in values_s)
    if not ms:
        nan = math.nan
        return Distribution(0, nan, nan, nan, nan, nan, nan, nan)
    p = [percentile(ms, q) for q in PERCENTILES]
    return Distribution(len(ms), sum(ms) / len(ms), ms[0], ms[-1], *p)


@dataclass(frozen=True, slots=True)
class LoadReport:
    num_requests: int
    num_completed: int
    num_errors: int
    wall_s: float
    request_throughput: float  # completed requests per second
    output_throughput: float  # output tokens per second
    total_token_throughput: float  # prompt + output tokens per second
    total_prompt_tokens: int
    total_output_tokens: int
    ttft_ms: Distribution
    tpot_ms: Distribution
    itl_ms: Distribution
    e2e_ms: Distribution
    client_loop_lag_ms: Distribution  # the load generator's own event-loop delay
    errors: dict[str, int]  # message -> count, the most common few

    def to_json(self) -> dict[str, Any]:
        """JSON-safe: NaN (nothing measured) becomes null."""
        return _clean(asdict(self))


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def summarize(
    results: list[RequestResult], wall_s: float, loop_lag_s: list[float] | None = None
) -> LoadReport:
    ok = [r for r in results if r.ok]
    prompt = sum(r.prompt_tokens for r in ok)
    output = sum(r.output_tokens for r in ok)
    wall = max(wall_s, 1e-9)
    errors = Counter(r.error for r in results if not r.ok)
    return LoadReport(
        num_requests=len(results),
        num_completed=len(ok),
        num_errors=len(results) - len(ok),
        wall_s=wall_s,
        request_throughput=len(ok) / wall,
        output_throughput=output / wall,
        total_token_throughput=(prompt + output) / wall,
        total_prompt_tokens=prompt,
        total_output_tokens=output,
        ttft_ms=distribution([r.ttft_s for r in ok if r.ttft_s is not None]),
        tpot_ms=distribution([t for r in ok if (t := r.tpot_s) is not None]),
        itl_ms=distribution([gap for r in ok for gap in r.itl_s]),
        e2e_ms=distribution([r.latency_s for r in ok]),
        client_loop_lag_ms=distribution(loop_lag_s or []),
        errors=dict(errors.most_common(5)),
    )
