"""LoRAManager: adapters in fixed device slots with LRU, and the hooks that apply them.

Owned by the Engine. It keeps
- a registry of adapters known by name (loaded from their PEFT folders once, kept on host);
- `max_loras` device slots per projection: A stacked [max_loras, max_lora_rank, in] and
  B [max_loras, out, max_lora_rank] (scaling folded into B, smaller ranks zero-padded), and
  which adapter sits in which slot, least recently used first;
- the current batch's rows -> slot mapping, set before each forward pass.

The model is not rewritten: each attention / MLP projection gets a forward hook that adds
its rows' low-rank deltas to the projection's output (punica.py). vLLM swaps in wrapper
modules (`...WithLoRA`) instead; a hook keeps the parameter names the loader and live weight
updates address. A fused projection (qkv, gate_up) holds one A/B stack per checkpoint
module, each adding into its own output columns, as PEFT adapts q_proj, k_proj... apart.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from reference_engine.layers.linear import FusedLinear
from reference_engine.layers.quantization.linear import QuantizedLinear
from reference_engine.lora.adapter import TARGETS, LoRAAdapter, LoRAError, load_adapter
from reference_engine.lora.punica import bgmv, sgmv
from reference_engine.lora.request import LoRARequest

if TYPE_CHECKING:
    from reference_engine.models.llama import LlamaForCausalLM

_HOOKED = ("qkv_proj", "o_proj", "gate_up_proj", "down_proj")


def _fused(module: nn.Linear | QuantizedLinear, name: str) -> FusedLinear | QuantizedLinear:
    """A layer holding several checkpoint tensors as row shards (qkv_proj, gate_up_proj)."""
    if not isinstance(module, FusedLinear | QuantizedLinear):
        raise LoRAError(f"{name} holds checkpoint shards but is a {type(module).__name__}")
    return module


@dataclass(slots=True)
class _Target:
    """One hooked projection: per checkpoint module (q_proj, ...), its output columns and
    its slot stacks."""

    columns: dict[str, slice]  # "model.layers.0.self_attn.q_proj" -> output columns
    a: dict[str, torch.Tensor]  # same keys -> [max_loras, max_rank, in]
    b: dict[str, torch.Tensor]  # same keys -> [max_loras, out, max_rank]


class LoRAManager:
    def __init__(
        self,
        model: LlamaForCausalLM,
        max_loras: int,
        max_lora_rank: int,
        device: torch.device,
        dtype: torch.dtype,
    ) -> None:
        self.max_loras = max_loras
        self.max_lora_rank = max_lora_rank
        self.device = device
        self.registry: dict[str, LoRARequest] = {}
        self.adapters: dict[str, LoRAAdapter] = {}  # host copies of registered adapters
        self.slots: OrderedDict[str, int] = OrderedDict()  # adapter -> slot, LRU first
        self.num_slot_loads = 0  # how many times an adapter was copied into a slot
        # adapter -> its prefix-cache namespace; never reused, so an adapter registered
        # again under an old name never meets KV cached for the previous one
        self.cache_tags: dict[str, int] = {}
        self._next_tag = 1
        self._segments: list[tuple[int, int, int]] | None = None
        self._row_slots: torch.Tensor | None = None
        self.targets: dict[str, _Target] = {}
        for name, module in model.named_modules():
            if name.rsplit(".", 1)[-1] not in _HOOKED or ".layers." not in f".{name}":
                continue
            self.targets[name] = self._target(model, name, module, device, dtype)
            module.register_forward_hook(self._hook(self.targets[name]))

    def _target(
        self, model: LlamaForCausalLM, name: str, module: nn.Module, device: torch.device,
        dtype: torch.dtype,
    ) -> _Target:  # fmt: skip
        if not isinstance(module, nn.Linear | QuantizedLinear):
            raise LoRAError(f"LoRA hooks linear layers; {name} is a {type(module).__name__}")
        prefix = name.rsplit(".", 1)[0]
        columns: dict[str, slice] = {}
        for hf in TARGETS:
            ours, shard = model.map_checkpoint_name(f"{prefix}.{hf}.weight")
            if ours != f"{name}.weight":
                continue
            columns[f"{prefix}.{hf}"] = (
                _fused(module, name).output_slice(shard) if shard else slice(0, module.out_features)
            )
        a = {k: torch.zeros(self.max_loras, self.max_lora_rank, module.in_features,
                            device=device, dtype=dtype) for k in columns}  # fmt: skip
        b = {k: torch.zeros(self.max_loras, c.stop - c.start, self.max_lora_rank,
                            device=device, dtype=dtype) for k, c in columns.items()}  # fmt: skip
        return _Target(columns, a, b)

    # --- the registry ---------------------------------------------------------
    def add_lora(self, request: LoRARequest) -> None:
        """Register (and load and check) an adapter; a name already known is kept as is."""
        if request.lora_name in self.registry:
            return
        adapter = load_adapter(request.lora_name, request.lora_path, self.max_lora_rank)
        self._check_shapes(adapter)
        self.adapters[request.lora_name] = adapter
        self.registry[request.lora_name] = request
        self.cache_tags[request.lora_name] = self._next_tag
        self._next_tag += 1

    def remove_lora(self, name: str) -> bool:
        if name not in self.registry:
            return False
        del self.registry[name], self.adapters[name], self.cache_tags[name]
        self.slots.pop(name, None)  # its slot is simply free again
        return True

    def list_loras(self) -> list[LoRARequest]:
        return list(self.registry.values())

    def _check_shapes(self, adapter: LoRAAdapter) -> None:
        known = {k: (t, k) for t in self.targets.values() for k in t.columns}
        for module, (a, b) in adapter.weights.items():
            if module not in known:
                raise LoRAError(f"LoRA adapter {adapter.name!r}: the model has no {module}")
            target, key = known[module]
            want_in, want_out = target.a[key].shape[2], target.b[key].shape[1]
            if a.shape[1] != want_in or b.shape[0] != want_out:
                raise LoRAError(
                    f"LoRA adapter {adapter.name!r}: {module} maps {a.shape[1]} -> "
                    f"{b.shape[0]}, the model's projection {want_in} -> {want_out}"
                )

    # --- slots ----------------------------------------------------------------
    def _slot_of(self, name: str, pinned: set[str]) -> int:
        if name in self.slots:
            self.slots.move_to_end(name)
            return self.slots[name]
        if len(self.slots) < self.max_loras:
            slot = min(set(range(self.max_loras)) - set(self.slots.values()))
        else:
            victim = next((n for n in self.slots if n not in pinned), None)
            if victim is None:
                raise LoRAError(f"a batch needs more than max_loras={self.max_loras} adapters")
            slot = self.slots.pop(victim)
        self._fill(slot, self.adapters[name])
        self.slots[name] = slot
        self.num_slot_loads += 1
        return slot

    @torch.no_grad()
    def _fill(self, slot: int, adapter: LoRAAdapter) -> None:
        r = adapter.rank
        for target in self.targets.values():
            for key in target.columns:
                target.a[key][slot].zero_()
                target.b[key][slot].zero_()
                if key in adapter.weights:
                    a, b = adapter.weights[key]
                    target.a[key][slot, :r].copy_(a)
                    target.b[key][slot, :, :r].copy_(b * adapter.scaling)

    # --- the batch ------------------------------------------------------------
    def prepare_batch(self, names: list[str | None], query_lens: list[int]) -> None:
        """Row runs of the next forward pass: sequence i has `query_lens[i]` rows and runs
        with adapter `names[i]` (None: the base model)."""
        if not any(names):
            self._segments = self._row_slots = None
            return
        pinned = {n for n in names if n}
        segments: list[tuple[int, int, int]] = []
        start = 0
        for name, n in zip(names, query_lens, strict=True):
            slot = self._slot_of(name, pinned) if name else -1
            if segments and segments[-1][2] == slot and segments[-1][1] == start:
                segments[-1] = (segments[-1][0], start + n, slot)  # merge a run
            else:
                segments.append((start, start + n, slot))
            start += n
        self._segments = segments
        decode_only = all(n == 1 for n in query_lens)
        rows = [slot for (lo, hi, slot) in segments for _ in range(hi - lo)]
        self._row_slots = torch.tensor(rows, device=self.device) if decode_only else None

    def clear_batch(self) -> None:
        self._segments = self._row_slots = None

    def _hook(self, target: _Target) -> Any:
        def add_deltas(
            module: nn.Module, args: tuple[torch.Tensor, ...], out: torch.Tensor
        ) -> torch.Tensor:
            if self._segments is None:
                return out
            x = args[0]
            for key, cols in target.columns.items():
                y = out[..., cols]
                if self._row_slots is not None:  # decode: one row per run (BGMV)
                    bgmv(y, x, target.a[key], target.b[key], self._row_slots)
                else:  # runs of rows per adapter (SGMV)
                    sgmv(y, x, target.a[key], target.b[key], self._segments)
            return out

        return add_deltas
