"""How long one engine step takes, as a function of what the scheduler put in it.

A step's time on a CPU is close to linear in three things the book names: the prefill tokens
(projections and MLP over each new token), the decode batch size (a row per sequence through
the sampler, detokenizer and bookkeeping) and the attention work (every new token reads its
whole context). The model is

    seconds = c0 + c_prefill * prefill_tokens + c_decode * decode_seqs + c_attn * attention

fitted by ordinary least squares, which keeps the sum of predicted step times equal to the
measured sum: latencies and throughput are sums of step times, and on a shared machine the
noise is one-sided (a descheduled step only gets slower), so a fit of relative error would
under-predict them. Coefficients are kept non-negative by dropping a feature that comes out
negative and refitting (a tiny active-set NNLS). Owner: whoever fits it (calibrate.py) writes it
once; the simulator only reads it.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reference_engine.scheduler import SchedulerOutput

FEATURES = ("intercept", "prefill_tokens", "decode_seqs", "attention")


@dataclass(frozen=True, slots=True)
class StepFeatures:
    prefill_tokens: int  # new tokens of sequences still in their prompt (chunks, recomputes)
    decode_seqs: int  # sequences computing exactly their last sampled token
    attention: float  # sum over new tokens of the context each attends to, in thousands

    @classmethod
    def of(cls, out: SchedulerOutput) -> StepFeatures:
        prefill = decode = 0
        attention = 0.0
        for item in out.scheduled:
            n = item.num_new_tokens
            if n == 1 and item.start >= item.seq.num_prompt_tokens:
                decode += 1
            else:
                prefill += n
            # Token i of the chunk (0-based) attends to start + i + 1 positions.
            attention += n * item.start + n * (n + 1) / 2
        return cls(prefill, decode, attention / 1000.0)

    def row(self) -> list[float]:
        return [1.0, float(self.prefill_tokens), float(self.decode_seqs), self.attention]


@dataclass(slots=True)
class StepCostModel:
    coef: dict[str, float]  # FEATURES -> seconds per unit
    # What it was fitted on: the simulator's KV pool must match the engine it stands for.
    num_blocks: int
    block_size: int
    model: str  # the checkpoint folder, or "tiny" for the built-in model
    threads: int
    num_samples: int = 0
    fit_error: dict[str, float] = field(default_factory=dict)  # median / p90 relative error
    # Served steps run slower than the same steps measured alone: the HTTP event loop shares
    # the interpreter with the engine thread and the clients share the cores. `scale` is that
    # ratio (`atlas engine simulate --step-scale`); 1.0: as fitted. A model fitted on a served
    # engine's own steps (step_log.py) needs none.
    scale: float = 1.0
    # Measured minus predicted time of the fitted steps (seconds, mean zero), as 101 quantiles
    # (0th..100th): the machine's step-to-step variation, which the simulator may draw from
    # (`noise`), since tail latencies come from slow steps that a mean does not have. Added,
    # not multiplied: the jitter (the interpreter lock, a timer, the event loop) is a few
    # milliseconds whatever the step's size, and ratios measured on the many small steps
    # stretched the big ones of a busy engine (p99 TTFT 50-75% over at 0.75x saturation).
    residual_quantiles_s: list[float] = field(default_factory=list)
    # A served request's latency outside the engine's steps: the HTTP request and its
    # tokenization before the engine sees it, the first token's way back to the client after
    # its step. It shifts every TTFT (and latency) by a constant and no step; the engine alone
    # (calibrate.py) has none, benchmarks/capacity_validate.py measures it on lone requests.
    request_overhead_s: float = 0.0

    def predict(self, f: StepFeatures, noise: random.Random | None = None) -> float:
        raw = sum(self.coef[name] * x for name, x in zip(FEATURES, f.row(), strict=True))
        if noise is not None and self.residual_quantiles_s:
            raw = max(raw + _draw(self.residual_quantiles_s, noise), 0.25 * raw)
        return raw * self.scale

    @classmethod
    def fit(cls, samples: list[tuple[StepFeatures, float]], **meta: Any) -> StepCostModel:
        if len(samples) < len(FEATURES) * 4:
            raise ValueError(
                f"need at least {len(FEATURES) * 4} measured steps, got {len(samples)}"
            )
        rows = [f.row() for f, _ in samples]
        times = [t for _, t in samples]
        active = list(range(len(FEATURES)))
        while True:
            coef = _lstsq([[r[j] for j in active] for r in rows], times)
            negative = [j for j, c in zip(active, coef, strict=True) if c < 0 and j != 0]
            if not negative:
                break
            worst = min(negative, key=lambda j: coef[active.index(j)])
            active.remove(worst)
        full = dict.fromkeys(FEATURES, 0.0)
        for j, c in zip(active, coef, strict=True):
            full[FEATURES[j]] = max(c, 0.0)
        model = cls(coef=full, num_samples=len(samples), **meta)
        errors = sorted(abs(model.predict(f) - t) / t for f, t in samples)
        residuals = sorted(t - model.predict(f) for f, t in samples)
        mean = sum(residuals) / len(residuals)  # ~0 by least squares; exactly 0 when drawn
        model.residual_quantiles_s = [
            residuals[round(q * (len(residuals) - 1) / 100)] - mean for q in range(101)
        ]
        model.fit_error = {
            "median": errors[len(errors) // 2],
            "p90": errors[min(len(errors) - 1, int(0.9 * len(errors)))],
        }
        return model

    # --- persistence ------------------------------------------------------------------
    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> StepCostModel:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            coef = raw["coef"]
            if not (isinstance(raw.get("scale", 1.0), int | float) and raw.get("scale", 1.0) > 0):
                raise ValueError("scale must be a positive number")
            overhead = raw.get("request_overhead_s", 0.0)
            if not (isinstance(overhead, int | float) and 0 <= overhead < math.inf):
                raise ValueError("request_overhead_s must be a non-negative number")
            if set(coef) != set(FEATURES) or not all(
                isinstance(v, int | float) and math.isfinite(v) for v in coef.values()
            ):
                raise ValueError(f"coefficients must be finite numbers for {FEATURES}")
            return cls(**raw)
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path} is not a step-cost model ({exc})") from None


def _draw(quantiles: list[float], rng: random.Random) -> float:
    """A value from the measured distribution (linear between the stored quantiles)."""
    pos = rng.random() * (len(quantiles) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(quantiles) - 1)
    return quantiles[lo] + (quantiles[hi] - quantiles[lo]) * (pos - lo)


def _lstsq(rows: list[list[float]], times: list[float]) -> list[float]:
    import torch

    a = torch.tensor(rows, dtype=torch.float64)
    b = torch.tensor(times, dtype=torch.float64)
    solution = torch.linalg.lstsq(a, b[:, None]).solution
    return [float(x) for x in solution[:, 0]]
