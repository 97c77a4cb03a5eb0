"""Engine and LLM behaviour seen from the API: streaming deltas, stops, logprobs, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reference_engine import LLM, SamplingParams
from reference_engine.config import EngineConfig
from reference_engine.engine import Engine, RequestError


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


def make_engine(model_dir: Path, **kwargs: Any) -> Engine:
    cfg: dict[str, Any] = {"dtype": "float64", "block_size": 4, "num_gpu_blocks": 128}
    cfg.update(kwargs)
    return Engine(EngineConfig(model=str(model_dir), **cfg))


def run_all(engine: Engine) -> dict[str, list[Any]]:
    """request id -> every RequestOutput it produced, in order."""
    seen: dict[str, list[Any]] = {}
    while engine.has_unfinished_requests():
        for out in engine.step():
            seen.setdefault(out.request_id, []).append(out)
    return seen


def test_llm_generate_on_the_builtin_tiny_model(atlas_cache_dir: Path) -> None:
    llm = LLM(cache_dir=atlas_cache_dir)
    assert llm.random_weights
    outs = llm.generate(["Hello", "Paged attention"], SamplingParams(temperature=0, max_tokens=6))
    assert [o.prompt for o in outs] == ["Hello", "Paged attention"]
    assert all(
        len(o.outputs[0].token_ids) == 6 or o.outputs[0].finish_reason == "stop" for o in outs
    )
    again = llm.generate("Hello", SamplingParams(temperature=0, max_tokens=6))
    assert again[0].outputs[0].token_ids == outs[0].outputs[0].token_ids
    chat = llm.chat([{"role": "user", "content": "hi"}], SamplingParams(max_tokens=3))
    assert chat[0].finished and chat[0].prompt and "hi" in chat[0].prompt


def test_streamed_deltas_add_up_to_the_final_output(model_dir: Path) -> None:
    engine = make_engine(model_dir)
    engine.add_request(
        "a", "stream me", SamplingParams(temperature=0, max_tokens=12, ignore_eos=True)
    )
    outs = run_all(engine)["a"]
    final = outs[-1].outputs[0]
    assert final.finished and not any(o.finished for o in outs[:-1])
    assert "".join(o.outputs[0].text_delta for o in outs) == final.text
    assert [t for o in outs for t in o.outputs[0].token_ids_delta] == final.token_ids


def test_stop_token_and_stop_string_end_the_request(model_dir: Path) -> None:
    engine = make_engine(model_dir)
    greedy = SamplingParams(temperature=0, max_tokens=10, ignore_eos=True)
    engine.add_request("free", [7, 8, 9], greedy)
    free = run_all(engine)["free"][-1].outputs[0]
    third = free.token_ids[2]
    engine.add_request(
        "tok",
        [7, 8, 9],
        SamplingParams(temperature=0, max_tokens=10, stop_token_ids=[third], ignore_eos=True),
    )
    tok = run_all(engine)["tok"][-1].outputs[0]
    assert tok.token_ids == free.token_ids[: free.token_ids.index(third) + 1]
    assert (tok.finish_reason, tok.stop_reason) == ("stop", third)

    stop = free.text[len(free.text) // 2 : len(free.text) // 2 + 2]
    if stop.strip():
        engine.add_request(
            "str",
            [7, 8, 9],
            SamplingParams(temperature=0, max_tokens=10, stop=[stop], ignore_eos=True),
        )
        outs = run_all(engine)["str"]
        text = outs[-1].outputs[0].text
        assert outs[-1].outputs[0].finish_reason == "stop"
        assert text == free.text[: free.text.find(stop)]
        assert "".join(o.outputs[0].text_delta for o in outs) == text  # nothing leaked


def test_prompt_logprobs_survive_chunked_prefill(model_dir: Path) -> None:
    prompt = list(range(20, 45))
    params = SamplingParams(temperature=0, max_tokens=3, prompt_logprobs=2, logprobs=1)
    results = []
    for budget in (512, 4):  # whole prompt in one step, then 4-token chunks
        engine = make_engine(model_dir, max_num_batched_tokens=budget, prefix_caching="hash")
        engine.add_request("p", prompt, params)
        results.append(run_all(engine)["p"][-1])
    whole, chunked = results
    assert whole.prompt_logprobs is not None and len(whole.prompt_logprobs) == len(prompt)
    assert whole.prompt_logprobs[0] is None
    for a, b, tok in zip(
        whole.prompt_logprobs[1:], chunked.prompt_logprobs[1:], prompt[1:], strict=True
    ):
        assert tok in a and a[tok].logprob == pytest.approx(b[tok].logprob, abs=1e-9)
    assert whole.outputs[0].token_ids == chunked.outputs[0].token_ids
    assert len(whole.outputs[0].logprobs) == 3


def test_abort_mid_flight_frees_everything(model_dir: Path) -> None:
    engine = make_engine(model_dir, prefix_caching="radix", num_gpu_blocks=16)
    for i in range(4):
        engine.add_request(
            str(i), list(range(5, 20)), SamplingParams(max_tokens=30, ignore_eos=True)
        )
    for _ in range(3):
        engine.step()
    assert engine.abort("1") and engine.abort("2")
    assert not engine.abort("1")  # already gone
    finished = run_all(engine)
    assert set(finished) == {"0", "3"}
    assert engine.kv.is_idle_clean()
    engine.check_integrity()


def test_bad_requests_get_clear_errors_and_change_nothing(model_dir: Path) -> None:
    engine = make_engine(model_dir, num_gpu_blocks=8, max_model_len=64)
    with pytest.raises(RequestError, match="empty"):
        engine.add_request("a", [], SamplingParams())
    with pytest.raises(RequestError, match="outside the vocabulary"):
        engine.add_request("a", [1, 10**6], SamplingParams())
    with pytest.raises(RequestError, match="at most 32 tokens"):  # 8 blocks x 4 slots
        engine.add_request("a", list(range(40)), SamplingParams())
    engine.add_request("a", [1, 2], SamplingParams(max_tokens=2))
    with pytest.raises(RequestError, match="already in use"):
        engine.add_request("a", [1, 2], SamplingParams())
    assert len(run_all(engine)) == 1


def test_length_is_capped_by_the_kv_pool(model_dir: Path) -> None:
    engine = make_engine(model_dir, num_gpu_blocks=4)  # 16 token slots in all
    engine.add_request("a", list(range(3, 13)), SamplingParams(max_tokens=100, ignore_eos=True))
    out = run_all(engine)["a"][-1].outputs[0]
    assert out.finish_reason == "length" and len(out.token_ids) == 6


def test_logprobs_carry_each_token_text(model_dir: Path) -> None:
    """Sample and prompt logprobs name every candidate token's own text, as vLLM's do, so
    callers of the Python API need no tokenizer of their own to read them."""
    engine = make_engine(model_dir)
    params = SamplingParams(temperature=0.0, max_tokens=4, logprobs=3, prompt_logprobs=2)
    engine.add_request("r", "stop the cache", params)
    final = run_all(engine)["r"][-1]
    decode = engine.tokenizer.tokenizer.decode
    sample_entries = final.outputs[0].logprobs
    prompt_entries = final.prompt_logprobs[1:]  # position 0 has nothing before it
    assert sample_entries and prompt_entries
    for entry in [*sample_entries, *prompt_entries]:
        assert len(entry) >= 2
        for token_id, logprob in entry.items():
            assert logprob.decoded_token == decode([token_id], skip_special_tokens=False)
