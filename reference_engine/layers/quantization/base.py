"""What every weight quantization scheme provides (int8.py, int4.py, fp8.py implement it).

A scheme turns one float weight [out, in] into packed tensors named as compressed-tensors
names them on disk (`weight` or `weight_packed`, `weight_scale`, ...), and gives back float
rows of it one tile at a time: a quantized linear layer never holds a float copy of its
whole matrix, only the tile it is multiplying (see linear.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch

# Output rows dequantized at once: one fp8 block row, one MMA-sized tile of a GPU kernel.
TILE_ROWS = 128


class QuantScheme(ABC):
    """A weight-only quantization scheme (activations stay in the model's float dtype)."""

    name: str  # "int8", "int4", "fp8": the value of --quantization
    ct_format: str  # compressed-tensors' "format" for this scheme

    @abstractmethod
    def quantize(self, weight: torch.Tensor) -> dict[str, torch.Tensor]:
        """Float [out, in] -> packed tensors under their on-disk names."""

    @abstractmethod
    def empty(self, out_features: int, in_features: int) -> dict[str, torch.Tensor]:
        """Zero tensors of the shapes and dtypes `quantize` returns (filled by the loader)."""

    @abstractmethod
    def dequantize_rows(
        self, q: dict[str, torch.Tensor], start: int, end: int, dtype: torch.dtype
    ) -> torch.Tensor:
        """Rows [start, end) of the float weight, in `dtype`."""

    @abstractmethod
    def error_bound(self, weight: torch.Tensor, q: dict[str, torch.Tensor]) -> torch.Tensor:
        """Per-element bound on |dequantized - weight| that rounding guarantees."""

    @abstractmethod
    def weights_config(self) -> dict[str, Any]:
        """compressed-tensors' `weights` entry (num_bits, type, strategy, ...)."""

    def to_disk(self, q: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """In-memory packed tensors -> the on-disk ones (the same, unless a scheme differs)."""
        return q

    def from_disk(self, name: str, value: torch.Tensor) -> torch.Tensor:
        """One on-disk tensor -> its in-memory form."""
        return value

    def dequantize(self, q: dict[str, torch.Tensor], dtype: torch.dtype) -> torch.Tensor:
        """The whole float matrix: for tests and checks only, never on the serving path."""
        rows = self.shape(q)[0]
        return torch.cat(
            [self.dequantize_rows(q, s, min(s + TILE_ROWS, rows), dtype)
             for s in range(0, rows, TILE_ROWS)]
        )

    @abstractmethod
    def shape(self, q: dict[str, torch.Tensor]) -> tuple[int, int]:
        """(out_features, in_features) of the float matrix `q` encodes."""
