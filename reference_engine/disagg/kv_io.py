"""Reading and writing whole KV blocks of the model runner's cache, for a transfer.

Both run on the engine thread, between steps, so no forward pass writes the blocks
while they are copied. One tensor per layer, [C, num_blocks, block_size, heads, width]
on the CPU, C being the layer's cache tensors (2 for K and V, 1 for MLA's latent; a
quantized cache's rows carry their scales): that is what goes over the wire.
"""

from __future__ import annotations

import torch

from reference_engine.model_runner import ModelRunner

DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
    "int8": torch.int8,  # quantized caches (kv_cache_dtype int8 / fp8)
    "float8_e4m3fn": torch.float8_e4m3fn,
}


@torch.inference_mode()
def gather_blocks(runner: ModelRunner, block_ids: list[int]) -> list[torch.Tensor]:
    ids = torch.tensor(block_ids, dtype=torch.long, device=runner.device)
    return [torch.stack([c[ids] for c in layer]).cpu().contiguous() for layer in runner.kv_caches]


@torch.inference_mode()
def scatter_blocks(runner: ModelRunner, block_ids: list[int], layers: list[torch.Tensor]) -> None:
    if len(layers) != len(runner.kv_caches):
        raise ValueError(f"got {len(layers)} layers of KV, the model has {len(runner.kv_caches)}")
    ids = torch.tensor(block_ids, dtype=torch.long, device=runner.device)
    for layer, kv in zip(runner.kv_caches, layers, strict=True):
        first = layer[0]
        expected = (len(layer), len(block_ids), *first.shape[1:])
        if tuple(kv.shape) != expected or kv.dtype != first.dtype:
            raise ValueError(
                f"a layer's KV is {tuple(kv.shape)} {kv.dtype}, expected {expected} {first.dtype}"
            )
        kv = kv.to(first.device)
        for j, cache in enumerate(layer):
            cache.index_copy_(0, ids, kv[j])


def to_bytes(t: torch.Tensor) -> memoryview:
    """A tensor's raw bytes without a copy (any dtype, bfloat16 included)."""
    data = t.contiguous().view(torch.uint8).numpy()
    # numpy's stubs declare ndarray.__buffer__ for Python >= 3.12 only; it is a buffer on 3.11
    return memoryview(data).cast("B")  # type: ignore[arg-type]


def from_bytes(data: bytes | memoryview, dtype: str, shape: tuple[int, ...]) -> torch.Tensor:
    flat = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    expected = DTYPES[dtype].itemsize * int(torch.Size(shape).numel())
    if flat.numel() != expected:
        raise ValueError(f"a KV frame has {flat.numel()} bytes, expected {expected}")
    return flat.view(DTYPES[dtype]).reshape(shape)
