"""Batch-invariant mode: every logprob of a request (sampled and prompt) is bitwise identical
whether it runs
alone or batched with others, under any chunked-prefill budget, after prefix-cache hits
(hashed and radix) and with speculative decoding, in float32 and bfloat16. Without the
mode the same comparisons differ (the test can fail)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
import torch

from reference_engine.batch_invariant import TILE, BatchInvariantMode, tiled_rows
from reference_engine.config import ConfigError, EngineConfig, ModelConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.tiny_model import build_tokenizer, random_weights, write_checkpoint

CONFIG: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 512,
    "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32,
    "hidden_act": "silu", "rms_norm_eps": 1e-6, "max_position_embeddings": 512,
    "rope_theta": 1000000.0, "tie_word_embeddings": True, "attention_bias": False,
    "bos_token_id": None, "eos_token_id": 2,
}  # fmt: skip


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wide enough (hidden 256) that ordinary kernels change their reduction order with the
    batch's shape."""
    folder = tmp_path_factory.mktemp("det-model")
    weights = random_weights(ModelConfig.from_dict(CONFIG), seed=3)
    write_checkpoint(folder, CONFIG, weights, build_tokenizer())
    return folder


TARGET = [11, 57, 300, 42, 9, 77, 130, 5, 61, 250, 18, 33, 404]
PARAMS = SamplingParams(temperature=0.0, max_tokens=10, logprobs=5, ignore_eos=True)


def logprobs_of(
    engine: Engine, others: list[list[int]], warm: list[int] | None = None, prompt: bool = False
) -> list[Any]:
    """The target's tokens and every logprob entry (with `prompt`, its prompt logprobs too),
    run with `others` in the same batch; `warm` runs first (to leave a prefix in the cache)."""
    if warm is not None:
        engine.add_request("warm", warm, SamplingParams(temperature=0.0, max_tokens=2))
        while engine.has_unfinished_requests():
            engine.step()
    params = dataclasses.replace(PARAMS, prompt_logprobs=5) if prompt else PARAMS
    engine.add_request("t", TARGET, params)
    for i, other in enumerate(others):
        engine.add_request(f"o{i}", other, SamplingParams(temperature=0.0, max_tokens=6,
                                                           ignore_eos=True))  # fmt: skip
    final = None
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.request_id == "t" and out.finished:
                final, prompt_lps = out.outputs[0], out.prompt_logprobs
    assert final is not None and final.logprobs is not None
    entries = final.logprobs + (prompt_lps[1:] if prompt else [])
    return [final.token_ids] + [
        sorted((t, lp.logprob, lp.rank) for t, lp in entry.items()) for entry in entries
    ]


def scenarios(rng: random.Random) -> list[tuple[str, dict[str, Any], list[list[int]], list[int] | None]]:
    others = [[rng.randrange(3, 500) for _ in range(rng.randrange(1, 30))] for _ in range(5)]
    return [
        ("batched, budget 64", {"max_num_batched_tokens": 64}, others, None),
        ("batched, budget 3", {"max_num_batched_tokens": 3}, others, None),
        ("batched, budget 7", {"max_num_batched_tokens": 7}, others[:2], None),
        ("hash prefix hit", {"prefix_caching": "hash"}, others[:3], TARGET[:9]),
        ("radix prefix hit", {"prefix_caching": "radix"}, others[3:], TARGET[:6]),
        ("speculative", {"speculative_config": {"method": "ngram"}}, others, None),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_logprobs_bitwise_equal_across_batches(model_dir: Path, dtype: str) -> None:
    def engine(deterministic: bool, **kw: Any) -> Engine:
        cfg = {"model": str(model_dir), "dtype": dtype, "block_size": 4, "num_gpu_blocks": 256,
               "max_num_batched_tokens": 512, "prefix_caching": "none", **kw}  # fmt: skip
        return Engine(EngineConfig(deterministic=deterministic, **cfg))

    differed = []
    for deterministic in (True, False):
        alone = {p: logprobs_of(engine(deterministic), [], prompt=p) for p in (False, True)}
        for name, kw, others, warm in scenarios(random.Random(dtype)):
            # Prompt logprobs too, where no prefix hit skips prompt positions.
            prompt = warm is None
            got = logprobs_of(engine(deterministic, **kw), others, warm, prompt)
            if deterministic:
                assert got == alone[prompt], f"{dtype} {name}: not bitwise equal to running alone"
            elif got != alone[prompt]:
                differed.append(name)
    # The check has teeth: ordinary kernels do change a request's numbers with its batch.
    assert differed, f"{dtype}: plain mode matched too; the comparison proves nothing"
    print(f"{dtype}: plain mode differed in {differed}")


def test_tiled_matmul_rows_do_not_depend_on_their_neighbours() -> None:
    g = torch.Generator().manual_seed(0)
    w = torch.randn(96, 200, generator=g)
    x = torch.randn(37, 200, generator=g)
    with BatchInvariantMode():
        full = torch.nn.functional.linear(x, w)
        rows = torch.cat([torch.nn.functional.linear(x[i : i + 1], w) for i in range(37)])
        shuffled = torch.nn.functional.linear(x.flip(0), w).flip(0)
        mm = x @ w.T
    assert torch.equal(full, rows) and torch.equal(full, shuffled) and torch.equal(full, mm)
    assert tiled_rows(torch.mm, x[:TILE], w.T).shape == (TILE, 96)


def test_unsupported_models_are_refused(tmp_path_factory: pytest.TempPathFactory, random_checkpoint: Any) -> None:
    import shutil

    from tests.engine.test_model_mla import write_deepseek

    folder = tmp_path_factory.mktemp("det-mla")
    write_deepseek(folder, 512)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if (random_checkpoint("qwen3") / name).is_file():
            shutil.copy(random_checkpoint("qwen3") / name, folder / name)
    with pytest.raises(ConfigError, match="MLAAttention"):
        Engine(EngineConfig(model=str(folder), deterministic=True))
