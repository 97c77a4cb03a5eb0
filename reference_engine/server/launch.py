"""Build an engine and serve it with uvicorn until SIGINT / SIGTERM.

On the first signal the server stops accepting connections, refuses new
requests (503), gives open ones `graceful_s` to finish, then ends the rest
itself: each open stream gets its `[DONE]` and its request is aborted, so no
task has to be cancelled mid-write. Then the app's shutdown stops the engine
thread, and the process exits 0: a requested stop is a success. A second
SIGINT forces an immediate exit (uvicorn's behaviour).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

from reference_engine.server.serving import ServingLimits

if TYPE_CHECKING:
    from reference_engine.server.async_engine import AsyncEngine


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
    api_key: str | None = None
    max_body_bytes: int = 8 << 20
    # Prefill/decode disaggregation (reference_engine/disagg): "colocated", "prefill" or
    # "decode". A prefill server listens for KV transfers on kv_host:kv_port (0: any).
    role: str = "colocated"
    kv_host: str | None = None  # default: host (an unspecified address advertises this host's)
    kv_port: int = 0
    kv_lease_s: float = 60.0  # pinned KV waits this long for its decode instance
    kv_timeout_s: float = 5.0  # a decode instance waits this long for each answer (a dead prefill)
    # --lora-modules: (name, PEFT folder) adapters registered at start-up
    lora_modules: tuple[tuple[str, str], ...] = ()
    # --elastic-ep: a lost expert-parallel rank re-forms the group (distributed/elastic_ep.py)
    elastic_ep: bool = False
    # --profile TRACE: the first `profile_steps` steps of traffic profiled (server/profiling.py)
    profile: Path | None = None
    profile_steps: int = 20


class GracefulServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, engine: AsyncEngine, graceful_s: float) -> None:
        super().__init__(config)
        self.engine = engine
        self.graceful_s = graceful_s

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()  # stop accepting first; uvicorn's own shutdown repeats this harmlessly
        await self.engine.drain(self.graceful_s)
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # uvicorn re-raises the captured signal after a graceful shutdown, which turns a
        # clean stop into exit 130 / death by SIGTERM; keep the handlers, skip the re-raise.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def model_name_for(engine: Any, served: str | None) -> str:
    if served:
        return served
    model_dir = engine.model_config.model_dir
    return Path(model_dir).name if model_dir is not None else "atlas"


def make_server(
    engine: AsyncEngine, model_name: str, cfg: ServeConfig, **uvicorn_kwargs: Any
) -> GracefulServer:
    from reference_engine.server.api_server import ServerOptions, build_app

    if cfg.profile is not None:
        from reference_engine.server.profiling import ServedStepProfiler

        ServedStepProfiler(engine.engine, cfg.profile, cfg.profile_steps)
    role = make_role(engine, cfg)
    options = ServerOptions(model_name, cfg.limits, cfg.max_body_bytes, cfg.api_key, role)
    app = build_app(engine, options)
    config = uvicorn.Config(
        app,
        host=cfg.host,
        port=cfg.port,
        log_level=cfg.log_level,
        access_log=cfg.access_log,
        # A backstop only: drain() has already ended every stream by the time it applies.
        timeout_graceful_shutdown=int(cfg.graceful_s) + 5,
        lifespan="on",
        **uvicorn_kwargs,
    )
    return GracefulServer(config, engine, cfg.graceful_s)


def make_role(engine: AsyncEngine, cfg: ServeConfig) -> Any:
    """The disaggregation role of a server, with its connector started; None if colocated."""
    from reference_engine.config import ConfigError

    if cfg.role == "colocated":
        return None
    from reference_engine.disagg import DecodeRole, PrefillRole
    from reference_engine.disagg.zmq_connector import ZmqKVReceiver, ZmqKVSender

    if engine.engine.model_config.has_recurrent_state:
        raise ConfigError(
            "prefill/decode disaggregation moves paged KV only; a hybrid model's recurrent "
            "state (Qwen3.5, Qwen3-Next) is not transferred"
        )
    if cfg.role == "decode":
        try:
            return DecodeRole(engine, ZmqKVReceiver(cfg.kv_timeout_s))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    if cfg.role != "prefill":
        raise ConfigError(f"role must be colocated, prefill or decode, got {cfg.role!r}")
    if engine.engine.config.prefix_caching == "none":
        raise ConfigError("a prefill instance needs prefix caching (hash or radix) to pin its KV")
    prefill = PrefillRole(engine, lease_s=cfg.kv_lease_s, call_timeout_s=cfg.kv_timeout_s)
    bind = cfg.kv_host or cfg.host
    sender = ZmqKVSender(prefill, bind, cfg.kv_port)
    sender.start()
    prefill.attach(sender, advertised_host(bind))
    return prefill


def advertised_host(bind: str) -> str:
    """The address a decode instance should dial for a sender bound to `bind`."""
    if bind in ("0.0.0.0", "::", ""):
        return socket.gethostbyname(socket.gethostname())
    return bind


def build_server(
    engine_kwargs: dict[str, Any], cfg: ServeConfig
) -> tuple[GracefulServer, str, Any]:
    """(server, served model name, engine); loads the model, binds nothing yet."""
    import torch

    from reference_engine.config import ConfigError, EngineConfig
    from reference_engine.engine import Engine
    from reference_engine.server.async_engine import AsyncEngine

    if cfg.torch_threads > 0:
        torch.set_num_threads(cfg.torch_threads)
    engine = Engine(EngineConfig(**engine_kwargs))
    if cfg.elastic_ep:
        from reference_engine.distributed.elastic_ep import ElasticExpertParallel

        try:
            ElasticExpertParallel(engine).install()
        except ConfigError:
            engine.shutdown()
            raise
    if cfg.chat_template is not None:
        try:
            engine.tokenizer.chat_template = cfg.chat_template.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the chat template {cfg.chat_template}: {exc}") from None
    name = model_name_for(engine, cfg.served_model_name)
    _register_loras(engine, cfg.lora_modules, name)
    return make_server(AsyncEngine(engine), name, cfg), name, engine


def _register_loras(engine: Any, modules: tuple[tuple[str, str], ...], served: str) -> None:
    from reference_engine.config import ConfigError
    from reference_engine.engine import RequestError
    from reference_engine.lora import LoRARequest

    for i, (lora_name, path) in enumerate(modules, start=1):
        if lora_name == served:
            raise ConfigError(f"--lora-modules name {lora_name!r} is the served model's name")
        try:
            engine.add_lora(LoRARequest(lora_name, i, path))
        except RequestError as exc:
            raise ConfigError(str(exc)) from None


def bind_listener(host: str, port: int) -> socket.socket:
    """The HTTP listening socket, bound before anything else starts: a taken port or a bad
    address is an OSError at once (the commands' one-line error, exit 2), not uvicorn's
    log line and exit 3 after the model has loaded."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds its own
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def serve(
    engine_kwargs: dict[str, Any],
    cfg: ServeConfig,
    on_ready: Callable[[str, Any], None] | None = None,
) -> None:
    listener = bind_listener(cfg.host, cfg.port)
    try:
        server, name, engine = build_server(engine_kwargs, cfg)
        if on_ready is not None:
            on_ready(name, engine)
        server.run(sockets=[listener])
    finally:
        listener.close()
