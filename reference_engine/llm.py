"""LLM: the offline batch API (`LLM(model=...).generate(prompts, SamplingParams(...))`).

A thin loop over Engine: add every prompt, step until all are done, return
the final outputs in the order the prompts were given.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, cast

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.lora.request import LoRARequest
from reference_engine.outputs import RequestOutput
from reference_engine.sampling_params import SamplingParams

# A dict is vLLM's form for images: {"prompt": text (or "prompt_token_ids": ids),
# "multi_modal_data": {"image": one image or a list}}, one image placeholder per image.
Prompt = str | list[int] | dict[str, Any]
Message = dict[str, Any]


class LLM:
    def __init__(self, model: str | None = None, **engine_kwargs: Any) -> None:
        """`model`: a local Hugging Face checkpoint folder; None runs the built-in tiny
        model (random weights). Keyword arguments are EngineConfig fields."""
        self.engine = Engine(EngineConfig(model=model, **engine_kwargs))
        self._ids = itertools.count()

    @property
    def random_weights(self) -> bool:
        return self.engine.random_weights

    def generate(
        self,
        prompts: Prompt | Sequence[Prompt],
        sampling_params: SamplingParams | Sequence[SamplingParams] | None = None,
        priority: Sequence[int] | None = None,
        lora_request: LoRARequest | Sequence[LoRARequest | None] | None = None,
    ) -> list[RequestOutput]:
        """`lora_request`: one adapter for every prompt, or one per prompt (vLLM's API;
        the engine needs enable_lora=True)."""
        batch = _as_prompt_list(prompts)
        params = self._per_prompt(sampling_params, len(batch))
        loras = (
            list(lora_request)
            if isinstance(lora_request, Sequence)
            else [lora_request] * len(batch)
        )
        if len(loras) != len(batch):
            raise ValueError(f"{len(loras)} LoRA requests for {len(batch)} prompts")
        ids = []
        for i, (prompt, p) in enumerate(zip(batch, params, strict=True)):
            request_id = str(next(self._ids))
            text, images = _unpack(prompt)
            self.engine.add_request(
                request_id, text, p, priority[i] if priority else 0, lora_request=loras[i],
                images=images,
            )
            ids.append(request_id)
        return self._run(ids)

    def chat(
        self,
        messages: list[Message] | list[list[Message]],
        sampling_params: SamplingParams | Sequence[SamplingParams] | None = None,
        add_generation_prompt: bool = True,
        chat_template_kwargs: dict[str, Any] | None = None,
    ) -> list[RequestOutput]:
        """Render each conversation with the model's chat template, then generate.
        `chat_template_kwargs` reach the template (Qwen3: {"enable_thinking": False})."""
        conversations = _as_conversations(messages)
        params = self._per_prompt(sampling_params, len(conversations))
        ids = []
        for conv, p in zip(conversations, params, strict=True):
            text = self.engine.tokenizer.apply_chat_template(
                list(conv),
                add_generation_prompt=add_generation_prompt,
                **(chat_template_kwargs or {}),
            )
            request_id = str(next(self._ids))
            # Templates write their own special tokens; the tokenizer must not add more.
            self.engine.add_request(request_id, text, p, add_special_tokens=False)
            ids.append(request_id)
        return self._run(ids)

    def get_default_sampling_params(self) -> SamplingParams:
        """vLLM's name: the library defaults, overridden by the checkpoint's
        generation_config.json (EngineConfig.generation_config='none' turns that off)."""
        return self.engine.default_sampling_params()

    def _per_prompt(
        self, params: SamplingParams | Sequence[SamplingParams] | None, n: int
    ) -> list[SamplingParams]:
        if params is None:
            return [self.get_default_sampling_params() for _ in range(n)]
        if isinstance(params, SamplingParams):
            return [params] * n
        if len(params) != n:
            raise ValueError(f"{len(params)} SamplingParams for {n} prompts")
        return list(params)

    def _run(self, ids: list[str]) -> list[RequestOutput]:
        done: dict[str, RequestOutput] = {}
        try:
            while self.engine.has_unfinished_requests():
                for out in self.engine.step():
                    if out.finished:
                        done[out.request_id] = out
        except BaseException:
            # Leave nothing half-run behind (e.g. Ctrl-C): free every request's blocks.
            for request_id in ids:
                self.engine.abort(request_id)
            raise
        return [done[i] for i in ids]


def _unpack(prompt: Prompt) -> tuple[str | list[int], list[Any] | None]:
    """(text or token ids, images) of one prompt."""
    if not isinstance(prompt, dict):
        return prompt, None
    text = prompt.get("prompt", prompt.get("prompt_token_ids"))
    if text is None:
        raise ValueError("a dict prompt needs 'prompt' or 'prompt_token_ids'")
    data = prompt.get("multi_modal_data") or {}
    if set(data) - {"image"}:
        raise ValueError(f"only images are supported, not {sorted(set(data) - {'image'})}")
    images = data.get("image")
    if images is None:
        return text, None
    return text, list(images) if isinstance(images, list | tuple) else [images]


def _as_prompt_list(prompts: Prompt | Sequence[Prompt]) -> list[Prompt]:
    if isinstance(prompts, str | dict):
        return [prompts]
    items = list(prompts)
    if items and all(isinstance(t, int) for t in items):
        return [cast(list[int], items)]  # one tokenized prompt
    return cast(list[Prompt], items)


def _as_conversations(messages: list[Message] | list[list[Message]]) -> list[list[Message]]:
    """One conversation (a list of message dicts) or several, as a list of conversations."""
    if messages and isinstance(messages[0], dict):
        return [messages]
    return cast(list[list[Message]], messages)
