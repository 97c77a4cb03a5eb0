"""`--tp/--pp/--ep/--cp` for `atlas engine run` and `atlas engine serve` (no torch import:
`atlas --help` must work where torch is not installed)."""

from __future__ import annotations

import typer

TP = typer.Option(
    1, "--tp", "--tensor-parallel-size", min=1, help="Tensor-parallel ranks (processes)."
)
PP = typer.Option(
    1, "--pp", "--pipeline-parallel-size", min=1, help="Pipeline stages (contiguous layers each)."
)
EP = typer.Option(
    1,
    "--ep",
    "--expert-parallel-size",
    min=1,
    help="Expert-parallel ranks (a mixture-of-experts model; equal to --tp, or with --tp 1).",
)
CP = typer.Option(
    1,
    "--cp",
    "--context-parallel-size",
    min=1,
    help="Context-parallel ranks: tokens and KV striped, ring attention (with --tp, --pp).",
)

TBO = typer.Option(
    False,
    "--enable-two-batch-overlap",
    help="With --ep: each MoE layer splits its tokens in two so one half's all-to-all "
    "travels while the other's experts compute.",
)


def parallel_kwargs(tp: int, pp: int, ep: int, cp: int, tbo: bool = False) -> dict[str, int | bool]:
    """EngineConfig fields for the options."""
    return {
        "tensor_parallel_size": tp,
        "pipeline_parallel_size": pp,
        "expert_parallel_size": ep,
        "context_parallel_size": cp,
        "enable_two_batch_overlap": tbo,
    }
