"""Multi-LoRA serving: PEFT adapters in fixed device slots, a different adapter per row.

request.py (which adapter a request names) -> adapter.py (read and check a PEFT folder) ->
manager.py (slots with LRU, the batch's row -> slot mapping, hooks on the projections) ->
punica.py (segmented / batched gather matmuls that add each row's own low-rank delta).
"""

from reference_engine.lora.request import LoRARequest

__all__ = ["LoRARequest"]
