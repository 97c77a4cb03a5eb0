"""LoRARequest: which adapter a request runs with (vLLM's name and fields)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LoRARequest:
    """Owned by the caller; the engine only reads it. `lora_name` identifies the adapter
    (the server's `model` field), `lora_path` is its PEFT folder (loaded on first use)."""

    lora_name: str
    lora_int_id: int
    lora_path: str
