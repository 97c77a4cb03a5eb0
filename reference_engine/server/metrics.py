"""Prometheus text-format metrics (exposition format 0.0.4), written here without a client library.

Latencies are observed on the event loop as outputs reach their handlers, so
they include the queueing a real client sees (minus the network): time to
first token from the moment the request was received, inter-token latency
between consecutive deliveries, end-to-end latency at finish. Engine gauges
(running, waiting, KV usage, ...) come from the engine thread's latest snapshot.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from reference_engine.server.async_engine import EngineSnapshot
from reference_engine.spec_decode.metrics import SpecDecodingStats

PREFIX = "atlas"

TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
                2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)  # fmt: skip
ITL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
               0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0)  # fmt: skip
E2E_BUCKETS = (0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
               30.0, 40.0, 50.0, 60.0, 120.0, 240.0)  # fmt: skip


@dataclass(slots=True)
class Histogram:
    name: str
    help: str
    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)  # per bucket, not cumulative
    total: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.buckets) + 1)  # the last one is +Inf

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.count += 1

    def render(self) -> Iterable[str]:
        yield f"# HELP {self.name} {self.help}"
        yield f"# TYPE {self.name} histogram"
        running = 0
        for bound, n in zip(self.buckets, self.counts, strict=False):
            running += n
            yield f'{self.name}_bucket{{le="{_num(bound)}"}} {running}'
        yield f'{self.name}_bucket{{le="+Inf"}} {self.count}'
        yield f"{self.name}_sum {_num(self.total)}"
        yield f"{self.name}_count {self.count}"


def _num(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _metric(
    name: str, kind: str, help_text: str, samples: Iterable[tuple[str, float]]
) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    lines.extend(f"{name}{labels} {_num(v)}" for labels, v in samples)
    return lines


class RequestTimer:
    """Follows one request's deliveries and feeds the server's histograms."""

    __slots__ = ("_last", "_metrics", "arrival", "first_token")

    def __init__(self, metrics: ServerMetrics, arrival: float) -> None:
        self._metrics = metrics
        self.arrival = arrival
        self.first_token: float | None = None
        self._last: float | None = None

    def on_tokens(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if self.first_token is None:
            self.first_token = now
            self._metrics.ttft.observe(now - self.arrival)
        elif self._last is not None:
            self._metrics.itl.observe(now - self._last)
        self._last = now

    def on_finish(
        self, finish_reasons: Iterable[str | None], prompt_tokens: int, output_tokens: int
    ) -> None:
        now = time.monotonic()
        m = self._metrics
        m.e2e.observe(now - self.arrival)
        m.prompt_tokens += prompt_tokens
        m.generation_tokens += output_tokens
        for reason in finish_reasons:
            key = reason or "abort"
            m.finished[key] = m.finished.get(key, 0) + 1


class ServerMetrics:
    """One per server; everything here is touched from the event loop thread only."""

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.ttft = Histogram(
            f"{PREFIX}_time_to_first_token_seconds",
            "Time from request receipt to its first output token.",
            TTFT_BUCKETS,
        )
        self.itl = Histogram(
            f"{PREFIX}_inter_token_latency_seconds",
            "Time between consecutive token deliveries of one request.",
            ITL_BUCKETS,
        )
        self.e2e = Histogram(
            f"{PREFIX}_e2e_request_latency_seconds",
            "Time from request receipt to its last output.",
            E2E_BUCKETS,
        )
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.finished: dict[str, int] = {}  # finish reason -> completed sequences
        self.num_client_aborts = 0
        self.num_overloaded = 0  # requests refused with 429
        self.num_errors: dict[int, int] = {}  # HTTP status -> error responses
        # More families from parts beside the server (a disaggregation role, KV tiers):
        # each returns (name, type, help, samples) rows like the table in `render`.
        self.sources: list[Callable[[], list[tuple[str, str, str, list[tuple[str, float]]]]]] = []

    def timer(self, arrival: float) -> RequestTimer:
        return RequestTimer(self, arrival)

    def count_error(self, status: int) -> None:
        self.num_errors[status] = self.num_errors.get(status, 0) + 1

    def render(self, snap: EngineSnapshot, num_streams: int, num_failed_steps: int = 0) -> str:
        s = snap.stats
        p = PREFIX
        # (name, type, help, samples): one row per exported series.
        table: list[tuple[str, str, str, list[tuple[str, float]]]] = [
            (
                f"{p}_num_requests_running", "gauge", "Sequences in the running batch.",
                [("", s.num_running)],
            ),
            (
                f"{p}_num_requests_waiting", "gauge", "Sequences waiting to be scheduled.",
                [("", s.num_waiting)],
            ),
            (
                f"{p}_num_requests_swapped", "gauge", "Sequences swapped out to host memory.",
                [("", s.num_swapped)],
            ),
            (
                f"{p}_num_streams_open", "gauge", "HTTP requests waiting on the engine.",
                [("", num_streams)],
            ),
            (
                f"{p}_kv_cache_usage_perc", "gauge",
                "Fraction of KV blocks in use (by requests or the prefix cache).",
                [("", s.kv_cache_usage)],
            ),
            (
                f"{p}_kv_blocks_total", "gauge", "KV blocks in the device pool.",
                [("", snap.num_blocks)],
            ),
            (
                f"{p}_kv_blocks_free", "gauge", "KV blocks on the free list.",
                [("", snap.num_free_blocks)],
            ),
            (
                f"{p}_kv_blocks_cached", "gauge",
                "KV blocks only the prefix cache holds (evictable, reusable).",
                [("", snap.num_cached_blocks)],
            ),
            (
                f"{p}_kv_blocks_held", "gauge",
                "KV blocks held by live requests (0 when idle, else blocks leaked).",
                [("", snap.num_blocks_held)],
            ),
            (
                f"{p}_prefix_cache_hit_rate", "gauge",
                "Prompt tokens served from the prefix cache / prompt tokens looked up.",
                [("", s.prefix_cache_hit_rate)],
            ),
            (
                f"{p}_prefix_cache_hit_tokens_total", "counter", "Prompt tokens served from the cache.",
                [("", s.prefix_cache_hit_tokens)],
            ),
            (
                f"{p}_num_preemptions_total", "counter", "Sequences preempted for lack of KV blocks.",
                [("", s.num_preemptions)],
            ),
            (
                f"{p}_num_swap_outs_total", "counter", "Preemptions that swapped KV to host memory.",
                [("", s.num_swap_outs)],
            ),
            (
                f"{p}_engine_steps_total", "counter", "Engine steps run.", [("", s.num_steps)]
            ),
            (
                f"{p}_prompt_tokens_total", "counter", "Prompt tokens of finished requests.",
                [("", self.prompt_tokens)],
            ),
            (
                f"{p}_generation_tokens_total", "counter", "Output tokens of finished requests.",
                [("", self.generation_tokens)],
            ),
            (
                f"{p}_request_success_total", "counter", "Finished sequences by finish reason.",
                [(f'{{finished_reason="{k}"}}', v) for k, v in sorted(self.finished.items())],
            ),
            (
                f"{p}_client_aborts_total", "counter",
                "Requests aborted because their client disconnected.",
                [("", self.num_client_aborts)],
            ),
            (
                f"{p}_overloaded_requests_total", "counter",
                "Requests refused with 429 because the waiting queue was full.",
                [("", self.num_overloaded)],
            ),
            (
                f"{p}_failed_steps_total", "counter",
                "Engine steps that raised; only their requests were aborted.",
                [("", num_failed_steps)],
            ),
            (
                f"{p}_http_errors_total", "counter", "Error responses by HTTP status.",
                [(f'{{status="{k}"}}', v) for k, v in sorted(self.num_errors.items())],
            ),
        ]  # fmt: skip
        for source in self.sources:
            table.extend(source())
        lines: list[str] = []
        for name, kind, help_text, samples in table:
            lines += _metric(name, kind, help_text, samples)
        if s.spec_decoding is not None:
            lines += _spec_decode_lines(s.spec_decoding)
        for hist in (self.ttft, self.itl, self.e2e):
            lines.extend(hist.render())
        return "\n".join(lines) + "\n"


def _spec_decode_lines(spec: SpecDecodingStats) -> list[str]:
    """vLLM's spec_decode_* series: counters, so a dashboard divides rates of them."""
    p = PREFIX
    per_pos: list[tuple[str, float]] = [
        (f'{{position="{j}"}}', a) for j, a in enumerate(spec.accepted_per_position)
    ]
    rows: list[tuple[str, str, str, list[tuple[str, float]]]] = [
        (f"{p}_spec_decode_num_drafts_total", "counter",
         "Sequence-steps that verified draft tokens.", [("", spec.num_drafts)]),
        (f"{p}_spec_decode_num_draft_tokens_total", "counter", "Draft tokens proposed.",
         [("", spec.num_draft_tokens)]),
        (f"{p}_spec_decode_num_accepted_tokens_total", "counter", "Draft tokens accepted.",
         [("", spec.num_accepted_tokens)]),
        (f"{p}_spec_decode_num_accepted_tokens_per_pos_total", "counter",
         "Draft tokens accepted at each draft position.", per_pos),
        (f"{p}_spec_decode_mean_accepted_length", "gauge",
         "Tokens emitted per verified sequence-step (accepted drafts + 1).",
         [("", spec.mean_accepted_length)]),
        (f"{p}_spec_decode_draft_seconds_total", "counter", "Time spent proposing drafts.",
         [("", spec.draft_time_s)]),
        (f"{p}_spec_decode_verify_seconds_total", "counter",
         "Forward time of steps that verified drafts.", [("", spec.verify_time_s)]),
        (f"{p}_spec_decode_num_draft_tokens_per_step", "gauge",
         "Draft length the policy chose last.", [("", spec.last_num_draft_tokens)]),
    ]  # fmt: skip
    lines: list[str] = []
    for name, kind, help_text, samples in rows:
        lines += _metric(name, kind, help_text, samples)
    return lines


def parse_prometheus(text: str) -> dict[str, float]:
    """`name{labels}` -> value for every sample line (tests and the benchmark read these)."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        values[key] = float(value)
    return values
