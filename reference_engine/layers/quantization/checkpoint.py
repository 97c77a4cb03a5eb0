"""Write a quantized checkpoint: `atlas engine quantize` (compressed-tensors layout).

The folder is an ordinary Hugging Face checkpoint whose config.json gains a
`quantization_config` in compressed-tensors' vocabulary (quant_method "compressed-tensors",
a format per scheme, one config group targeting Linear layers, lm_head ignored), and whose
decoder projections (`model.layers.N.self_attn.q_proj`, ... `mlp.down_proj`) are stored as
the scheme's tensors instead of `weight`:

| scheme | format          | tensors per projection                                            |
|--------|-----------------|-------------------------------------------------------------------|
| int8   | int-quantized   | weight int8 [out, in], weight_scale f32 [out, 1]                  |
| int4   | pack-quantized  | weight_packed int32 [out, in/8], weight_scale f32 [out, in/128],  |
|        |                 | weight_shape int32 [2]; nibbles offset by 8, lowest first         |
| fp8    | float-quantized | weight float8_e4m3fn [out, in], weight_scale f32 [out/128, in/128]|

Everything else (embeddings, norms, lm_head, tokenizer files) is copied unchanged. The
loader reads the folder back without ever expanding a projection to float.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import torch

from reference_engine.config import ConfigError
from reference_engine.layers.quantization import get_scheme
from reference_engine.layers.quantization.base import QuantScheme

_PROJECTION = re.compile(
    r"^model\.layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)\.weight$"
)


def compressed_tensors_config(scheme: QuantScheme) -> dict[str, Any]:
    return {
        "quant_method": "compressed-tensors",
        "format": scheme.ct_format,
        "quantization_status": "compressed",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": scheme.weights_config(),
                "input_activations": None,
                "output_activations": None,
            }
        },
        "ignore": ["lm_head"],
    }


def quantize_checkpoint(src: Path, dst: Path, scheme_name: str) -> dict[str, int]:
    """Quantize the float checkpoint in `src` into the new folder `dst`; returns the
    weight bytes before and after."""
    from safetensors.torch import save_file

    from reference_engine.loader import iter_checkpoint

    scheme = get_scheme(scheme_name)
    src, dst = Path(src), Path(dst)
    config = json.loads((src / "config.json").read_text(encoding="utf-8"))
    if config.get("quantization_config") is not None:
        raise ConfigError(f"{src} is already quantized; quantize its float checkpoint")
    if dst.exists():
        raise ConfigError(f"{dst} exists; choose a new folder")
    tensors: dict[str, torch.Tensor] = {}
    before = after = 0
    for name, tensor in iter_checkpoint(src):
        before += tensor.numel() * tensor.element_size()
        if _PROJECTION.match(name):
            prefix = name[: -len("weight")]
            packed = scheme.to_disk(scheme.quantize(tensor))
            tensors.update({prefix + k: v.contiguous() for k, v in packed.items()})
        else:
            tensors[name] = tensor.contiguous()
    after = sum(t.numel() * t.element_size() for t in tensors.values())
    dst.mkdir(parents=True)
    for item in src.iterdir():
        if item.is_file() and not item.name.endswith(".safetensors") and item.name not in (
            "config.json",
            "model.safetensors.index.json",
        ):
            shutil.copy2(item, dst / item.name)
    save_file(tensors, str(dst / "model.safetensors"), metadata={"format": "pt"})
    config["quantization_config"] = compressed_tensors_config(scheme)
    (dst / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return {"bytes_before": before, "bytes_after": after}
