"""Weight quantization (int8 / int4 / fp8) and KV-cache quantization (int8 / fp8).

Per layer: every dequantized weight lies within its scheme's rounding bound, and a quantized
layer's output within the bound that implies (|x| @ bound^T). Per model: held-out
perplexity of the small trained model stays within a stated margin of full precision,
measured through the serving path (chunked prefill reads the quantized KV cache back).
Checkpoints written in the compressed-tensors layout load to the very same logits as
on-the-fly quantization. Batched tokens equal solo tokens with both kinds of quantization.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.layers.linear import FusedLinear, Linear
from reference_engine.layers.quantization import SCHEMES, get_scheme
from reference_engine.layers.quantization.base import TILE_ROWS
from reference_engine.layers.quantization.checkpoint import quantize_checkpoint
from reference_engine.layers.quantization.kv_cache import dequantize_kv, quantize_kv
from reference_engine.layers.quantization.linear import QuantizedLinear
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.perplexity import runner_perplexity, window_logits
from reference_engine.trained_model import heldout_text, trained_model_dir

# Held-out perplexity may rise by at most this fraction of full precision's.
PPL_BOUND = {"int8": 0.01, "fp8": 0.03, "int4": 0.10}
KV_PPL_BOUND = {"int8": 0.01, "fp8": 0.03}


def _weight(out: int, inp: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(out, inp, generator=gen) * 0.05
    w[3, 5] = 0.9  # an outlier: its group / channel / block gets a coarse scale
    return w


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_dequantized_weights_within_rounding_bound(name: str) -> None:
    scheme = get_scheme(name)
    shapes = [(256, 384), (200, 256)] if name == "int4" else [(256, 384), (200, 300)]
    for out, inp in shapes:
        w = _weight(out, inp, seed=out)
        q = scheme.quantize(w)
        assert scheme.shape(q) == (out, inp)
        err = (scheme.dequantize(q, torch.float32) - w).abs()
        bound = scheme.error_bound(w, q)
        assert bool((err <= bound * (1 + 1e-5) + 1e-8).all()), (name, float((err - bound).max()))
        assert float(err.max()) > 0  # it did quantize


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_quantized_layer_output_within_its_bound(name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    layer = FusedLinear(256, {"q": 256, "k": 128, "v": 128}, bias=True)
    layer.weight.data.copy_(_weight(512, 256, seed=1))
    x = torch.randn(7, 256)
    with torch.no_grad():
        want = layer(x)
    qlayer = QuantizedLinear.from_float(layer, get_scheme(name))
    # The forward pass dequantizes at most TILE_ROWS rows at a time, never the whole matrix.
    tiles: list[int] = []
    real = qlayer.scheme.dequantize_rows

    def spy(q, start, end, dtype):  # type: ignore[no-untyped-def]
        tiles.append(end - start)
        return real(q, start, end, dtype)

    monkeypatch.setattr(qlayer.scheme, "dequantize_rows", spy)
    got = qlayer(x)
    assert max(tiles) <= TILE_ROWS and sum(tiles) == 512
    bound = torch.cat(
        [
            qlayer.scheme.error_bound(layer.weight.data[layer.output_slice(s)], qlayer.part(s))
            for s in ("q", "k", "v")
        ]
    )
    allowed = x.abs() @ bound.T + 1e-4
    assert bool(((got - want).abs() <= allowed).all())
    assert float((got - want).abs().max()) > 0
    assert qlayer.weight_bytes() < layer.weight.numel() * 4 // (2 if name != "int4" else 4)


def test_int4_packs_two_per_byte_in_compressed_tensors_order() -> None:
    scheme = get_scheme("int4")
    w = _weight(4, 256, seed=3)
    q = scheme.quantize(w)
    assert q["weight_packed"].dtype == torch.uint8 and q["weight_packed"].shape == (4, 128)
    # Independent reference: values offset by 8, eight nibbles per int32, lowest first.
    values = torch.round(
        w.view(4, 2, 128) / q["weight_scale"].view(4, 2, 1)
    ).clamp(-8, 7).view(4, 256).to(torch.int64) + 8
    shifts = torch.arange(8, dtype=torch.int64) * 4
    words = (values.view(4, 32, 8) << shifts).sum(-1)
    words = torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)
    assert torch.equal(scheme.to_disk(q)["weight_packed"], words)


@pytest.mark.parametrize("kind", [torch.int8, torch.uint8])
def test_kv_rows_quantize_per_token_and_head(kind: torch.dtype) -> None:
    x = torch.randn(5, 2, 16) * torch.tensor([1.0, 30.0]).view(1, 2, 1)
    rows = quantize_kv(x, kind)
    assert rows.shape == (5, 2, 20) and rows.dtype == kind
    back = dequantize_kv(rows, torch.float32)
    amax = x.abs().amax(-1, keepdim=True)
    # int8: half a step of max/127; fp8 e4m3: 2^-4 relative (+ subnormal floor)
    bound = amax / 254 if kind == torch.int8 else x.abs() / 16 + amax / 448 * 2**-10
    assert bool(((back - x).abs() <= bound * 1.0001 + 1e-7).all())


# ---------------------------------------------------------------- on the trained model


@pytest.fixture(scope="module")
def small_dir() -> Path:
    return trained_model_dir("small")


@pytest.fixture(scope="module")
def eval_ids(small_dir: Path) -> list[int]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(small_dir / "tokenizer.json"))
    return tok.encode(heldout_text(small_dir)).ids[:4096]


def _ppl(model: Path, ids: list[int], **kwargs: object) -> float:
    cfg = EngineConfig(model=str(model), num_gpu_blocks=16, block_size=16, **kwargs)  # type: ignore[arg-type]
    return runner_perplexity(ModelRunner(load_model_config(cfg), cfg), ids, window=128, chunk=32)


@pytest.fixture(scope="module")
def base_ppl(small_dir: Path, eval_ids: list[int]) -> float:
    return _ppl(small_dir, eval_ids)


@pytest.mark.parametrize("name", sorted(PPL_BOUND))
def test_weight_quantization_perplexity_bound(
    name: str, small_dir: Path, eval_ids: list[int], base_ppl: float
) -> None:
    ppl = _ppl(small_dir, eval_ids, quantization=name)
    assert abs(ppl / base_ppl - 1) <= PPL_BOUND[name], (name, ppl, base_ppl)


@pytest.mark.parametrize("kind", sorted(KV_PPL_BOUND))
def test_kv_cache_quantization_perplexity_bound(
    kind: str, small_dir: Path, eval_ids: list[int], base_ppl: float
) -> None:
    ppl = _ppl(small_dir, eval_ids, kv_cache_dtype=kind)
    assert ppl != base_ppl  # chunks after the first did read the quantized cache
    assert abs(ppl / base_ppl - 1) <= KV_PPL_BOUND[kind], (kind, ppl, base_ppl)


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_quantized_checkpoint_loads_like_on_the_fly(
    name: str, small_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / name
    sizes = quantize_checkpoint(small_dir, out, name)
    assert sizes["bytes_after"] < sizes["bytes_before"]
    qc = json.loads((out / "config.json").read_text())["quantization_config"]
    assert qc["quant_method"] == "compressed-tensors" and qc["ignore"] == ["lm_head"]
    stored = load_file(str(out / "model.safetensors"))
    assert "model.layers.0.self_attn.q_proj.weight" not in stored or name != "int4"
    ids = list(range(10, 150))
    fly = EngineConfig(model=str(small_dir), num_gpu_blocks=16, quantization=name)
    disk = EngineConfig(model=str(out), num_gpu_blocks=16)
    a = ModelRunner(load_model_config(fly), fly)
    b = ModelRunner(load_model_config(disk), disk)
    assert torch.equal(window_logits(a, ids), window_logits(b, ids))
    assert not any(isinstance(m, Linear) for m in b.model.model.layers.modules())
    other = "int8" if name != "int8" else "fp8"
    with pytest.raises(ConfigError, match="already quantized"):
        both = EngineConfig(model=str(out), num_gpu_blocks=16, quantization=other)
        ModelRunner(load_model_config(both), both)


def test_corrupt_quantized_checkpoint_is_a_clear_error(small_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "int8"
    quantize_checkpoint(small_dir, out, "int8")
    tensors = load_file(str(out / "model.safetensors"))
    name = "model.layers.0.mlp.down_proj.weight"
    tensors[name] = tensors[name].float()  # float where int8 belongs
    save_file(tensors, str(out / "model.safetensors"))
    cfg = EngineConfig(model=str(out), num_gpu_blocks=16)
    with pytest.raises(ConfigError, match=r"down_proj\.weight.*int8"):
        ModelRunner(load_model_config(cfg), cfg)
    with pytest.raises(ConfigError, match="quantization must be"):
        EngineConfig(quantization="int3")
    with pytest.raises(ConfigError, match="kv_cache_dtype"):
        EngineConfig(kv_cache_dtype="int4")


# ---------------------------------------------------------------- batched equals solo


@pytest.mark.parametrize(("quantization", "kv"), [("int8", "int8"), ("fp8", "fp8")])
def test_quantized_batched_tokens_equal_solo(random_checkpoint, quantization: str, kv: str) -> None:  # type: ignore[no-untyped-def]
    from test_verify_random_workloads import (
        assert_pool_restored,
        assert_tokens_equal_solo,
        drive,
        make_engine,
        random_workload,
        tight_engine,
    )

    model_dir = random_checkpoint("qwen3", dtype="float64")
    solo = make_engine(model_dir, prefix_caching="none", quantization=quantization,
                       kv_cache_dtype=kv)  # fmt: skip
    rng = random.Random(11)
    for cache, preemption in (("hash", "swap"), ("radix", "recompute")):
        reqs = random_workload(rng)
        engine = tight_engine(model_dir, reqs, rng, cache, preemption, "fcfs",
                              quantization=quantization, kv_cache_dtype=kv)  # fmt: skip
        outputs = drive(engine, reqs)
        assert_tokens_equal_solo(outputs, reqs, solo, {})
        assert_pool_restored(engine)


def test_cli_quantize_then_run(small_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from analyzer.cli import app

    out = tmp_path / "int4"
    cli = CliRunner()
    result = cli.invoke(
        app, ["engine", "quantize", "--model", str(small_dir), "-o", str(out), "-q", "int4"]
    )
    assert result.exit_code == 0, result.output
    assert "compressed-tensors" in result.output
    run = ["engine", "run", "--prompt", "def main(", "--max-tokens", "4", "--json"]
    quantized = cli.invoke(app, [*run, "--model", str(out), "--kv-cache-dtype", "int8"])
    on_load = cli.invoke(
        app, [*run, "--model", str(small_dir), "-q", "int4", "--kv-cache-dtype", "int8"]
    )
    assert quantized.exit_code == 0 and on_load.exit_code == 0, quantized.output + on_load.output
    tokens = json.loads(quantized.stdout)["outputs"][0]["outputs"][0]["token_ids"]
    assert tokens == json.loads(on_load.stdout)["outputs"][0]["outputs"][0]["token_ids"]
    assert len(tokens) == 4
    bad = cli.invoke(app, [*run, "--model", str(small_dir), "-q", "int3"])
    assert bad.exit_code == 2 and "quantization must be" in bad.output
