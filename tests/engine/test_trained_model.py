"""The small code model trained here (reference_engine/trained_model.py).

Its folder must be a normal Hugging Face checkpoint: the engine's loader and transformers read
it and agree on logits; perplexity recomputed by transformers and by the engine's serving
path matches what training measured, and sits far below the unigram baseline; training is
deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from reference_engine.config import EngineConfig
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.perplexity import runner_perplexity, window_logits
from reference_engine.trained_model import (
    NOTICE,
    heldout_text,
    read_corpus,
    read_report,
    trained_model_dir,
    write_trained_model,
)

transformers = pytest.importorskip("transformers")

# A trained model must beat token frequencies by a wide margin (the small variant reaches
# about 4x on the held-out files; the default one more).
UNIGRAM_FACTOR = 3.0


@pytest.fixture(scope="module")
def small_dir() -> Path:
    return trained_model_dir("small")


@pytest.fixture(scope="module")
def heldout_ids(small_dir: Path) -> list[int]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(small_dir / "tokenizer.json"))
    return tok.encode(heldout_text(small_dir)).ids


def test_folder_is_a_plain_checkpoint_that_says_what_it_is(small_dir: Path) -> None:
    cfg = json.loads((small_dir / "config.json").read_text())
    assert cfg["architectures"] == ["Qwen3ForCausalLM"]
    assert "NOT a chat model" in cfg["atlas_notice"] == NOTICE
    assert "NOT a chat model" in (small_dir / "README.md").read_text()
    report = read_report(small_dir)
    assert report["parameters"] > 500_000
    assert report["heldout_perplexity"] * UNIGRAM_FACTOR < report["unigram_perplexity"]
    assert report["final_loss"] < report["first_loss"] - 2.0


def test_engine_and_transformers_logits_equal(small_dir: Path, heldout_ids: list[int]) -> None:
    hf = transformers.AutoModelForCausalLM.from_pretrained(small_dir, torch_dtype=torch.float32)
    hf.eval()
    ids = heldout_ids[:128]
    with torch.no_grad():
        want = hf(torch.tensor([ids])).logits[0]
    engine_cfg = EngineConfig(model=str(small_dir), num_gpu_blocks=16, block_size=16)
    runner = ModelRunner(load_model_config(engine_cfg), engine_cfg)
    # Chunked: the later chunks read their context back from the paged KV cache.
    got = window_logits(runner, ids, chunk=48)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=2e-4)


def test_perplexity_agrees_across_implementations(small_dir: Path, heldout_ids: list[int]) -> None:
    report = read_report(small_dir)
    window = json.loads((small_dir / "config.json").read_text())["atlas_trained"]["trained_context"]
    engine_cfg = EngineConfig(model=str(small_dir), num_gpu_blocks=16, block_size=16)
    runner = ModelRunner(load_model_config(engine_cfg), engine_cfg)
    # heldout.txt re-encodes to the training-time ids but for the cut at its very end.
    assert abs(len(heldout_ids) - report["heldout_tokens"]) <= 2
    ppl = runner_perplexity(runner, heldout_ids, window=window, chunk=64)
    assert abs(ppl / report["heldout_perplexity"] - 1) < 0.01, (ppl, report)
    assert ppl * UNIGRAM_FACTOR < report["unigram_perplexity"]


@pytest.mark.slow
def test_training_is_deterministic(tmp_path: Path) -> None:
    train_texts, heldout, digest = read_corpus()
    corpus = (train_texts[:30], heldout[:3], digest)  # a slice: bytes, not quality, matter here
    reports = []
    for name in ("a", "b"):
        reports.append(write_trained_model(tmp_path / name, "small", corpus, steps=3))
    for file in ("model.safetensors", "tokenizer.json", "config.json", "heldout.txt"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes(), file
    assert reports[0].heldout_perplexity == reports[1].heldout_perplexity


def test_unknown_variant_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown variant 'huge'"):
        trained_model_dir("huge")


def test_cli_prints_perplexity_beside_the_baseline_and_says_not_chat(small_dir: Path) -> None:
    from typer.testing import CliRunner

    from analyzer.cli import app

    result = CliRunner().invoke(app, ["engine", "train-tiny", "--variant", "small"])
    assert result.exit_code == 0, result.output
    assert "NOT a chat model" in result.output
    assert "held-out perplexity" in result.output and "unigram baseline" in result.output
    assert str(small_dir) in result.output.replace("\n", "")
    result = CliRunner().invoke(app, ["engine", "train-tiny", "--variant", "small", "--json"])
    payload = json.loads(result.stdout)
    assert payload["path"] == str(small_dir)
    assert payload["heldout_perplexity"] < payload["unigram_perplexity"]
