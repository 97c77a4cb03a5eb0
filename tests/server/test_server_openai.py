"""The official `openai` client against the live server: completions and chat, streaming or not."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from openai import AsyncOpenAI, OpenAI
from server_fixtures import MAX_MODEL_LEN, MODEL, LiveServer

GREEDY = {"temperature": 0.0}
EXACT = {"ignore_eos": True}  # vLLM extension: output lengths exactly as asked


@pytest.fixture(scope="module")
def client(live: LiveServer) -> OpenAI:
    return OpenAI(base_url=live.api_url, api_key="unused", max_retries=0, timeout=30)


def test_models_lists_the_served_model(client: OpenAI) -> None:
    ids = [m.id for m in client.models.list().data]
    assert ids == [MODEL]


def test_completion_text_usage_and_length_finish(client: OpenAI) -> None:
    out = client.completions.create(
        model=MODEL, prompt="A serving engine", max_tokens=6, extra_body=EXACT, **GREEDY
    )
    assert out.object == "text_completion"
    assert len(out.choices) == 1
    choice = out.choices[0]
    assert choice.finish_reason == "length"
    assert choice.text
    assert out.usage is not None
    assert out.usage.completion_tokens == 6
    assert out.usage.prompt_tokens > 0
    assert out.usage.total_tokens == out.usage.prompt_tokens + 6


def test_completion_accepts_token_ids(client: OpenAI) -> None:
    out = client.completions.create(model=MODEL, prompt=[20, 30, 40], max_tokens=3, **GREEDY)
    assert out.usage is not None and out.usage.prompt_tokens == 3


def test_streamed_completion_equals_the_unstreamed_one(client: OpenAI) -> None:
    args = {"model": MODEL, "prompt": "Keys and values", "max_tokens": 12, "extra_body": EXACT}
    whole = client.completions.create(**args, **GREEDY).choices[0].text
    chunks = list(client.completions.create(**args, stream=True, **GREEDY))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == whole
    assert chunks[-1].choices[0].finish_reason == "length"
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])


def test_include_usage_puts_usage_in_a_last_chunk_only(client: OpenAI) -> None:
    chunks = list(
        client.completions.create(
            model=MODEL,
            prompt="Chunked prefill",
            max_tokens=5,
            stream=True,
            stream_options={"include_usage": True},
            extra_body=EXACT,
        )
    )
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None and last.usage.completion_tokens == 5
    assert all(c.usage is None for c in chunks[:-1])


def test_chat_streamed_equals_unstreamed_and_starts_with_the_role(client: OpenAI) -> None:
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is paged attention?"},
    ]
    args = {"model": MODEL, "messages": messages, "max_tokens": 10, "extra_body": EXACT}
    whole = client.chat.completions.create(**args, **GREEDY)
    assert whole.object == "chat.completion"
    assert whole.choices[0].message.role == "assistant"
    assert whole.usage is not None and whole.usage.completion_tokens == 10
    stream = client.chat.completions.create(
        **args, stream=True, stream_options={"include_usage": True}, **GREEDY
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.prompt_tokens == whole.usage.prompt_tokens


def test_chat_uses_the_checkpoint_template(client: OpenAI, live: LiveServer) -> None:
    messages = [{"role": "user", "content": "hi"}]
    out = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=1)
    rendered = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    expected = len(live.engine.tokenizer.encode(rendered, add_special_tokens=False))
    assert out.usage is not None and out.usage.prompt_tokens == expected


def test_chat_without_max_tokens_fills_the_context(client: OpenAI) -> None:
    out = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "go"}], extra_body=EXACT
    )
    assert out.usage is not None
    assert out.usage.total_tokens == MAX_MODEL_LEN
    assert out.choices[0].finish_reason == "length"


def test_n_choices_and_seeded_reproducibility(client: OpenAI) -> None:
    args = {"model": MODEL, "prompt": "Throughput", "max_tokens": 8, "n": 3, "temperature": 1.0}
    first = client.completions.create(**args, seed=7, extra_body=EXACT)
    again = client.completions.create(**args, seed=7, extra_body=EXACT)
    other = client.completions.create(**args, seed=8, extra_body=EXACT)
    texts = [c.text for c in sorted(first.choices, key=lambda c: c.index)]
    assert [c.index for c in sorted(first.choices, key=lambda c: c.index)] == [0, 1, 2]
    assert texts == [c.text for c in sorted(again.choices, key=lambda c: c.index)]
    assert texts != [c.text for c in sorted(other.choices, key=lambda c: c.index)]
    assert len(set(texts)) > 1  # siblings sample differently (seed + index)
    assert first.usage is not None and first.usage.completion_tokens == 24


def test_streamed_n_choices_each_finish_once(client: OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "x"}],
            max_tokens=4,
            n=2,
            seed=1,
            stream=True,
            extra_body=EXACT,
        )
    )
    finishes = [ch.index for c in chunks for ch in c.choices if ch.finish_reason is not None]
    assert sorted(finishes) == [0, 1]


def test_completion_logprobs(client: OpenAI) -> None:
    out = client.completions.create(
        model=MODEL, prompt="Tokens", max_tokens=4, logprobs=2, extra_body=EXACT, **GREEDY
    )
    lp = out.choices[0].logprobs
    assert lp is not None and lp.tokens is not None and lp.token_logprobs is not None
    assert len(lp.tokens) == len(lp.token_logprobs) == 4
    assert lp.top_logprobs is not None and all(1 <= len(t) <= 2 for t in lp.top_logprobs)
    assert all(v <= 0.0 for v in lp.token_logprobs)
    # Greedy: the chosen token is the most likely one, so it heads its top list.
    for token, chosen, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs, strict=True):
        assert max(top.values()) == pytest.approx(chosen)
        assert token in top
    assert "".join(lp.tokens) == out.choices[0].text


def test_chat_logprobs_stream(client: OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "y"}],
            max_tokens=3,
            logprobs=True,
            top_logprobs=3,
            stream=True,
            extra_body=EXACT,
        )
    )
    entries = [e for c in chunks for ch in c.choices if ch.logprobs for e in ch.logprobs.content]
    assert len(entries) == 3
    assert all(len(e.top_logprobs) == 3 and e.logprob <= 0 for e in entries)


def test_stop_string_ends_the_text_before_it(client: OpenAI) -> None:
    args = {"model": MODEL, "prompt": "Prefix caching", "extra_body": EXACT, **GREEDY}
    full = client.completions.create(max_tokens=24, **args).choices[0].text
    stop = full[len(full) // 2 : len(full) // 2 + 2]
    assert stop.strip(), f"pick a visible stop string from {full!r}"
    out = client.completions.create(max_tokens=24, stop=[stop], **args).choices[0]
    assert out.finish_reason == "stop"
    assert stop not in out.text
    assert full.startswith(out.text)
    streamed = client.completions.create(max_tokens=24, stop=stop, stream=True, **args)
    assert "".join(c.choices[0].text for c in streamed) == out.text


def test_errors_surface_as_openai_exceptions(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as nf:
        client.completions.create(model="gpt-4o", prompt="x", max_tokens=1)
    assert nf.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as ctx:
        client.completions.create(model=MODEL, prompt="x", max_tokens=10_000)
    assert ctx.value.code == "context_length_exceeded"
    assert ctx.value.param == "max_tokens"
    with pytest.raises(openai.BadRequestError) as big_n:
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}], n=50
        )
    assert big_n.value.param == "n"
    with pytest.raises(openai.BadRequestError) as echo:
        client.completions.create(model=MODEL, prompt="x", echo=True, max_tokens=1)
    assert echo.value.param == "echo"
    with pytest.raises(openai.BadRequestError) as tools:
        client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
        )
    assert tools.value.param == "tools"


def test_many_concurrent_streams(live: LiveServer) -> None:
    async def one(client: AsyncOpenAI, i: int) -> int:
        stream = await client.completions.create(
            model=MODEL,
            prompt=f"request number {i}",
            max_tokens=6,
            stream=True,
            stream_options={"include_usage": True},
            extra_body=EXACT,
        )
        usage = None
        async for chunk in stream:
            usage = chunk.usage or usage
        assert usage is not None
        return usage.completion_tokens

    async def main() -> list[int]:
        async with AsyncOpenAI(base_url=live.api_url, api_key="x", max_retries=0) as client:
            return await asyncio.gather(*(one(client, i) for i in range(24)))

    assert asyncio.run(main()) == [6] * 24
    report = live.wait_idle()
    assert report["num_blocks_held"] == 0 and report["integrity"] == "ok"


def test_continuous_usage_stats_grow_chunk_by_chunk(live: LiveServer) -> None:
    body = {
        "model": MODEL,
        "prompt": "usage as it goes",
        "max_tokens": 4,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    text = live.http.post("/v1/completions", json=body).text
    events = [e.removeprefix("data: ") for e in text.split("\n\n") if e]
    assert events[-1] == "[DONE]"
    counts = [json.loads(e)["usage"]["completion_tokens"] for e in events[:-1]]
    assert counts == sorted(counts) and counts[-1] == 4 and counts[0] >= 1
