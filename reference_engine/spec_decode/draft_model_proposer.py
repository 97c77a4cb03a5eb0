"""A draft model: a smaller checkpoint with the target's tokenizer proposes k tokens by
running k cheap forward passes of its own.

It is run by the engine's own machinery: a ModelRunner owns its weights and paged KV
cache, a KVCacheManager (no prefix cache) its block tables, build_forward_batch packs
its batches, and the Sampler's `distributions` gives the distribution q each draft is
drawn from (the request's own temperature / top-k / top-p, so q is close to p).

Its cache follows the target lazily: `computed[seq_id]` lists the tokens whose K/V the
draft cache holds. Each proposal first feeds the tokens the draft has not seen (the whole
prompt the first time; afterwards the tokens verified since, from the first position
where they differ from what it had drafted: rejected drafts are simply overwritten).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence as Seq

import torch

from reference_engine.config import ConfigError, EngineConfig, ModelConfig
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.kv_cache_manager import KVCacheManager
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.sampler import Sampler, SamplingMetadata, SamplingRow, inverse_cdf_sample
from reference_engine.sequence import Sequence
from reference_engine.spec_decode.config import SpeculativeConfig
from reference_engine.spec_decode.proposer import DraftProposal, Proposer


def _common_prefix(a: Seq[int], b: Seq[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class DraftModelProposer(Proposer):
    def __init__(
        self,
        spec: SpeculativeConfig,
        engine_config: EngineConfig,
        target: ModelConfig,
        eos_token_ids: Seq[int],
    ) -> None:
        assert spec.model is not None
        config = dataclasses.replace(
            engine_config,
            model=spec.model,
            num_gpu_blocks=spec.num_draft_blocks or engine_config.num_gpu_blocks,
            prefix_caching="none",
            preemption_mode="recompute",
            num_cpu_blocks=0,
            speculative_config=None,
        )
        self.model_config = load_model_config(config)
        if self.model_config.vocab_size != target.vocab_size:
            raise ConfigError(
                f"the draft model's vocabulary ({self.model_config.vocab_size}) differs from "
                f"the target's ({target.vocab_size}): a draft must share the tokenizer"
            )
        self.runner = ModelRunner(self.model_config, config)
        self.block_size = config.block_size
        self.kv = KVCacheManager(self.runner.num_blocks, self.block_size)
        self.sampler = Sampler(seed=config.seed)
        self.eos_token_ids = list(eos_token_ids)
        self.computed: dict[str, list[int]] = {}  # tokens whose K/V the draft cache holds

    def release(self, seq_ids: Seq[str]) -> None:
        for seq_id in seq_ids:
            self.kv.free(seq_id)
            self.computed.pop(seq_id, None)

    def propose(self, seqs: Seq[Sequence], num_tokens: Seq[int]) -> list[DraftProposal]:
        drafts: list[list[int]] = [[] for _ in seqs]
        probs: list[list[torch.Tensor]] = [[] for _ in seqs]
        active: list[int] = []
        inputs: list[SeqInput] = []
        for i, (seq, k) in enumerate(zip(seqs, num_tokens, strict=True)):
            if k <= 0:
                continue
            tokens = seq.all_token_ids
            # At least the last token runs: its logits give the first draft.
            start = min(_common_prefix(self.computed.get(seq.seq_id, ()), tokens), len(tokens) - 1)
            # Slots for the tokens fed: all but the last draft, which is never fed.
            if not self.kv.allocate_slots(seq.seq_id, len(tokens) + k - 1):
                self.release([seq.seq_id])  # draft pool full: this one goes without drafts
                continue
            active.append(i)
            inputs.append(SeqInput(tokens[start:], start, self.kv.block_tables[seq.seq_id]))
        while active:
            batch = build_forward_batch(inputs, self.block_size, device=self.runner.device)
            logits = self.runner.execute_model(batch)
            rows = [
                SamplingRow(
                    params=seqs[i].params,
                    prompt_token_ids=seqs[i].prompt_token_ids,
                    output_token_ids=seqs[i].output_token_ids + drafts[i],
                    generator=seqs[i].generator,
                    eos_token_ids=self.eos_token_ids,
                )
                for i in active
            ]
            q = self.sampler.distributions(logits, SamplingMetadata.build(rows)).cpu()
            for j, i in enumerate(active):
                row = q[j]
                if seqs[i].params.greedy:
                    token = int(row.argmax())
                else:
                    u = torch.rand(1, generator=seqs[i].generator, dtype=torch.float64)
                    token = int(inverse_cdf_sample(row.unsqueeze(0), u).item())
                drafts[i].append(token)
                probs[i].append(row)
            still = [i for i in active if len(drafts[i]) < num_tokens[i]]
            inputs = [
                SeqInput(
                    [drafts[i][-1]],
                    seqs[i].num_tokens + len(drafts[i]) - 1,
                    self.kv.block_tables[seqs[i].seq_id],
                )
                for i in still
            ]
            active = still
        out = []
        for i, seq in enumerate(seqs):
            if drafts[i]:
                self.computed[seq.seq_id] = seq.all_token_ids + drafts[i][:-1]
            greedy = seq.params.greedy
            out.append(
                DraftProposal(drafts[i], None if greedy or not drafts[i] else torch.stack(probs[i]))
            )
        return out
