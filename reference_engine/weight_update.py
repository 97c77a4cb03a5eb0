"""Live weight updates for RL: new weights from a checkpoint folder, from tensors in memory,
or broadcast by a trainer process over torch.distributed, without restarting the engine.

The rules, and why:
- An update runs on the engine's own thread between two steps, so no forward pass ever
  mixes old and new weights.
- Requests in flight follow `policy`: "refuse" (the default: the update is refused while
  any request is in flight; the server drains first, see server/weight_update_api.py),
  "abort" (they end with finish_reason "abort"), or "recompute" (their KV, computed by the
  old weights, is dropped and recomputed by the new ones; tokens already produced stay).
- The prefix cache is emptied: its KV belongs to the old weights.
- Every RequestOutput carries `weight_version`, the label of the weights that made it.
- A bad update (unknown or missing tensors, wrong shapes, wrong dtypes, an unreadable
  folder) is refused with WeightUpdateError and the old weights keep serving: tensors are
  staged and checked first, and the parameters are backed up while the update is copied in
  (the loader's checks run on the real copy), restored if anything fails.

The distributed path is SGLang's and vLLM's RL integration: the engine joins a process group
with the trainer (init_group, the trainer at rank 0), and for each update the trainer sends
names, dtypes and shapes first, then broadcasts every tensor in that order (trainer.py in
this folder's tests shows the trainer side: WeightBroadcaster below).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import torch

from reference_engine.config import ConfigError, ModelConfig
from reference_engine.layers.linear import Linear
from reference_engine.loader import CheckpointTensor

if TYPE_CHECKING:
    from reference_engine.engine import Engine
    from reference_engine.models.llama import LlamaForCausalLM

UpdatePolicy = Literal["refuse", "abort", "recompute"]
POLICIES = ("refuse", "abort", "recompute")
DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


class WeightUpdateError(ValueError):
    """An update the engine refused; the old weights are still serving."""


@dataclass(frozen=True, slots=True)
class UpdateResult:
    version: str
    num_tensors: int
    num_aborted: int
    num_recomputed: int
    seconds: float


class _StagedTensor(CheckpointTensor):
    """An in-memory tensor with the loader's CheckpointTensor interface (every method
    overridden: nothing is read from a file)."""

    def __init__(self, name: str, tensor: torch.Tensor) -> None:  # no super(): no file handle
        self.name, self.tensor = name, tensor
        self.shape: tuple[int, ...] = tuple(tensor.shape)

    def read(self, dim: int = 0, start: int = 0, stop: int | None = None) -> torch.Tensor:
        return self.tensor.narrow(dim, start, (self.shape[dim] if stop is None else stop) - start)

    def expect_shape(self, shape: tuple[int, ...]) -> None:
        if self.shape != tuple(shape):
            raise ConfigError(
                f"tensor {self.name!r} has shape {self.shape}, the model expects {tuple(shape)}"
            )


class WeightUpdater:
    """Owned by the Engine (`engine.weights`): its weight version, the trainer group it
    joined, and the update paths."""

    def __init__(self, engine: Engine, version: str) -> None:
        self.engine = engine
        self.version = version
        self.num_updates = 0
        self.group: Any = None  # torch.distributed ProcessGroupGloo with the trainer
        self.group_rank = -1

    # --- the three sources ---------------------------------------------------------------
    def update_from_disk(
        self, model_path: str | Path, version: str | None = None, policy: str = "refuse"
    ) -> UpdateResult:
        """Load a checkpoint folder of the same architecture (config.json must agree)."""
        from reference_engine.loader import iter_checkpoint_tensors

        self._precheck(policy)
        path = Path(model_path)
        try:
            new_cfg = ModelConfig.from_pretrained(path)
            self._same_architecture(new_cfg)
            staged = [(n, t.read()) for n, t in iter_checkpoint_tensors(path)]
        except (ConfigError, OSError) as exc:
            raise WeightUpdateError(f"update from {path} refused: {exc}") from None
        return self._apply(staged, version, policy, f"checkpoint {path}")

    def update_from_tensors(
        self,
        named_tensors: Iterable[tuple[str, torch.Tensor]],
        version: str | None = None,
        policy: str = "refuse",
    ) -> UpdateResult:
        """Tensors handed over in memory, under checkpoint (Hugging Face) names."""
        self._precheck(policy)
        return self._apply(list(named_tensors), version, policy, "the tensors sent")

    def init_group(
        self,
        master_address: str,
        master_port: int,
        rank: int,
        world_size: int,
        timeout_s: float = 60.0,
    ) -> None:
        """Join the trainer's group (gloo, its own TCP store: the engine's other process
        groups, if any, are untouched). Blocks until every member has joined."""
        import torch.distributed as dist

        if self.group is not None:
            raise WeightUpdateError("this engine already joined a weight update group")
        if not 0 < rank < world_size:
            raise WeightUpdateError(f"rank {rank} must be in [1, {world_size}): 0 is the trainer")
        timeout = datetime.timedelta(seconds=timeout_s)
        try:
            store = dist.TCPStore(master_address, master_port, world_size, False, timeout=timeout)
            self.group = dist.ProcessGroupGloo(store, rank, world_size, timeout)
        except (RuntimeError, OSError) as exc:
            raise WeightUpdateError(f"cannot join the group at {master_address}:{master_port}: "
                                    f"{exc}") from None  # fmt: skip
        self.group_rank = rank

    def update_from_distributed(
        self,
        names: Sequence[str],
        dtypes: Sequence[str],
        shapes: Sequence[Sequence[int]],
        version: str | None = None,
        policy: str = "refuse",
    ) -> UpdateResult:
        """Receive one broadcast per tensor from rank 0, in `names` order, then apply.
        Everything is received before it is checked, so a refused update still consumes
        the trainer's broadcasts and the group stays in step."""
        staged = self.receive(names, dtypes, shapes)
        return self.apply_staged(staged, version, policy)

    def receive(
        self, names: Sequence[str], dtypes: Sequence[str], shapes: Sequence[Sequence[int]]
    ) -> list[tuple[str, torch.Tensor]]:
        """The broadcasts alone, into new tensors (the server receives off the engine
        thread, then applies between two steps)."""
        import torch.distributed as dist

        if self.group is None:
            raise WeightUpdateError("no weight update group: call init_group first")
        if not len(names) == len(dtypes) == len(shapes):
            raise WeightUpdateError("names, dtypes and shapes must have the same length")
        bad = [d for d in dtypes if d not in DTYPES]
        if bad:
            raise WeightUpdateError(f"unsupported dtypes {bad[:3]}; use one of {sorted(DTYPES)}")
        staged = []
        opts = dist.BroadcastOptions()
        opts.rootRank = 0
        for name, dtype, shape in zip(names, dtypes, shapes, strict=True):
            buf = torch.empty(tuple(shape), dtype=DTYPES[dtype])
            self.group.broadcast([buf], opts).wait()
            staged.append((name, buf))
        return staged

    def apply_staged(
        self, staged: list[tuple[str, torch.Tensor]], version: str | None, policy: str
    ) -> UpdateResult:
        self._precheck(policy)
        return self._apply(staged, version, policy, "the broadcast")

    # --- the update ----------------------------------------------------------------------
    def _precheck(self, policy: str) -> None:
        engine = self.engine
        if policy not in POLICIES:
            raise WeightUpdateError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        if engine.model_config.quantization_config:
            raise WeightUpdateError(
                "live updates of a pre-quantized checkpoint are not implemented (an engine "
                "quantizing on load, --quantization, takes float updates)"
            )
        if engine.runner.parallel.tp.world_size > 1:
            raise WeightUpdateError("live updates run in one process only (tensor_parallel 1)")
        if policy == "refuse" and engine.has_unfinished_requests():
            raise WeightUpdateError(
                f"{len(engine.requests)} requests are in flight; drain them first or pass "
                "policy='abort' or 'recompute'"
            )

    def _same_architecture(self, new: ModelConfig) -> None:
        old = self.engine.model_config
        fields = ("architecture", "vocab_size", "hidden_size", "intermediate_size",
                  "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
                  "tie_word_embeddings")  # fmt: skip
        diff = [f for f in fields if getattr(old, f) != getattr(new, f)]
        if diff:
            raise ConfigError(f"its config.json differs from the served model's in {diff}")

    def _apply(
        self, staged: list[tuple[str, torch.Tensor]], version: str | None, policy: str, source: str
    ) -> UpdateResult:
        from reference_engine.loader import load_named_tensors

        start = time.perf_counter()
        engine = self.engine
        if engine.overlap is not None:  # async scheduling: no forward may run on old and new
            engine.overlap.wait_forward()
        model = engine.runner.model
        params = dict(model.named_parameters())
        staged = self._quantize_projections(model, staged)
        for name, tensor in staged:  # dtypes: the loader would silently cast them
            ours, _ = model.map_checkpoint_name(name)
            if ours in params and tensor.dtype != params[ours].dtype:
                raise WeightUpdateError(
                    f"update refused: {name} is {tensor.dtype}, the served weights are "
                    f"{params[ours].dtype}"
                )
        backup = {n: p.detach().clone() for n, p in params.items()}
        try:
            with torch.no_grad():
                load_named_tensors(
                    model, [(n, _StagedTensor(n, t)) for n, t in staged], source
                )
        except Exception as exc:  # whatever failed mid-copy, the old weights come back
            with torch.no_grad():
                for n, p in params.items():
                    p.copy_(backup[n])
            raise WeightUpdateError(f"update refused, old weights kept: {exc}") from None
        del backup
        if engine.runner.packed_weights:  # the prepacked copies hold the old values
            for module in model.modules():
                if isinstance(module, Linear):
                    module.pack_for_cpu()
        aborted = recomputed = 0
        if policy == "abort":
            for request_id in list(engine.requests):
                aborted += engine.abort(request_id)
        elif policy == "recompute":
            recomputed = len(engine.scheduler.recompute_all())
        engine.kv.cache.clear()  # cached KV was computed by the old weights
        self.num_updates += 1
        self.version = version if version is not None else f"v{self.num_updates}"
        return UpdateResult(self.version, len(staged), aborted, recomputed,
                            time.perf_counter() - start)  # fmt: skip


    def _quantize_projections(
        self, model: LlamaForCausalLM, staged: list[tuple[str, torch.Tensor]]
    ) -> list[tuple[str, torch.Tensor]]:
        """An engine quantizing on load (`--quantization`) serves packed projections while
        the trainer holds float ones (low-precision rollouts behind a full-precision
        trainer): each float projection weight is quantized here, by the layer's own
        scheme, into the tensors the layer stores."""
        from reference_engine.layers.quantization.linear import QuantizedLinear

        if not self.engine.config.quantization:
            return staged
        out: list[tuple[str, torch.Tensor]] = []
        for name, tensor in staged:
            ours, _ = model.map_checkpoint_name(name)
            module_name, _, attr = ours.rpartition(".")
            try:
                module = model.get_submodule(module_name)
            except AttributeError:
                module = None  # unknown: the loader refuses it with a clear message
            if isinstance(module, QuantizedLinear) and attr == "weight" and tensor.dtype in (
                torch.float16, torch.bfloat16, torch.float32, torch.float64
            ):
                prefix = name[: -len("weight")]
                try:
                    packed = module.scheme.quantize(tensor)
                except (ConfigError, RuntimeError) as exc:
                    raise WeightUpdateError(f"update refused: {name}: {exc}") from None
                out.extend((prefix + k, v) for k, v in packed.items())
            else:
                out.append((name, tensor))
        return out


class WeightBroadcaster:
    """The trainer's side of `update_from_distributed`: rank 0 of the group."""

    def __init__(
        self, master_address: str, master_port: int, world_size: int, timeout_s: float = 60.0
    ) -> None:
        import torch.distributed as dist

        timeout = datetime.timedelta(seconds=timeout_s)
        store = dist.TCPStore(master_address, master_port, world_size, True, timeout=timeout)
        self.group = dist.ProcessGroupGloo(store, 0, world_size, timeout)

    @staticmethod
    def metadata(named: list[tuple[str, torch.Tensor]]) -> dict[str, list[Any]]:
        """What the engine must be told before the broadcasts (names, dtypes, shapes)."""
        inverse = {v: k for k, v in DTYPES.items()}
        return {
            "names": [n for n, _ in named],
            "dtypes": [inverse[t.dtype] for _, t in named],
            "shapes": [list(t.shape) for _, t in named],
        }

    def broadcast(self, named: list[tuple[str, torch.Tensor]]) -> None:
        import torch.distributed as dist

        opts = dist.BroadcastOptions()
        opts.rootRank = 0
        for _, tensor in named:
            # torch's .pyi declares no collectives on Backend subclasses; Gloo has broadcast
            self.group.broadcast([tensor.contiguous()], opts).wait()  # type: ignore[attr-defined]
