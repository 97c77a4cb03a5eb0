"""The packed variable-length batch one forward pass runs over.

Every sequence in a step contributes its *new* tokens (a whole prompt, a prefill chunk, or
one decode token) to a single flat token axis of length T; the metadata says where each
sequence's rows start (`query_start_loc`, FlashAttention's `cu_seqlens_q`), where each new
token's K/V goes in the paged cache (`slot_mapping`) and which cached blocks each sequence
reads (`block_tables`). vLLM calls this `AttentionMetadata` + input batch, SGLang `ForwardBatch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass(slots=True)
class SeqInput:
    """One sequence's share of a step, as the scheduler hands it over."""

    token_ids: Sequence[int]  # the new tokens computed this step (prompt chunk or 1 decode token)
    start_position: int  # tokens of this sequence already in the KV cache (num_computed_tokens)
    block_table: Sequence[int]  # physical block ids covering positions [0, start + len(new))
    # Logits for every new row (prompt logprobs), not just the last one.
    want_prompt_logits: bool = False


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
    # [num_decodes, W * block_size] bool: which gathered key slots are real context; built
    # once per batch instead of once per layer.
    decode_mask: torch.Tensor
    prefill_seq_idx: list[int]

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
            prefill_seq_idx=self.prefill_seq_idx,
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
    "decode_mask",
)


def slot_for(block_table: Sequence[int], position: int, block_size: int) -> int:
    """The flat cache slot of token `position`: its block's id, then the offset inside it."""
    return block_table[position // block_size] * block_size + position % block_size


def build_forward_batch(
    seqs: Sequence[SeqInput],
    block_size: int,
    device: torch.device | str = "cpu",
    max_blocks: int | None = None,
) -> ForwardBatch:
    """Pack per-sequence inputs into one batch. `max_blocks` pads block tables to a fixed
    width (CUDA graphs need static shapes); by default the widest table sets the width."""
    if not seqs:
        raise ValueError("a forward batch needs at least one sequence")
    input_ids: list[int] = []
    positions: list[int] = []
    slots: list[int] = []
    query_start = [0]
    context_lens: list[int] = []
    logits_rows: list[int] = []
    logits_start = [0]
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
        positions.extend(new_positions)
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
    # One tensor from padded Python lists: a torch.tensor call per row costs more than the rows.
    table = [[*s.block_table[:n], *[0] * (width - n)] for s, n in zip(seqs, used, strict=True)]

    query_lens = [len(s.token_ids) for s in seqs]
    decode_idx = [i for i, n in enumerate(query_lens) if n == 1]
    prefill_idx = [i for i, n in enumerate(query_lens) if n > 1]

    def t(values: list[int] | list[list[int]]) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.int64, device=device)

    decode_ctx = t([context_lens[i] for i in decode_idx])

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
        decode_mask=key_mask(decode_ctx, width * block_size),
        prefill_seq_idx=prefill_idx,
    )


def key_mask(context_lens: torch.Tensor, num_slots: int) -> torch.Tensor:
    """[B, num_slots] bool: slot j of a sequence's gathered context is a real token."""
    slots = torch.arange(num_slots, device=context_lens.device)
    return slots[None, :] < context_lens[:, None]
