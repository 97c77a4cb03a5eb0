"""The trainer process of test_weight_update.py: rank 0 of the weight update group.

Each round it makes new weights (the base checkpoint plus seeded noise, standing in for an
optimizer step), saves them as a checkpoint folder (so the test can start a fresh engine on
them), tells the engine what is coming over a pipe, and broadcasts every tensor.
"""

from __future__ import annotations

import shutil
from multiprocessing.connection import Connection
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from reference_engine.weight_update import WeightBroadcaster


def round_weights(base: Path, k: int) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(1000 + k)
    return {
        name: t + 0.3 * t.std() * torch.randn(t.shape, generator=gen, dtype=t.dtype)
        if t.dim() >= 2 else t
        for name, t in sorted(load_file(str(base / "model.safetensors")).items())
    }  # fmt: skip


def run_trainer(base: str, out: str, port: int, rounds: int, conn: Connection) -> None:
    torch.set_num_threads(1)
    broadcaster = WeightBroadcaster("127.0.0.1", port, world_size=2, timeout_s=60)
    for k in range(1, rounds + 1):
        weights = round_weights(Path(base), k)
        folder = Path(out) / f"round{k}"
        shutil.copytree(base, folder)
        save_file(weights, str(folder / "model.safetensors"))
        named = list(weights.items())
        conn.send(("update", WeightBroadcaster.metadata(named), str(folder), f"step-{k}"))
        broadcaster.broadcast(named)
        assert conn.recv() == ("updated", f"step-{k}")
    conn.send(("stop",))
