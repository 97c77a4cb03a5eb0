"""Speculative decoding on hybrid models: rolling a recurrent state back.

A rejected draft's K/V is rolled back by trimming blocks, but a linear-attention layer's
state has already absorbed every verified row: there is no per-token entry to drop. So
before a hybrid sequence verifies drafts, its state (the snapshot is taken when the drafts
are proposed, i.e. after the previous step: what the verify step starts from) is saved;
when verification rejects a draft, the state is restored and the step counts as computing
nothing: the accepted tokens and the new one are appended as usual and computed again in
the next step, from the restored state, as a short prefill. All drafts accepted: nothing to
undo. This trades a recompute of 1 + accepted tokens per rejection for exactness; vLLM
keeps a state per draft position instead, which needs a kernel writing them all.

Owned by the SpecDecoder; the saved copies live until the sequence's next verification.
"""

from __future__ import annotations

import torch
from torch import nn

from reference_engine.layers.gated_delta_net import GatedDeltaNet

SavedState = list[tuple[torch.Tensor, torch.Tensor]]  # per GatedDeltaNet: (conv, recurrent)


class StateRollback:
    def __init__(self, model: nn.Module, state_slots: dict[str, int]) -> None:
        self.layers = [m for m in model.modules() if isinstance(m, GatedDeltaNet)]
        self.state_slots = state_slots  # the KVCacheManager's seq_id -> slot map
        self._saved: dict[str, SavedState] = {}

    def save(self, seq_id: str) -> None:
        slot = self.state_slots.get(seq_id)
        if slot is None:
            return
        self._saved[seq_id] = [
            (layer.conv_state[slot].clone(), layer.ssm_state[slot].clone()) for layer in self.layers
        ]

    def restore(self, seq_id: str) -> bool:
        """Put the saved state back in the sequence's slot; False when none was saved."""
        saved = self._saved.pop(seq_id, None)
        slot = self.state_slots.get(seq_id)
        if saved is None or slot is None:
            return False
        for layer, (conv, ssm) in zip(self.layers, saved, strict=True):
            layer.conv_state[slot].copy_(conv)
            layer.ssm_state[slot].copy_(ssm)
        return True

    def forget(self, seq_id: str) -> None:
        self._saved.pop(seq_id, None)
