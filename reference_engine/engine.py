"""Engine (vLLM's LLMEngine): requests in, RequestOutputs out, one step at a time.

`step()` is the book's diagram, one call per box:

    schedule  -> which sequences run, how many tokens each (Scheduler + KVCacheManager)
    run       -> move swapped blocks, one forward pass over the packed batch (ModelRunner)
    sample    -> one batched sampler over every row that needs a token (Sampler)
    update    -> append tokens, detokenize, check stops, free what finished
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import torch

from reference_engine import heavy_hitters
from reference_engine.batch_queue import BatchQueue
from reference_engine.config import ConfigError, EngineConfig, ModelConfig
from reference_engine.cuda_graph import DecodeGraphRunner
from reference_engine.detokenizer import IncrementalDetokenizer, annotate_logprobs
from reference_engine.distributed.executor import create_runner
from reference_engine.forward_batch import ForwardBatch, SeqInput, build_forward_batch
from reference_engine.kv_cache_manager import KVCacheManager
from reference_engine.kv_tiers.hierarchy import make_kv_tiers
from reference_engine.kv_window import H2O, max_len_in_pool
from reference_engine.loader import LoadedTokenizer, load_model_config, load_tokenizer
from reference_engine.lora.adapter import LoRAError
from reference_engine.lora.manager import LoRAManager
from reference_engine.lora.request import LoRARequest
from reference_engine.multimodal.image_processor import ImageError
from reference_engine.multimodal.manager import MultiModalManager
from reference_engine.outputs import CompletionOutput, RequestMetrics, RequestOutput
from reference_engine.overlap_scheduler import INFLIGHT_TOKEN, OverlapScheduler
from reference_engine.prefix_cache.state_checkpoints import num_state_rows
from reference_engine.sampler import (
    Sampler,
    SamplingMetadata,
    SamplingRow,
    TokenLogprobs,
    prompt_logprob_layout,
    request_generator,
)
from reference_engine.sampling_params import SamplingParams
from reference_engine.scheduler import ScheduledSeq, Scheduler, SchedulerConfig, SchedulerOutput
from reference_engine.sequence import Sequence, SequenceGroup, SequenceStatus
from reference_engine.spec_decode import SpecDecodingStats, SpeculativeConfig
from reference_engine.spec_decode.spec_decoder import SpecDecoder
from reference_engine.stop_checker import StopChecker, StopDecision
from reference_engine.structured_output.manager import ConstrainedRow, StructuredOutputManager
from reference_engine.structured_output.xgrammar_backend import GrammarError
from reference_engine.weight_update import WeightUpdater


class RequestError(ValueError):
    """A request the engine cannot serve; the message is fit to show a user, `param` names
    the request field at fault where it is not the prompt."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass(slots=True)
class EngineStats:
    num_running: int
    num_waiting: int
    num_swapped: int
    kv_cache_usage: float  # fraction of KV blocks held (by requests or the prefix cache)
    prefix_cache_hit_rate: float
    prefix_cache_hit_tokens: int
    num_preemptions: int
    num_swap_outs: int  # preemptions that moved KV to host memory instead of dropping it
    num_steps: int
    num_prompt_tokens_computed: int  # prompt/recompute tokens that went through the model
    num_generated_tokens: int
    spec_decoding: SpecDecodingStats | None = None  # None unless speculative decoding is on


@dataclass(slots=True)
class _StepSamples:
    """Per scheduled sequence: the tokens it emits this step (none for a prefill chunk
    short of the prompt's end, several when speculative drafts were accepted)."""

    tokens: list[list[int]]
    logprobs: list[list[TokenLogprobs | None]]
    prompt_logprobs: list[list[TokenLogprobs] | None]


@dataclass(slots=True)
class _StepDelta:
    """What one sequence gained in this step, for streaming."""

    text: str = ""
    token_ids: list[int] | None = None


class Engine:
    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.model_config: ModelConfig = load_model_config(config)
        assert self.model_config.model_dir is not None
        self.tokenizer: LoadedTokenizer = load_tokenizer(self.model_config.model_dir)
        # One process: a ModelRunner; several ranks: the driver's DistributedExecutor, which
        # has the same interface (reference_engine/distributed/executor.py).
        self.runner = create_runner(self.model_config, config)
        # Decode batches padded to captured sizes pay off only with CUDA graphs; on a CPU
        # the padding rows would be pure waste, so the plain runner serves every batch.
        # Hybrids read per-request state slots from a host list the graph would freeze.
        use_graphs = (
            self.runner.device.type == "cuda"
            and not config.enforce_eager
            and not config.enable_lora  # the batch's adapter mapping changes every step
            and not config.deterministic  # per-token attention calls: no static graph
            and not self.model_config.has_recurrent_state
            and config.world_size == 1  # a captured graph would skip the other ranks
        )
        self.graph_runner = DecodeGraphRunner(self.runner) if use_graphs else None
        self.block_size = config.block_size
        num_cpu_blocks = config.num_cpu_blocks if config.preemption_mode == "swap" else 0
        self.kv = KVCacheManager(
            self.runner.num_blocks,
            self.block_size,
            config.prefix_caching,
            num_cpu_blocks,
            sliding_windows=self.model_config.sliding_windows,
            # Hybrids: a recurrent-state slot per running request (layers/gated_delta_net.py)
            # and checkpoint rows for prefix caching (prefix_cache/state_checkpoints.py).
            state_rows=num_state_rows(config.max_num_seqs, config.prefix_caching)
            if self.model_config.has_recurrent_state
            else (0, 0),
        )
        self.scheduler = Scheduler(
            SchedulerConfig(
                max_num_seqs=config.max_num_seqs,
                max_num_batched_tokens=config.max_num_batched_tokens,
                enable_chunked_prefill=config.enable_chunked_prefill,
                preemption_mode=config.preemption_mode,
                policy=config.scheduling_policy,
                prefix_caching=config.prefix_caching != "none",
                max_loras=config.max_loras if config.enable_lora else 0,
            ),
            self.kv,
        )
        # A sequence can never outgrow the whole KV pool: preemption could not save it
        # (unless every layer slides: then it holds only its window, kv_window.py).
        pool_len = max_len_in_pool(
            self.runner.num_blocks,
            self.block_size,
            self.model_config.sliding_windows,
            config.max_num_batched_tokens,
            config.enable_chunked_prefill,
        )
        self.max_model_len = (
            self.runner.max_model_len
            if pool_len is None
            else min(self.runner.max_model_len, pool_len)
        )
        self.eos_token_ids = sorted(
            set(self.model_config.eos_token_ids) | set(self.tokenizer.eos_token_ids)
        )
        self.stop_checker = StopChecker(self.max_model_len, self.eos_token_ids)
        self.sampler = Sampler(seed=config.seed)
        self.sampling_defaults = (
            dict(self.model_config.generation_defaults)
            if config.generation_config == "auto"
            else {}
        )
        try:
            self.default_sampling_params()
        except ValueError as exc:
            raise ConfigError(
                f"generation_config.json in {self.model_config.model_dir} sets an invalid "
                f"sampling default ({exc}); pass generation_config='none' to ignore it"
            ) from None
        spec = SpeculativeConfig.from_value(config.speculative_config)
        if spec is not None and self.model_config.sliding_windows:
            # Rejected drafts are rolled back by trimming blocks; blocks already freed out of
            # a window cannot be rolled back that way. (Hybrids roll their recurrent state
            # back separately: spec_decode/state_rollback.py.)
            raise ConfigError("speculative decoding is not implemented for sliding-window models")
        self.spec = (
            SpecDecoder(
                spec,
                config,
                self.model_config,
                self.eos_token_ids,
                self.max_model_len,
                self.runner,
                self.kv,
            )
            if spec is not None
            else None
        )
        self.lora = (
            LoRAManager(
                self.runner.model, config.max_loras, config.max_lora_rank,
                self.runner.device, self.runner.dtype,
            )
            if config.enable_lora
            else None
        )  # fmt: skip
        if self.lora is not None and self.spec is not None:
            raise ConfigError("LoRA adapters with speculative decoding are not implemented")
        self.structured = StructuredOutputManager(
            self.tokenizer.tokenizer, self.model_config.vocab_size, self.eos_token_ids
        )
        self.weights = WeightUpdater(self, config.weight_version)
        self.overlap: OverlapScheduler | None = None
        if config.async_scheduling:
            if self.spec is not None or self.model_config.has_recurrent_state:
                raise ConfigError(
                    "async scheduling with speculative decoding or recurrent-state models "
                    "is not implemented"
                )
            self.overlap = OverlapScheduler(self)
        # Pipeline parallelism: one step in flight per stage, over disjoint requests
        # (batch_queue.py); None runs one step at a time.
        self.batch_queue: BatchQueue | None = None
        depth = getattr(self.runner, "max_concurrent_batches", 1)
        if depth > 1:
            if self.overlap is not None:
                raise ConfigError(
                    "async scheduling with pipeline parallelism is not implemented (the "
                    "pipeline's batch queue already overlaps steps)"
                )
            self.batch_queue = BatchQueue(self, depth)
        self.requests: dict[str, SequenceGroup] = {}
        self._order = itertools.count()
        self._num_steps = 0
        self._num_prompt_tokens_computed = 0
        self._num_generated_tokens = 0
        # Requests the current step touched (scheduled or preempted): when a step raises,
        # the server aborts exactly these and keeps serving the rest.
        self.step_request_ids: set[str] = set()
        self.kv_tiers = make_kv_tiers(self)  # host / disk tiers under the prefix cache, or None
        # Images (multimodal/): for a model with a vision encoder in this process, else None.
        self.mm = MultiModalManager.for_model(
            getattr(self.runner, "model", None), self.model_config, config.encoder_cache_tokens
        )
        self.scheduler.token_limit = self.mm  # chunks stop before images with no cache room

    @property
    def random_weights(self) -> bool:
        return self.model_config.random_weights

    def default_sampling_params(self) -> SamplingParams:
        """What a request without SamplingParams gets: the library defaults, overridden by
        the checkpoint's generation_config.json unless EngineConfig.generation_config='none'."""
        return SamplingParams(**self.sampling_defaults)  # type: ignore[arg-type]

    # --- requests -------------------------------------------------------------
    def add_request(
        self,
        request_id: str,
        prompt: str | list[int],
        params: SamplingParams | None = None,
        priority: int = 0,
        arrival_time: float | None = None,
        add_special_tokens: bool = True,
        lora_request: LoRARequest | None = None,
        images: list[Any] | None = None,
    ) -> None:
        """Queue a request. `arrival_time` uses `time.monotonic()`'s clock; `lora_request`
        runs it with that adapter (registered and loaded on first use); `images` (PIL
        images, bytes, data URLs or ProcessedImages) fill the prompt's image placeholders,
        one `<|image_pad|>` per image (multimodal/manager.py)."""
        params = params or self.default_sampling_params()
        if request_id in self.requests:
            raise RequestError(f"request id {request_id!r} is already in use")
        if lora_request is not None:
            self.add_lora(lora_request)
        if isinstance(prompt, str):
            text: str | None = prompt
            token_ids = self.tokenizer.encode(prompt, add_special_tokens=add_special_tokens)
        else:
            text, token_ids = None, [int(t) for t in prompt]
        multi_modal = None
        if images:
            if self.mm is None:
                raise RequestError("this model does not accept images", param="images")
            try:
                token_ids, multi_modal = self.mm.process(token_ids, images)
            except ImageError as exc:
                raise RequestError(str(exc), param="images") from None
        self._validate(token_ids, params)
        if (
            self.kv_tiers is not None
            and multi_modal is None  # tiers key blocks by plain token ids
            and self.kv_tiers.wants(params, lora_request)
        ):
            self.kv_tiers.promote(request_id, token_ids)  # tiered prefix blocks back
        grammar = None
        if params.structured_outputs is not None:
            try:
                grammar = self.structured.compile(params.structured_outputs)
            except GrammarError as exc:
                raise RequestError(str(exc), param="structured_outputs") from None
        arrival = time.monotonic() if arrival_time is None else arrival_time
        group = SequenceGroup(request_id, text, token_ids, params, [], RequestMetrics(arrival))
        parent: Sequence | None = None
        for i in range(params.n):
            seq = Sequence(
                seq_id=f"{request_id}#{i}" if params.n > 1 else request_id,
                request_id=request_id,
                index=i,
                prompt_token_ids=list(token_ids),
                params=params,
                arrival_time=arrival,
                priority=priority,
                order=next(self._order),
                generator=request_generator(params.seed, i),
                fork_parent=parent,
                detokenizer=IncrementalDetokenizer.from_params(
                    self.tokenizer.tokenizer, params, token_ids
                ),
                lora_name=lora_request.lora_name if lora_request else None,
                prefix_cache_tag=(
                    self.lora.cache_tags[lora_request.lora_name]
                    if lora_request and self.lora
                    else 0
                ),
                multi_modal=multi_modal,
            )
            parent = parent or seq
            if grammar is not None:
                self.structured.add(seq, grammar)
            group.seqs.append(seq)
            self.scheduler.add(seq)
        self.requests[request_id] = group

    def _validate(self, token_ids: list[int], params: SamplingParams) -> None:
        if not token_ids:
            raise RequestError("the prompt is empty: at least one token is needed")
        if params.kv_eviction is not None and self.spec is not None:
            raise RequestError("kv_eviction cannot be combined with speculative decoding")
        if isinstance(params.kv_eviction, H2O) and (
            self.model_config.kv_lora_rank is not None or self.model_config.has_recurrent_state
        ):
            raise RequestError("H2O eviction needs a paged-attention model (not MLA or hybrid)")
        vocab = self.model_config.vocab_size
        bad = [t for t in token_ids if not 0 <= t < vocab]
        if bad:
            raise RequestError(f"prompt token ids outside the vocabulary [0, {vocab}): {bad[:5]}")
        if len(token_ids) >= self.max_model_len:
            raise RequestError(
                f"the prompt has {len(token_ids)} tokens; this engine serves at most "
                f"{self.max_model_len} tokens per sequence (prompt + output), leaving no room"
            )
        if (
            not self.config.enable_chunked_prefill
            and len(token_ids) > self.config.max_num_batched_tokens
        ):
            raise RequestError(
                f"the prompt has {len(token_ids)} tokens, more than max_num_batched_tokens="
                f"{self.config.max_num_batched_tokens}, and chunked prefill is off"
            )

    # --- LoRA adapters (lora/manager.py) ------------------------------------------
    def add_lora(self, lora_request: LoRARequest) -> None:
        """Register an adapter (vLLM's LLMEngine.add_lora); errors are RequestErrors."""
        if self.lora is None:
            raise RequestError("LoRA adapters need an engine started with enable_lora=True")
        try:
            self.lora.add_lora(lora_request)
        except LoRAError as exc:
            raise RequestError(str(exc)) from None

    def remove_lora(self, name: str) -> bool:
        """Forget an adapter; refused while a request still runs with it."""
        if self.lora is None:
            return False
        if any(s.lora_name == name for g in self.requests.values() for s in g.seqs):
            raise RequestError(f"LoRA adapter {name!r} is in use by running requests")
        return self.lora.remove_lora(name)

    def list_loras(self) -> list[LoRARequest]:
        return self.lora.list_loras() if self.lora is not None else []

    def abort(self, request_id: str) -> bool:
        """Stop a request and free everything it holds; False when it is unknown or done."""
        group = self.requests.pop(request_id, None)
        if group is None:
            return False
        for seq in group.seqs:
            self.scheduler.abort(seq)
            seq.finish_reason = seq.finish_reason or "abort"
        if self.mm is not None:
            self.mm.free(request_id)
        return True

    def has_unfinished_requests(self) -> bool:
        # A pipeline step in flight whose requests were all aborted still has to come back.
        return bool(self.requests) or bool(self.batch_queue and self.batch_queue.in_flight)

    # --- the step -------------------------------------------------------------
    def step(self) -> list[RequestOutput]:
        if self.overlap is not None:  # async scheduling: one step late (overlap_scheduler.py)
            return self.overlap.step()
        if self.batch_queue is not None:  # pipeline parallelism: steps in flight
            return self.batch_queue.step()
        self.step_request_ids = set()
        out = self.scheduler.schedule()
        self.step_request_ids = {item.seq.request_id for item in out.scheduled} | {
            seq.request_id for seq in out.preempted
        }
        if out.is_empty:
            # A step that only preempted is progress (it is readmitted next step); its
            # swap-outs still run now, before anything reuses the blocks they read.
            self.runner.swap_out(out.blocks_to_swap_out)
            if self.scheduler.has_unfinished() and not out.preempted:
                # Admission checks make this unreachable; fail loudly rather than spin forever.
                raise RuntimeError(
                    f"scheduler made no progress: {len(self.scheduler.waiting)} waiting, "
                    f"{len(self.scheduler.swapped)} swapped, {self.kv.num_free_blocks()} free blocks"
                )
            return []
        start = time.perf_counter()
        logits = self._run(out)
        if self.spec is not None:
            self.spec.observe_forward(out, time.perf_counter() - start)
        sampled = self._sample(out, logits)
        self.scheduler.on_step_done(out)
        if self.kv_tiers is not None:
            self.kv_tiers.after_step(out)  # write-through: computed blocks down the tiers
        self._num_steps += 1
        outputs = self._update(out, sampled)
        if self.spec is not None:
            self.spec.propose(self.scheduler.running)  # drafts ride along in the next step
        return outputs

    def _run(self, out: SchedulerOutput) -> torch.Tensor:
        """Block moves, then one forward pass; returns logits for the rows the sampler uses."""
        inputs, batch = self._prepare(out)
        return self._forward(out, inputs, batch)

    def _prepare(self, out: SchedulerOutput) -> tuple[list[SeqInput], ForwardBatch]:
        """The step's packed batch (CPU work the overlap scheduler runs during a forward).
        Tokens still being sampled by a step in flight enter as INFLIGHT_TOKEN placeholders,
        filled in once known (overlap_scheduler.py)."""
        # Image embeddings and multimodal positions (the step's new images encoded together).
        mm_parts = self.mm.step_inputs(out.scheduled) if self.mm else [None] * len(out.scheduled)
        inputs = [
            SeqInput(
                # Speculative drafts follow the last sampled token; each needs its logits.
                token_ids=(
                    item.seq.all_token_ids
                    + item.seq.spec_token_ids
                    + [INFLIGHT_TOKEN] * item.seq.num_inflight_tokens
                )[item.start : item.end],
                start_position=item.start,
                block_table=self.kv.block_tables[item.seq.seq_id],
                want_prompt_logits=self._wants_prompt_logits(item) or bool(item.seq.spec_token_ids),
                kv_policy=heavy_hitters.view(item.seq, self.block_size),
                tree_parents=self.spec.tree_parents(item.seq) if self.spec else None,
                **self.kv.state_inputs(item.seq.seq_id, item.start, item.end),
                multimodal=part,
            )
            for item, part in zip(out.scheduled, mm_parts, strict=True)
        ]
        return inputs, build_forward_batch(inputs, self.block_size, device=self.runner.device)

    def _forward(
        self,
        out: SchedulerOutput,
        inputs: list[SeqInput],
        batch: ForwardBatch,
        move_blocks: bool = True,
    ) -> torch.Tensor:
        if move_blocks:
            # Swap-outs first: the blocks they read may be handed to a swap-in or new tokens.
            self.runner.swap_out(out.blocks_to_swap_out)
            self.runner.swap_in(out.blocks_to_swap_in)
            self.runner.copy_blocks(out.blocks_to_copy)  # partial prefix-cache hits
        if self.lora is not None:  # each sequence's rows run with its own adapter
            self.lora.prepare_batch(
                [item.seq.lora_name for item in out.scheduled], batch.query_lens_cpu
            )
        if self.graph_runner is not None:
            logits = self.graph_runner.execute(batch)
        else:
            logits = self.runner.execute_model(batch)
        if batch.attention_scores is not None:  # H2O requests: add up where attention went
            heavy_hitters.record_scores(out.scheduled, batch)
        keep = self._logits_rows(out, inputs, batch)
        if keep is None:
            return logits
        return logits[torch.tensor(keep, dtype=torch.long, device=logits.device)]

    @staticmethod
    def _logits_rows(
        out: SchedulerOutput, inputs: list[SeqInput], batch: ForwardBatch
    ) -> list[int] | None:
        """Every sequence got at least its last row; the rows that will be used (a prefill
        chunk short of the prompt's end samples nothing), or None for all of them."""
        keep: list[int] = []
        for i, item in enumerate(out.scheduled):
            lo, hi = batch.logits_start_loc[i], batch.logits_start_loc[i + 1]
            if inputs[i].want_prompt_logits:
                keep.extend(range(lo, hi))
            elif item.samples:
                keep.append(hi - 1)
        return None if len(keep) == batch.logits_start_loc[-1] else keep

    @staticmethod
    def _wants_prompt_logits(item: ScheduledSeq) -> bool:
        seq = item.seq
        # Prompt logprobs are the request's, computed once by sample 0 on its first pass.
        # prompt_logprobs is [None, score of token 1, ...]: a chunk must resume right after
        # the last scored token (a recompute after preemption scores nothing twice).
        num_scored = len(seq.prompt_logprobs) - 1 if seq.prompt_logprobs is not None else 0
        return (
            seq.wants_prompt_logprobs
            and seq.index == 0
            and not seq.output_token_ids
            and num_scored == item.start
        )

    def _sample(self, out: SchedulerOutput, logits: torch.Tensor) -> _StepSamples:
        rows: list[SamplingRow] = []
        spans: list[tuple[int, int]] = []  # each item's sampling rows
        logit_starts: list[int] = []  # each item's first logits row
        num_logits = 0
        constrained: list[ConstrainedRow] = []  # structured-output rows to mask
        for item in out.scheduled:
            seq = item.seq
            if self._wants_prompt_logits(item):
                num_prompt_rows, do_sample = prompt_logprob_layout(
                    item.start, item.end, seq.num_prompt_tokens
                )
            else:
                num_prompt_rows, do_sample = 0, item.samples
            row = SamplingRow(
                params=seq.params,
                prompt_token_ids=seq.prompt_token_ids,
                output_token_ids=seq.output_token_ids,
                generator=seq.generator,
                eos_token_ids=self.eos_token_ids,
                num_prompt_logprob_rows=num_prompt_rows,
                prompt_logprob_start=item.start,
                do_sample=do_sample,
            )
            lo = len(rows)
            logit_starts.append(num_logits)
            if seq.spec_token_ids:
                assert self.spec is not None
                rows.extend(self.spec.sampling_rows(row, seq))
            else:
                rows.append(row)
            spans.append((lo, len(rows)))
            for r in rows[lo:]:
                num_logits += r.num_logits_rows
                if r.do_sample and self.structured.is_constrained(seq):
                    # A speculative row's state includes the drafts before it.
                    extra = r.output_token_ids[len(seq.output_token_ids) :]
                    constrained.append(ConstrainedRow(num_logits - 1, seq, extra))
        self.structured.apply(logits, constrained)
        sampled = self.sampler(logits, SamplingMetadata.build(rows))
        token_ids = sampled.token_ids()
        result = _StepSamples([], [], [])
        for item, (lo, hi), lstart in zip(out.scheduled, spans, logit_starts, strict=True):
            result.prompt_logprobs.append(sampled.prompt_logprobs[lo])
            if not item.seq.spec_token_ids:
                result.tokens.append([token_ids[lo]] if item.samples else [])
                result.logprobs.append([sampled.logprobs[lo]])
                continue
            assert self.spec is not None
            # A speculating sequence is a plain decode: one logits row per sampling row.
            tokens, logprobs, accepted = self.spec.verify(
                item.seq, rows[lo:hi], logits[lstart : lstart + hi - lo], token_ids[lo:hi],
                sampled.logprobs[lo:hi], self.sampler,
            )  # fmt: skip
            # Only the last sampled token and the accepted drafts (left in spec_token_ids)
            # hold valid K/V: the scheduler's on_step_done advances and caches exactly those.
            item.num_new_tokens = self.spec.num_computed(item.seq, accepted)
            result.tokens.append(tokens)
            result.logprobs.append(logprobs)
        return result

    def _update(self, out: SchedulerOutput, sampled: _StepSamples) -> list[RequestOutput]:
        now = time.monotonic()
        deltas: dict[str, _StepDelta] = {}
        touched: dict[str, SequenceGroup] = {}
        for i, item in enumerate(out.scheduled):
            seq = item.seq
            group = self.requests[seq.request_id]
            if group.metrics.first_scheduled_time is None:
                group.metrics.first_scheduled_time = now
            # A decode runs the last sampled token (plus any accepted drafts) past the prompt.
            is_decode = item.start >= seq.num_prompt_tokens and (
                item.num_new_tokens == 1 or len(sampled.tokens[i]) > 1
            )
            if not is_decode:
                self._num_prompt_tokens_computed += item.num_new_tokens
            if sampled.prompt_logprobs[i] is not None:
                if seq.prompt_logprobs is None:
                    seq.prompt_logprobs = [None]  # position 0 has nothing before it to score
                for entry in sampled.prompt_logprobs[i] or []:
                    seq.prompt_logprobs.append(annotate_logprobs(self.tokenizer.tokenizer, entry))
            seq.spec_token_ids = []  # the accepted ones are among this step's tokens
            if not sampled.tokens[i]:
                continue
            if group.metrics.first_token_time is None:
                group.metrics.first_token_time = now
            touched[group.request_id] = group
            delta = deltas[seq.seq_id] = _StepDelta("", [])
            # One token at a time, exactly as plain decoding would: a stop inside accepted
            # drafts drops the tokens after it.
            for token, logprob in zip(sampled.tokens[i], sampled.logprobs[i], strict=False):
                if not self._append_token(seq, token, logprob, delta):
                    break
            if self.spec is not None:
                self.spec.release_rejected(seq)
        outputs = []
        for group in touched.values():
            outputs.append(self._request_output(group, deltas))
            if group.is_finished:
                group.metrics.finished_time = now
                del self.requests[group.request_id]
                if self.mm is not None:
                    self.mm.free(group.request_id)
        return outputs

    def _append_token(
        self, seq: Sequence, token: int, logprob: TokenLogprobs | None, delta: _StepDelta
    ) -> bool:
        """Append one sampled token, detokenize, check stops; False once the sequence ended."""
        seq.output_token_ids.append(token)
        self._num_generated_tokens += 1
        if logprob is not None:
            seq.logprobs = seq.logprobs or []
            seq.logprobs.append(annotate_logprobs(self.tokenizer.tokenizer, logprob))
        result = self.stop_checker.step(
            seq.params, seq.num_prompt_tokens, seq.output_token_ids, seq.detokenizer, [token]
        )
        delta.text += result.text_delta
        assert delta.token_ids is not None
        delta.token_ids.append(token)
        decision = result.decision
        if decision is None and not self.structured.accept(seq, token):
            # The grammar is complete: the request ends here, its held-back text flushed.
            delta.text += seq.detokenizer.update([], finished=True).text_delta
            decision = StopDecision("stop")
        if decision is None:
            return True
        seq.finish_reason = decision.finish_reason
        seq.stop_reason = decision.stop_reason
        status = (
            SequenceStatus.FINISHED_STOPPED if decision.is_stop else SequenceStatus.FINISHED_LENGTH
        )
        self.scheduler.finish(seq, status)
        return False

    def _request_output(self, group: SequenceGroup, deltas: dict[str, _StepDelta]) -> RequestOutput:
        completions = []
        for seq in group.seqs:
            delta = deltas.get(seq.seq_id, _StepDelta())
            completions.append(
                CompletionOutput(
                    index=seq.index,
                    text=seq.detokenizer.output_text,
                    token_ids=list(seq.output_token_ids),
                    finish_reason=seq.finish_reason,
                    stop_reason=seq.stop_reason,
                    logprobs=list(seq.logprobs) if seq.logprobs is not None else None,
                    text_delta=delta.text,
                    token_ids_delta=delta.token_ids or [],
                    num_cached_tokens=seq.num_cached_tokens,
                )
            )
        return RequestOutput(
            request_id=group.request_id,
            prompt=group.prompt,
            prompt_token_ids=group.prompt_token_ids,
            outputs=completions,
            finished=group.is_finished,
            prompt_logprobs=group.seqs[0].prompt_logprobs,
            metrics=group.metrics,
            num_cached_tokens=group.seqs[0].num_cached_tokens,
            weight_version=self.weights.version,
        )

    # --- introspection ------------------------------------------------------------
    def stats(self) -> EngineStats:
        cache_stats = self.kv.cache.stats
        return EngineStats(
            num_running=len(self.scheduler.running),
            num_waiting=len(self.scheduler.waiting),
            num_swapped=len(self.scheduler.swapped),
            kv_cache_usage=self.kv.usage(),
            prefix_cache_hit_rate=cache_stats.hit_rate,
            prefix_cache_hit_tokens=cache_stats.num_hit_tokens,
            num_preemptions=self.scheduler.num_preemptions,
            num_swap_outs=self.scheduler.num_swap_outs,
            num_steps=self._num_steps,
            num_prompt_tokens_computed=self._num_prompt_tokens_computed,
            num_generated_tokens=self._num_generated_tokens,
            spec_decoding=self.spec.stats.snapshot() if self.spec is not None else None,
        )

    def shutdown(self) -> None:
        """Stop the worker processes of a multi-rank engine (nothing to do in one process)."""
        stop = getattr(self.runner, "shutdown", None)
        if stop is not None:
            stop()

    def check_integrity(self) -> None:
        """Raise unless every KV block reference is accounted for (tests call it when idle),
        and only live requests hold encoder-cache references."""
        self.kv.check_integrity()
        if self.mm is not None:
            self.mm.cache.check_integrity(set(self.requests))
