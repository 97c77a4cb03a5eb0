"""POST /v1/completions: one prompt (text or token ids) in, `n` completions out."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from reference_engine.server.errors import APIError
from reference_engine.server.logprobs import TokenText, completion_logprobs
from reference_engine.server.protocol import CompletionRequest
from reference_engine.server.serving import (
    ChunkFactory,
    Prepared,
    Serving,
    StreamState,
    new_id,
)

if TYPE_CHECKING:
    from reference_engine.outputs import CompletionOutput, RequestOutput


class CompletionServing(Serving[CompletionRequest]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.text_of = TokenText(self.engine.tokenizer)

    def prepare(self, req: CompletionRequest, arrival: float) -> Prepared:
        lora_request = self.check_model(req.model)
        self.check_common(req)
        if req.echo:
            raise APIError("echo is not supported by this server", param="echo")
        if req.suffix:
            raise APIError("suffix is not supported by this server", param="suffix")
        if req.best_of is not None and req.best_of != req.n:
            raise APIError("best_of is not supported (only best_of == n)", param="best_of")
        token_ids = self._prompt_ids(req.prompt)
        max_tokens = self.resolve_max_tokens(req.max_tokens, len(token_ids), "max_tokens", "prompt")
        params = self.sampling_params(req, max_tokens, req.logprobs)
        return Prepared(
            new_id("cmpl"), int(time.time()), token_ids, params, arrival, lora_request
        )

    def _prompt_ids(self, prompt: str | list[str] | list[int] | list[list[int]]) -> list[int]:
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], str | list):
            if len(prompt) != 1:
                raise APIError(
                    f"batched prompts ({len(prompt)}) are not supported: "
                    "send one request per prompt",
                    param="prompt",
                )
            prompt = prompt[0]
        if isinstance(prompt, str):
            if len(prompt) > self.limits.max_prompt_chars:
                raise APIError(
                    f"the prompt has {len(prompt)} characters, more than this server accepts",
                    param="prompt",
                    code="context_length_exceeded",
                )
            ids = self.engine.tokenizer.encode(prompt, add_special_tokens=True)
        else:
            ids = list(prompt)  # type: ignore[arg-type]
        self.check_token_ids(ids, "prompt")
        return ids

    # --- responses ------------------------------------------------------------------------
    def response(
        self, req: CompletionRequest, prep: Prepared, final: RequestOutput
    ) -> dict[str, Any]:
        choices = []
        for c in final.outputs:
            choices.append(
                {
                    "index": c.index,
                    "text": c.text,
                    "logprobs": self._logprobs(c, req, 0, len(c.token_ids), 0),
                    "finish_reason": c.finish_reason,
                    "stop_reason": c.stop_reason,
                }
            )
        return self.response_body(prep, "text_completion", choices, final)

    def _logprobs(
        self, c: CompletionOutput, req: CompletionRequest, lo: int, hi: int, offset: int
    ) -> dict[str, Any] | None:
        if req.logprobs is None or c.logprobs is None:
            return None
        return completion_logprobs(
            c.token_ids[lo:hi], c.logprobs[lo:hi], req.logprobs, self.text_of, offset
        )

    def stream(self, req: CompletionRequest, prep: Prepared, stream: Any) -> AsyncIterator[str]:
        chunks = ChunkFactory.for_request(prep, self.model_name, "text_completion", req.stream_options)

        def step(out: RequestOutput, state: StreamState) -> list[dict[str, Any]]:
            choices = []
            for c in out.outputs:
                i = c.index
                if state.finish_sent[i] or not (c.token_ids_delta or c.finished):
                    continue
                lo, hi = state.tokens_sent[i], len(c.token_ids)
                lp = self._logprobs(c, req, lo, hi, state.text_offset[i])
                state.tokens_sent[i] = hi
                state.text_offset[i] += len(c.text_delta)
                state.finish_sent[i] = c.finished
                choices.append(
                    {
                        "index": i,
                        "text": c.text_delta,
                        "logprobs": lp,
                        "finish_reason": c.finish_reason,
                        "stop_reason": c.stop_reason,
                    }
                )
            return chunks.step_chunks(choices, out)

        return self.stream_events(stream, prep, step, chunks.final_usage)
