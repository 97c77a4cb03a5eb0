"""Bringing up a model: the engine against transformers, module by module.

`compare_with_transformers` runs one prompt through the engine's model (one prefill, its
own paged KV cache) and through transformers' implementation of the same checkpoint, with
forward hooks on both, and walks the engine's modules in the order they finished: the
first one whose output differs from transformers' same-named module beyond the tolerance
is where a port went wrong (a transposed weight, a missing bias, the wrong RMSNorm eps,
RoPE on the wrong half). Everything upstream of it matched, so the bug is inside it;
modules inside it narrow it further. That is bisection instead of staring at tokens.

Modules are matched by their dotted path (`model.layers.3.self_attn.o_proj`): the engine
keeps Hugging Face's names where it keeps the module, so fused modules (qkv_proj,
gate_up_proj) and modules transformers has but the engine folds away are simply not
compared. Shapes are compared after flattening the batch dimension (the engine packs
tokens, transformers has [batch, tokens, ...]).

transformers is an optional dependency (the `test` extra); it is imported only here.
Owner: the `CompareReport` belongs to the caller; nothing here is kept on the engine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from reference_engine.config import EngineConfig
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.loader import load_model_config
from reference_engine.model_runner import ModelRunner

LOGITS = "logits"


@dataclass(frozen=True)
class TensorDiff:
    """One module's output, engine vs transformers."""

    name: str  # dotted module path, or "logits"
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float  # max_abs / max |transformers' value|
    diverged: bool

    def describe(self) -> str:
        return f"{self.name} {list(self.shape)}: max |diff| {self.max_abs:.3g} (rel {self.max_rel:.3g})"


@dataclass
class CompareReport:
    """Every compared module in the engine's execution order, and the first divergence."""

    atol: float
    rtol: float
    diffs: list[TensorDiff] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)  # engine modules with no HF twin

    @property
    def first_divergence(self) -> TensorDiff | None:
        return next((d for d in self.diffs if d.diverged), None)

    @property
    def first_layer(self) -> int | None:
        """The decoder layer index of the first divergence (None: before/after the layers)."""
        d = self.first_divergence
        if d is None:
            return None
        parts = d.name.split(".")
        if "layers" in parts and parts.index("layers") + 1 < len(parts):
            return int(parts[parts.index("layers") + 1])
        return None


def _first_tensor(out: Any) -> torch.Tensor | None:
    """A module's output: transformers' layers return tuples (hidden, weights, cache...)."""
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, tuple | list) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    return None


@contextlib.contextmanager
def _capture(model: nn.Module, order: list[str] | None = None) -> Iterator[dict[str, torch.Tensor]]:
    """Every module's output (first call only), keyed by dotted path without the root."""
    seen: dict[str, torch.Tensor] = {}
    handles = []
    for name, module in model.named_modules():
        if not name:
            continue

        def hook(_m: nn.Module, _a: Any, out: Any, name: str = name) -> None:
            t = _first_tensor(out)
            if t is not None and name not in seen:
                seen[name] = t.detach().to(torch.float64).clone()
                if order is not None:
                    order.append(name)

        handles.append(module.register_forward_hook(hook))
    try:
        yield seen
    finally:
        for h in handles:
            h.remove()


def _diff(name: str, got: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> TensorDiff:
    ref = ref.reshape(-1, ref.shape[-1]) if ref.dim() > 1 else ref
    got = got.reshape(ref.shape)
    delta = (got - ref).abs()
    max_abs = float(delta.max()) if delta.numel() else 0.0
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    diverged = bool((delta > atol + rtol * ref.abs()).any()) or not torch.isfinite(got).all()
    return TensorDiff(name, tuple(ref.shape), max_abs, max_abs / max(scale, 1e-30), diverged)


def engine_runner(model_dir: Path, dtype: str, num_tokens: int, block_size: int = 16) -> ModelRunner:
    """A runner with just enough KV blocks for one prompt."""
    num_blocks = -(-num_tokens // block_size) + 1
    cfg = EngineConfig(
        model=str(model_dir), dtype=dtype, num_gpu_blocks=num_blocks, block_size=block_size
    )
    return ModelRunner(load_model_config(cfg), cfg)


def load_transformers(model_dir: Path, dtype: str) -> nn.Module:
    try:
        import transformers
    except ImportError:
        raise ValueError("atlas engine compare needs transformers (pip install transformers)") from None
    return transformers.AutoModelForCausalLM.from_pretrained(
        str(model_dir), dtype=getattr(torch, dtype)
    ).eval()


@torch.inference_mode()
def compare_with_transformers(
    runner: ModelRunner,
    hf_model: nn.Module,
    token_ids: list[int],
    atol: float = 1e-4,
    rtol: float = 1e-3,
) -> CompareReport:
    """One prefill of `token_ids` through both models; every same-named module compared."""
    if not token_ids:
        raise ValueError("compare needs at least one token")
    bs = runner.block_size
    table = list(range(-(-len(token_ids) // bs)))
    if len(table) > runner.num_blocks:
        raise ValueError(f"{len(token_ids)} tokens need {len(table)} KV blocks, runner has {runner.num_blocks}")
    batch = build_forward_batch(
        [SeqInput(token_ids, 0, table, want_prompt_logits=True, state_slot=0)], bs,
        device=runner.device,
    )  # fmt: skip
    order: list[str] = []
    with _capture(runner.model, order) as ours:
        logits = runner.execute_model(batch)
    with _capture(hf_model) as theirs:
        ids = torch.tensor([token_ids], dtype=torch.long, device=next(hf_model.parameters()).device)
        ref_logits = hf_model(input_ids=ids, use_cache=False).logits[0]

    report = CompareReport(atol=atol, rtol=rtol)
    for name in order:
        ref = theirs.get(name)
        if ref is None or ref.numel() != ours[name].numel():
            report.not_compared.append(name)
            continue
        report.diffs.append(_diff(name, ours[name], ref, atol, rtol))
    report.diffs.append(
        _diff(LOGITS, logits.to(torch.float64), ref_logits.to(torch.float64), atol, rtol)
    )
    return report
