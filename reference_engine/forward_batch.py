"""The packed variable-length batch one forward pass runs over.

Every sequence in a step contributes its *new* tokens (a whole prompt, a prefill chunk, or
one decode token) to a single flat token axis of length T; the metadata says where each
sequence's rows start (`query_start_loc`, FlashAttention's `cu_seqlens_q`), where each new
token's K/V goes in the paged cache (`slot_mapping`) and which cached blocks each sequence
reads (`block_tables`). vLLM calls this `AttentionMetadata` + input batch, SGLang `ForwardBatch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from reference_engine.kv_window import FREED_BLOCK, KVPolicy, visible
from reference_engine.multimodal.inputs import MultiModalBatch, SeqMultiModal, pack

if TYPE_CHECKING:
    from reference_engine.distributed.context_parallel import ContextParallelShard


@dataclass(slots=True)
class SeqInput:
    """One sequence's share of a step, as the scheduler hands it over."""

    token_ids: Sequence[int]  # the new tokens computed this step (prompt chunk or 1 decode token)
    start_position: int  # tokens of this sequence already in the KV cache (num_computed_tokens)
    block_table: Sequence[int]  # physical block ids covering positions [0, start + len(new))
    # Logits for every new row (prompt logprobs), not just the last one.
    want_prompt_logits: bool = False
    kv_policy: KVPolicy | None = None  # the request's KV eviction (kv_window.py)
    # Speculative tree drafts (spec_decode/tree.py): the parent row of each new row, -1 for
    # row 0. A row then sits at start + its depth and attends to its ancestors only.
    tree_parents: Sequence[int] | None = None
    # Hybrid models: the request's row in the recurrent-state pools (layers/gated_delta_net.py).
    state_slot: int = -1
    # Hybrid prefix caching (prefix_cache/state_checkpoints.py): a checkpoint row to start
    # from instead of zero state, and a row to snapshot the state into at the last block
    # boundary this step crosses; -1 for none.
    state_restore: int = -1
    state_checkpoint: int = -1
    # Requests with images (multimodal/manager.py): this step's image embeddings and
    # multimodal RoPE positions.
    multimodal: SeqMultiModal | None = None


@dataclass(slots=True)
class DecodeGroup:
    """Decode rows attended together at one block-table width.

    A decode gathers every column of its block table, so one short context batched with a
    long one pays for the long one's width. Sorting decode rows by context length and
    splitting them into groups, each padded only to its own widest table, cuts the gathered
    (and masked-away) slots. On a CPU smaller groups help even without padding: a group's
    gathered K/V is still in cache when attention reads it. benchmarks/attention_bench.py
    measured 32 decodes ~1.8x faster in groups of 8 than in one batch on engine_bench's
    lengths, ~1.4x at equal lengths.
    """

    rows: torch.Tensor | None  # [n] int64 positions among the decode rows; None: all, in order
    block_tables: torch.Tensor  # [n, w] int64, padded with block 0 (masked, see ForwardBatch)
    key_mask: torch.Tensor  # [n, w * block_size] bool: which gathered slots are real context
    # [n] int64; sliding-window layers narrow key_mask with it (None: key_mask.sum(-1))
    context_lens: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> DecodeGroup:
        rows = None if self.rows is None else self.rows.to(device)
        ctx = None if self.context_lens is None else self.context_lens.to(device)
        return DecodeGroup(rows, self.block_tables.to(device), self.key_mask.to(device), ctx)


@dataclass(slots=True)
class VerifyGroup:
    """Short multi-row queries attended in one batched call instead of one per sequence:
    speculative verification (the last token + k drafts) and small prefill chunks, each
    reading a cached context. Rows are padded to the longest query, tables to the widest
    context; the mask holds causality (and tree drafts' ancestry) per row. Built once per
    batch; used by layers without a sliding window (the others take the per-sequence path).
    """

    seq_idx: list[int]
    rows: torch.Tensor  # [R] int64 rows of the flat token axis, sequence by sequence
    slots: torch.Tensor  # [R] int64 the same rows' places in the padded [S * max_rows] layout
    block_tables: torch.Tensor  # [S, W] int64
    mask: torch.Tensor  # [S, max_rows, W * block_size] bool

    def to(self, device: torch.device | str) -> VerifyGroup:
        return VerifyGroup(self.seq_idx, self.rows.to(device), self.slots.to(device),
                           self.block_tables.to(device), self.mask.to(device))  # fmt: skip


# Longest query a VerifyGroup takes: longer chunks are prefill work, attended one by one.
VERIFY_MAX_ROWS = 16


def verify_group(
    seqs: Sequence[SeqInput],
    query_start: Sequence[int],
    context_lens: Sequence[int],
    tree_masks: dict[int, torch.Tensor],
    block_size: int,
    device: torch.device | str,
) -> VerifyGroup | None:
    """The batch's short queries over a cached context, when there are two or more."""
    idx = [
        i for i, s in enumerate(seqs)
        if 1 < len(s.token_ids) <= VERIFY_MAX_ROWS and s.start_position > 0 and s.kv_policy is None
    ]  # fmt: skip
    if len(idx) < 2:
        return None
    max_rows = max(len(seqs[i].token_ids) for i in idx)
    used = [-(-context_lens[i] // block_size) for i in idx]
    width = max(used)
    mask = torch.zeros(len(idx), max_rows, width * block_size, dtype=torch.bool)
    rows: list[int] = []
    slots: list[int] = []
    for g, i in enumerate(idx):
        n, ctx = len(seqs[i].token_ids), context_lens[i]
        start = ctx - n
        key = torch.arange(width * block_size)
        q_pos = torch.arange(start, ctx)
        mask[g, :n] = key[None, :] <= q_pos[:, None]  # causal over the slots, context included
        if i in tree_masks:
            mask[g, :n, start:ctx] &= tree_masks[i].cpu()
        mask[g, n:, 0] = True  # padding rows see one key (no NaN); their output is dropped
        rows.extend(range(query_start[i], query_start[i] + n))
        slots.extend(range(g * max_rows, g * max_rows + n))
    tables = _padded_table([seqs[i].block_table for i in idx], used, width)
    return VerifyGroup(
        seq_idx=idx,
        rows=torch.tensor(rows, dtype=torch.int64, device=device),
        slots=torch.tensor(slots, dtype=torch.int64, device=device),
        block_tables=torch.tensor(tables, dtype=torch.int64, device=device),
        mask=mask.to(device),
    )


@dataclass(slots=True)
class ForwardBatch:
    input_ids: torch.Tensor  # [T] int64
    positions: torch.Tensor  # [T] int64, position of each token within its own sequence
    slot_mapping: torch.Tensor  # [T] int64, flat cache slot = block_id * block_size + offset
    # [B, W] int64: the blocks holding each sequence's context, padded with 0 (a real block id,
    # harmless: attention masks every position at or past context_lens)
    block_tables: torch.Tensor
    context_lens: torch.Tensor  # [B] int64, cached + new tokens (what attention reads)
    query_start_loc: torch.Tensor  # [B+1] int64, sequence i owns rows [qsl[i], qsl[i+1])
    logits_indices: torch.Tensor  # [L] int64, rows of the hidden states turned into logits
    # Host-side copies, so attention can slice per sequence without device syncs.
    query_lens_cpu: list[int]
    context_lens_cpu: list[int]
    logits_start_loc: list[int]  # [B+1]: sequence i owns logits rows [lsl[i], lsl[i+1])
    block_size: int
    num_prefills: int  # sequences with more than one new token
    num_decodes: int  # sequences with exactly one new token (true decodes or 1-token chunks)
    # Rows / sequences with one new token, batched together by the decode fast path.
    decode_seq_idx: torch.Tensor  # [num_decodes] int64
    # The decode rows split by context length, tables and masks built once per batch instead
    # of once per layer. A single group with rows=None keeps shapes static (CUDA graphs).
    decode_groups: list[DecodeGroup]
    prefill_seq_idx: list[int]
    # Per sequence, its request's KV eviction policy; empty when no sequence has one.
    kv_policies: list[KVPolicy | None] = field(default_factory=list)
    # H2O (heavy_hitters.py): [B, widest context] attention mass per key, summed over the
    # layers of this pass; None unless some sequence asks for it.
    attention_scores: torch.Tensor | None = None
    # Sequence index -> [n, n] bool ancestor mask of its new rows (tree drafts only).
    tree_masks: dict[int, torch.Tensor] = field(default_factory=dict)
    verify: VerifyGroup | None = None  # short queries over a cached context, batched
    # Per sequence, its recurrent-state slot (hybrid models; -1 elsewhere).
    state_slots: list[int] = field(default_factory=list)
    state_restores: list[int] = field(default_factory=list)
    state_checkpoints: list[int] = field(default_factory=list)
    # Context parallelism: this rank's rows, local slots and ring/decode layout for the step
    # (distributed/context_parallel.py, set by the CP rank itself); None in one process.
    context_parallel: ContextParallelShard | None = None
    # Image embeddings and multimodal positions; None when no sequence has images.
    multimodal: MultiModalBatch | None = None

    @property
    def num_seqs(self) -> int:
        return len(self.query_lens_cpu)

    @property
    def num_tokens(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def decode_only(self) -> bool:
        return self.num_prefills == 0

    # Aliases in the other frameworks' words.
    @property
    def cu_seqlens_q(self) -> torch.Tensor:
        return self.query_start_loc

    @property
    def seq_lens(self) -> torch.Tensor:
        return self.context_lens

    def to(self, device: torch.device | str) -> ForwardBatch:
        moved = {name: getattr(self, name).to(device) for name in _TENSOR_FIELDS}
        return ForwardBatch(
            **moved,
            query_lens_cpu=self.query_lens_cpu,
            context_lens_cpu=self.context_lens_cpu,
            logits_start_loc=self.logits_start_loc,
            block_size=self.block_size,
            num_prefills=self.num_prefills,
            num_decodes=self.num_decodes,
            decode_groups=[g.to(device) for g in self.decode_groups],
            prefill_seq_idx=self.prefill_seq_idx,
            kv_policies=self.kv_policies,
            tree_masks={i: m.to(device) for i, m in self.tree_masks.items()},
            verify=self.verify.to(device) if self.verify is not None else None,
            state_slots=self.state_slots,
            state_restores=self.state_restores,
            state_checkpoints=self.state_checkpoints,
            context_parallel=(
                self.context_parallel.to(torch.device(device))
                if self.context_parallel is not None
                else None
            ),
            multimodal=self.multimodal.to(device) if self.multimodal is not None else None,
        )


_TENSOR_FIELDS = (
    "input_ids",
    "positions",
    "slot_mapping",
    "block_tables",
    "context_lens",
    "query_start_loc",
    "logits_indices",
    "decode_seq_idx",
)

# Most decode rows one group holds. Fewer, wider groups pad more; more, narrower groups pay
# a few extra small ops per layer each (benchmarks/attention_bench.py measures the trade).
DECODE_GROUP_SIZE = 8


def slot_for(block_table: Sequence[int], position: int, block_size: int) -> int:
    """The flat cache slot of token `position`: its block's id, then the offset inside it."""
    return block_table[position // block_size] * block_size + position % block_size


def build_forward_batch(
    seqs: Sequence[SeqInput],
    block_size: int,
    device: torch.device | str = "cpu",
    max_blocks: int | None = None,
    decode_group_size: int | None = None,
) -> ForwardBatch:
    """Pack per-sequence inputs into one batch. `max_blocks` pads block tables to a fixed
    width (CUDA graphs need static shapes); by default the widest table sets the width.
    `decode_group_size` is the most decode rows attended together (see `DecodeGroup`); by
    default DECODE_GROUP_SIZE on a CPU and all of them on a GPU, where the win (cache
    locality, little padding) matters less than the extra small host-to-device copies, and
    where decode batches are padded to one static group for CUDA graphs anyway."""
    if not seqs:
        raise ValueError("a forward batch needs at least one sequence")
    input_ids: list[int] = []
    positions: list[int] = []
    slots: list[int] = []
    query_start = [0]
    context_lens: list[int] = []
    logits_rows: list[int] = []
    logits_start = [0]
    tree_masks: dict[int, torch.Tensor] = {}
    for i, s in enumerate(seqs):
        n = len(s.token_ids)
        if n == 0:
            raise ValueError(f"sequence {i} has no new tokens to compute")
        end = s.start_position + n
        need_blocks = -(-end // block_size)
        if len(s.block_table) < need_blocks:
            raise ValueError(
                f"sequence {i} covers {end} tokens, needing {need_blocks} blocks of "
                f"{block_size}, but its block table has {len(s.block_table)}"
            )
        input_ids.extend(s.token_ids)
        new_positions = range(s.start_position, end)
        if s.tree_parents is None:
            positions.extend(new_positions)
        else:  # tree nodes sit at their depth; their K/V still fill consecutive slots
            positions.extend(s.start_position + d for d in tree_depths(s.tree_parents))
            tree_masks[i] = ancestor_mask(s.tree_parents, device)
        bt = s.block_table
        slots.extend(bt[p // block_size] * block_size + p % block_size for p in new_positions)
        row0 = query_start[-1]
        query_start.append(row0 + n)
        context_lens.append(end)
        # The last row predicts the next token; prompt logprobs need every row's prediction.
        logits_rows.extend(range(row0, row0 + n) if s.want_prompt_logits else [row0 + n - 1])
        logits_start.append(len(logits_rows))

    # Only blocks holding context are copied in: a scheduler may have allocated ahead, and
    # decode attention gathers every column, so extra width is pure waste.
    used = [-(-ctx // block_size) for ctx in context_lens]
    width = max(used) if max_blocks is None else max_blocks
    if max(used) > width:
        raise ValueError(f"a sequence needs {max(used)} blocks, more than max_blocks={width}")
    table = _padded_table([s.block_table for s in seqs], used, width)

    query_lens = [len(s.token_ids) for s in seqs]
    decode_idx = [i for i, n in enumerate(query_lens) if n == 1]
    prefill_idx = [i for i, n in enumerate(query_lens) if n > 1]

    def t(values: list[int] | list[list[int]]) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.int64, device=device)

    if decode_group_size is None:
        on_cpu = torch.device(device).type == "cpu"
        decode_group_size = DECODE_GROUP_SIZE if on_cpu else max(1, len(decode_idx))
    policies = [s.kv_policy for s in seqs]
    if all(p is None for p in policies):
        policies = []
    groups = decode_groups(
        [seqs[i].block_table for i in decode_idx],
        [context_lens[i] for i in decode_idx],
        block_size,
        device,
        group_size=decode_group_size,
        fixed_width=max_blocks,
        policies=[policies[i] for i in decode_idx] if policies else None,
    )

    return ForwardBatch(
        input_ids=t(input_ids),
        positions=t(positions),
        slot_mapping=t(slots),
        block_tables=t(table),
        context_lens=t(context_lens),
        query_start_loc=t(query_start),
        logits_indices=t(logits_rows),
        query_lens_cpu=query_lens,
        context_lens_cpu=context_lens,
        logits_start_loc=logits_start,
        block_size=block_size,
        num_prefills=len(prefill_idx),
        num_decodes=len(decode_idx),
        decode_seq_idx=t(decode_idx),
        decode_groups=groups,
        prefill_seq_idx=prefill_idx,
        kv_policies=policies,
        attention_scores=torch.zeros(len(seqs), max(context_lens), device=device)
        if any(getattr(p, "wants_scores", False) for p in policies)
        else None,
        tree_masks=tree_masks,
        verify=verify_group(seqs, query_start, context_lens, tree_masks, block_size, device),
        state_slots=[s.state_slot for s in seqs],
        state_restores=[s.state_restore for s in seqs],
        state_checkpoints=[s.state_checkpoint for s in seqs],
        multimodal=pack(
            [s.multimodal for s in seqs],
            [positions[query_start[i] : query_start[i + 1]] for i in range(len(seqs))],
            query_start,
            device,
        ),
    )


def tree_depths(parents: Sequence[int]) -> list[int]:
    """Depth of each tree node (row 0, the root, has depth 0); parents come first."""
    depths: list[int] = []
    for i, parent in enumerate(parents):
        if (i == 0) != (parent == -1) or parent >= i:
            raise ValueError(f"tree parents must list -1 for row 0, then earlier rows: {parents}")
        depths.append(0 if i == 0 else depths[parent] + 1)
    return depths


def ancestor_mask(parents: Sequence[int], device: torch.device | str = "cpu") -> torch.Tensor:
    """[n, n] bool: row i may attend to row j iff j is i or one of its ancestors."""
    n = len(parents)
    mask = [[False] * n for _ in range(n)]
    for i in range(n):
        j = i
        while j != -1:
            mask[i][j] = True
            j = parents[j]
    return torch.tensor(mask, dtype=torch.bool, device=device)


def _padded_table(
    tables: Sequence[Sequence[int]], used: Sequence[int], width: int
) -> list[list[int]]:
    # One tensor from padded Python lists: a torch.tensor call per row costs more than the rows.
    # A freed block (out of every window, kv_window.py) reads block 0 instead: masked anyway.
    return [
        [*(b if b != FREED_BLOCK else 0 for b in bt[:n]), *[0] * (width - n)]
        if FREED_BLOCK in bt[:n]
        else [*bt[:n], *[0] * (width - n)]
        for bt, n in zip(tables, used, strict=True)
    ]


def _group(
    rows: list[int] | None,
    tables: Sequence[Sequence[int]],
    context_lens: Sequence[int],
    block_size: int,
    width: int | None,
    device: torch.device | str,
    policies: Sequence[KVPolicy | None] | None = None,
) -> DecodeGroup:
    used = [-(-ctx // block_size) for ctx in context_lens]
    width = max(used, default=0) if width is None else width
    ctx = torch.tensor(context_lens, dtype=torch.int64, device=device)
    mask = key_mask(ctx, width * block_size)
    for j, policy in enumerate(policies or ()):
        if policy is not None:  # each request's eviction rule, at its query position
            slots = torch.arange(width * block_size, device=device)
            mask[j] &= visible(ctx[j : j + 1] - 1, slots, None, policy)[0]
    return DecodeGroup(
        rows=None if rows is None else torch.tensor(rows, dtype=torch.int64, device=device),
        block_tables=torch.tensor(
            _padded_table(tables, used, width), dtype=torch.int64, device=device
        ).view(len(used), width),
        key_mask=mask,
        context_lens=ctx,
    )


def decode_groups(
    tables: Sequence[Sequence[int]],
    context_lens: Sequence[int],
    block_size: int,
    device: torch.device | str = "cpu",
    group_size: int = DECODE_GROUP_SIZE,
    fixed_width: int | None = None,
    policies: Sequence[KVPolicy | None] | None = None,
) -> list[DecodeGroup]:
    """Decode rows sorted by context length, longest first, in groups of `group_size`, each
    padded to its own widest table. A fixed width asks for static shapes: then, as for a
    batch that fits one group, a single group keeps every row in order (rows=None)."""
    if group_size < 1:
        raise ValueError(f"decode group size must be positive, got {group_size}")
    n = len(context_lens)
    if n == 0:
        return []
    if n <= group_size or fixed_width is not None:
        return [_group(None, tables, context_lens, block_size, fixed_width, device, policies)]
    order = sorted(range(n), key=lambda i: context_lens[i], reverse=True)
    groups = []
    for lo in range(0, n, group_size):
        rows = order[lo : lo + group_size]
        sub_tables = [tables[i] for i in rows]
        sub_lens = [context_lens[i] for i in rows]
        sub_policies = [policies[i] for i in rows] if policies else None
        groups.append(_group(rows, sub_tables, sub_lens, block_size, None, device, sub_policies))
    return groups


def key_mask(context_lens: torch.Tensor, num_slots: int) -> torch.Tensor:
    """[B, num_slots] bool: slot j of a sequence's gathered context is a real token."""
    slots = torch.arange(num_slots, device=context_lens.device)
    return slots[None, :] < context_lens[:, None]
