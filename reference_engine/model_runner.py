"""ModelRunner: owns the model weights and the paged KV cache, runs one packed batch per step.

The scheduler decides *what* runs and which blocks each sequence owns; the runner only turns a
`ForwardBatch` into logits. It also moves KV blocks on request: between device and a host pool
(swap preemption) and within the device (copy-on-write when shared blocks diverge).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import torch

from reference_engine.batch_invariant import BatchInvariantMode, check_supported
from reference_engine.config import ConfigError, EngineConfig, ModelConfig
from reference_engine.distributed.parallel_linear import local_kv_heads
from reference_engine.distributed.parallel_state import (
    SINGLE_PROCESS,
    ParallelState,
    building_with,
)
from reference_engine.forward_batch import ForwardBatch
from reference_engine.layers.attention import PagedAttention
from reference_engine.layers.cpu_gemm import packing_supported
from reference_engine.layers.linear import Linear
from reference_engine.layers.quantization.kv_cache import kv_row_width, kv_storage_dtype
from reference_engine.loader import DTYPES, build_model
from reference_engine.prefix_cache.state_checkpoints import num_state_rows

BlockMapping = Sequence[tuple[int, int]]  # (source block id, destination block id)


class ModelRunner:
    def __init__(
        self,
        model_config: ModelConfig,
        engine_config: EngineConfig,
        parallel: ParallelState = SINGLE_PROCESS,
    ) -> None:
        """`parallel`: the groups this rank's shard belongs to (distributed/worker.py);
        one process holds the whole model."""
        self.model_config = model_config
        self.engine_config = engine_config
        self.parallel = parallel
        # KV heads this rank stores (all of them in one process; see parallel_linear.py).
        self.num_kv_heads = local_kv_heads(model_config.num_key_value_heads, parallel.tp.world_size)
        device = torch.device(engine_config.resolved_device())
        if device.type == "cuda" and device.index is None:
            # "cuda" != "cuda:0" when compared; pin the index so device checks hold.
            device = torch.device("cuda", torch.cuda.current_device())
        self.device = device
        self.dtype = DTYPES[engine_config.resolved_dtype(model_config)]
        self.block_size = engine_config.block_size
        self.num_blocks = engine_config.resolved_num_blocks(model_config)
        self.max_model_len = engine_config.resolved_max_model_len(model_config)
        self.max_blocks_per_seq = engine_config.max_blocks_per_seq(model_config)
        # Only a model without a checkpoint is randomly initialised; seed it without
        # touching the caller's global RNG stream.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(engine_config.seed)
            with building_with(parallel):
                self.model = build_model(
                    model_config, self.dtype, self.device, engine_config.quantization
                )
        if engine_config.enable_two_batch_overlap:
            from reference_engine.distributed.two_batch_overlap import enable_two_batch_overlap

            enable_two_batch_overlap(self.model)
        # float32 on a CPU: projections multiply with prepacked weights (layers/cpu_gemm.py).
        # Deterministic mode reroutes F.linear into fixed tiles; packed weights bypass it.
        self.deterministic = engine_config.deterministic
        self.packed_weights = (
            engine_config.cpu_prepack
            and not self.deterministic
            and packing_supported(self.device, self.dtype)
        )
        if self.deterministic:
            check_supported(self.model)
            for module in self.model.modules():
                if isinstance(module, PagedAttention):
                    module.batch_invariant = True
        if self.packed_weights:
            for module in self.model.modules():
                if isinstance(module, Linear):
                    module.pack_for_cpu()
        # One extra block at the end is scratch space: padded rows (CUDA-graph buckets)
        # write their K/V there, so no real block is ever touched by padding.
        self.pad_block_id = self.num_blocks
        self.kv_caches = self._drop_other_stages(self._allocate(self.num_blocks + 1, self.device))
        # Hybrid models: recurrent-state pools beside the paged KV, one slot per running
        # request (the KVCacheManager hands slots out; layers/gated_delta_net.py).
        allocate_state = getattr(self.model, "allocate_state_cache", None)
        if allocate_state is not None:
            slots, checkpoints = num_state_rows(
                engine_config.max_num_seqs, engine_config.prefix_caching
            )
            allocate_state(slots + checkpoints, self.device)
        self.num_cpu_blocks = engine_config.num_cpu_blocks
        self.cpu_kv_caches = (
            self._drop_other_stages(
                self._allocate(
                    self.num_cpu_blocks, torch.device("cpu"), pin=self.device.type == "cuda"
                )
            )
            if self.num_cpu_blocks
            else []
        )

    @property
    def pad_slot(self) -> int:
        return self.pad_block_id * self.block_size

    def _allocate(
        self, num_blocks: int, device: torch.device, pin: bool = False
    ) -> list[tuple[torch.Tensor, ...]]:
        """Per layer, its cache tensors [num_blocks, block_size, heads, dim]: (K, V), or
        MLA's one latent (ModelConfig.kv_cache_shapes)."""
        kv_dtype = self.engine_config.kv_cache_dtype
        if kv_dtype != "auto" and self.model_config.kv_lora_rank is not None:
            raise ConfigError("kv_cache_dtype int8/fp8 covers K/V caches, not MLA's latent")
        dtype = kv_storage_dtype(kv_dtype) or self.dtype

        def new(heads: int, dim: int) -> torch.Tensor:
            # Zeros, not empty: padded gather rows read unwritten slots (masked, but NaN
            # garbage times a zero weight would still poison the sum).
            # A quantized row carries its scale after its values (quantization/kv_cache.py).
            # Context parallelism: a block holds this rank's stripe of a logical block
            # (distributed/context_parallel.py): block_size / cp rows under the same id.
            rows = self.block_size // self.parallel.cp.world_size
            shape = (num_blocks, rows, heads, kv_row_width(dim, kv_dtype))
            t = torch.zeros(shape, dtype=dtype, device=device)
            return t.pin_memory() if pin else t

        shapes = self.model_config.kv_cache_shapes(self.num_kv_heads)
        return [tuple(new(h, d) for h, d in layer) for layer in shapes]

    def _drop_other_stages(
        self, caches: list[tuple[torch.Tensor, ...]]
    ) -> list[tuple[torch.Tensor, ...]]:
        """A pipeline stage keeps the caches of its own layers; the others become empty."""
        if self.parallel.pp.world_size == 1:
            return caches
        start, end = self.model.model.start_layer, self.model.model.end_layer
        return [
            c if start <= i < end else tuple(t.new_empty((0, *t.shape[1:])) for t in c)
            for i, c in enumerate(caches)
        ]

    @torch.inference_mode()
    def execute_model(self, batch: ForwardBatch) -> torch.Tensor:
        """One forward pass -> logits [len(batch.logits_indices), vocab], float32 (float64
        when the model runs in float64, so tests keep their precision)."""
        batch = batch if batch.input_ids.device == self.device else batch.to(self.device)
        with BatchInvariantMode() if self.deterministic else contextlib.nullcontext():
            hidden = self.model(batch.input_ids, batch.positions, self.kv_caches, batch)
            logits = self.model.compute_logits(hidden[batch.logits_indices])
        return logits.to(torch.promote_types(self.dtype, torch.float32))

    # ------------------------------------------------------------------ memory traffic

    @property
    def weight_bytes(self) -> int:
        return sum(p.numel() * p.element_size() for p in self.model.parameters())

    @property
    def kv_bytes_per_token(self) -> int:
        """What one token caches across all layers (K and V, or MLA's latent)."""
        return sum(c[0, 0].numel() * c.element_size() for layer in self.kv_caches for c in layer)

    def step_bytes(self, batch: ForwardBatch) -> int:
        """Bytes a forward pass must move at the least: every weight once, every context
        token's K/V read once, new K/V written once. A decode step is bound by this, so
        bytes / step time against the machine's copy bandwidth says how close it runs."""
        kv_read = sum(batch.context_lens_cpu) * self.kv_bytes_per_token
        kv_written = batch.num_tokens * self.kv_bytes_per_token
        return self.weight_bytes + kv_read + kv_written

    # ------------------------------------------------------------------ block movement

    @torch.inference_mode()
    def swap_out(self, mapping: BlockMapping) -> None:
        """Device blocks -> host blocks, (device_id, host_id) pairs."""
        self._copy_between(self.kv_caches, self.cpu_kv_caches, mapping)

    @torch.inference_mode()
    def swap_in(self, mapping: BlockMapping) -> None:
        """Host blocks -> device blocks, (host_id, device_id) pairs."""
        self._copy_between(self.cpu_kv_caches, self.kv_caches, mapping)

    @torch.inference_mode()
    def copy_blocks(self, mapping: BlockMapping) -> None:
        """Device block -> device block (copy-on-write of a shared last block)."""
        self._copy_between(self.kv_caches, self.kv_caches, mapping)

    def _copy_between(
        self,
        src_caches: list[tuple[torch.Tensor, ...]],
        dst_caches: list[tuple[torch.Tensor, ...]],
        mapping: BlockMapping,
    ) -> None:
        if not mapping:
            return
        if not src_caches or not dst_caches:
            raise RuntimeError("swap needs a host KV pool: set EngineConfig.num_cpu_blocks")
        src_ids = torch.tensor([s for s, _ in mapping], dtype=torch.int64)
        dst_ids = torch.tensor([d for _, d in mapping], dtype=torch.int64)
        for src_layer, dst_layer in zip(src_caches, dst_caches, strict=True):
            for src, dst in zip(src_layer, dst_layer, strict=True):
                if src.shape[0] == 0:
                    continue  # a layer another pipeline stage caches
                # Gather first: a mapping may read a block another pair overwrites. Only a
                # copy *to* the GPU may be asynchronous: stream order protects its readers,
                # while a host destination is read by the CPU right away.
                rows = src[src_ids.to(src.device)]
                rows = rows.to(dst.device, non_blocking=dst.device.type == "cuda")
                dst.index_copy_(0, dst_ids.to(dst.device), rows)
