"""How many draft tokens to propose this step: fixed, or chosen from load and acceptance.

Speculation trades compute for steps. With B sequences decoding and k drafts each, one
verify pass runs B * (1 + k) rows and yields B * E(k) tokens, where, with a_j the measured
chance that draft j is accepted given drafts 1..j-1 were,

    E(k) = 1 + a_1 + a_1 a_2 + ... + a_1 ... a_k.

The policy (stated, and measured by benchmarks/spec_decode_bench.py) picks

    k* = argmax over k in 0..K of  B * E(k) / cost(B, k)
    cost(B, k) = t_fixed + t_row * B * (1 + k) + [k > 0] * t_seq * B + t_draft * B * k

with t_fixed, t_row, t_seq fitted by least squares to the last steps' forward time against
their row count and their number of multi-row sequences (a sequence verifying drafts is
attended like a prefill chunk, one per-sequence pass, not in the batched decode path), and
t_draft the measured draft cost per drafted token. At low load t_fixed (reading every
weight once) dominates, so extra rows are nearly free and k* is large; at high load every
row and every verifying sequence costs, and k* falls to 0 unless acceptance is high. Positions with fewer than MIN_SAMPLES observations use an optimistic
prior, so a fresh engine tries drafting before it has measurements.
"""

from __future__ import annotations

from collections import deque

import torch

from reference_engine.spec_decode.metrics import SpecDecodingStats

MIN_SAMPLES = 16
PRIOR_ACCEPTANCE = 0.7
WINDOW = 128  # forward passes kept for the time fit


class DraftLengthPolicy:
    """Owned by SpecDecoder: it reports forward times (observe_forward) and asks for k."""

    def __init__(self, max_tokens: int, adaptive: bool) -> None:
        self.max_tokens = max_tokens
        self.adaptive = adaptive
        # (rows, multi-row sequences, seconds) of recent forward passes
        self._times: deque[tuple[int, int, float]] = deque(maxlen=WINDOW)
        self.draft_time_per_token = 0.0

    def observe_forward(self, num_rows: int, num_multi_row_seqs: int, seconds: float) -> None:
        self._times.append((num_rows, num_multi_row_seqs, seconds))

    def observe_draft(self, num_drafted: int, seconds: float) -> None:
        if num_drafted:
            per = seconds / num_drafted
            # A slow-moving average: one noisy step must not flip the policy.
            self.draft_time_per_token = (
                per
                if self.draft_time_per_token == 0
                else 0.9 * self.draft_time_per_token + 0.1 * per
            )

    def time_model(self) -> tuple[float, float, float]:
        """(t_fixed, t_row, t_seq) seconds, least squares over the window (negative
        coefficients clamped to 0). With too little spread in the observations yet, half
        the mean step time is taken as fixed and half as per-row cost."""
        if not self._times:
            return 1.0, 0.0, 0.0  # nothing measured: rows look free, so drafting is tried
        x = torch.tensor([[1.0, r, m] for r, m, _ in self._times], dtype=torch.float64)
        y = torch.tensor([[t] for _, _, t in self._times], dtype=torch.float64)
        if int(torch.linalg.matrix_rank(x)) == 3:
            coef = torch.linalg.lstsq(x, y).solution.clamp(min=0.0).flatten().tolist()
            return coef[0], coef[1], coef[2]
        mean_r = float(x[:, 1].mean())
        mean_t = float(y.mean())
        return mean_t / 2, mean_t / 2 / max(mean_r, 1.0), 0.0

    @staticmethod
    def acceptance(stats: SpecDecodingStats, max_tokens: int) -> list[float]:
        """Conditional acceptance per position; the prior where too few drafts reached it."""
        out = []
        for j in range(max_tokens):
            reached = stats.reached_per_position[j] if j < len(stats.reached_per_position) else 0
            if reached < MIN_SAMPLES:
                out.append(PRIOR_ACCEPTANCE)
            else:
                out.append(stats.accepted_per_position[j] / reached)
        return out

    def choose(self, batch_size: int, stats: SpecDecodingStats) -> int:
        if not self.adaptive or batch_size == 0:
            return self.max_tokens
        t_fixed, t_row, t_seq = self.time_model()
        alpha = self.acceptance(stats, self.max_tokens)
        best_k, best_rate = 0, 0.0
        expected, run = 1.0, 1.0
        for k in range(self.max_tokens + 1):
            if k > 0:
                run *= alpha[k - 1]
                expected += run
            cost = (
                t_fixed
                + t_row * batch_size * (1 + k)
                + (t_seq * batch_size if k > 0 else 0.0)
                + self.draft_time_per_token * batch_size * k
            )
            rate = batch_size * expected / max(cost, 1e-12)
            if rate > best_rate * (1 + 1e-9):  # ties go to the shorter draft
                best_k, best_rate = k, rate
        return best_k
