"""Mixture-of-experts layer: a top-k router's choice, then the experts, batched by expert.

`select_experts` turns router logits into each token's k experts and their weights
(softmax or sigmoid scores, optional bias used for the *choice* only, optional
renormalisation of the k weights and a scaling factor: Qwen3-MoE's and DeepSeek-V3's rules).
`FusedMoE` holds the routed experts' weights stacked, w13 [E, 2I, H] (gate and up fused) and
w2 [E, H, I], and computes them batched: every (token, expert) pair is sorted by expert, so
each expert runs one matmul over all the tokens routed to it and the Python loop is over
experts, never over tokens. Outputs are weighted and summed back per token with index_add_.

Across ranks (reference_engine/distributed/):
- tensor parallel (default): every rank holds a slice of *every* expert's intermediate
  size (gate/up by columns, down by rows) and one all-reduce sums the partial outputs;
- expert parallel (`EngineConfig.expert_parallel_size`): every rank holds whole experts
  (`ExpertPlacement`); tokens go to the ranks holding their experts with an all-to-all and
  come back with a second one (distributed/expert_dispatch.py).

Shared experts (Qwen2-MoE, DeepSeek) are a dense MLP every token passes through; a family adds
their output to this layer's (build FusedMoE with `reduce_results=False` and reduce the sum
once; models/deepseek_v3.py). Grouped top-k (DeepSeek-V3's `n_group` / `topk_group`): experts
form groups, each token first keeps its best `topk_group` groups, then picks its k experts
among them, which bounds how many devices one token's experts span under expert parallelism.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from reference_engine.distributed.parallel_linear import divide
from reference_engine.distributed.parallel_state import current_parallel_state

if TYPE_CHECKING:
    from reference_engine.distributed.expert_placement import ExpertPlacement
    from reference_engine.distributed.two_batch_overlap import TwoBatchOverlapStats
    from reference_engine.loader import CheckpointTensor


@dataclass(slots=True)
class TopKRouting:
    """Each token's experts and weights; made by `select_experts`, read by the experts."""

    weights: torch.Tensor  # [T, k], the model's dtype
    ids: torch.Tensor  # [T, k] int64, logical expert ids


def select_experts(
    router_logits: torch.Tensor,
    top_k: int,
    renormalize: bool,
    scoring_func: str = "softmax",
    correction_bias: torch.Tensor | None = None,
    routed_scaling_factor: float = 1.0,
    num_expert_group: int = 1,
    topk_group: int = 1,
) -> TopKRouting:
    """Router logits [T, E] -> the top-k experts per token. Scores are computed in at least
    float32 (as transformers does); `correction_bias` shifts only which experts win
    (DeepSeek-V3's load-balancing bias), never the weights."""
    dtype = torch.promote_types(router_logits.dtype, torch.float32)
    if scoring_func == "softmax":
        scores = torch.softmax(router_logits, dim=-1, dtype=dtype)
    elif scoring_func == "sigmoid":
        scores = torch.sigmoid(router_logits.to(dtype))
    else:
        raise ValueError(f"unknown scoring function {scoring_func!r}")
    choice = scores if correction_bias is None else scores + correction_bias.to(dtype)
    if num_expert_group > 1:
        choice = _mask_to_best_groups(choice, num_expert_group, topk_group)
    ids = torch.topk(choice, top_k, dim=-1).indices
    weights = scores.gather(-1, ids)
    if renormalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    if routed_scaling_factor != 1.0:
        weights = weights * routed_scaling_factor
    return TopKRouting(weights.to(router_logits.dtype), ids)


def _mask_to_best_groups(choice: torch.Tensor, num_groups: int, topk_group: int) -> torch.Tensor:
    """Keep the `topk_group` groups whose two best experts score highest (DeepSeek-V3's
    rule); every other expert gets -inf so top-k never picks it."""
    t, e = choice.shape
    grouped = choice.view(t, num_groups, e // num_groups)
    group_scores = grouped.topk(min(2, e // num_groups), dim=-1).values.sum(dim=-1)
    best = group_scores.topk(topk_group, dim=-1).indices  # [T, topk_group]
    keep = torch.zeros_like(group_scores, dtype=torch.bool).scatter_(1, best, True)
    return grouped.masked_fill(~keep[..., None], float("-inf")).view(t, e)


def grouped_experts(
    x: torch.Tensor,
    token_idx: torch.Tensor,
    expert_idx: torch.Tensor,
    w13: torch.Tensor,
    w2: torch.Tensor,
    b13: torch.Tensor | None = None,
    b2: torch.Tensor | None = None,
    activation: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
) -> torch.Tensor:
    """SwiGLU experts over (token, expert) pairs -> one output row per pair, in pair order.

    x [T, H]; token_idx, expert_idx [P] (expert_idx indexes w13/w2's first axis). Pairs are
    sorted by expert so each expert does one [n_e, H] x [H, 2I] and one [n_e, I] x [I, H].
    Optional per-expert biases b13 [E, 2I], b2 [E, H] and a gated activation (gate, up) ->
    [n_e, I] other than silu(gate) * up serve GPT-OSS (models/gpt_oss.py)."""
    out = x.new_empty((token_idx.shape[0], x.shape[1]))
    if token_idx.numel() == 0:
        return out
    order = torch.argsort(expert_idx, stable=True)
    counts = torch.bincount(expert_idx, minlength=w13.shape[0]).tolist()
    rows = x.index_select(0, token_idx[order])
    done = rows.new_empty(rows.shape)
    start = 0
    for e, n in enumerate(counts):
        if n == 0:
            continue
        bias13 = None if b13 is None else b13[e]
        gate, up = F.linear(rows[start : start + n], w13[e], bias13).chunk(2, dim=-1)
        hidden = F.silu(gate) * up if activation is None else activation(gate, up)
        done[start : start + n] = F.linear(hidden, w2[e], None if b2 is None else b2[e])
        start += n
    out[order] = done
    return out


_EXPERT_NAME = re.compile(
    r"^(?P<prefix>.*\.experts)\.(?P<expert>\d+)\.(?P<part>gate|up|down)_proj\.weight$"
)


class FusedMoE(nn.Module):
    """The routed experts of one layer (vLLM's FusedMoE; SGLang's FusedMoE / EPMoE)."""

    def __init__(
        self,
        num_experts: int,
        top_k: int,
        hidden_size: int,
        intermediate_size: int,
        renormalize: bool,
        scoring_func: str = "softmax",
        routed_scaling_factor: float = 1.0,
        reduce_results: bool = True,
        placement: ExpertPlacement | None = None,
        num_expert_group: int = 1,
        topk_group: int = 1,
    ) -> None:
        super().__init__()
        self.num_expert_group, self.topk_group = num_expert_group, topk_group
        state = current_parallel_state()
        self.tp, self.ep = state.tp, state.ep
        self.num_experts, self.top_k = num_experts, top_k
        self.hidden_size, self.intermediate_size = hidden_size, intermediate_size
        self.renormalize, self.scoring_func = renormalize, scoring_func
        self.routed_scaling_factor = routed_scaling_factor
        self.reduce_results = reduce_results
        self.placement: ExpertPlacement | None
        # set by two_batch_overlap.enable_two_batch_overlap: then MoE runs overlapped
        self.overlap_stats: TwoBatchOverlapStats | None = None
        if self.ep.world_size > 1:
            from reference_engine.distributed.expert_placement import ExpertPlacement

            self.placement = placement or ExpertPlacement.contiguous(
                num_experts, self.ep.world_size
            )
            # physical slot -> logical expert, for this rank's slots
            self.local_experts = self.placement.local_experts(self.ep.rank)
            inter = intermediate_size  # whole experts
        else:
            self.placement = None
            self.local_experts = list(range(num_experts))
            inter = divide(intermediate_size, self.tp.world_size)  # a slice of every expert
        self.local_intermediate = inter
        n = len(self.local_experts)
        self.w13_weight = nn.Parameter(torch.empty(n, 2 * inter, hidden_size))
        self.w2_weight = nn.Parameter(torch.empty(n, hidden_size, inter))
        for w in (self.w13_weight, self.w2_weight):
            nn.init.normal_(w, std=hidden_size**-0.5)  # only a model without a checkpoint keeps it
        # Tokens routed to each logical expert since the last reset (EPLB reads it to place
        # hot experts); made on first use, on the device the tokens are on.
        self.expert_load: torch.Tensor | None = None

    def forward(
        self,
        x: torch.Tensor,
        router_logits: torch.Tensor,
        correction_bias: torch.Tensor | None = None,
    ) -> torch.Tensor:
        routing = select_experts(
            router_logits,
            self.top_k,
            self.renormalize,
            self.scoring_func,
            correction_bias=correction_bias,
            routed_scaling_factor=self.routed_scaling_factor,
            num_expert_group=self.num_expert_group,
            topk_group=self.topk_group,
        )
        if self.placement is not None:
            from reference_engine.distributed.expert_dispatch import expert_parallel_moe

            return expert_parallel_moe(self, x, routing)
        token_idx = torch.arange(x.shape[0], device=x.device).repeat_interleave(self.top_k)
        expert_idx = routing.ids.reshape(-1)
        self.record_load(expert_idx)
        y = grouped_experts(x, token_idx, expert_idx, self.w13_weight, self.w2_weight)
        y = y * routing.weights.reshape(-1, 1)
        out = torch.zeros_like(x).index_add_(0, token_idx, y)
        if self.reduce_results:
            out = self.tp.all_reduce(out)
        return out

    def set_placement(self, placement: ExpertPlacement) -> None:
        """Adopt a new expert-parallel placement (EPLB): this rank's slots change, so its
        expert weights are re-allocated, empty; distributed/eplb.py reloads them."""
        assert self.ep.world_size > 1, "placements are for expert parallelism"
        self.placement = placement
        self.local_experts = placement.local_experts(self.ep.rank)
        n, inter = len(self.local_experts), self.local_intermediate
        like = self.w13_weight
        self.w13_weight = nn.Parameter(like.new_empty((n, 2 * inter, self.hidden_size)))
        self.w2_weight = nn.Parameter(like.new_empty((n, self.hidden_size, inter)))
        self.expert_load = None

    def record_load(self, expert_idx: torch.Tensor) -> None:
        counts = torch.bincount(expert_idx, minlength=self.num_experts)
        self.expert_load = counts if self.expert_load is None else self.expert_load + counts

    # ------------------------------------------------------------------ checkpoint loading

    @staticmethod
    def map_checkpoint_name(hf_name: str) -> tuple[str, str] | None:
        """`...experts.7.up_proj.weight` -> (`...experts.w13_weight`, `7.up`); None when the
        name is not a routed expert's."""
        m = _EXPERT_NAME.match(hf_name)
        if m is None:
            return None
        param = "w2_weight" if m["part"] == "down" else "w13_weight"
        return f"{m['prefix']}.{param}", f"{m['expert']}.{m['part']}"

    def checkpoint_shards(self, param: str) -> list[str | None]:
        parts = ("down",) if param == "w2_weight" else ("gate", "up")
        return [f"{e}.{p}" for e in sorted(set(self.local_experts)) for p in parts]

    def load_checkpoint_tensor(
        self, param: str, shard: str | None, tensor: CheckpointTensor
    ) -> None:
        """Expert e's gate/up/down into every local slot holding e (none: not read at all)."""
        assert shard is not None
        expert_text, part = shard.split(".")
        expert = int(expert_text)
        if not 0 <= expert < self.num_experts:
            from reference_engine.config import ConfigError

            raise ConfigError(f"checkpoint tensor {tensor.name!r}: no expert {expert}")
        slots = [i for i, e in enumerate(self.local_experts) if e == expert]
        if not slots:
            return
        inter, n = self.intermediate_size, self.local_intermediate
        lo = 0 if self.placement is not None else self.tp.rank * n
        if part == "down":
            tensor.expect_shape((self.hidden_size, inter))
            data = tensor.read(1, lo, lo + n)
        else:
            tensor.expect_shape((inter, self.hidden_size))
            data = tensor.read(0, lo, lo + n)
        for slot in slots:
            if part == "down":
                self.w2_weight.data[slot].copy_(data)
            else:
                rows = slice(0, n) if part == "gate" else slice(n, 2 * n)
                self.w13_weight.data[slot, rows].copy_(data)
