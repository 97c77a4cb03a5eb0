"""Build an engine and serve it with uvicorn until SIGINT / SIGTERM.

uvicorn owns the signals: on the first one it stops accepting connections,
gives open streams `graceful_s` to finish, cancels the rest (each cancelled
stream aborts its request), then runs the app's shutdown, which stops the
engine thread. The process then exits 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference_engine.server.serving import ServingLimits


@dataclass(frozen=True, slots=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    served_model_name: str | None = None
    chat_template: Path | None = None
    limits: ServingLimits = field(default_factory=ServingLimits)
    torch_threads: int = 0  # 0: leave torch's default
    graceful_s: float = 5.0
    access_log: bool = False
    log_level: str = "warning"


def model_name_for(engine: Any, served: str | None) -> str:
    if served:
        return served
    model_dir = engine.model_config.model_dir
    return Path(model_dir).name if model_dir is not None else "atlas"


def build_server(engine_kwargs: dict[str, Any], cfg: ServeConfig) -> tuple[Any, str, Any]:
    """(uvicorn.Server, served model name, engine); loads the model, binds nothing yet."""
    import torch
    import uvicorn

    from reference_engine.config import ConfigError, EngineConfig
    from reference_engine.engine import Engine
    from reference_engine.server.api_server import ServerOptions, build_app
    from reference_engine.server.async_engine import AsyncEngine

    if cfg.torch_threads > 0:
        torch.set_num_threads(cfg.torch_threads)
    engine = Engine(EngineConfig(**engine_kwargs))
    if cfg.chat_template is not None:
        try:
            engine.tokenizer.chat_template = cfg.chat_template.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the chat template {cfg.chat_template}: {exc}") from None
    name = model_name_for(engine, cfg.served_model_name)
    app = build_app(AsyncEngine(engine), ServerOptions(name, cfg.limits))
    config = uvicorn.Config(
        app,
        host=cfg.host,
        port=cfg.port,
        log_level=cfg.log_level,
        access_log=cfg.access_log,
        timeout_graceful_shutdown=int(max(1, cfg.graceful_s)),
        lifespan="on",
    )
    return uvicorn.Server(config), name, engine


def serve(
    engine_kwargs: dict[str, Any],
    cfg: ServeConfig,
    on_ready: Callable[[str, Any], None] | None = None,
) -> None:
    server, name, engine = build_server(engine_kwargs, cfg)
    if on_ready is not None:
        on_ready(name, engine)
    server.run()
