"""Per-request state: what was asked, what has been generated, how far the KV cache got.

A request with n > 1 is a SequenceGroup of n Sequences. Sequence 0 prefills
the prompt; its siblings wait until that is done and then fork its prompt
blocks (see Scheduler), so the prompt is computed once. Blocks themselves are
owned by the KVCacheManager, keyed by `seq_id`, not by the Sequence.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reference_engine.outputs import RequestMetrics
from reference_engine.sampling_params import SamplingParams

if TYPE_CHECKING:
    import torch


class SequenceStatus(enum.Enum):
    WAITING = "waiting"  # never scheduled, or a sibling waiting to fork
    RUNNING = "running"
    SWAPPED = "swapped"  # preempted, KV parked in host memory
    PREEMPTED = "preempted"  # preempted, KV dropped: recomputed on readmission
    FINISHED_STOPPED = "finished_stopped"
    FINISHED_LENGTH = "finished_length"
    FINISHED_ABORTED = "finished_aborted"

    @property
    def is_finished(self) -> bool:
        return self in _FINISHED


_FINISHED = {
    SequenceStatus.FINISHED_STOPPED,
    SequenceStatus.FINISHED_LENGTH,
    SequenceStatus.FINISHED_ABORTED,
}


@dataclass(slots=True, eq=False)
class Sequence:
    seq_id: str
    request_id: str
    index: int  # position among the request's n samples
    prompt_token_ids: list[int]
    params: SamplingParams
    arrival_time: float
    priority: int = 0  # lower runs first under the priority policy (vLLM's convention)
    order: int = 0  # admission counter: breaks arrival-time ties deterministically
    output_token_ids: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0  # tokens whose K/V are in the cache
    num_cached_tokens: int = 0  # of those, how many came from the prefix cache at admission
    status: SequenceStatus = SequenceStatus.WAITING
    generator: torch.Generator | None = None  # seeded sampling; independent of batch mates
    fork_parent: Sequence | None = None  # n > 1 sibling: waits for this one's prefill
    # Filled in by the engine's update phase.
    detokenizer: Any = None  # IncrementalDetokenizer (typed loosely: it imports tokenizers)
    text: str = ""
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    logprobs: list[Any] | None = None
    prompt_logprobs: list[Any] | None = None
    num_preemptions: int = 0
    # H2O eviction state (heavy_hitters.H2OState) when params.kv_eviction is H2O.
    h2o: Any = None
    # Speculative drafts to verify in the next step (written by SpecDecoder.propose, cut by
    # the scheduler to the token budget, consumed by the engine's update).
    spec_token_ids: list[int] = field(default_factory=list)
    # Overlap scheduling: tokens a step in flight is sampling, counted as the sequence's
    # but not yet known (the next step is scheduled before they are; overlap_scheduler.py).
    num_inflight_tokens: int = 0
    # The LoRA adapter this request runs with (lora/request.py); None: the base model.
    lora_name: str | None = None
    # Its prefix-cache namespace (LoRAManager.cache_tags): 0 for the base model.
    prefix_cache_tag: int = 0
    # The request's images (multimodal/inputs.MultiModalInputs), shared by its samples.
    multi_modal: Any = None

    def cache_token_ids(self, token_ids: list[int]) -> list[int]:
        """Token ids as the prefix cache sees them. An adapter's KV differs from the base
        model's for the same tokens, so each adapter looks up and offers tokens in its own
        namespace (vLLM mixes the adapter into every block hash instead); an image's
        placeholder tokens become a key of its content (MultiModalInputs.cache_view)."""
        if self.multi_modal is not None:
            token_ids = self.multi_modal.cache_view(token_ids)
        if not self.prefix_cache_tag:
            return token_ids
        offset = self.prefix_cache_tag << 32  # above every vocabulary id
        return [t + offset for t in token_ids]

    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_tokens(self) -> int:
        return len(self.prompt_token_ids) + len(self.output_token_ids) + self.num_inflight_tokens

    @property
    def all_token_ids(self) -> list[int]:
        return self.prompt_token_ids + self.output_token_ids

    @property
    def num_uncomputed_tokens(self) -> int:
        """Tokens that still have to go through the model (the prompt tail, or the last sample)."""
        return self.num_tokens - self.num_computed_tokens

    @property
    def in_prefill(self) -> bool:
        return self.num_computed_tokens < self.num_prompt_tokens

    @property
    def is_finished(self) -> bool:
        return self.status.is_finished

    @property
    def wants_prompt_logprobs(self) -> bool:
        return self.params.prompt_logprobs is not None

    def waiting_for_fork(self) -> bool:
        parent = self.fork_parent
        return parent is not None and not parent.is_finished and parent.in_prefill

    def sort_key(self, policy: str) -> tuple[float, ...]:
        """Scheduling order; a preempted request keeps its arrival time, so it goes first again."""
        if policy == "priority":
            return (self.priority, self.arrival_time, self.order)
        return (self.arrival_time, self.order)


@dataclass(slots=True, eq=False)
class SequenceGroup:
    """One user request: the prompt and its n samples."""

    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    params: SamplingParams
    seqs: list[Sequence]
    metrics: RequestMetrics

    @property
    def is_finished(self) -> bool:
        return all(s.is_finished for s in self.seqs)
