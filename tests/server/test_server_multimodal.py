"""Images over the OpenAI chat API, as vLLM accepts them: `image_url` parts with a base64
data URL (or a file in the folder --allowed-local-media-path names). The reply equals the
engine's own for the same prompt and image; a bad, corrupt or oversized image is a clear
4xx and the server keeps serving."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_fixtures import MODEL, LiveServer, start_server
from test_multimodal import PLACEHOLDER, noise_image, png_bytes, write_qwen3_5_vl

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.server.serving import ServingLimits

pytest.importorskip("transformers")

CHAT = "/v1/chat/completions"
ENGINE = {"max_model_len": 256, "block_size": 4, "num_gpu_blocks": 200, "max_num_seqs": 4}


def data_url(data: bytes, kind: str = "png") -> str:
    return f"data:image/{kind};base64," + base64.b64encode(data).decode()


def chat(url: str, text: str = "What is in this picture?", **extra: Any) -> dict[str, Any]:
    content = [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": text}]
    return {"model": MODEL, "messages": [{"role": "user", "content": content}],
            "max_tokens": 5, "temperature": 0.0, **extra}  # fmt: skip


@pytest.fixture(scope="module")
def vl_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("server-qwen3_5_vl")
    write_qwen3_5_vl(folder)
    return folder


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("media")
    (folder / "cat.png").write_bytes(png_bytes(noise_image(30, 22, seed=9)))
    return folder


@pytest.fixture(scope="module")
def vl_server(server_cache_dir: Path, vl_folder: Path, media: Path) -> Iterator[LiveServer]:
    limits = ServingLimits(max_images=2, allowed_local_media_path=str(media))
    srv = start_server(server_cache_dir, limits=limits, model=str(vl_folder), **ENGINE)
    yield srv
    srv.stop()


def _post(srv: LiveServer, body: dict[str, Any]) -> httpx.Response:
    return srv.http.post(CHAT, json=body)


def _alone(folder: Path, image: Any, text: str) -> list[int]:
    eng = Engine(EngineConfig(model=str(folder), **ENGINE))
    prompt = eng.tokenizer.apply_chat_template(
        [{"role": "user", "content": PLACEHOLDER + text}], add_generation_prompt=True
    )
    params = SamplingParams(temperature=0.0, max_tokens=5)
    eng.add_request("x", eng.tokenizer.encode(prompt, add_special_tokens=False), params,
                    images=[image])  # fmt: skip
    while eng.has_unfinished_requests():
        outs = eng.step()
    return list(outs[0].outputs[0].token_ids)


def test_image_chat_equals_the_engine_alone(vl_server: LiveServer, vl_folder: Path) -> None:
    picture = noise_image(40, 17, seed=4)
    resp = _post(vl_server, chat(data_url(png_bytes(picture)), logprobs=True))
    assert resp.status_code == 200, resp.text
    body = resp.json()
    tokens = _alone(vl_folder, picture, "What is in this picture?")
    got = [e["token"] for e in body["choices"][0]["logprobs"]["content"]]
    tok = Engine(EngineConfig(model=str(vl_folder), **ENGINE)).tokenizer
    assert got == [tok.decode([t], skip_special_tokens=False) for t in tokens]
    # 10 image tokens (a 40 x 16 resize: 4 x 10 patches, merged 2 x 2) are prompt tokens.
    assert body["usage"]["prompt_tokens"] > 10
    assert vl_server.wait_idle()["idle"]


def test_local_file_in_the_allowed_folder(vl_server: LiveServer, media: Path) -> None:
    resp = _post(vl_server, chat(f"file://{media / 'cat.png'}"))
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("data:image/png;base64,@@@not-base64", "not valid base64"),
        (data_url(b"GIF89a but not really"), "not an image"),
        (data_url(png_bytes(noise_image(64, 64, seed=1))[:300]), "corrupt"),
        ("data:text/plain;base64,aGVsbG8=", "data:image/"),
        ("https://example.com/cat.png", "network"),
        ("file:///etc/passwd", "outside the allowed folder"),
        (data_url(png_bytes(noise_image(1, 300, seed=2))), "aspect ratio"),
    ],
)
def test_bad_images_are_400(vl_server: LiveServer, url: str, message: str) -> None:
    resp = _post(vl_server, chat(url))
    assert resp.status_code == 400, resp.text
    err = resp.json()["error"]
    assert message in err["message"] and err["param"] == "messages"


def test_huge_images_are_refused(vl_server: LiveServer) -> None:
    from PIL import Image

    # Decompression bomb: a few KB of PNG, 60 M pixels once decoded.
    bomb = _post(vl_server, chat(data_url(png_bytes(Image.new("L", (10000, 6000))))))
    assert bomb.status_code == 400 and "pixels" in bomb.json()["error"]["message"]
    # A body past the server's size limit never reaches the image decoder.
    big = _post(vl_server, chat(data_url(b"\x89PNG" + b"\0" * (9 << 20))))
    assert big.status_code == 413
    three = chat(data_url(png_bytes(noise_image(8, 8, seed=3))))
    three["messages"][0]["content"] *= 3
    too_many = _post(vl_server, three)
    assert too_many.status_code == 400 and "at most 2" in too_many.json()["error"]["message"]
    # ... and the server keeps serving images.
    ok = _post(vl_server, chat(data_url(png_bytes(noise_image(16, 16, seed=5)))))
    assert ok.status_code == 200, ok.text
    assert vl_server.wait_idle()["idle"]


def test_text_only_model_refuses_images(server_cache_dir: Path) -> None:
    srv = start_server(server_cache_dir)
    try:
        resp = _post(srv, chat(data_url(png_bytes(noise_image(16, 16, seed=5)))))
        assert resp.status_code == 400
        assert "does not accept images" in resp.json()["error"]["message"]
    finally:
        srv.stop()


def test_disaggregation_is_refused_for_the_hybrid(server_cache_dir: Path, vl_folder: Path) -> None:
    """Qwen3.5 is a hybrid: its recurrent state does not travel with the paged KV, so a
    prefill or decode role is a clear configuration error, not a crash."""
    for role in ("prefill", "decode"):
        with pytest.raises(ConfigError, match="recurrent state"):
            start_server(server_cache_dir, serve_options={"role": role},
                         model=str(vl_folder), **ENGINE)  # fmt: skip


def test_serve_flag_sets_the_allowed_media_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`atlas engine serve --allowed-local-media-path DIR` reaches the chat front end."""
    from typer.testing import CliRunner

    from analyzer.cli import app
    from reference_engine.server import launch

    seen: dict[str, Any] = {}
    monkeypatch.setattr(launch, "serve", lambda kwargs, cfg, on_ready=None: seen.update(cfg=cfg))
    args = ["engine", "serve", "--allowed-local-media-path", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen["cfg"].limits.allowed_local_media_path == str(tmp_path)
