"""What capacity planning asks of the simulator: the largest arrival rate that still meets a
latency objective, and how that rate moves with a knob (max_num_seqs, chunk size, prefix
caching).

Bisection on the Poisson rate: below saturation the p99 latencies grow smoothly with the
rate, past it the queue grows without bound, so "meets the objective" flips once. Each probe
is one simulated run of the same seeded traffic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from reference_engine.capacity.simulator import SimResult, Simulator, Traffic
from reference_engine.loadtest.report import LoadReport, summarize


@dataclass(frozen=True, slots=True)
class LatencyObjective:
    ttft_p99_ms: float | None = None
    tpot_p99_ms: float | None = None

    def __post_init__(self) -> None:
        if self.ttft_p99_ms is None and self.tpot_p99_ms is None:
            raise ValueError("a latency objective needs a TTFT or TPOT p99 bound (or both)")

    def met_by(self, report: LoadReport) -> bool:
        checks = ((self.ttft_p99_ms, report.ttft_ms.p99), (self.tpot_p99_ms, report.tpot_ms.p99))
        # A NaN percentile (nothing measured) never meets a bound.
        return all(bound is None or value <= bound for bound, value in checks)


@dataclass(frozen=True, slots=True)
class RateProbe:
    rate: float
    report: LoadReport
    ok: bool


def report_of(sim: SimResult) -> LoadReport:
    return summarize(sim.results, sim.wall_s)


def max_rate(
    simulator: Simulator,
    traffic: Traffic,
    objective: LatencyObjective,
    lo: float = 0.05,
    hi: float | None = None,
    iterations: int = 12,
    on_probe: Callable[[RateProbe], None] | None = None,
) -> tuple[float, list[RateProbe]]:
    """The largest rate (requests/s) meeting `objective`, to 1/2**iterations of the bracket;
    0.0 when even `lo` does not. `traffic` gives the workload and length (its rate is
    replaced); `hi` defaults to a rate no engine step could keep up with."""
    probes: list[RateProbe] = []

    def probe(rate: float) -> bool:
        sim = simulator.run(dataclasses.replace(traffic, rate=rate, concurrency=None))
        report = report_of(sim)
        result = RateProbe(rate, report, objective.met_by(report))
        probes.append(result)
        if on_probe is not None:
            on_probe(result)
        return result.ok

    if not probe(lo):
        return 0.0, probes
    if hi is None:
        hi = lo * 2
        while probe(hi):  # double until it fails
            lo, hi = hi, hi * 2
            if hi > 1e6:
                return lo, probes
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if probe(mid):
            lo = mid
        else:
            hi = mid
    return lo, probes
