"""`atlas engine compare`: a model brought up correctly agrees with transformers module by
module; a deliberate bug injected into one layer is located at that layer and module,
with everything before it still agreeing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

pytest.importorskip("transformers")

from analyzer.cli import app
from reference_engine import compare
from reference_engine.compare import (
    compare_with_transformers,
    engine_runner,
    load_transformers,
)
from reference_engine.model_runner import ModelRunner
from tests.engine.hf_checkpoints import build_hf_model, save_checkpoint

TOKENS = [5, 9, 40, 41, 7, 100, 3, 12, 77, 300, 8, 19, 23]


@pytest.fixture(scope="module")
def qwen3_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("qwen3-compare")
    return save_checkpoint(build_hf_model("qwen3", tied=False), folder, torch.float64, False)


def _swap_gate_up(runner: ModelRunner, layer: int) -> None:
    """A classic loader bug: gate and up projections loaded into each other's rows."""
    proj = runner.model.model.layers[layer].mlp.gate_up_proj
    half = proj.weight.shape[0] // 2
    with torch.no_grad():
        proj.weight.copy_(torch.cat([proj.weight[half:], proj.weight[:half]]))
    if proj.packed_weight is not None:
        proj.pack_for_cpu()


def test_a_correct_port_agrees_everywhere(qwen3_dir: Path) -> None:
    runner = engine_runner(qwen3_dir, "float64", len(TOKENS))
    report = compare_with_transformers(runner, load_transformers(qwen3_dir, "float64"), TOKENS)
    assert report.first_divergence is None, report.first_divergence
    names = [d.name for d in report.diffs]
    # Every layer's attention, MLP and output were matched by name, then the logits.
    for i in range(2):
        for part in ("self_attn", "mlp", "input_layernorm", "post_attention_layernorm"):
            assert f"model.layers.{i}.{part}" in names
    assert names[-1] == "logits" and "model.layers.1" in names


def test_a_bug_in_one_layer_is_located(qwen3_dir: Path) -> None:
    hf = load_transformers(qwen3_dir, "float64")
    runner = engine_runner(qwen3_dir, "float64", len(TOKENS))
    _swap_gate_up(runner, 1)
    report = compare_with_transformers(runner, hf, TOKENS)
    first = report.first_divergence
    assert first is not None and report.first_layer == 1
    assert first.name == "model.layers.1.mlp.down_proj", first  # the first hooked output after
    assert first.max_abs > 1e-3
    before = report.diffs[: report.diffs.index(first)]
    assert before and not any(d.diverged for d in before)  # layer 0 and layer 1's attention agree

    # A different bug, in a norm of layer 0: the wrong epsilon.
    runner = engine_runner(qwen3_dir, "float64", len(TOKENS))
    runner.model.model.layers[0].post_attention_layernorm.eps = 0.5
    report = compare_with_transformers(runner, hf, TOKENS)
    assert report.first_divergence is not None
    assert report.first_divergence.name == "model.layers.0.post_attention_layernorm"


def test_compare_command(qwen3_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = CliRunner()
    args = ["engine", "compare", "--model", str(qwen3_dir), "--dtype", "float64"]
    ok = cli.invoke(app, [*args, "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["first_divergence"] is None

    def buggy(model_dir: Path, dtype: str, num_tokens: int) -> ModelRunner:
        runner = engine_runner(model_dir, dtype, num_tokens)
        _swap_gate_up(runner, 0)
        return runner

    monkeypatch.setattr(compare, "engine_runner", buggy)
    bad = cli.invoke(app, args)
    assert bad.exit_code == 1
    assert "first divergence in decoder layer 0" in bad.output
    assert "model.layers.0.mlp.down_proj" in bad.output

    missing = cli.invoke(app, ["engine", "compare", "--model", str(qwen3_dir / "nope")])
    assert missing.exit_code == 2 and "error" in missing.output
