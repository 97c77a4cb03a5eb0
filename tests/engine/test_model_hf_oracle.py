"""Oracle: our models against Hugging Face transformers' own implementations.

Each family's tiny model is built with transformers' config class and random init, saved with
`save_pretrained` (safetensors), loaded by our loader, and run over packed batches that mix a
whole prefill, chunked prefill and decode steps. Logits must match HF's full forward pass over
each sequence alone. transformers is a test-only dependency.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")

from reference_engine.config import EngineConfig  # noqa: E402
from reference_engine.forward_batch import SeqInput, build_forward_batch  # noqa: E402
from reference_engine.loader import load_model_config  # noqa: E402
from reference_engine.model_runner import ModelRunner  # noqa: E402

SMALL = {
    "vocab_size": 300,
    "hidden_size": 48,
    "intermediate_size": 80,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "max_position_embeddings": 256,
}


def _qwen3() -> object:
    return transformers.Qwen3Config(
        **SMALL, num_key_value_heads=2, head_dim=20, tie_word_embeddings=True, rope_theta=1e6
    )


def _qwen3_untied_bias() -> object:
    return transformers.Qwen3Config(
        **SMALL, num_key_value_heads=4, head_dim=12, tie_word_embeddings=False, attention_bias=True
    )


def _llama() -> object:
    return transformers.LlamaConfig(**SMALL, num_key_value_heads=2, tie_word_embeddings=False)


def _llama3_rope() -> object:
    scaling = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 32,
    }
    return transformers.LlamaConfig(
        **SMALL,
        num_key_value_heads=1,
        tie_word_embeddings=True,
        attention_bias=True,
        rope_scaling=scaling,
        rope_theta=500000.0,
    )


def _qwen2() -> object:
    return transformers.Qwen2Config(**SMALL, num_key_value_heads=2, tie_word_embeddings=False)


def _mistral_sliding() -> object:
    # Every layer slides; a 5-token window is crossed by the plan's chunks and decodes.
    return transformers.MistralConfig(**SMALL, num_key_value_heads=2, sliding_window=5)


def _qwen3_layer_types() -> object:
    # Layer 0 full, layer 1 sliding (max_window_layers=1), as `layer_types` writes it.
    return transformers.Qwen3Config(
        **SMALL,
        num_key_value_heads=2,
        head_dim=16,
        use_sliding_window=True,
        sliding_window=6,
        max_window_layers=1,
    )


def _qwen3_moe() -> object:
    # Layer 1 keeps a dense MLP (mlp_only_layers): both block kinds in one model.
    return transformers.Qwen3MoeConfig(
        **SMALL,
        num_key_value_heads=2,
        head_dim=12,
        num_experts=6,
        num_experts_per_tok=2,
        moe_intermediate_size=24,
        norm_topk_prob=True,
        mlp_only_layers=[1],
    )


def _qwen3_moe_unnormalised() -> object:
    return transformers.Qwen3MoeConfig(
        **SMALL,
        num_key_value_heads=1,
        head_dim=16,
        num_experts=8,
        num_experts_per_tok=3,
        moe_intermediate_size=16,
        norm_topk_prob=False,
        tie_word_embeddings=True,
    )


def _qwen3_yarn() -> object:
    # YaRN context extension (Qwen3's long-context recipe): interpolated low frequencies
    # and a cos/sin temperature; the original 16 positions are crossed by the plan.
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
    return transformers.Qwen3Config(
        **SMALL, num_key_value_heads=2, head_dim=16, rope_parameters={**yarn, "rope_theta": 1e4}
    )


def _gpt_oss() -> object:
    # Alternating sliding (window 5) / full layers, attention sinks, biased MoE experts with
    # the clamped SwiGLU, YaRN RoPE (its own defaults, shrunk to this context).
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
    return transformers.GptOssConfig(
        **{**SMALL, "intermediate_size": 24},
        num_key_value_heads=2,
        head_dim=12,
        num_local_experts=4,
        num_experts_per_tok=2,
        sliding_window=5,
        rope_parameters={**yarn, "rope_theta": 1e4, "beta_fast": 32.0, "beta_slow": 1.0},
    )


CONFIGS: dict[str, tuple[Callable[[], object], str]] = {
    "qwen3": (_qwen3, "Qwen3ForCausalLM"),
    "qwen3-untied-bias": (_qwen3_untied_bias, "Qwen3ForCausalLM"),
    "llama": (_llama, "LlamaForCausalLM"),
    "llama3-rope-tied-bias": (_llama3_rope, "LlamaForCausalLM"),
    "qwen2": (_qwen2, "Qwen2ForCausalLM"),
    "mistral-sliding": (_mistral_sliding, "MistralForCausalLM"),
    "qwen3-layer-types": (_qwen3_layer_types, "Qwen3ForCausalLM"),
    "qwen3-yarn": (_qwen3_yarn, "Qwen3ForCausalLM"),
    "gpt-oss": (_gpt_oss, "GptOssForCausalLM"),
    "qwen3-moe": (_qwen3_moe, "Qwen3MoeForCausalLM"),
    "qwen3-moe-unnormalised": (_qwen3_moe_unnormalised, "Qwen3MoeForCausalLM"),
}


def _hf_model(name: str, folder: Path) -> torch.nn.Module:
    make_config, arch = CONFIGS[name]
    config = make_config()
    config._attn_implementation = "eager"  # plain math, works in float64
    config._experts_implementation = "eager"  # MoE: a loop over experts (grouped_mm has no float64)
    torch.manual_seed(0)
    model = getattr(transformers, arch)(config).to(torch.float64).eval()
    spread_weights(model)
    model.save_pretrained(folder)
    return model


def spread_weights(model: torch.nn.Module) -> None:
    """Re-draw every parameter of a transformers model so each visibly moves the output."""
    # HF's init (std 0.02, unit norms, zero biases) gives near-uniform logits that would
    # hide mistakes; spread every parameter so each one visibly moves the output.
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
            if pname.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * noise)
            elif p.dim() == 1:
                p.copy_(0.2 * noise)
            else:
                p.copy_(noise * p.shape[-1] ** -0.5 * (4.0 if "embed" in pname else 1.0))


def _hf_logits(model: torch.nn.Module, tokens: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([tokens])).logits[0]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_logits_match_transformers(name: str, tmp_path: Path) -> None:
    hf = _hf_model(name, tmp_path)
    engine_cfg = EngineConfig(model=str(tmp_path), dtype="float64", num_gpu_blocks=40, block_size=4)
    model_cfg = load_model_config(engine_cfg)
    assert model_cfg.architecture == CONFIGS[name][1]
    runner = ModelRunner(model_cfg, engine_cfg)

    assert_plan_matches(runner, hf)


def assert_plan_matches(
    runner: ModelRunner, hf: torch.nn.Module, vocab: int = 300, atol: float = 2e-5
) -> list[torch.Tensor]:
    """Run three sequences through packed batches mixing a whole prefill, chunked prefill
    and decode steps; every row's logits must equal HF's forward over the sequence alone.
    Returns the engine's logits per step (for comparisons between engine variants)."""
    rng = random.Random(7)
    lengths = (19, 11, 6)
    seqs = [[rng.randrange(vocab) for _ in range(n)] for n in lengths]
    want = [_hf_logits(hf, s) for s in seqs]
    tables = [[0, 5, 9, 2, 14], [3, 1, 7], [20, 21]]
    # Step 1: seq 0 prefills a 7-token chunk, seq 1 its whole prompt but the last 3 tokens,
    # seq 2 its whole prompt.
    # Step 2: seq 0 the next 8-token chunk, seq 1 one decode-like token, seq 2 idles.
    # Steps 3..: one token per sequence per step until each is complete.
    plan: list[list[tuple[int, int, int]]] = [
        [(0, 0, 7), (1, 0, 8), (2, 0, 6)],
        [(0, 7, 15), (1, 8, 9)],
    ]
    done = {0: 15, 1: 9, 2: 6}
    while any(done[i] < lengths[i] for i in done):
        step = [(i, done[i], done[i] + 1) for i in done if done[i] < lengths[i]]
        for i, _, end in step:
            done[i] = end
        plan.append(step)

    got = []
    for step in plan:
        batch = build_forward_batch(
            [
                SeqInput(seqs[i][a:b], a, tables[i], want_prompt_logits=True, state_slot=i)
                for i, a, b in step
            ],
            block_size=4,
        )
        logits = runner.execute_model(batch)
        got.append(logits)
        for j, (i, a, b) in enumerate(step):
            rows = logits[batch.logits_start_loc[j] : batch.logits_start_loc[j + 1]]
            # HF normalises and rotates in float32 even in a float64 model; the remaining
            # gap is float32 rounding, far below what any real bug produces.
            torch.testing.assert_close(rows, want[i][a:b], rtol=1e-5, atol=atol)
    return got
