"""Live weight updates over HTTP (server/weight_update_api.py): from disk with the drain
policy, over torch.distributed with the test as the trainer, refused updates, and the
weight version in every response."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from safetensors.torch import load_file
from server_fixtures import MAX_MODEL_LEN, MODEL, LiveServer, start_server

from reference_engine.config import EngineConfig, ModelConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.tiny_model import (
    TINY_CONFIG,
    build_tokenizer,
    random_weights,
    write_checkpoint,
)
from reference_engine.weight_update import WeightBroadcaster

PROMPT = "Paged attention"


@pytest.fixture(scope="module")
def new_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("new-weights")
    weights = random_weights(ModelConfig.from_dict(TINY_CONFIG), seed=4321)
    write_checkpoint(folder, TINY_CONFIG, weights, build_tokenizer())
    return folder


@pytest.fixture(scope="module")
def server(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(server_cache_dir)
    yield srv
    srv.stop()


def _complete(srv: LiveServer, max_tokens: int = 8) -> dict[str, Any]:
    body = {"model": MODEL, "prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0.0,
            "ignore_eos": True}  # fmt: skip
    r = srv.http.post("/v1/completions", json=body)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _fresh(folder: Path | None, cache_dir: Path) -> str:
    eng = Engine(EngineConfig(model=str(folder) if folder else None, cache_dir=cache_dir,
                              max_model_len=MAX_MODEL_LEN, block_size=8))  # fmt: skip
    eng.add_request("x", PROMPT, SamplingParams(temperature=0.0, max_tokens=8, ignore_eos=True))
    final = None
    while eng.has_unfinished_requests():
        final = eng.step() or final
    assert final is not None
    return final[0].outputs[0].text


def test_update_from_disk_with_drain(
    server: LiveServer, new_weights: Path, server_cache_dir: Path
) -> None:
    before = _complete(server)
    assert before["weight_version"] == "default"
    assert before["choices"][0]["text"] == _fresh(None, server_cache_dir)
    # A long request in flight: the drain policy lets it finish on the old weights.
    long: dict[str, Any] = {}
    t = threading.Thread(target=lambda: long.update(_complete(server, max_tokens=60)))
    t.start()
    deadline = time.monotonic() + 30
    while not server.engine.num_streams and time.monotonic() < deadline:
        time.sleep(0.005)
    assert server.engine.num_streams == 1
    replies: dict[str, Any] = {}
    upd = threading.Thread(target=lambda: replies.update(r=server.http.post(
        "/update_weights_from_disk",
        json={"model_path": str(new_weights), "weight_version": "step-1"})))  # fmt: skip
    upd.start()
    while server.engine._admission_gate is None and upd.is_alive():
        time.sleep(0.005)
    # Arrives while the update drains: held, then served by the new weights.
    late: dict[str, Any] = {}
    t2 = threading.Thread(target=lambda: late.update(_complete(server)))
    t2.start()
    for th in (t, upd, t2):
        th.join(timeout=60)
    r = replies["r"]
    assert r.status_code == 200, r.text
    assert r.json()["weight_version"] == "step-1" and r.json()["num_aborted"] == 0
    assert long["weight_version"] == "default"
    assert late["weight_version"] == "step-1"
    after = _complete(server)
    assert after["weight_version"] == "step-1"
    assert after["choices"][0]["text"] == _fresh(new_weights, server_cache_dir)
    assert server.http.get("/get_weight_version").json() == {"weight_version": "step-1"}
    stream = server.http.post("/v1/completions", json={
        "model": MODEL, "prompt": PROMPT, "max_tokens": 3, "stream": True}).text  # fmt: skip
    assert '"weight_version":"step-1"' in stream.replace(" ", "")


def test_refused_updates_keep_the_old_weights(server: LiveServer, tmp_path: Path) -> None:
    before = _complete(server)
    r = server.http.post("/update_weights_from_disk", json={"model_path": str(tmp_path)})
    assert r.status_code == 400 and "config.json" in r.json()["error"]["message"]
    r = server.http.post("/update_weights_from_disk",
                         json={"model_path": str(tmp_path), "policy": "later"})  # fmt: skip
    assert r.status_code == 400 and "policy" in r.json()["error"]["message"]
    after = _complete(server)
    assert after["choices"] == before["choices"]
    assert after["weight_version"] == before["weight_version"]


def test_update_over_torch_distributed(server: LiveServer, new_weights: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    replies: dict[str, Any] = {}

    def post(name: str, path: str, body: dict[str, Any]) -> None:
        replies[name] = server.http.post(path, json=body, timeout=60)

    join = threading.Thread(target=post, args=("join", "/init_weights_update_group",
                            {"master_address": "127.0.0.1", "master_port": port}))  # fmt: skip
    join.start()
    trainer = WeightBroadcaster("127.0.0.1", port, world_size=2, timeout_s=60)
    join.join(timeout=60)
    assert replies["join"].status_code == 200, replies["join"].text
    named = sorted(load_file(str(new_weights / "model.safetensors")).items())
    meta = {**WeightBroadcaster.metadata(named), "weight_version": "step-2", "policy": "abort"}
    upd = threading.Thread(target=post, args=("update", "/update_weights_from_distributed", meta))
    upd.start()
    trainer.broadcast(named)
    upd.join(timeout=60)
    assert replies["update"].status_code == 200, replies["update"].text
    out = _complete(server)
    assert out["weight_version"] == "step-2"
    # Refused after receiving: the trainer's broadcasts are consumed, the group stays usable.
    bad = {**meta, "names": [n + "_typo" if i == 0 else n for i, n in enumerate(meta["names"])],
           "weight_version": "step-3"}  # fmt: skip
    upd = threading.Thread(target=post, args=("bad", "/update_weights_from_distributed", bad))
    upd.start()
    trainer.broadcast(named)
    upd.join(timeout=60)
    assert replies["bad"].status_code == 400
    assert _complete(server)["choices"] == out["choices"]
    assert server.http.get("/get_weight_version").json() == {"weight_version": "step-2"}
