"""Request bodies of the OpenAI-compatible API, as pydantic models.

Strict on purpose: a string where a number belongs, a boolean where an integer
belongs, or a field the server does not know is a 400, never a silent coercion
(the OpenAI API itself rejects unknown arguments). A few vLLM extensions
(`top_k`, `ignore_eos`, ...) are accepted, since load generators and the
`openai` client's `extra_body` send them. Responses are plain dicts built in
`responses.py`: they are written once per streamed token, and dicts are the
cheapest thing to serialise.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reference_engine.kv_window import H2O, StreamingLLM

MAX_LOGPROBS = 20  # the OpenAI API's own limit for top_logprobs
MAX_STOP_SEQUENCES = 16
# torch.Generator.manual_seed accepts [-2**63, 2**64); sample i uses seed + i.
MIN_SEED, MAX_SEED = -(2**63), 2**63 - 1


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class StreamOptions(_Strict):
    include_usage: bool = False
    continuous_usage_stats: bool = False  # vLLM extension: usage on every chunk


# Integers end up in int64 tensors; anything past int32 is nonsense for every field below,
# and refusing it here keeps one absurd request from failing a whole engine step.
INT32_MAX = 2**31 - 1
Count = Annotated[int, Field(ge=0, le=INT32_MAX)]
UnitFloat = Annotated[float, Field(gt=0.0, le=1.0)]
Penalty = Annotated[float, Field(ge=-2.0, le=2.0)]
Stop = str | list[str] | None
Seed = Annotated[int, Field(ge=MIN_SEED, le=MAX_SEED)]


class KVEviction(_Strict):
    """This engine's extension: KV eviction for one request. "streaming_llm" keeps
    sink_tokens + recent_tokens (kv_window.py); "h2o" keeps budget_blocks blocks, the
    recent_tokens and the most attended ones (heavy_hitters.py)."""

    policy: Literal["streaming_llm", "h2o"] = "streaming_llm"
    sink_tokens: Count = 4
    recent_tokens: Annotated[int, Field(ge=1, le=INT32_MAX)] = 256
    budget_blocks: Annotated[int, Field(ge=1, le=INT32_MAX)] = 16

    def to_policy(self) -> StreamingLLM | H2O:
        if self.policy == "h2o":
            return H2O(self.budget_blocks, self.recent_tokens)
        return StreamingLLM(self.sink_tokens, self.recent_tokens)


class _SamplingFields(_Strict):
    """Fields both endpoints share; defaults follow the OpenAI API."""

    model: str
    n: Annotated[int, Field(ge=1, le=INT32_MAX)] = 1
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    top_p: UnitFloat | None = None
    presence_penalty: Penalty | None = None
    frequency_penalty: Penalty | None = None
    seed: Seed | None = None
    stop: Stop = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None
    logit_bias: dict[str, float] | None = None  # accepted only when empty (unsupported)
    # vLLM extensions
    top_k: Annotated[int, Field(ge=-1, le=INT32_MAX)] | None = None
    min_p: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    repetition_penalty: Annotated[float, Field(gt=0.0, le=10.0)] | None = None
    min_tokens: Count = 0
    stop_token_ids: list[Count] | None = None
    ignore_eos: bool = False
    include_stop_str_in_output: bool = False
    skip_special_tokens: bool = True
    # Structured output: OpenAI's response_format, and vLLM's fields (server/structured.py)
    response_format: dict[str, Any] | None = None
    structured_outputs: dict[str, Any] | None = None
    guided_json: dict[str, Any] | str | None = None
    guided_regex: str | None = None
    guided_choice: list[str] | None = None
    guided_grammar: str | None = None
    # Disaggregated prefill/decode (vLLM's field): {"do_remote_decode": true} to a prefill
    # server; the prefill response's params, verbatim, to a decode server (disagg/).
    kv_transfer_params: dict[str, Any] | None = None
    # KV eviction (this engine's extension): keep the first sink_tokens and the last
    # recent_tokens of the context; blocks in between are freed while the request runs.
    kv_eviction: KVEviction | None = None

    def stop_list(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)


class CompletionRequest(_SamplingFields):
    # One prompt: text or token ids. A one-element list of either is unwrapped; batches are
    # refused with a clear message (send one request per prompt).
    prompt: str | list[str] | list[int] | list[list[int]]
    max_tokens: Annotated[int, Field(le=INT32_MAX)] | None = 16  # the OpenAI legacy default
    logprobs: Annotated[int, Field(ge=0, le=MAX_LOGPROBS)] | None = None
    echo: bool = False
    best_of: Count | None = None
    suffix: str | None = None


class TextPart(_Strict):
    type: Literal["text"]
    text: str


class ImageURL(_Strict):
    url: str  # a data:image/...;base64 URL (or a file in the server's allowed media folder)
    detail: Literal["auto", "low", "high"] | None = None  # accepted, not used


class ImagePart(_Strict):
    type: Literal["image_url"]
    image_url: ImageURL


class ChatMessage(_Strict):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart | ImagePart] | None = None
    name: str | None = None

    def text(self, image_placeholder: str = "") -> str:
        """The content as one string, each image part replaced by `image_placeholder`."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(
            part.text if isinstance(part, TextPart) else image_placeholder
            for part in self.content
        )

    def image_urls(self) -> list[str]:
        if not isinstance(self.content, list):
            return []
        return [p.image_url.url for p in self.content if isinstance(p, ImagePart)]


class ChatCompletionRequest(_SamplingFields):
    messages: Annotated[list[ChatMessage], Field(min_length=1)]
    max_tokens: Annotated[int, Field(le=INT32_MAX)] | None = None  # None: all the room left
    max_completion_tokens: Annotated[int, Field(le=INT32_MAX)] | None = None  # wins if set
    logprobs: bool = False
    top_logprobs: Annotated[int, Field(ge=0, le=MAX_LOGPROBS)] | None = None
    # Accepted only at their "off" values: this engine has no tools.
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    functions: list[dict[str, Any]] | None = None
    function_call: str | dict[str, Any] | None = None
    # vLLM extensions for the chat template
    add_generation_prompt: bool = True
    chat_template_kwargs: dict[str, Any] | None = None

    def requested_max_tokens(self) -> int | None:
        if self.max_completion_tokens is not None:
            return self.max_completion_tokens
        return self.max_tokens


class LoadLoRAAdapterRequest(_Strict):
    """POST /v1/load_lora_adapter (vLLM's body)."""

    lora_name: Annotated[str, Field(min_length=1)]
    lora_path: Annotated[str, Field(min_length=1)]


class UnloadLoRAAdapterRequest(_Strict):
    """POST /v1/unload_lora_adapter."""

    lora_name: Annotated[str, Field(min_length=1)]
    lora_int_id: int | None = None
