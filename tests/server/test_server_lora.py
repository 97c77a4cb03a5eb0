"""LoRA adapters over the OpenAI server, as vLLM serves them: `model` picks the adapter,
/v1/models lists adapters, load/unload endpoints, clear 4xx for bad adapters."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from server_fixtures import MAX_MODEL_LEN, MODEL, LiveServer, start_server

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.engine import Engine
from reference_engine.lora import LoRARequest
from reference_engine.sampling_params import SamplingParams
from reference_engine.server.launch import ServeConfig, build_server
from reference_engine.tiny_model import ensure_tiny_model

transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")


def _adapter(base: Path, folder: Path, rank: int, seed: int) -> Path:
    model = transformers.AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    torch.manual_seed(seed)
    cfg = peft.LoraConfig(r=rank, lora_alpha=2 * rank, init_lora_weights=False,
                          target_modules=["q_proj", "v_proj", "up_proj", "down_proj"])  # fmt: skip
    lora = peft.get_peft_model(model, cfg)
    with torch.no_grad():
        for name, p in lora.named_parameters():
            if "lora_B" in name:
                p.mul_(50.0)
    lora.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def adapters(server_cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = ensure_tiny_model(server_cache_dir)
    root = tmp_path_factory.mktemp("server-loras")
    return {
        "alpha": _adapter(base, root / "alpha", 4, 1),
        "beta": _adapter(base, root / "beta", 8, 2),
        "huge": _adapter(base, root / "huge", 16, 3),
    }


@pytest.fixture(scope="module")
def lora_server(server_cache_dir: Path) -> Iterator[LiveServer]:
    srv = start_server(server_cache_dir, enable_lora=True, max_loras=2, max_lora_rank=8)
    yield srv
    srv.stop()


def _alone(cache_dir: Path, prompt: str, lora: LoRARequest | None) -> list[int]:
    eng = Engine(EngineConfig(cache_dir=cache_dir, max_model_len=MAX_MODEL_LEN, block_size=8,
                              enable_lora=True, max_lora_rank=8))  # fmt: skip
    eng.add_request("x", prompt, SamplingParams(temperature=0.0, max_tokens=8, ignore_eos=True),
                    lora_request=lora)  # fmt: skip
    final = None
    while eng.has_unfinished_requests():
        final = eng.step() or final
    assert final is not None
    return final[0].outputs[0].token_ids


def test_adapters_by_model_name(
    lora_server: LiveServer, adapters: dict[str, Path], server_cache_dir: Path
) -> None:
    http = lora_server.http
    for name in ("alpha", "beta"):
        r = http.post("/v1/load_lora_adapter",
                      json={"lora_name": name, "lora_path": str(adapters[name])})  # fmt: skip
        assert r.status_code == 200, r.text
    ids = [m["id"] for m in http.get("/v1/models").json()["data"]]
    assert ids == [MODEL, "alpha", "beta"]
    prompt = "The KV cache"
    body = {"prompt": prompt, "max_tokens": 8, "temperature": 0.0, "ignore_eos": True}
    got = {}
    for model in (MODEL, "alpha", "beta"):
        r = http.post("/v1/completions", json={**body, "model": model})
        assert r.status_code == 200, r.text
        got[model] = r.json()["choices"][0]["text"]
    assert len(set(got.values())) == 3  # each adapter changes the greedy text
    tok = lora_server.engine.engine.tokenizer
    alpha = LoRARequest("alpha", 1, str(adapters["alpha"]))
    assert got["alpha"] == tok.decode(_alone(server_cache_dir, prompt, alpha))
    assert got[MODEL] == tok.decode(_alone(server_cache_dir, prompt, None))
    chat = http.post("/v1/chat/completions", json={
        "model": "beta", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})  # fmt: skip
    assert chat.status_code == 200 and chat.json()["choices"][0]["message"]["content"] is not None


def test_lora_errors_are_clear_4xx(lora_server: LiveServer, adapters: dict[str, Path]) -> None:
    http = lora_server.http
    r = http.post("/v1/completions", json={"model": "nope", "prompt": "x", "max_tokens": 2})
    assert r.status_code == 404 and "nope" in r.json()["error"]["message"]
    r = http.post("/v1/load_lora_adapter",
                  json={"lora_name": "huge", "lora_path": str(adapters["huge"])})  # fmt: skip
    assert r.status_code == 400 and "above max_lora_rank=8" in r.json()["error"]["message"]
    r = http.post("/v1/load_lora_adapter", json={"lora_name": "ghost", "lora_path": "/nowhere"})
    assert r.status_code == 400 and "adapter_config.json" in r.json()["error"]["message"]
    http.post("/v1/load_lora_adapter",
              json={"lora_name": "gamma", "lora_path": str(adapters["alpha"])})  # fmt: skip
    r = http.post("/v1/load_lora_adapter",
                  json={"lora_name": "gamma", "lora_path": str(adapters["alpha"])})  # fmt: skip
    assert r.status_code == 400 and "already been loaded" in r.json()["error"]["message"]
    assert http.post("/v1/unload_lora_adapter", json={"lora_name": "gamma"}).status_code == 200
    r = http.post("/v1/completions", json={"model": "gamma", "prompt": "x", "max_tokens": 2})
    assert r.status_code == 404
    assert http.post("/v1/unload_lora_adapter", json={"lora_name": "gamma"}).status_code == 404
    assert http.post("/v1/load_lora_adapter", json={"lora_name": "x"}).status_code == 400


def test_lora_modules_at_startup(server_cache_dir: Path, adapters: dict[str, Path]) -> None:
    kwargs = {"cache_dir": server_cache_dir, "enable_lora": True, "max_lora_rank": 8,
              "max_model_len": MAX_MODEL_LEN}  # fmt: skip
    modules = (("alpha", str(adapters["alpha"])),)
    _, _, engine = build_server(kwargs, ServeConfig(lora_modules=modules))
    assert [a.lora_name for a in engine.list_loras()] == ["alpha"]
    with pytest.raises(ConfigError, match="max_lora_rank"):
        build_server(kwargs, ServeConfig(lora_modules=(("huge", str(adapters["huge"])),)))
    assert json.loads((adapters["alpha"] / "adapter_config.json").read_text())["r"] == 4


def test_serve_cli_rejects_a_malformed_lora_module() -> None:
    from typer.testing import CliRunner

    from analyzer.cli import app

    result = CliRunner().invoke(app, ["engine", "serve", "--lora-modules", "no-equals-sign"])
    assert result.exit_code == 2
    assert "NAME=PATH" in result.output
