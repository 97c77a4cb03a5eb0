"""Prepacked (oneDNN) CPU weights: same numbers as the plain matmul, used only where they can be."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.layers.cpu_gemm import packing_supported
from reference_engine.layers.linear import Linear, QKVLinear

CPU = torch.device("cpu")
needs_onednn = pytest.mark.skipif(
    not packing_supported(CPU, torch.float32), reason="this torch build has no oneDNN"
)


@needs_onednn
@pytest.mark.parametrize("rows", [(1,), (3,), (32,), (2, 5)])
@pytest.mark.parametrize("bias", [False, True])
def test_packed_linear_equals_plain(rows: tuple[int, ...], bias: bool) -> None:
    torch.manual_seed(0)
    layer = QKVLinear(64, 48, 16, bias=bias)  # fused (q/k/v) and plain share the same code
    x = torch.randn(*rows, 64)
    want = F.linear(x, layer.weight, layer.bias)
    layer.pack_for_cpu()
    assert layer.packed_weight is not None
    got = layer(x)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_packing_only_for_float32_on_cpu() -> None:
    assert not packing_supported(CPU, torch.float64)
    assert not packing_supported(CPU, torch.bfloat16)
    assert not packing_supported(torch.device("cuda"), torch.float32)
    # an unpacked Linear is a plain nn.Linear
    layer = Linear(8, 4, bias=True)
    x = torch.randn(3, 8)
    torch.testing.assert_close(layer(x), F.linear(x, layer.weight, layer.bias))


@needs_onednn
@pytest.mark.parametrize("family", ["qwen3", "qwen2"])  # qwen2: biased q/k/v projections
def test_packed_runner_matches_unpacked(
    family: str, random_checkpoint: Callable[..., Path], make_runner: Callable
) -> None:
    """A float32 runner packs every projection and gives the unpacked runner's logits (to
    float32 rounding); float64 runners (the transformers comparisons) never pack."""
    folder = random_checkpoint(family, dtype="float32")
    packed = make_runner(folder, dtype="float32", num_blocks=16)
    plain = make_runner(folder, dtype="float32", num_blocks=16, cpu_prepack=False)
    assert packed.packed_weights and not plain.packed_weights
    linears = [m for m in packed.model.modules() if isinstance(m, Linear)]
    assert linears and all(m.packed_weight is not None for m in linears)
    assert not make_runner(folder, dtype="float64", num_blocks=16).packed_weights

    seqs = [SeqInput([5, 6, 7, 8, 9, 10], 0, [0, 1]), SeqInput([11, 12, 13], 0, [2])]
    want = plain.execute_model(build_forward_batch(seqs, plain.block_size))
    got = packed.execute_model(build_forward_batch(seqs, packed.block_size))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    decode = [SeqInput([14], 6, [0, 1]), SeqInput([15], 3, [2])]
    want = plain.execute_model(build_forward_batch(decode, plain.block_size))
    got = packed.execute_model(build_forward_batch(decode, packed.block_size))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
