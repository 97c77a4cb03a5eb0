"""Where a step goes: a torch.profiler trace over a window of engine steps.

`StepProfiler` labels the engine's phases with `record_function` ranges — schedule,
prepare_inputs, forward (and inside it, each decoder layer's children by kind:
attention, MLP or MoE, norms; the embedding and the LM head), sample, detokenize — and
writes a Chrome / Perfetto trace (open it in ui.perfetto.dev or chrome://tracing).

The ranges are installed only while profiling: the engine's methods are wrapped on the
instance and the model gets forward hooks, both removed on exit, so an engine that is not
profiled runs exactly the code it always runs (vLLM instead guards its ranges with a flag;
SGLang starts torch.profiler from an HTTP endpoint). A multi-rank engine's forward runs in
its workers, which this does not reach; it is profiled with one rank. Async scheduling is
refused too: its forward runs on a worker thread the profiler does not follow.

Owner: `StepProfiler` belongs to whoever profiles (the `atlas engine profile` command);
the engine never knows it is being watched.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.autograd.profiler import record_function

PREFIX = "atlas::"
# The step's phases, in the order a step runs them (the breakdown's rows).
PHASES = ("schedule", "prepare_inputs", "forward", "sample", "detokenize")
# Children of a decoder layer that are not layer kinds of their own.
_NORM_NAMES = ("norm", "layernorm")


@dataclass
class PhaseBreakdown:
    """Step time split by phase, from the profiler's own events (milliseconds, summed over
    the profiled steps). `layer_kinds`: forward time per kind of layer component."""

    num_steps: int
    step_ms: float
    phases_ms: dict[str, float]
    layer_kinds_ms: dict[str, float] = field(default_factory=dict)

    @property
    def other_ms(self) -> float:
        """Step time outside the named phases (output assembly, bookkeeping)."""
        return max(0.0, self.step_ms - sum(self.phases_ms.values()))

    def rows(self) -> list[tuple[str, float]]:
        """(label, ms) in step order, layer kinds indented under forward."""
        out: list[tuple[str, float]] = []
        for phase in PHASES:
            out.append((phase, self.phases_ms.get(phase, 0.0)))
            if phase == "forward":
                for kind, ms in sorted(self.layer_kinds_ms.items(), key=lambda kv: -kv[1]):
                    out.append((f"  {kind}", ms))
        out.append(("other", self.other_ms))
        return out


def _layer_kind(name: str, module: nn.Module) -> str:
    """A decoder layer's child named by what it is: the norms together, the rest by class
    (LlamaAttention, Qwen3MoeSparseMoeBlock, GatedDeltaNet...), so a hybrid model shows its
    kinds of attention apart."""
    if any(name.endswith(n) for n in _NORM_NAMES):
        return "norm"
    return type(module).__name__


def _decoder_layers(model: nn.Module) -> list[nn.Module]:
    inner = getattr(model, "model", model)
    layers = getattr(inner, "layers", None)
    return [m for m in layers if any(True for _ in m.children())] if layers is not None else []


class StepProfiler:
    """Profile `num_steps` engine steps: `with StepProfiler(engine) as p: ...step...`,
    then `p.export(path)` and `p.breakdown()`."""

    def __init__(self, engine: Any, record_shapes: bool = False) -> None:
        if engine.config.world_size > 1:
            raise ValueError("profiling runs in one process: drop --tp/--pp/--ep/--cp")
        if getattr(engine, "overlap", None) is not None:
            # Measured: the overlapped forward runs on a worker thread that started before the
            # profiler and is not followed by it; its time would show as "other".
            raise ValueError("profile without --async-scheduling (its forward runs on a worker thread)")
        self.engine = engine
        self.record_shapes = record_shapes
        self.num_steps = 0
        self._stack = contextlib.ExitStack()
        self._prof: torch.profiler.profile | None = None

    # -- installing the ranges ------------------------------------------------------
    def _wrap(self, owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(PREFIX + label):
                return original(*args, **kwargs)

        setattr(owner, attr, wrapped)  # an instance attribute shadows the class's method
        self._stack.callback(delattr, owner, attr)

    def _hook(self, module: nn.Module, label: str) -> None:
        ranges: list[Any] = []  # one per call in flight (a module may be re-entered)

        def pre(_m: nn.Module, _args: Any) -> None:
            r = record_function(PREFIX + label)
            r.__enter__()
            ranges.append(r)

        def post(_m: nn.Module, _args: Any, _out: Any) -> None:
            ranges.pop().__exit__(None, None, None)

        self._stack.callback(module.register_forward_pre_hook(pre).remove)
        self._stack.callback(module.register_forward_hook(post).remove)

    def _install(self) -> None:
        e = self.engine
        self._wrap(e.scheduler, "schedule", "schedule")
        self._wrap(e, "_prepare", "prepare_inputs")
        self._wrap(e, "_forward", "forward")
        self._wrap(e, "_sample", "sample")
        # Detokenizing happens as each token is appended, inside the stop checker.
        self._wrap(e.stop_checker, "step", "detokenize")
        model = e.runner.model
        for layer in _decoder_layers(model):
            for name, child in layer.named_children():
                self._hook(child, "layer/" + _layer_kind(name, child))
        inner = getattr(model, "model", model)
        if isinstance(getattr(inner, "embed_tokens", None), nn.Module):
            self._hook(inner.embed_tokens, "layer/embedding")
        if isinstance(getattr(model, "lm_head", None), nn.Module):
            self._hook(model.lm_head, "layer/lm_head")

    # -- the window ------------------------------------------------------------------
    def __enter__(self) -> StepProfiler:
        self._install()
        self._prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=self.record_shapes
        )
        self._stack.enter_context(self._prof)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def step(self) -> list[Any]:
        """One engine step inside an `atlas::step` range."""
        with record_function(PREFIX + "step"):
            outputs = self.engine.step()
        self.num_steps += 1
        return outputs

    def steps(self, num_steps: int) -> Iterator[list[Any]]:
        for _ in range(num_steps):
            if not self.engine.has_unfinished_requests():
                return
            yield self.step()

    # -- results -----------------------------------------------------------------------
    def export(self, path: Path) -> Path:
        assert self._prof is not None, "profile a window first"
        path.parent.mkdir(parents=True, exist_ok=True)
        self._prof.export_chrome_trace(str(path))
        return path

    def breakdown(self) -> PhaseBreakdown:
        assert self._prof is not None, "profile a window first"
        totals: dict[str, float] = {}
        for ev in self._prof.key_averages():
            if ev.key.startswith(PREFIX):
                totals[ev.key[len(PREFIX) :]] = ev.cpu_time_total / 1000.0
        return PhaseBreakdown(
            num_steps=self.num_steps,
            step_ms=totals.get("step", 0.0),
            phases_ms={p: totals.get(p, 0.0) for p in PHASES},
            layer_kinds_ms={
                k.removeprefix("layer/"): v for k, v in totals.items() if k.startswith("layer/")
            },
        )


def trace_ranges(path: Path) -> dict[str, float]:
    """Total duration (ms) per `atlas::` range in a written trace: what a reader's viewer
    shows, read back from the JSON (the test's and the command's check that it loads)."""
    events = json.loads(Path(path).read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    totals: dict[str, float] = {}
    for ev in events:
        name = ev.get("name", "")
        if ev.get("ph") == "X" and name.startswith(PREFIX):
            key = name[len(PREFIX) :]
            totals[key] = totals.get(key, 0.0) + float(ev.get("dur", 0.0)) / 1000.0
    return totals


def profile_engine(
    engine: Any, warmup_steps: int, num_steps: int, on_outputs: Callable[[list[Any]], None]
) -> StepProfiler:
    """Run `warmup_steps` plain steps, then profile up to `num_steps`, then finish the
    requests unprofiled; `on_outputs` sees every step's outputs."""
    for _ in range(warmup_steps):
        if not engine.has_unfinished_requests():
            break
        on_outputs(engine.step())
    profiler = StepProfiler(engine)
    with profiler:
        for outputs in profiler.steps(num_steps):
            on_outputs(outputs)
    while engine.has_unfinished_requests():
        on_outputs(engine.step())
    return profiler
