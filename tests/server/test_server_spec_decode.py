"""The OpenAI server with speculative decoding on: same greedy text as plain decoding,
and the spec_decode_* series on /metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from server_fixtures import MAX_MODEL_LEN, MODEL, LiveServer, start_server

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.server.metrics import parse_prometheus

PROMPT = "the cat sat on the mat. the cat sat on the mat. the cat sat on the"


@pytest.fixture(scope="module")
def spec_server(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(
        server_cache_dir, speculative_config={"method": "ngram", "num_speculative_tokens": 3}
    )
    yield srv
    srv.stop()


def test_greedy_text_equals_plain_and_metrics(spec_server: LiveServer, server_cache_dir: Path) -> None:
    body = {"model": MODEL, "prompt": PROMPT, "max_tokens": 40, "temperature": 0.0,
            "ignore_eos": True}  # fmt: skip
    got = spec_server.http.post("/v1/completions", json=body).json()["choices"][0]["text"]
    streamed = spec_server.http.post("/v1/completions", json={**body, "stream": True}).text
    plain = Engine(EngineConfig(cache_dir=server_cache_dir, max_model_len=MAX_MODEL_LEN,
                                block_size=8))  # fmt: skip
    plain.add_request("p", PROMPT, SamplingParams(temperature=0.0, max_tokens=40, ignore_eos=True))
    final = None
    while plain.has_unfinished_requests():
        final = plain.step() or final
    assert final is not None
    assert got == final[0].outputs[0].text
    assert "[DONE]" in streamed
    values = parse_prometheus(spec_server.http.get("/metrics").text)
    assert values["atlas_spec_decode_num_draft_tokens_total"] > 0
    assert values["atlas_spec_decode_num_drafts_total"] > 0
    assert values['atlas_spec_decode_num_accepted_tokens_per_pos_total{position="0"}'] >= 0
    assert values["atlas_spec_decode_mean_accepted_length"] >= 1.0
    assert spec_server.wait_idle()["idle"]
