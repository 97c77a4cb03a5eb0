"""Which expert-parallel rank holds which experts (vLLM's EPLB "physical to logical" map).

A layer has `num_slots = num_experts + num_redundant` physical expert slots, the same number
on every rank (slot s lives on rank s // slots_per_rank). Each slot holds one logical expert;
a hot expert may hold several slots (redundant copies), and a token routed to it goes to one
of them (chosen by token index, so the choice is deterministic and spreads the load).

`contiguous` is the default layout (rank r holds experts [r*E/N, (r+1)*E/N)); `balanced`
places redundant copies of the most loaded experts from measured per-expert token counts and
then packs slots onto ranks so each rank's expected load is as even as a greedy pass makes
it (the idea of DeepSeek's EPLB; vLLM's `rebalance_experts`, SGLang's `ExpertLocationMetadata`).
Every placement gives the same outputs: a copy computes exactly what the original does.
Each FusedMoE owns its placement; every rank holds the same one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True, slots=True)
class ExpertPlacement:
    physical_to_logical: tuple[int, ...]  # slot -> logical expert
    num_ranks: int

    @property
    def slots_per_rank(self) -> int:
        return len(self.physical_to_logical) // self.num_ranks

    @property
    def num_experts(self) -> int:
        return max(self.physical_to_logical) + 1

    @classmethod
    def contiguous(cls, num_experts: int, num_ranks: int) -> ExpertPlacement:
        return cls(tuple(range(num_experts)), num_ranks)

    def local_experts(self, rank: int) -> list[int]:
        """Logical expert of each of this rank's slots, in slot order."""
        n = self.slots_per_rank
        return list(self.physical_to_logical[rank * n : (rank + 1) * n])

    def replicas(self) -> list[list[int]]:
        """Per logical expert, the slots holding it."""
        out: list[list[int]] = [[] for _ in range(self.num_experts)]
        for slot, expert in enumerate(self.physical_to_logical):
            out[expert].append(slot)
        return out

    def route(self, experts: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """The slot each (token, expert) pair goes to: replica `token % copies` of it."""
        reps = self.replicas()
        width = max(len(r) for r in reps)
        table = torch.tensor([r + [r[0]] * (width - len(r)) for r in reps], dtype=torch.long)
        copies = torch.tensor([len(r) for r in reps], dtype=torch.long)
        experts = experts.cpu()
        pick = tokens.cpu() % copies[experts]
        return table[experts, pick].to(tokens.device)

    @classmethod
    def balanced(cls, load: list[float], num_ranks: int, num_redundant: int) -> ExpertPlacement:
        """Copies for the hottest experts, then slots packed onto ranks by load.

        1. replicate: give one more copy, `num_redundant` times, to the expert whose load
           per copy is largest;
        2. pack: place copies heaviest first on the least loaded rank with a free slot,
           preferring a rank that does not hold that expert yet."""
        num_experts = len(load)
        total = num_experts + num_redundant
        if total % num_ranks:
            raise ValueError(
                f"{num_experts} experts + {num_redundant} redundant slots do not divide "
                f"over {num_ranks} ranks"
            )
        copies = [1] * num_experts
        for _ in range(num_redundant):
            hottest = max(range(num_experts), key=lambda e: (load[e] / copies[e], -e))
            copies[hottest] += 1
        per_rank = total // num_ranks
        items = sorted(
            ((load[e] / copies[e], e) for e in range(num_experts) for _ in range(copies[e])),
            key=lambda item: (-item[0], item[1]),
        )
        rank_load = [0.0] * num_ranks
        rank_slots: list[list[int]] = [[] for _ in range(num_ranks)]
        for weight, expert in items:
            free = [r for r in range(num_ranks) if len(rank_slots[r]) < per_rank]
            fresh = [r for r in free if expert not in rank_slots[r]] or free
            r = min(fresh, key=lambda r: (rank_load[r], r))
            rank_slots[r].append(expert)
            rank_load[r] += weight
        return cls(tuple(e for slots in rank_slots for e in sorted(slots)), num_ranks)

    def max_rank_load(self, load: list[float]) -> float:
        """Expected tokens on the busiest rank (a copy takes an equal share of its expert)."""
        reps = self.replicas()
        per_rank = [0.0] * self.num_ranks
        for slot, expert in enumerate(self.physical_to_logical):
            per_rank[slot // self.slots_per_rank] += load[expert] / len(reps[expert])
        return max(per_rank)
