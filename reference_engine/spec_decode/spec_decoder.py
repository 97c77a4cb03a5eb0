"""SpecDecoder: the glue between the engine and a drafter, vLLM V1's shape.

    end of step N   propose(): drafts for every running decode -> seq.spec_token_ids
    step N + 1      the scheduler schedules 1 + k tokens for such a sequence (the last
                    sampled token and its drafts; fewer drafts if the token budget is short),
                    the target runs them in one forward pass like a prefill chunk,
                    sampling_rows() gives the sampler one row per position, and verify()
                    turns the k + 1 draws into the emitted tokens.

After verify, `item.num_new_tokens` counts only the positions whose K/V hold the right
tokens (the last sampled token plus the accepted drafts) and `seq.spec_token_ids` only the
accepted drafts, so the scheduler's on_step_done advances num_computed_tokens and offers
blocks to the prefix cache exactly as if those tokens had been decoded one by one;
`release_rejected` then returns the blocks that held only rejected drafts.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence as Seq

import torch

from reference_engine.config import EngineConfig, ModelConfig
from reference_engine.forward_batch import tree_depths
from reference_engine.kv_cache_manager import KVCacheManager
from reference_engine.model_runner import ModelRunner
from reference_engine.sampler import (
    Sampler,
    SamplingMetadata,
    SamplingRow,
    TokenLogprobs,
    raw_token_logprobs,
)
from reference_engine.scheduler import SchedulerOutput
from reference_engine.sequence import Sequence
from reference_engine.spec_decode.config import SpeculativeConfig
from reference_engine.spec_decode.draft_length import DraftLengthPolicy
from reference_engine.spec_decode.metrics import SpecDecodingStats
from reference_engine.spec_decode.ngram_proposer import NgramProposer
from reference_engine.spec_decode.proposer import Proposer
from reference_engine.spec_decode.rejection_sampler import accept_by_sampling, rejection_sample
from reference_engine.spec_decode.state_rollback import StateRollback
from reference_engine.spec_decode.tree import compact_path, path_tokens, prune_tree, walk_tree


def _first_branch(parents: Seq[int]) -> int:
    """How many drafts the first branch of a tree has (draft i's parent row is parents[i];
    the first branch is rows 1, 2, ... each the child of the one before)."""
    n = 0
    while n < len(parents) and parents[n] == n:
        n += 1
    return n


class SpecDecoder:
    """Owned by the Engine. Owns the drafter, the draft-length policy, the stats, and the
    draft distributions between propose() and verify()."""

    def __init__(
        self,
        config: SpeculativeConfig,
        engine_config: EngineConfig,
        model_config: ModelConfig,
        eos_token_ids: Seq[int],
        max_model_len: int,
        runner: ModelRunner,
        kv: KVCacheManager,
    ) -> None:
        self.config = config
        self.runner = runner  # tree drafts move accepted K/V within its cache
        self.kv = kv
        # Tree rows attend by depth; sliding windows and KV eviction count slots: chains there.
        self.trees_allowed = config.tree_width > 1 and not any(
            w is not None for w in kv.sliding_windows
        )
        self.proposer: Proposer
        if config.method == "ngram":
            self.proposer = NgramProposer(
                config.prompt_lookup_min, config.prompt_lookup_max, config.tree_width
            )
        else:
            from reference_engine.spec_decode.draft_model_proposer import DraftModelProposer

            draft = DraftModelProposer(config, engine_config, model_config, eos_token_ids)
            max_model_len = min(max_model_len, draft.runner.max_model_len)
            self.proposer = draft
        self.max_model_len = max_model_len
        self.policy = DraftLengthPolicy(
            config.num_speculative_tokens, config.draft_length == "adaptive"
        )
        self.stats = SpecDecodingStats()
        self._draft_probs: dict[str, torch.Tensor] = {}
        self._tree_parents: dict[str, list[int]] = {}  # rows incl. the root (-1)
        self._tracked: set[str] = set()  # sequences the drafter may hold state for
        # Hybrids: recurrent states saved before verification (state_rollback.py).
        self.rollback = (
            StateRollback(runner.model, kv.state_slots) if model_config.has_recurrent_state else None
        )
        self._rolled_back: set[str] = set()  # this step's sequences whose state went back
        if self.rollback is not None:
            self.trees_allowed = False  # tree rows are not consecutive: chains only

    # --- after a step: drafts for the next one -------------------------------------
    def propose(self, running: Seq[Sequence]) -> None:
        live = {s.seq_id for s in running}
        gone = self._tracked - live
        if gone:
            self.proposer.release(sorted(gone))
            for seq_id in gone:
                self._draft_probs.pop(seq_id, None)
                self._tree_parents.pop(seq_id, None)
                if self.rollback is not None:
                    self.rollback.forget(seq_id)
        self._tracked &= live
        decodes = [s for s in running if s.num_uncomputed_tokens == 1 and not s.in_prefill]
        k = self.policy.choose(len(running), self.stats)
        self.stats.last_num_draft_tokens = k
        if k == 0 or not decodes:
            return
        budgets = [self._room(s, k) for s in decodes]
        start = time.perf_counter()
        proposals = self.proposer.propose(decodes, budgets)
        elapsed = time.perf_counter() - start
        drafted = 0
        for seq, proposal, room in zip(decodes, proposals, budgets, strict=True):
            self._tree_parents.pop(seq.seq_id, None)
            if proposal.parents is not None and self.trees_allowed and not seq.params.kv_eviction:
                tokens, parents = prune_tree(
                    proposal.token_ids, proposal.parents, room, self._slot_room(seq)
                )
                self._tree_parents[seq.seq_id] = [-1, *parents]
            else:
                tokens = proposal.token_ids[:room]
                if proposal.parents is not None:  # a tree where trees cannot run: its first path
                    tokens = tokens[: _first_branch(proposal.parents)]
            seq.spec_token_ids = tokens
            if self.rollback is not None and tokens:
                self.rollback.save(seq.seq_id)  # the state the verify step starts from
            drafted += len(tokens)
            self._tracked.add(seq.seq_id)
            if proposal.probs is not None and tokens:
                self._draft_probs[seq.seq_id] = proposal.probs[: len(tokens)]
            else:
                self._draft_probs.pop(seq.seq_id, None)
        self.stats.draft_time_s += elapsed
        self.policy.observe_draft(drafted, elapsed)

    def _slot_room(self, seq: Sequence) -> int:
        """Tree rows fill consecutive slots: all must lie inside the context window."""
        return max(0, self.max_model_len - seq.num_tokens)

    def tree_parents(self, seq: Sequence) -> list[int] | None:
        """The parent of each row of this step's input (root first), for a tree draft."""
        parents = self._tree_parents.get(seq.seq_id)
        if parents is None or not seq.spec_token_ids:
            return None
        return parents[: 1 + len(seq.spec_token_ids)]  # the scheduler may cut trailing rows

    def _room(self, seq: Sequence, k: int) -> int:
        """Drafts past max_tokens or the context window would be cut anyway."""
        room = self.max_model_len - seq.num_tokens
        if seq.params.max_tokens is not None:
            room = min(room, seq.params.max_tokens - len(seq.output_token_ids) - 1)
        return max(0, min(k, room))

    def observe_forward(self, out: SchedulerOutput, seconds: float) -> None:
        multi = sum(1 for item in out.scheduled if item.num_new_tokens > 1)
        self.policy.observe_forward(out.num_batched_tokens, multi, seconds)
        if any(item.seq.spec_token_ids for item in out.scheduled):
            self.stats.verify_time_s += seconds
            self.stats.num_draft_steps += 1

    # --- in the step: verification ---------------------------------------------------
    def sampling_rows(self, row: SamplingRow, seq: Sequence) -> list[SamplingRow]:
        """One row per verified position: a row sees the drafts on its path as already
        generated, so penalties and min_tokens treat it as plain decoding would."""
        drafts = seq.spec_token_ids
        parents = self.tree_parents(seq)
        if parents is None:
            paths = [list(drafts[:j]) for j in range(len(drafts) + 1)]
        else:
            tokens = [0, *drafts]
            paths = [path_tokens(tokens, parents, j) for j in range(len(tokens))]
        return [
            dataclasses.replace(row, output_token_ids=[*row.output_token_ids, *p]) for p in paths
        ]

    def verify(
        self,
        seq: Sequence,
        rows: list[SamplingRow],
        logits: torch.Tensor,  # [k + 1, V]: this sequence's rows
        sampled: list[int],  # the batched sampler's k + 1 draws
        sampled_logprobs: list[TokenLogprobs | None],
        sampler: Sampler,
    ) -> tuple[list[int], list[TokenLogprobs | None], int]:
        """(emitted tokens, their logprobs, accepted drafts). Leaves only the accepted
        drafts in seq.spec_token_ids (in path order), their K/V at the path's positions."""
        drafts = list(seq.spec_token_ids)
        q = self._draft_probs.pop(seq.seq_id, None)
        parents = self.tree_parents(seq)
        if parents is not None:
            tokens, path = walk_tree([0, *drafts], parents, sampled)
            logprobs = [sampled_logprobs[r] for r in [0, *path]]
            compact_path(self.runner.kv_caches, self.kv.block_tables[seq.seq_id],
                         seq.num_tokens - 1, path, self.kv.block_size)  # fmt: skip
            self.stats.record(max(tree_depths(parents)), len(path))
            seq.spec_token_ids = tokens[: len(path)]
            return tokens, logprobs, len(path)
        if q is None or seq.params.greedy:
            tokens = accept_by_sampling(drafts, sampled)
            logprobs = sampled_logprobs[: len(tokens)]
        else:
            p = sampler.distributions(logits, SamplingMetadata.build(rows)).cpu()
            generator = seq.generator or sampler._generator
            tokens = rejection_sample(p, drafts, q, generator)
            logprobs = [None] * len(tokens)
            if seq.params.logprobs is not None:
                chosen = torch.tensor(tokens, dtype=torch.int64)
                logprobs = raw_token_logprobs(
                    logits[: len(tokens)], chosen, [seq.params.logprobs] * len(tokens)
                )
        accepted = len(tokens) - 1
        self.stats.record(len(drafts), accepted)
        seq.spec_token_ids = tokens[:accepted]
        if self.rollback is not None:
            if accepted < len(drafts) and self.rollback.restore(seq.seq_id):
                self._rolled_back.add(seq.seq_id)
            self.rollback.forget(seq.seq_id)
        return tokens, logprobs, accepted

    def num_computed(self, seq: Sequence, accepted: int) -> int:
        """Tokens of this verify step whose K/V (and state) stand: the last sampled token
        and the accepted drafts, or none when a hybrid's state was rolled back (they are
        computed again next step)."""
        if seq.seq_id in self._rolled_back:
            self._rolled_back.discard(seq.seq_id)
            return 0
        return 1 + accepted

    def release_rejected(self, seq: Sequence) -> None:
        """Blocks allocated for drafts that were rejected hold nothing anyone reads."""
        if not seq.is_finished:
            self.kv.trim(seq.seq_id, seq.num_computed_tokens + 1)
