"""Sampling defaults from a checkpoint's generation_config.json (Qwen3 ships temperature 0.6,
top_p 0.95, top_k 20): a request that leaves a field unset gets the checkpoint's value, as in
vLLM; `generation_config="none"` keeps the library defaults."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from reference_engine import LLM, SamplingParams
from reference_engine.config import ConfigError, ModelConfig, sampling_defaults
from reference_engine.server.protocol import CompletionRequest
from reference_engine.server.serving import Serving, ServingLimits


def _with_generation_config(src: Path, dst: Path, **fields: Any) -> Path:
    shutil.copytree(src, dst)
    path = dst / "generation_config.json"
    gen = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**gen, **fields}))
    return dst


QWEN3_STYLE = {"do_sample": True, "temperature": 0.6, "top_p": 0.95, "top_k": 20}


def test_only_numeric_sampling_keys_are_taken() -> None:
    gen = {**QWEN3_STYLE, "min_p": 0, "max_new_tokens": 64.0, "repetition_penalty": "high"}
    gen |= {"eos_token_id": [1, 2], "top_k_extra": 3, "transformers_version": "4.51.0"}
    assert sampling_defaults(gen) == {
        "temperature": 0.6,
        "top_p": 0.95,
        "top_k": 20,
        "min_p": 0.0,
        "max_tokens": 64,
    }
    assert sampling_defaults({"temperature": True}) == {}  # a bool is not a number here


def test_checkpoint_defaults_reach_llm_and_can_be_turned_off(
    random_checkpoint: Callable[..., Path], tmp_path: Path
) -> None:
    folder = _with_generation_config(random_checkpoint("qwen3"), tmp_path / "m", **QWEN3_STYLE)
    assert ModelConfig.from_pretrained(folder).generation_defaults == {
        "temperature": 0.6,
        "top_p": 0.95,
        "top_k": 20,
    }
    llm = LLM(str(folder), dtype="float64")
    got = llm.get_default_sampling_params()
    assert (got.temperature, got.top_p, got.top_k) == (0.6, 0.95, 20)
    assert got.max_tokens == SamplingParams().max_tokens  # unset in the file: library default
    plain = LLM(str(folder), dtype="float64", generation_config="none")
    assert plain.get_default_sampling_params() == SamplingParams()


def test_generate_without_params_uses_them(
    random_checkpoint: Callable[..., Path], tmp_path: Path
) -> None:
    """top_k 1 in the file makes sampling pick the argmax: a call without SamplingParams must
    then give the greedy tokens, so the defaults really reached the sampler."""
    folder = _with_generation_config(
        random_checkpoint("qwen3"), tmp_path / "m", temperature=1.5, top_k=1, max_new_tokens=7
    )
    llm = LLM(str(folder), dtype="float64")
    prompt = [11, 12, 13, 14]
    (out,) = llm.generate([prompt])
    greedy = llm.generate([prompt], SamplingParams(temperature=0.0, max_tokens=7))[0]
    assert len(out.outputs[0].token_ids) <= 7
    n = len(out.outputs[0].token_ids)
    assert out.outputs[0].token_ids == greedy.outputs[0].token_ids[:n]


def test_invalid_default_is_a_clear_error(
    random_checkpoint: Callable[..., Path], tmp_path: Path
) -> None:
    folder = _with_generation_config(random_checkpoint("qwen3"), tmp_path / "m", top_p=0.0)
    with pytest.raises(ConfigError, match="generation_config='none'"):
        LLM(str(folder), dtype="float64")
    LLM(str(folder), dtype="float64", generation_config="none")  # the way out works


def test_server_fills_only_the_fields_a_request_leaves_unset() -> None:
    defaults = {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "repetition_penalty": 1.1}
    engine = SimpleNamespace(engine=SimpleNamespace(sampling_defaults=defaults))
    serving = Serving(engine, "m", metrics=None, limits=ServingLimits())  # type: ignore[arg-type]
    unset = CompletionRequest(model="m", prompt="hi")
    p = serving.sampling_params(unset, max_tokens=5, logprobs=None)
    assert (p.temperature, p.top_p, p.top_k, p.repetition_penalty) == (0.6, 0.95, 20, 1.1)
    assert p.min_p == 0.0  # not in the file: the library default
    explicit = CompletionRequest(model="m", prompt="hi", temperature=0.0, top_k=0, top_p=1.0)
    p = serving.sampling_params(explicit, max_tokens=5, logprobs=None)
    assert (p.temperature, p.top_p, p.top_k) == (0.0, 1.0, -1)  # the request wins; 0 = off
