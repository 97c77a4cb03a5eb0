"""Read one PEFT LoRA adapter folder (adapter_config.json + adapter_model.safetensors) and
check it against the model: which projections, what rank, what shapes.

Supported: LoRA on the attention and MLP projections (q/k/v/o, gate/up/down) with
`lora_alpha / r` scaling (or `lora_alpha / sqrt(r)` with use_rslora). Anything PEFT can
express beyond that (DoRA, biases, modules_to_save, per-module rank patterns, embedding or
lm_head targets) is refused with a clear error, never half applied.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import torch

TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_KEY = re.compile(
    r"^base_model\.model\.(model\.layers\.\d+\.(?:self_attn|mlp)\.(\w+))\.lora_([AB])(?:\.default)?\.weight$"
)


class LoRAError(ValueError):
    """An adapter the engine cannot serve; the message says why (a 4xx in the server)."""


@dataclass(slots=True)
class LoRAAdapter:
    """One adapter in host memory, owned by the LoRAManager's registry."""

    name: str
    rank: int
    scaling: float
    # checkpoint module name ("model.layers.0.self_attn.q_proj") -> (A [r, in], B [out, r])
    weights: dict[str, tuple[torch.Tensor, torch.Tensor]]


def load_adapter(name: str, path: str | Path, max_rank: int) -> LoRAAdapter:
    from safetensors.torch import load_file

    folder = Path(path)
    cfg_file = folder / "adapter_config.json"
    if not cfg_file.is_file():
        raise LoRAError(f"LoRA adapter {name!r}: no adapter_config.json in {folder}")
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LoRAError(f"LoRA adapter {name!r}: adapter_config.json is not JSON: {exc}") from None
    if cfg.get("peft_type", "LORA") != "LORA":
        raise LoRAError(f"LoRA adapter {name!r}: peft_type {cfg.get('peft_type')!r} is not LORA")
    rank = int(cfg.get("r", 0))
    if rank < 1:
        raise LoRAError(f"LoRA adapter {name!r}: rank r={rank} is not positive")
    if rank > max_rank:
        raise LoRAError(
            f"LoRA adapter {name!r} has rank {rank}, above max_lora_rank={max_rank}"
        )
    for key, ok in (
        ("use_dora", lambda v: not v),
        ("bias", lambda v: v in (None, "none")),
        ("modules_to_save", lambda v: not v),
        ("rank_pattern", lambda v: not v),
        ("alpha_pattern", lambda v: not v),
        ("fan_in_fan_out", lambda v: not v),
    ):
        if not ok(cfg.get(key)):
            raise LoRAError(f"LoRA adapter {name!r}: {key}={cfg.get(key)!r} is not supported")
    alpha = float(cfg.get("lora_alpha", rank))
    scaling = alpha / math.sqrt(rank) if cfg.get("use_rslora") else alpha / rank
    weights_file = folder / "adapter_model.safetensors"
    if not weights_file.is_file():
        raise LoRAError(f"LoRA adapter {name!r}: no adapter_model.safetensors in {folder}")
    parts: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in load_file(str(weights_file)).items():
        m = _KEY.match(key)
        if m is None or m.group(2) not in TARGETS:
            raise LoRAError(
                f"LoRA adapter {name!r}: tensor {key!r} is not a LoRA A/B matrix of "
                f"{', '.join(TARGETS)}"
            )
        parts.setdefault(m.group(1), {})[m.group(3)] = tensor.float()
    weights = {}
    for module, ab in parts.items():
        if set(ab) != {"A", "B"}:
            raise LoRAError(f"LoRA adapter {name!r}: {module} lacks lora_A or lora_B")
        a, b = ab["A"], ab["B"]
        if a.shape[0] != rank or b.shape[1] != rank:
            raise LoRAError(
                f"LoRA adapter {name!r}: {module} has A {tuple(a.shape)}, B {tuple(b.shape)}, "
                f"not rank {rank}"
            )
        weights[module] = (a, b)
    if not weights:
        raise LoRAError(f"LoRA adapter {name!r}: no LoRA weights in {weights_file}")
    return LoRAAdapter(name, rank, scaling, weights)
