"""Weight quantization (W8A16 int8, W4A16 int4, FP8 block) and KV-cache quantization.

`--quantization int8|int4|fp8` quantizes a float checkpoint on the fly after loading; a
checkpoint written by `atlas engine quantize` (compressed-tensors layout, checkpoint.py)
is read directly, its projections never expanded to float. Only the decoder layers'
projections are quantized; embeddings, norms and lm_head stay float, as in vLLM's defaults.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from reference_engine.config import ConfigError, ModelConfig
from reference_engine.layers.linear import Linear
from reference_engine.layers.quantization.base import QuantScheme
from reference_engine.layers.quantization.fp8 import Fp8Block
from reference_engine.layers.quantization.int4 import Int4Grouped
from reference_engine.layers.quantization.int8 import Int8PerChannel
from reference_engine.layers.quantization.linear import QuantizedLinear

SCHEMES: dict[str, type[QuantScheme]] = {
    "int8": Int8PerChannel,
    "int4": Int4Grouped,
    "fp8": Fp8Block,
}


def get_scheme(name: str) -> QuantScheme:
    if name not in SCHEMES:
        raise ConfigError(f"quantization must be one of {sorted(SCHEMES)}, got {name!r}")
    return SCHEMES[name]()


def scheme_from_config(quant_config: dict[str, Any]) -> QuantScheme:
    """The scheme a checkpoint's compressed-tensors `quantization_config` describes."""
    if quant_config.get("quant_method") != "compressed-tensors":
        raise ConfigError(
            f"quantization_config quant_method {quant_config.get('quant_method')!r} is not "
            "supported; this engine reads compressed-tensors checkpoints it wrote itself"
        )
    fmt = quant_config.get("format")
    for cls in SCHEMES.values():
        if cls.ct_format == fmt:
            scheme = cls()
            groups: dict[str, dict[str, Any]] = quant_config.get("config_groups", {})
            wanted = next(iter(groups.values()), {}).get("weights", {})
            if wanted != scheme.weights_config():
                raise ConfigError(
                    f"compressed-tensors weights {wanted} differ from what {scheme.name} "
                    f"implements, {scheme.weights_config()}"
                )
            return scheme
    raise ConfigError(f"compressed-tensors format {fmt!r} is not one of "
                      f"{sorted(c.ct_format for c in SCHEMES.values())}")


def checkpoint_scheme(cfg: ModelConfig, requested: str | None) -> QuantScheme | None:
    """The scheme a quantized checkpoint was stored with (None for a float checkpoint); a
    different `--quantization` on top of it is refused, as vLLM refuses it."""
    if cfg.quantization_config is None or cfg.model_dir is None:
        return None
    scheme = scheme_from_config(cfg.quantization_config)
    if requested is not None and requested != scheme.name:
        raise ConfigError(
            f"the checkpoint is already quantized as {scheme.name}; --quantization "
            f"{requested} cannot re-quantize it (drop the flag or load the float checkpoint)"
        )
    return scheme


def quantized_modules(model: nn.Module) -> list[tuple[str, Linear]]:
    """(name, layer) of every projection inside the decoder layers."""
    return [
        (name, m)
        for name, m in model.named_modules()
        if isinstance(m, Linear) and ".layers." in f".{name}"
    ]


def quantize_model(model: nn.Module, scheme: QuantScheme) -> None:
    """Replace each decoder projection by its quantized form, from the loaded float weights."""
    for name, layer in quantized_modules(model):
        _replace(model, name, QuantizedLinear.from_float(layer, scheme))


def prepare_quantized_model(model: nn.Module, scheme: QuantScheme) -> None:
    """Replace each decoder projection by an empty quantized one for the loader to fill."""
    for name, layer in quantized_modules(model):
        _replace(model, name, QuantizedLinear.empty_like(layer, scheme))


def _replace(model: nn.Module, name: str, new: nn.Module) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent), child, new)
