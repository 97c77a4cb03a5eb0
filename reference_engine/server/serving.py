"""What /v1/completions and /v1/chat/completions share: checks, sampling params, the SSE loop.

Each endpoint supplies a prompt (token ids) and two formatters: one for a
streamed step and one for the final, aggregated response.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from reference_engine.server.async_engine import (
    AsyncEngine,
    EngineDeadError,
    RequestStream,
    StepFailedError,
)
from reference_engine.server.errors import APIError, error_body
from reference_engine.server.metrics import RequestTimer, ServerMetrics
from reference_engine.server.protocol import MAX_STOP_SEQUENCES, _SamplingFields

if TYPE_CHECKING:
    from reference_engine.outputs import RequestOutput
from reference_engine.sampling_params import SamplingParams


@dataclass(frozen=True, slots=True)
class ServingLimits:
    max_n: int = 8  # samples per request; each one is a sequence in the batch
    max_prompt_chars: int = 1_000_000  # refuse before tokenizing something absurd
    # Overload control (SGLang's --max-queued-requests): requests accepted but not yet
    # past their first output, and their prompt tokens. Beyond either, 429 + Retry-After.
    max_waiting_requests: int = 256
    max_queued_tokens: int = 262_144
    retry_after_s: int = 1
    max_images: int = 8  # per chat request; each is processed and encoded
    # Folder `image_url`s may name files in (file:// or a path), as vLLM's
    # --allowed-local-media-path; None refuses local files.
    allowed_local_media_path: str | None = None


@dataclass(slots=True)
class Prepared:
    """A checked request, ready for the engine."""

    request_id: str
    created: int
    token_ids: list[int]
    params: SamplingParams
    arrival: float
    lora_request: Any = None  # LoRARequest when `model` named an adapter
    images: list[Any] | None = None  # ProcessedImages for the prompt's image placeholders


@dataclass(slots=True)
class StreamState:
    """Per-request bookkeeping while streaming: what each choice has already sent."""

    n: int
    finish_sent: list[bool] = field(default_factory=list)
    role_sent: list[bool] = field(default_factory=list)
    tokens_sent: list[int] = field(default_factory=list)
    text_offset: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.finish_sent = [False] * self.n
        self.role_sent = [False] * self.n
        self.tokens_sent = [0] * self.n
        self.text_offset = [0] * self.n


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def sse(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


SSE_DONE = "data: [DONE]\n\n"


@dataclass(frozen=True, slots=True)
class ChunkFactory:
    """Builds the stream chunks of one request; chat and completions differ only in `object`."""

    request_id: str
    created: int
    model: str
    object: str  # "chat.completion.chunk" | "text_completion"
    include_usage: bool = False  # stream_options.include_usage: a final usage-only chunk
    continuous_usage: bool = False  # stream_options.continuous_usage_stats: usage on every chunk

    @classmethod
    def for_request(cls, prep: Prepared, model: str, object: str, opts: Any) -> ChunkFactory:
        include = opts is not None and bool(opts.include_usage)
        continuous = include and bool(opts.continuous_usage_stats)
        return cls(prep.request_id, prep.created, model, object, include, continuous)

    def chunk(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": self.request_id,
            "object": self.object,
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }
        if self.include_usage:
            chunk["usage"] = None  # OpenAI sends an explicit null until the usage chunk
        return chunk

    def step_chunks(self, choices: list[dict[str, Any]], out: RequestOutput) -> list[dict[str, Any]]:
        if not choices:
            return []
        chunk = self.chunk(choices)
        chunk["weight_version"] = out.weight_version  # SGLang's field: which weights made it
        if self.continuous_usage:
            chunk["usage"] = usage(out)
        return [chunk]

    def usage_chunk(self, final: RequestOutput) -> dict[str, Any]:
        chunk = self.chunk([])
        chunk["usage"] = usage(final)
        return chunk

    @property
    def final_usage(self) -> Callable[[RequestOutput], dict[str, Any]] | None:
        return self.usage_chunk if self.include_usage else None


# The request body one front end parses (CompletionRequest, ChatCompletionRequest).
ReqT = TypeVar("ReqT", bound=_SamplingFields)


class Serving(Generic[ReqT]):
    """What the front ends share; each one prepares, answers and streams its own ReqT."""

    def __init__(
        self,
        engine: AsyncEngine,
        model_name: str,
        metrics: ServerMetrics,
        limits: ServingLimits,
    ) -> None:
        self.engine = engine
        self.model_name = model_name
        self.metrics = metrics
        self.limits = limits

    def prepare(self, req: ReqT, arrival: float) -> Prepared:
        """The request's prompt tokens and sampling parameters (each front end's own)."""
        raise NotImplementedError

    def response(self, req: ReqT, prep: Prepared, final: RequestOutput) -> dict[str, Any]:
        """The non-streaming response body."""
        raise NotImplementedError

    def stream(self, req: ReqT, prep: Prepared, stream: Any) -> AsyncIterator[str]:
        """The server-sent events of a streaming response."""
        raise NotImplementedError

    def response_body(
        self, prep: Prepared, object_name: str, choices: list[dict[str, Any]], final: RequestOutput
    ) -> dict[str, Any]:
        """The non-streaming body around `choices`; chat and completions differ only in `object`."""
        return {
            "id": prep.request_id,
            "object": object_name,
            "created": prep.created,
            "model": self.model_name,
            "choices": choices,
            "usage": usage(final),
            "weight_version": final.weight_version,
        }

    async def prepare_async(self, req: ReqT, arrival: float) -> Prepared:
        """`prepare`, from the event loop; a front end whose requests can be slow to
        prepare (images to decode) runs it on a worker thread instead."""
        return self.prepare(req, arrival)

    # --- checks ---------------------------------------------------------------------------
    def check_model(self, model: str) -> Any:
        """The LoRARequest `model` names (vLLM: a request picks an adapter by its name), or
        None for the base model; anything else is a 404."""
        if model == self.model_name:
            return None
        # A dict read from the event loop: the engine thread only swaps whole entries.
        lora = self.engine.engine.lora
        adapter = lora.registry.get(model) if lora is not None else None
        if adapter is None:
            raise APIError(
                f"The model `{model}` does not exist; this server serves `{self.model_name}`"
                + (f" and the LoRA adapters {sorted(lora.registry)}." if lora else "."),
                status=404,
                param="model",
                code="model_not_found",
            )
        return adapter

    def check_common(self, req: _SamplingFields) -> None:
        if req.n > self.limits.max_n:
            raise APIError(
                f"n must be at most {self.limits.max_n}, got {req.n}",
                param="n",
                code="invalid_value",
            )
        if req.logit_bias:
            raise APIError("logit_bias is not supported by this engine", param="logit_bias")
        stops = req.stop_list()
        if len(stops) > MAX_STOP_SEQUENCES:
            raise APIError(
                f"at most {MAX_STOP_SEQUENCES} stop sequences are allowed, got {len(stops)}",
                param="stop",
            )
        if any(s == "" for s in stops):
            raise APIError("stop sequences must not be empty strings", param="stop")
        if req.stream_options is not None and not req.stream:
            raise APIError(
                "stream_options is only allowed when stream is true", param="stream_options"
            )

    def resolve_max_tokens(
        self, requested: int | None, prompt_len: int, param: str, prompt_param: str
    ) -> int:
        """The output budget: as asked if it fits the context, all the room left if unset."""
        room = self.engine.max_model_len - prompt_len
        if room < 1:
            raise APIError(
                f"This model's maximum context length is {self.engine.max_model_len} tokens; "
                f"the prompt has {prompt_len} tokens, leaving no room for output.",
                param=prompt_param,
                code="context_length_exceeded",
            )
        if requested is None:
            return room
        if requested < 1:
            raise APIError(
                f"{param} must be at least 1, got {requested}", param=param, code="invalid_value"
            )
        if requested > room:
            raise APIError(
                f"This model's maximum context length is {self.engine.max_model_len} tokens; "
                f"you requested {prompt_len + requested} tokens ({prompt_len} in the prompt, "
                f"{requested} for the completion). Please reduce the prompt or {param}.",
                param=param,
                code="context_length_exceeded",
            )
        return requested

    def check_token_ids(self, token_ids: list[int], param: str) -> None:
        if not token_ids:
            raise APIError("the prompt is empty: at least one token is needed", param=param)
        vocab = self.engine.engine.model_config.vocab_size
        bad = [t for t in token_ids if not 0 <= t < vocab]
        if bad:
            raise APIError(f"prompt token ids must be in [0, {vocab}); got {bad[:5]}", param=param)

    def sampling_params(
        self, req: _SamplingFields, max_tokens: int, logprobs: int | None
    ) -> SamplingParams:
        from reference_engine.sampling_params import SamplingParams
        from reference_engine.server.structured import structured_outputs_from_request

        if req.min_tokens > max_tokens:
            raise APIError(
                f"min_tokens ({req.min_tokens}) must not exceed max_tokens ({max_tokens})",
                param="min_tokens",
            )
        # A field the request leaves unset takes the checkpoint's recommendation
        # (generation_config.json), then the library default, as in vLLM's server.
        defaults = self.engine.engine.sampling_defaults

        def pick(value: Any, name: str, fallback: float) -> Any:
            return value if value is not None else defaults.get(name, fallback)

        try:
            top_k = pick(req.top_k, "top_k", -1)
            return SamplingParams(
                n=req.n,
                temperature=pick(req.temperature, "temperature", 1.0),
                top_p=pick(req.top_p, "top_p", 1.0),
                top_k=-1 if top_k == 0 else top_k,
                min_p=pick(req.min_p, "min_p", 0.0),
                repetition_penalty=pick(req.repetition_penalty, "repetition_penalty", 1.0),
                presence_penalty=req.presence_penalty or 0.0,
                frequency_penalty=req.frequency_penalty or 0.0,
                seed=req.seed,
                max_tokens=max_tokens,
                min_tokens=req.min_tokens,
                stop=req.stop_list(),
                stop_token_ids=list(req.stop_token_ids or []),
                ignore_eos=req.ignore_eos,
                include_stop_str_in_output=req.include_stop_str_in_output,
                logprobs=logprobs,
                skip_special_tokens=req.skip_special_tokens,
                structured_outputs=structured_outputs_from_request(req),
                kv_eviction=req.kv_eviction.to_policy() if req.kv_eviction else None,
            )
        except ValueError as exc:
            raise APIError(str(exc), code="invalid_value") from None

    # --- running --------------------------------------------------------------------------
    def check_overload(self, num_prompt_tokens: int) -> None:
        """Refuse a request the queue has no room for, before the engine sees it."""
        limits, engine = self.limits, self.engine
        why = None
        if engine.num_pending >= limits.max_waiting_requests:
            why = f"{engine.num_pending} requests are already waiting (limit {limits.max_waiting_requests})"
        elif engine.num_pending and (
            engine.num_pending_tokens + num_prompt_tokens > limits.max_queued_tokens
        ):
            # An idle queue takes any prompt that fits the context: the cap bounds waiting.
            why = (
                f"{engine.num_pending_tokens} prompt tokens are already queued; this request's "
                f"{num_prompt_tokens} would pass the limit of {limits.max_queued_tokens}"
            )
        if why is not None:
            self.metrics.num_overloaded += 1
            raise APIError(
                f"The server is overloaded: {why}. Retry after {limits.retry_after_s} s.",
                status=429,
                code="server_overloaded",
                retry_after=limits.retry_after_s,
            )

    async def submit(self, prep: Prepared, hook: Any = None) -> RequestStream:
        from reference_engine.engine import RequestError

        await self.engine.admission_open()  # a weight update may be draining
        # No await between the check and add_request's bookkeeping: the check is atomic.
        self.check_overload(len(prep.token_ids))
        try:
            return await self.engine.add_request(
                prep.request_id, prep.token_ids, prep.params, prep.arrival, hook,
                lora_request=prep.lora_request, images=prep.images,
            )  # fmt: skip
        except RequestError as exc:
            raise APIError(str(exc), param=exc.param or "prompt") from None
        except EngineDeadError as exc:
            raise APIError(str(exc), status=503) from None

    async def collect(self, stream: RequestStream, prep: Prepared) -> RequestOutput:
        """Drain a stream to its final output (non-streaming responses)."""
        timer = self.metrics.timer(prep.arrival)
        final: RequestOutput | None = None
        try:
            async for out in stream:
                if any(c.token_ids_delta for c in out.outputs):
                    timer.on_tokens()
                final = out
        except EngineDeadError as exc:
            raise APIError(str(exc), status=503) from None
        except StepFailedError as exc:
            raise APIError(str(exc), status=500, code="engine_step_failed") from None
        except asyncio.CancelledError:  # the client went away (or the server is stopping)
            self.metrics.num_client_aborts += 1
            raise
        finally:
            stream.close()
        if final is None or not final.finished:  # ended early by a shutdown
            raise APIError("the server is shutting down; the request was aborted", status=503)
        self._finish(timer, final)
        return final

    async def stream_events(
        self,
        stream: RequestStream,
        prep: Prepared,
        step_chunks: Callable[[RequestOutput, StreamState], list[dict[str, Any]]],
        usage_chunk: Callable[[RequestOutput], dict[str, Any]] | None,
        first_chunks: list[dict[str, Any]] | None = None,
    ) -> AsyncIterator[str]:
        """SSE lines: optional opening chunks, one or more chunks per step, usage, [DONE].

        Runs inside the response; if the client disconnects, the server cancels this
        generator and the `finally` aborts the request, which frees its KV blocks.
        """
        timer = self.metrics.timer(prep.arrival)
        state = StreamState(prep.params.n)
        final: RequestOutput | None = None
        try:
            for chunk in first_chunks or []:
                yield sse(chunk)
            async for out in stream:
                outs = [out, *stream.ready()]
                if any(c.token_ids_delta for o in outs for c in o.outputs):
                    timer.on_tokens()
                text = "".join(sse(chunk) for o in outs for chunk in step_chunks(o, state))
                final = outs[-1]
                if text:
                    yield text
            if final is not None and usage_chunk is not None:
                yield sse(usage_chunk(final))
        except EngineDeadError as exc:
            yield sse(error_body(str(exc), 503))
        except StepFailedError as exc:
            yield sse(error_body(str(exc), 500, code="engine_step_failed"))
        except (asyncio.CancelledError, GeneratorExit):  # the client went away mid-stream
            self.metrics.num_client_aborts += 1
            raise
        finally:
            stream.close()
        if final is not None and final.finished:
            self._finish(timer, final)
        yield SSE_DONE

    def _finish(self, timer: RequestTimer, final: RequestOutput) -> None:
        timer.on_finish(
            (c.finish_reason for c in final.outputs),
            len(final.prompt_token_ids),
            sum(len(c.token_ids) for c in final.outputs),
        )


def usage(final: RequestOutput) -> dict[str, Any]:
    prompt = len(final.prompt_token_ids)
    completion = sum(len(c.token_ids) for c in final.outputs)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": final.num_cached_tokens},
    }
