"""What the engine hands back each step (vLLM's RequestOutput / CompletionOutput shapes).

Every output carries both the cumulative state (`text`, `token_ids`) and what
is new since the previous output of the same request (`text_delta`,
`token_ids_delta`), so a streaming server needs no bookkeeping of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    finish_reason: str | None = None  # "stop" | "length" | "abort" | None while running
    stop_reason: int | str | None = None  # the stop token id or stop string that matched
    logprobs: list[Any] | None = None  # per token: {token_id: Logprob}
    text_delta: str = ""
    token_ids_delta: list[int] = field(default_factory=list)
    num_cached_tokens: int = 0  # prompt tokens served from the prefix cache or a sibling

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass(slots=True)
class RequestMetrics:
    arrival_time: float
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    finished_time: float | None = None

    @property
    def time_to_first_token(self) -> float | None:
        if self.first_token_time is None:
            return None
        return self.first_token_time - self.arrival_time


@dataclass(slots=True)
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool
    prompt_logprobs: list[Any] | None = None  # per prompt position; None for position 0
    metrics: RequestMetrics | None = None
    num_cached_tokens: int = 0
    # Label of the weights that produced this step's tokens (weight_update.py).
    weight_version: str = "default"
