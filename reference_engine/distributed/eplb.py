"""Expert-parallel load balancing (EPLB), re-planned on request.

Every FusedMoE counts the tokens routed to each expert (`expert_load`, this rank's share of
the tokens). `rebalance_experts` sums the counts over the expert-parallel ranks, asks
`ExpertPlacement.balanced` for a placement with `num_redundant` extra slots per layer (copies
of the hottest experts, packed so ranks get even load), and reloads each rank's new experts
from the checkpoint: a rank reads only the experts it now holds. Every rank runs it in the
same step (DistributedExecutor.rebalance_experts broadcasts the request), so the
placements agree. Outputs do not change: a copy computes exactly what the original did.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from reference_engine.distributed.expert_placement import ExpertPlacement
from reference_engine.layers.fused_moe import FusedMoE


@dataclass(slots=True)
class RebalanceReport:
    """What one re-plan did, per MoE layer (made by `rebalance_experts`)."""

    layers: list[str]
    max_rank_load_before: list[float]
    max_rank_load_after: list[float]


def rebalance_experts(
    model: torch.nn.Module, num_redundant: int, model_dir: Path | None
) -> RebalanceReport:
    from reference_engine.loader import iter_checkpoint_tensors

    report = RebalanceReport([], [], [])
    moved: dict[str, FusedMoE] = {}
    for name, module in model.named_modules():
        if not isinstance(module, FusedMoE) or module.placement is None:
            continue
        counts = (
            module.expert_load
            if module.expert_load is not None
            else torch.zeros(module.num_experts, dtype=torch.int64)
        )
        load = module.ep.all_reduce(counts.clone()).double().tolist()
        new = ExpertPlacement.balanced(load, module.ep.world_size, num_redundant)
        report.layers.append(name)
        report.max_rank_load_before.append(module.placement.max_rank_load(load))
        report.max_rank_load_after.append(new.max_rank_load(load))
        module.set_placement(new)
        moved[name] = module
    if not moved:
        return report
    if model_dir is None:
        raise RuntimeError("EPLB reloads experts from the checkpoint; this model has none")
    for hf_name, tensor in iter_checkpoint_tensors(model_dir):
        mapped = FusedMoE.map_checkpoint_name(hf_name)
        if mapped is None:
            continue
        param, shard = mapped
        module_name, _, attr = param.rpartition(".")
        if module_name in moved:
            moved[module_name].load_checkpoint_tensor(attr, shard, tensor)
    return report
