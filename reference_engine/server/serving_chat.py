"""POST /v1/chat/completions: messages rendered with the checkpoint's chat template."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reference_engine.multimodal.image_processor import ImageError
from reference_engine.server.errors import APIError
from reference_engine.server.logprobs import TokenText, chat_logprobs
from reference_engine.server.protocol import ChatCompletionRequest
from reference_engine.server.serving import (
    ChunkFactory,
    Prepared,
    Serving,
    StreamState,
    new_id,
)

if TYPE_CHECKING:
    from reference_engine.outputs import CompletionOutput, RequestOutput

# Fields that only make sense with tools or structured output, which this engine lacks.
_UNSUPPORTED = ("tools", "functions", "function_call", "parallel_tool_calls")


class ChatServing(Serving[ChatCompletionRequest]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.text_of = TokenText(self.engine.tokenizer)

    async def prepare_async(self, req: ChatCompletionRequest, arrival: float) -> Prepared:
        # Decoding and resizing images takes milliseconds to seconds: off the event loop,
        # so streams in flight keep flowing meanwhile.
        if any(m.image_urls() for m in req.messages):
            return await asyncio.to_thread(self.prepare, req, arrival)
        return self.prepare(req, arrival)

    def prepare(self, req: ChatCompletionRequest, arrival: float) -> Prepared:
        lora_request = self.check_model(req.model)
        self.check_common(req)
        for name in _UNSUPPORTED:
            if getattr(req, name):
                raise APIError(f"{name} is not supported by this server", param=name)
        if req.tool_choice not in (None, "none"):
            raise APIError("tool_choice is not supported by this server", param="tool_choice")
        if req.top_logprobs is not None and not req.logprobs:
            raise APIError("top_logprobs requires logprobs to be true", param="top_logprobs")
        token_ids, images = self._render(req)
        param = "max_completion_tokens" if req.max_completion_tokens is not None else "max_tokens"
        max_tokens = self.resolve_max_tokens(
            req.requested_max_tokens(), len(token_ids), param, "messages"
        )
        num_logprobs = (req.top_logprobs or 0) if req.logprobs else None
        params = self.sampling_params(req, max_tokens, num_logprobs)
        return Prepared(
            new_id("chatcmpl"), int(time.time()), token_ids, params, arrival, lora_request,
            images=images or None,
        )

    def _render(self, req: ChatCompletionRequest) -> tuple[list[int], list[Any]]:
        """The prompt's token ids, each image's placeholder expanded to its token count, and
        the processed images (decoded and patched here, off the engine thread)."""
        from reference_engine.config import ConfigError

        urls = [u for m in req.messages for u in m.image_urls()]
        mm = self.engine.engine.mm
        placeholder = ""
        if urls:
            if mm is None:
                raise APIError("this model does not accept images", param="messages")
            if len(urls) > self.limits.max_images:
                raise APIError(
                    f"the messages hold {len(urls)} images; this server accepts at most "
                    f"{self.limits.max_images} per request",
                    param="messages",
                )
            # As text: any chat template that takes string content places it right.
            try:
                placeholder = mm.placeholder_text(self.engine.tokenizer.tokenizer)
            except ImageError as exc:
                raise APIError(str(exc), param="messages") from None
        messages: list[dict[str, Any]] = []
        total = 0
        for m in req.messages:
            entry: dict[str, Any] = {"role": m.role, "content": m.text(placeholder)}
            if m.name is not None:
                entry["name"] = m.name
            total += len(entry["content"])
            messages.append(entry)
        if total > self.limits.max_prompt_chars:
            raise APIError(
                f"the messages hold {total} characters, more than this server accepts",
                param="messages",
                code="context_length_exceeded",
            )
        tok = self.engine.tokenizer
        try:
            text = tok.apply_chat_template(
                messages,
                add_generation_prompt=req.add_generation_prompt,
                **(req.chat_template_kwargs or {}),
            )
        except ConfigError as exc:
            raise APIError(str(exc), param="messages") from None
        except TypeError as exc:  # chat_template_kwargs clashing with the template's own names
            raise APIError(
                f"bad chat_template_kwargs: {exc}", param="chat_template_kwargs"
            ) from None
        # The template writes its own special tokens; the tokenizer must not add more.
        ids = tok.encode(text, add_special_tokens=False)
        images: list[Any] = []
        if urls:
            assert mm is not None
            media = self.limits.allowed_local_media_path
            try:
                images = [mm.processor(u, Path(media) if media else None) for u in urls]
                ids, _ = mm.process(ids, images)
            except ImageError as exc:
                raise APIError(str(exc), param="messages") from None
        self.check_token_ids(ids, "messages")
        return ids, images

    # --- responses ------------------------------------------------------------------------
    def _logprobs(
        self, c: CompletionOutput, req: ChatCompletionRequest, lo: int, hi: int
    ) -> dict[str, Any] | None:
        if not req.logprobs or c.logprobs is None:
            return None
        return chat_logprobs(
            c.token_ids[lo:hi], c.logprobs[lo:hi], req.top_logprobs or 0, self.text_of
        )

    def response(
        self, req: ChatCompletionRequest, prep: Prepared, final: RequestOutput
    ) -> dict[str, Any]:
        choices = [
            {
                "index": c.index,
                "message": {"role": "assistant", "content": c.text},
                "logprobs": self._logprobs(c, req, 0, len(c.token_ids)),
                "finish_reason": c.finish_reason,
                "stop_reason": c.stop_reason,
            }
            for c in final.outputs
        ]
        return self.response_body(prep, "chat.completion", choices, final)

    def stream(self, req: ChatCompletionRequest, prep: Prepared, stream: Any) -> AsyncIterator[str]:
        chunks = ChunkFactory.for_request(prep, self.model_name, "chat.completion.chunk", req.stream_options)

        # The first chunk of every choice carries the role, as OpenAI's does.
        first = chunks.chunk(
            [
                {
                    "index": i,
                    "delta": {"role": "assistant", "content": ""},
                    "logprobs": None,
                    "finish_reason": None,
                }
                for i in range(prep.params.n)
            ]
        )

        def step(out: RequestOutput, state: StreamState) -> list[dict[str, Any]]:
            choices = []
            for c in out.outputs:
                i = c.index
                if state.finish_sent[i] or not (c.token_ids_delta or c.finished):
                    continue
                lo, hi = state.tokens_sent[i], len(c.token_ids)
                state.tokens_sent[i] = hi
                state.finish_sent[i] = c.finished
                choices.append(
                    {
                        "index": i,
                        "delta": {"content": c.text_delta} if c.text_delta else {},
                        "logprobs": self._logprobs(c, req, lo, hi),
                        "finish_reason": c.finish_reason,
                        "stop_reason": c.stop_reason,
                    }
                )
            return chunks.step_chunks(choices, out)

        return self.stream_events(
            stream, prep, step, chunks.final_usage, first_chunks=[first]
        )
