"""SpecDecodingStats: what speculation bought, vLLM's spec-decode metrics in one dataclass.

Owned by SpecDecoder, which records every verified sequence-step; read by Engine.stats()
and the server's /metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class SpecDecodingStats:
    num_drafts: int = 0  # sequence-steps that verified at least one draft token
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    # accepted_per_position[j]: drafts accepted at position j (0-based); acceptance at j is
    # accepted_per_position[j] / drafted_per_position[j].
    accepted_per_position: list[int] = field(default_factory=list)
    drafted_per_position: list[int] = field(default_factory=list)
    # reached_per_position[j]: drafts at j whose predecessors were all accepted, i.e. that
    # were really compared with the target (the denominator of conditional acceptance).
    reached_per_position: list[int] = field(default_factory=list)
    draft_time_s: float = 0.0  # proposing (the draft model's forward passes)
    verify_time_s: float = 0.0  # target forward passes of steps that carried drafts
    num_draft_steps: int = 0
    last_num_draft_tokens: int = 0  # the draft length the policy chose last

    def record(self, num_drafted: int, num_accepted: int) -> None:
        if num_drafted == 0:
            return
        self.num_drafts += 1
        self.num_draft_tokens += num_drafted
        self.num_accepted_tokens += num_accepted
        while len(self.drafted_per_position) < num_drafted:
            self.drafted_per_position.append(0)
            self.accepted_per_position.append(0)
            self.reached_per_position.append(0)
        for j in range(num_drafted):
            self.drafted_per_position[j] += 1
            if j <= num_accepted:
                self.reached_per_position[j] += 1
            if j < num_accepted:
                self.accepted_per_position[j] += 1

    def snapshot(self) -> SpecDecodingStats:
        """A copy another thread may read while the engine keeps counting."""
        return SpecDecodingStats(
            self.num_drafts, self.num_draft_tokens, self.num_accepted_tokens,
            list(self.accepted_per_position), list(self.drafted_per_position),
            list(self.reached_per_position), self.draft_time_s, self.verify_time_s,
            self.num_draft_steps, self.last_num_draft_tokens,
        )  # fmt: skip

    @property
    def acceptance_rate(self) -> float:
        return self.num_accepted_tokens / self.num_draft_tokens if self.num_draft_tokens else 0.0

    @property
    def acceptance_per_position(self) -> list[float]:
        return [
            a / d if d else 0.0
            for a, d in zip(self.accepted_per_position, self.drafted_per_position, strict=True)
        ]

    @property
    def conditional_acceptance_per_position(self) -> list[float]:
        """P(draft j accepted | drafts before it accepted), what DraftLengthPolicy uses."""
        return [
            a / r if r else 0.0
            for a, r in zip(self.accepted_per_position, self.reached_per_position, strict=True)
        ]

    @property
    def mean_accepted_length(self) -> float:
        """Tokens a verified sequence-step emits on average: accepted drafts + the one the
        target always adds (vLLM's "mean acceptance length"); 1.0 means drafts never help."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts if self.num_drafts else 0.0
