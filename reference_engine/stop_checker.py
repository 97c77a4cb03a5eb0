"""When is a request done? Token-level rules here, string-level rules shared
with the incremental detokenizer (which owns the text).

Per generated token the engine does what vLLM V1 splits between its scheduler
(token stops) and its output processor (stop strings):

    decision = checker.check_tokens(params, num_prompt_tokens, output_token_ids)
    update = detokenizer.update([token], finished=decision is not None,
                                stop_terminated=decision is not None and decision.is_stop)
    decision = checker.merge(decision, update.stop_string)

`StopChecker.step` wraps exactly those three lines.

Rules, in order:
  * the first `min_tokens` output tokens never stop a request (the sampler
    also forbids stop tokens there), except for running out of room:
    max_tokens / max_model_len win over min_tokens;
  * EOS (unless ignore_eos) or a token in stop_token_ids -> "stop"; the stop
    token's text is left out unless include_stop_str_in_output (vLLM);
  * a stop string in the text -> "stop"; the text is cut right before it (or
    right after it with include_stop_str_in_output); the token ids are kept;
  * max_tokens output tokens, or prompt + output reaching max_model_len -> "length".
A stop token or stop string on the very token that also hits a length limit
reports "stop": the model did finish on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from reference_engine.sampling_params import SamplingParams

if TYPE_CHECKING:  # the detokenizer imports this module's string helpers
    from reference_engine.detokenizer import IncrementalDetokenizer

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True, slots=True)
class StopDecision:
    finish_reason: FinishReason
    # vLLM's stop_reason: the stop token id or stop string that matched; None
    # for EOS and for length limits.
    stop_reason: int | str | None = None

    @property
    def is_stop(self) -> bool:
        return self.finish_reason == "stop"


@dataclass(frozen=True, slots=True)
class StopCheckResult:
    text_delta: str  # new text to stream for this request (may be "")
    decision: StopDecision | None  # None: keep generating


class StopChecker:
    def __init__(self, max_model_len: int, eos_token_ids: Iterable[int] = ()) -> None:
        if max_model_len < 1:
            raise ValueError(f"max_model_len must be positive, got {max_model_len}")
        self.max_model_len = max_model_len
        self.eos_token_ids = frozenset(eos_token_ids)

    def check_tokens(
        self, params: SamplingParams, num_prompt_tokens: int, output_token_ids: Sequence[int]
    ) -> StopDecision | None:
        """Token-level decision after the newest token was appended."""
        num_out = len(output_token_ids)
        if num_out == 0:
            return None
        if num_out > params.min_tokens:
            last = output_token_ids[-1]
            if last in params.stop_token_ids:
                return StopDecision("stop", last)
            if not params.ignore_eos and last in self.eos_token_ids:
                return StopDecision("stop")
        if params.max_tokens is not None and num_out >= params.max_tokens:
            return StopDecision("length")
        if num_prompt_tokens + num_out >= self.max_model_len:
            return StopDecision("length")
        return None

    @staticmethod
    def merge(decision: StopDecision | None, stop_string: str | None) -> StopDecision | None:
        """A stop string found in the text overrides a length decision."""
        return StopDecision("stop", stop_string) if stop_string is not None else decision

    def step(
        self,
        params: SamplingParams,
        num_prompt_tokens: int,
        output_token_ids: Sequence[int],
        detokenizer: IncrementalDetokenizer,
        new_token_ids: Sequence[int],
    ) -> StopCheckResult:
        """The whole per-token finish logic: token rules, then text rules."""
        decision = self.check_tokens(params, num_prompt_tokens, output_token_ids)
        update = detokenizer.update(
            new_token_ids,
            finished=decision is not None,
            stop_terminated=decision is not None and decision.is_stop,
        )
        return StopCheckResult(update.text_delta, self.merge(decision, update.stop_string))


# --- stop strings: pure functions over text, used by the detokenizer --------------------------


@dataclass(frozen=True, slots=True)
class StopMatch:
    stop: str
    start: int  # index in the text where the stop string begins
    end: int  # index just past it


def find_stop_string(text: str, stops: Sequence[str], new_from: int) -> StopMatch | None:
    """The stop string occurrence that COMPLETES first among those ending past
    `new_from` (text before `new_from` was checked already).

    Earliest end (ties: earliest start, i.e. the longer string) is what a
    reader streaming character by character would hit first, so the result
    does not depend on how the text was split into tokens.
    """
    best: StopMatch | None = None
    for stop in stops:
        if not stop:
            continue
        idx = text.find(stop, max(0, new_from - len(stop) + 1))
        if idx < 0:
            continue
        match = StopMatch(stop, idx, idx + len(stop))
        if best is None or (match.end, match.start) < (best.end, best.start):
            best = match
    return best


def partial_stop_suffix(text: str, stops: Sequence[str]) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of some
    stop string: those characters might still become a stop string, so they
    must not be streamed yet."""
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:n]):
                longest = n
                break
    return longest
