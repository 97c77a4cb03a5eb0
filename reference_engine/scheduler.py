"""Continuous batching: every step, decide which sequences run and how many tokens each.

One token budget per step (`max_num_batched_tokens`) is shared by decodes and
prefill chunks, so a long prompt is split across steps while running requests
keep decoding (chunked prefill). The order is vLLM V1's:

1. running sequences, oldest first, each gets min(tokens it still needs, budget left);
   when the KV pool runs dry, preempt the newest (or lowest-priority) running
   sequence and retry: recompute drops its KV, swap parks it in host memory;
2. if nothing was preempted: swapped sequences come back first, then
   waiting ones are admitted (prefix-cache hit or fork of a sibling's prompt
   blocks first), while sequences, budget and blocks allow.

The scheduler never touches tensors: it hands the engine token counts and
block copies to perform (swap out, swap in, then copy-on-write of radix hits
that end inside a block).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from reference_engine.heavy_hitters import evict as evict_heavy_hitters
from reference_engine.kv_cache_manager import BlockMapping, KVCacheManager
from reference_engine.kv_window import H2O
from reference_engine.prefix_cache import MatchResult
from reference_engine.sequence import Sequence, SequenceStatus


@dataclass(slots=True)
class SchedulerConfig:
    max_num_seqs: int = 32
    max_num_batched_tokens: int = 512
    enable_chunked_prefill: bool = True
    preemption_mode: str = "recompute"  # "recompute" | "swap"
    policy: str = "fcfs"  # "fcfs" | "priority"
    prefix_caching: bool = True  # offer computed blocks to the cache after each step
    max_loras: int = 0  # distinct LoRA adapters in the running set; 0: no limit (LoRA off)


class TokenLimit(Protocol):
    """Something beside the KV cache that may cut a sequence's chunk (the multimodal
    manager: no chunk reaches an image the encoder cache has no room for)."""

    def begin_step(self) -> None: ...

    def limit_tokens(self, seq: Sequence, start: int, num_tokens: int) -> int: ...


@dataclass(slots=True)
class ScheduledSeq:
    seq: Sequence
    start: int  # tokens already in the KV cache before this step
    num_new_tokens: int
    # Whether this step reaches the end of the sequence, so a token is sampled (past the
    # end: speculative drafts are verified too). Fixed when scheduled: the sequence grows.
    samples: bool = field(init=False)

    def __post_init__(self) -> None:
        self.samples = self.end >= self.seq.num_tokens

    @property
    def end(self) -> int:
        return self.start + self.num_new_tokens


@dataclass(slots=True)
class SchedulerOutput:
    scheduled: list[ScheduledSeq] = field(default_factory=list)
    preempted: list[Sequence] = field(default_factory=list)
    # Executed before the forward pass, swap-outs first (see _schedule_swapped).
    blocks_to_swap_out: BlockMapping = field(default_factory=list)
    blocks_to_swap_in: BlockMapping = field(default_factory=list)
    # Device -> device, after the swaps: an admitted request's partially matched prefix
    # block into its own fresh block (the KVCacheManager holds each source until done).
    blocks_to_copy: BlockMapping = field(default_factory=list)

    @property
    def num_batched_tokens(self) -> int:
        return sum(s.num_new_tokens for s in self.scheduled)

    @property
    def is_empty(self) -> bool:
        return not self.scheduled


class Scheduler:
    def __init__(self, config: SchedulerConfig, kv: KVCacheManager) -> None:
        self.config = config
        self.kv = kv
        self.waiting: list[Sequence] = []  # includes PREEMPTED (recompute) sequences
        self.running: list[Sequence] = []  # in admission order
        self.swapped: list[Sequence] = []
        self.num_preemptions = 0
        self.num_swap_outs = 0  # preemptions that parked KV in host memory
        self.token_limit: TokenLimit | None = None  # set by the engine for image models

    # --- queues -------------------------------------------------------------
    def add(self, seq: Sequence) -> None:
        seq.status = SequenceStatus.WAITING
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running or self.swapped)

    def recompute_all(self) -> list[Sequence]:
        """Drop the KV of every running and swapped request and queue it again with its
        tokens (recompute preemption for all at once): the weights that computed that KV
        are being replaced (weight_update.py). Returns those requests."""
        moved = self.running + self.swapped
        for seq in moved:
            self.kv.free(seq.seq_id)
            seq.num_computed_tokens = 0
            seq.spec_token_ids.clear()
            seq.status = SequenceStatus.PREEMPTED
        self.waiting.extend(moved)
        self.running.clear()
        self.swapped.clear()
        return moved

    def finish(self, seq: Sequence, status: SequenceStatus) -> None:
        """Take `seq` out of whichever queue holds it and release all its blocks."""
        assert status.is_finished
        for queue in (self.running, self.waiting, self.swapped):
            if seq in queue:
                queue.remove(seq)
                break
        self.kv.free(seq.seq_id)
        seq.status = status

    def _ordered(self, queue: list[Sequence]) -> list[Sequence]:
        return sorted(queue, key=lambda s: s.sort_key(self.config.policy))

    # --- the step ------------------------------------------------------------
    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        if self.token_limit is not None:
            self.token_limit.begin_step()
        budget = self._schedule_running(out, self.config.max_num_batched_tokens)
        # New work only when nothing had to give way: admitting while preempting would thrash.
        if not out.preempted:
            budget = self._schedule_swapped(out, budget)
            if not self.swapped:
                self._schedule_waiting(out, budget)
        out.blocks_to_copy = list(self.kv.blocks_to_copy)
        return out

    def _schedule_running(self, out: SchedulerOutput, budget: int) -> int:
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            # Speculative drafts ride along with the last sampled token, as far as the
            # budget allows (the drafts beyond it are dropped, not deferred).
            n = self._limit(seq, min(seq.num_uncomputed_tokens + len(seq.spec_token_ids), budget))
            del seq.spec_token_ids[max(0, n - seq.num_uncomputed_tokens) :]
            if n == 0:  # held back this step (token_limit); it keeps its blocks
                i += 1
                continue
            scheduled = True
            while not self.kv.allocate_slots(seq.seq_id, seq.num_computed_tokens + n):
                victim = self._pick_victim()
                budget += self._unschedule(out, victim)
                victim_index = self.running.index(victim)
                self._preempt(victim, out)
                if victim is seq:
                    scheduled = False
                    break
                if victim_index < i:
                    i -= 1
            if scheduled:
                out.scheduled.append(ScheduledSeq(seq, seq.num_computed_tokens, n))
                budget -= n
                i += 1
        return budget

    def _limit(self, seq: Sequence, n: int) -> int:
        if self.token_limit is None:
            return n
        return self.token_limit.limit_tokens(seq, seq.num_computed_tokens, n)

    def _pick_victim(self) -> Sequence:
        if self.config.policy == "priority":
            return max(self.running, key=lambda s: s.sort_key("priority"))
        return self.running[-1]

    @staticmethod
    def _unschedule(out: SchedulerOutput, victim: Sequence) -> int:
        """Drop a victim scheduled earlier in this step; returns the tokens given back."""
        for k, item in enumerate(out.scheduled):
            if item.seq is victim:
                del out.scheduled[k]
                return item.num_new_tokens
        return 0

    def _preempt(self, seq: Sequence, out: SchedulerOutput) -> None:
        self.running.remove(seq)
        seq.spec_token_ids.clear()
        seq.num_preemptions += 1
        self.num_preemptions += 1
        out.preempted.append(seq)
        if self.config.preemption_mode == "swap" and self.kv.can_swap_out(seq.seq_id):
            out.blocks_to_swap_out.extend(self.kv.swap_out(seq.seq_id))
            self.num_swap_outs += 1
            seq.status = SequenceStatus.SWAPPED
            self.swapped.append(seq)
            return
        # Recompute (also the fallback when the host pool is full): forget the KV,
        # keep the tokens; readmission prefills prompt + output again.
        self.kv.free(seq.seq_id)
        seq.num_computed_tokens = 0
        seq.status = SequenceStatus.PREEMPTED
        self.waiting.append(seq)

    def _schedule_swapped(self, out: SchedulerOutput, budget: int) -> int:
        # Runs only in steps without preemption, so no host block freed here can be
        # the target of a swap-out in the same step (swap-outs run first).
        for seq in self._ordered(self.swapped):
            if budget <= 0 or len(self.running) >= self.config.max_num_seqs:
                break
            if self._needs_lora_slot(seq):
                continue
            n = self._limit(seq, min(seq.num_uncomputed_tokens, budget))
            if n == 0:
                continue
            mapping = self.kv.swap_in(seq.seq_id, seq.num_computed_tokens + n)
            if mapping is None:
                break
            out.blocks_to_swap_in.extend(mapping)
            self.swapped.remove(seq)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.scheduled.append(ScheduledSeq(seq, seq.num_computed_tokens, n))
            budget -= n
        return budget

    def _schedule_waiting(self, out: SchedulerOutput, budget: int) -> None:
        for seq in self._ordered(self.waiting):
            if budget <= 0 or len(self.running) >= self.config.max_num_seqs:
                break
            if seq.waiting_for_fork():
                continue  # its prompt blocks are still being computed by sibling 0
            if self._needs_lora_slot(seq):
                continue  # its adapter would be one more than max_loras in the running set
            if not self._admit(seq, out, budget):
                break  # head-of-line: later arrivals do not overtake (FCFS / priority order)
            budget -= out.scheduled[-1].num_new_tokens

    def _needs_lora_slot(self, seq: Sequence) -> bool:
        """vLLM's max_loras: the running set uses at most that many distinct adapters, so
        every batch fits the LoRA slots."""
        if not self.config.max_loras or seq.lora_name is None:
            return False
        active = {s.lora_name for s in self.running if s.lora_name is not None}
        return seq.lora_name not in active and len(active) >= self.config.max_loras

    def _admit(self, seq: Sequence, out: SchedulerOutput, budget: int) -> bool:
        parent = seq.fork_parent
        if (
            parent is not None
            and parent.seq_id in self.kv.block_tables
            and parent.num_computed_tokens >= seq.num_prompt_tokens
            and not seq.output_token_ids
        ):
            # n > 1: share sibling 0's full prompt blocks; compute the rest of the prompt.
            computed = self.kv.fork(parent.seq_id, seq.seq_id, seq.num_prompt_tokens - 1)
            if self._start(seq, out, budget, computed, None):
                return True
            self.kv.free(seq.seq_id)  # undo the fork
            return False
        if (
            not self.config.prefix_caching
            or seq.wants_prompt_logprobs
            or seq.params.kv_eviction
        ):
            # Prompt logprobs need every prompt position's logits, so no cache hits for them;
            # an evicting request's KV depends on its policy, not only on its tokens.
            return self._start(seq, out, budget, 0, None)
        match = self.kv.match_prefix(seq.cache_token_ids(seq.all_token_ids))
        if self._start(seq, out, budget, match.num_cached_tokens, match):
            return True
        if match.partial_block is None or self._waits_for_budget(
            seq, match.num_cached_tokens, budget
        ):
            return False
        # Short of blocks: the partial block's copy costs one more than computing its
        # tokens, which a nearly full pool may not have. Settle for the whole blocks.
        match = self.kv.match_whole_blocks(seq.cache_token_ids(seq.all_token_ids), match)
        return self._start(seq, out, budget, match.num_cached_tokens, match)

    def _waits_for_budget(self, seq: Sequence, computed: int, budget: int) -> bool:
        """Without chunked prefill a prompt waits for a step with room for all of it, unless
        it can never fit (a preempted request's prompt + output): then it is chunked anyway."""
        n = seq.num_tokens - computed
        return (
            not self.config.enable_chunked_prefill
            and budget < n <= self.config.max_num_batched_tokens
        )

    def _start(
        self,
        seq: Sequence,
        out: SchedulerOutput,
        budget: int,
        computed: int,
        match: MatchResult | None,
    ) -> bool:
        """Allocate blocks for the request's first chunk and move it to running."""
        if self._waits_for_budget(seq, computed, budget):
            return False
        n = min(seq.num_tokens - computed, budget)
        if self.token_limit is not None:
            n = self.token_limit.limit_tokens(seq, computed, n)
            if n == 0:
                return False
        # Shared blocks only ever reduce what must be allocated, so when this fails,
        # admitting without them would fail too (save a partial block's copy: see _admit).
        if not self.kv.allocate_slots(seq.seq_id, computed + n, match):
            return False
        if match is not None:
            partial = match.partial_block is not None
            self.kv.cache.stats.record(seq.num_tokens, computed, partial_block=partial)
        seq.num_computed_tokens = computed
        seq.num_cached_tokens = computed
        self.waiting.remove(seq)
        seq.status = SequenceStatus.RUNNING
        self.running.append(seq)
        out.scheduled.append(ScheduledSeq(seq, computed, n))
        return True

    # --- after the forward pass ------------------------------------------------------
    def on_step_done(self, out: SchedulerOutput) -> None:
        """The scheduled tokens' K/V are now written: advance counters, offer them to the cache."""
        self.kv.copies_done()
        for item in out.scheduled:
            seq = item.seq
            seq.num_computed_tokens = item.end
            policy = seq.params.kv_eviction
            if self.config.prefix_caching and policy is None:
                # Accepted speculative drafts are computed tokens not yet appended.
                tokens = seq.cache_token_ids(seq.all_token_ids + seq.spec_token_ids)
                self.kv.cache_computed(seq.seq_id, tokens, seq.num_computed_tokens)
            # Then free what slid out of every window (cached blocks stay in the cache).
            self.kv.release_unseen_blocks(seq.seq_id, seq.num_computed_tokens, policy)
            if isinstance(policy, H2O):
                evict_heavy_hitters(seq, self.kv)  # lowest attention mass past the budget
        self.kv.states_done()  # hybrids: drop state snapshots no cache entry took

    def abort(self, seq: Sequence) -> None:
        if not seq.is_finished:
            self.finish(seq, SequenceStatus.FINISHED_ABORTED)
