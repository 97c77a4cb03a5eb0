"""Hybrid linear attention (Qwen3.5: Gated DeltaNet + gated full attention).

- the chunked and step forms of the gated delta rule agree with the sequential recurrence;
- logits match transformers' Qwen3_5ForCausalLM on packed batches mixing whole prefills,
  chunked prefills and decodes, each sequence continuing from its own state slot;
- random workloads with preemption equal solo runs token by token, and every state slot and
  block comes back.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from test_model_hf_oracle import assert_plan_matches, spread_weights
from test_verify_random_workloads import (
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
    solo_tokens,
    tight_engine,
)

from reference_engine.config import EngineConfig
from reference_engine.layers.gated_delta_rule import (
    gated_delta_chunked,
    gated_delta_sequential,
    gated_delta_step,
    l2_normalize,
)
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.sampling_params import SamplingParams
from reference_engine.spec_decode.proposer import DraftProposal, Proposer

transformers = pytest.importorskip("transformers")

HYBRID_SHAPE: dict[str, Any] = {
    "hidden_size": 48,
    "intermediate_size": 80,
    "num_hidden_layers": 4,
    "layer_types": ["linear_attention", "linear_attention", "full_attention", "linear_attention"],
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,  # two value heads per key head, as in Qwen3.5
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 6,
    "linear_conv_kernel_dim": 4,
    "max_position_embeddings": 256,
    "rope_parameters": {
        "rope_type": "default",
        "rope_theta": 10000.0,
        "partial_rotary_factor": 0.25,
    },
    "tie_word_embeddings": False,
}


def _inputs(t: int, h: int = 3, dk: int = 8, dv: int = 6, seed: int = 0) -> tuple[Any, ...]:
    gen = torch.Generator().manual_seed(seed)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    q = l2_normalize(r(t, h, dk)) * dk**-0.5
    k = l2_normalize(r(t, h, dk))
    g = -torch.rand(t, h, generator=gen, dtype=torch.float64)
    beta = torch.rand(t, h, generator=gen, dtype=torch.float64)
    return q, k, r(t, h, dv), g, beta, r(h, dk, dv)


@pytest.mark.parametrize(("length", "chunk"), [(37, 8), (5, 64), (64, 16), (1, 4)])
def test_chunked_form_equals_the_recurrence(length: int, chunk: int) -> None:
    q, k, v, g, beta, s0 = _inputs(length)
    s_seq, s_chunk = s0.clone(), s0.clone()
    want = gated_delta_sequential(q, k, v, g, beta, s_seq)
    got = gated_delta_chunked(q, k, v, g, beta, s_chunk, chunk_size=chunk)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    torch.testing.assert_close(s_chunk, s_seq, rtol=0, atol=1e-12)


def test_step_form_batches_independent_states() -> None:
    """A batched step of three sequences equals stepping each one alone."""
    rows = [_inputs(1, seed=s) for s in range(3)]
    stack = [torch.cat([r[i] for r in rows]) for i in range(5)]
    states = torch.stack([r[5] for r in rows])
    out = gated_delta_step(*stack, states)
    for j, (q, k, v, g, beta, s0) in enumerate(rows):
        torch.testing.assert_close(out[j : j + 1], gated_delta_sequential(q, k, v, g, beta, s0))
        torch.testing.assert_close(states[j], s0)


def hybrid_model(model_cls: Any, config: Any) -> torch.nn.Module:
    """A transformers hybrid model (seed 0) in float64, weights spread, and every Gated
    DeltaNet's decay rates in Qwen3.5's range: A = exp(A_log) in (0, 16]."""
    torch.manual_seed(0)
    model = model_cls(config).to(torch.float64).eval()
    spread_weights(model)
    with torch.no_grad():  # the decoder layers in order, whatever the wrapper around them
        for layer in model.modules():
            if hasattr(layer, "linear_attn"):
                layer.linear_attn.A_log.uniform_(-2.0, 1.0)
    return model


def write_qwen3_5(folder: Path, vocab: int, **overrides: Any) -> torch.nn.Module:
    config = transformers.Qwen3_5TextConfig(vocab_size=vocab, **{**HYBRID_SHAPE, **overrides})
    config.architectures = ["Qwen3_5ForCausalLM"]
    config._attn_implementation = "eager"
    model = hybrid_model(transformers.Qwen3_5ForCausalLM, config)
    model.save_pretrained(folder)
    return model


def test_logits_match_transformers(tmp_path: Path) -> None:
    hf = write_qwen3_5(tmp_path, 300)
    cfg = EngineConfig(model=str(tmp_path), dtype="float64", num_gpu_blocks=40, block_size=4)
    model_cfg = load_model_config(cfg)
    assert model_cfg.architecture == "Qwen3_5ForCausalLM" and model_cfg.has_recurrent_state
    runner = ModelRunner(model_cfg, cfg)
    # Paged KV for the one full-attention layer only.
    assert [len(layer) for layer in runner.kv_caches] == [0, 0, 2, 0]
    # transformers computes the decay g, the delta rule and the norms in float32 even in a
    # float64 model: up to ~2e-4 on logits of magnitude ~7 here (continuations ~1e-5); a
    # wrong state hand-over between chunks or steps moves logits by O(0.1).
    assert_plan_matches(runner, hf, atol=5e-4)


def test_multimodal_checkpoint_serves_its_language_model(tmp_path: Path) -> None:
    """Qwen3.5 as published: Qwen3_5ForConditionalGeneration, the language model under
    model.language_model.*, text_config nested, a vision tower beside it (loaded; text-only
    batches take plain RoPE: tests/engine/test_multimodal.py runs images)."""
    text = {**HYBRID_SHAPE, "vocab_size": 300}
    text["rope_parameters"] = {**text["rope_parameters"], "mrope_section": [1, 1, 0]}
    vision = {"depth": 1, "hidden_size": 16, "intermediate_size": 24, "num_heads": 2}
    config = transformers.Qwen3_5Config(
        text_config=text, vision_config={**vision, "out_hidden_size": 48, "patch_size": 4}
    )
    config._attn_implementation = "eager"
    hf = hybrid_model(transformers.Qwen3_5ForConditionalGeneration, config)
    hf.save_pretrained(tmp_path)
    cfg = EngineConfig(model=str(tmp_path), dtype="float64", num_gpu_blocks=40, block_size=4)
    model_cfg = load_model_config(cfg)
    assert model_cfg.architecture == "Qwen3_5ForConditionalGeneration"
    assert model_cfg.hidden_size == 48 and model_cfg.has_recurrent_state
    assert_plan_matches(ModelRunner(model_cfg, cfg), hf, atol=5e-4)


NEXT_SHAPE: dict[str, Any] = {
    # Qwen3-Next: fused GDN projections; layer 1 dense (mlp_only_layers), the others MoE
    # with 6 experts, top 2, and a gated shared expert.
    "num_experts": 6,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 24,
    "shared_expert_intermediate_size": 32,
    "mlp_only_layers": [1],
}


def test_qwen3_next_logits_match_transformers(tmp_path: Path) -> None:
    config = transformers.Qwen3NextConfig(vocab_size=300, **{**HYBRID_SHAPE, **NEXT_SHAPE})
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"  # the grouped-mm kernel has no float64
    hf = hybrid_model(transformers.Qwen3NextForCausalLM, config)
    hf.save_pretrained(tmp_path)
    cfg = EngineConfig(model=str(tmp_path), dtype="float64", num_gpu_blocks=40, block_size=4)
    runner = ModelRunner(load_model_config(cfg), cfg)
    assert type(runner.model).__name__ == "Qwen3NextForCausalLM"
    assert_plan_matches(runner, hf, atol=5e-4)  # float32 rounding in HF, as for Qwen3.5


@pytest.fixture(scope="module")
def hybrid_dir(tmp_path_factory: pytest.TempPathFactory, random_checkpoint: Any) -> Path:
    folder = tmp_path_factory.mktemp("qwen3_5")
    write_qwen3_5(folder, 512)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        src = random_checkpoint("qwen3") / name
        if src.is_file():
            shutil.copy(src, folder / name)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cache", "preemption"), [("none", "recompute"), ("hash", "swap"), ("radix", "recompute")]
)
def test_hybrid_workloads_equal_solo(hybrid_dir: Path, cache: str, preemption: str) -> None:
    solo = make_engine(hybrid_dir, prefix_caching="none", max_num_seqs=8)
    rng = random.Random(f"hybrid-{cache}-{preemption}")
    solo_cache: dict[Any, list[list[int]]] = {}
    preemptions = hits = swaps = 0
    for _ in range(6):
        reqs = random_workload(rng)
        engine = tight_engine(hybrid_dir, reqs, rng, cache, preemption, "fcfs")
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        preemptions += engine.stats().num_preemptions
        swaps += engine.stats().num_swap_outs
        hits += engine.stats().prefix_cache_hit_tokens
        assert_pool_restored(engine)
        assert engine.kv.state_pool is not None
        assert engine.kv.state_pool.num_free == engine.kv.state_pool.num_blocks
    assert preemptions > 0
    # Swap parks the KV on the host while the recurrent state keeps its device slot.
    assert (swaps > 0) == (preemption == "swap")
    assert (hits > 0) == (cache != "none")  # hits need a state checkpoint at their end


def test_multi_turn_prompt_resumes_from_a_state_checkpoint(hybrid_dir: Path) -> None:
    """Turn 2's prompt extends turn 1's conversation: the engine starts it from turn 1's
    cached blocks and the recurrent state checkpointed at their end, and its tokens equal
    a cold run's."""
    rng = random.Random(11)
    turn1 = [rng.randrange(3, 500) for _ in range(13)]
    params = SamplingParams(temperature=0.0, max_tokens=9, ignore_eos=True)
    warm = make_engine(hybrid_dir, prefix_caching="hash")
    reply = drive(warm, [Req(turn1, params, 0)])["0"].outputs[0].token_ids
    turn2 = turn1 + reply + [rng.randrange(3, 500) for _ in range(6)]
    got = drive(warm, [Req(turn2, params, 0)])["0"]
    # Turn 1 computed 13 + 8 tokens (its last sample is never fed back): checkpoints at 4,
    # 8, ..., 20; turn 2 matches 5 full blocks and resumes at 20.
    assert got.num_cached_tokens == 20
    cold = drive(make_engine(hybrid_dir, prefix_caching="none"), [Req(turn2, params, 0)])["0"]
    assert got.outputs[0].token_ids == cold.outputs[0].token_ids
    assert_pool_restored(warm)


class OracleProposer(Proposer):
    """Drafts what plain decoding will generate, one draft in three wrong: verification
    accepts whole drafts, cuts them short and rejects them, in every combination (a random
    model rarely repeats itself, so n-gram lookup alone would draft nothing it accepts)."""

    def __init__(self, solo: dict[tuple[int, ...], list[list[int]]], seed: int) -> None:
        self.solo = solo
        self.rng = random.Random(seed)

    def propose(self, seqs: Any, num_tokens: Any) -> list[DraftProposal]:
        out = []
        for seq, k in zip(seqs, num_tokens, strict=True):
            done = len(seq.output_token_ids)
            drafts = list(self.solo[tuple(seq.prompt_token_ids)][seq.index][done : done + k])
            for j in range(len(drafts)):
                if self.rng.random() < 1 / 3:
                    drafts[j] = (drafts[j] + 1) % 500
            out.append(DraftProposal(drafts))
        return out


@pytest.mark.slow
@pytest.mark.parametrize(("cache", "preemption"), [("none", "swap"), ("hash", "recompute")])
def test_speculative_decoding_on_hybrids_equals_plain_decoding(
    hybrid_dir: Path, cache: str, preemption: str
) -> None:
    """Drafts verified on the hybrid: a rejection rolls the recurrent state back to before
    the verify step (spec_decode/state_rollback.py) and the accepted tokens are computed
    again, so greedy tokens equal plain decoding's, with drafts accepted and rejected."""
    from test_spec_decode_exact import repetitive_workload

    solo = make_engine(hybrid_dir, prefix_caching="none", max_num_seqs=8)
    rng = random.Random(f"hybrid-spec-{cache}-{preemption}")
    solo_cache: dict[Any, list[list[int]]] = {}
    accepted = rejected = 0
    for round_ in range(5):
        reqs = repetitive_workload(rng)
        expected = {tuple(r.prompt): solo_tokens(solo, r, solo_cache) for r in reqs}
        spec = {"method": "ngram", "num_speculative_tokens": rng.choice([2, 4])}
        engine = tight_engine(hybrid_dir, reqs, rng, cache, preemption, "fcfs",
                              speculative_config=spec)  # fmt: skip
        assert engine.spec is not None
        engine.spec.proposer = OracleProposer(expected, round_)
        assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
        stats = engine.stats().spec_decoding
        assert stats is not None
        accepted += stats.num_accepted_tokens
        rejected += stats.num_draft_tokens - stats.num_accepted_tokens
        assert_pool_restored(engine)
    assert accepted > 0 and rejected > 0
