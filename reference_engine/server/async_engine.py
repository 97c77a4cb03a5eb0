"""AsyncEngine: the synchronous Engine driven by its own thread, fed from an asyncio server.

The Engine is not thread-safe, so exactly one thread ever touches it: the engine
thread. The event loop talks to it through a command queue (add, abort, call)
and gets each step's outputs back through `loop.call_soon_threadsafe`, one
callback per step, which fans the outputs out to per-request asyncio queues.
PyTorch releases the GIL inside its kernels, so the event loop keeps serving
HTTP while a forward pass runs.

A request's stream aborts its request when closed before the request finished
(the client went away, the handler was cancelled): the engine frees its blocks
at the next command drain, i.e. within one step.

A step that raises costs only the requests it touched (`Engine.step_request_ids`):
they are aborted, their blocks freed, their streams get a `StepFailedError`, and
the thread goes on stepping the rest. Only when the block accounting no longer
adds up after that (or a non-Exception escapes) does the engine stop for good.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from reference_engine.engine import Engine, EngineStats
    from reference_engine.outputs import RequestOutput
    from reference_engine.sampling_params import SamplingParams

T = TypeVar("T")

if TYPE_CHECKING:
    # Runs on the engine thread after each step that produced an output for its request,
    # and once with None when the request ends without one (aborted, refused, failed
    # step). Returns True when it needs no further calls. Disaggregated serving pins and
    # releases transferred KV blocks through these, with no step in between (disagg/).
    RequestHook = Callable[[Engine, RequestOutput | None], bool]


class EngineDeadError(RuntimeError):
    """The engine thread stopped (a bug in a step, or shutdown); no request can be served."""


class StepFailedError(RuntimeError):
    """The engine step running this request raised; the request was aborted, the engine
    goes on serving the others."""


@dataclass(frozen=True, slots=True)
class EngineSnapshot:
    """Engine state after the latest step, published by the engine thread for /metrics."""

    stats: EngineStats
    num_blocks: int
    num_free_blocks: int  # on the pool's free list
    num_cached_blocks: int  # evictable prefix-cache blocks: reusable, not leaked
    num_unfinished: int

    @property
    def num_blocks_held(self) -> int:
        """Blocks pinned by live requests; 0 when idle, or blocks have leaked."""
        return self.num_blocks - self.num_free_blocks - self.num_cached_blocks


def take_snapshot(engine: Engine) -> EngineSnapshot:
    kv = engine.kv
    return EngineSnapshot(
        stats=engine.stats(),
        num_blocks=kv.num_blocks,
        num_free_blocks=kv.pool.num_free,
        num_cached_blocks=kv.cache.num_evictable_blocks(),
        num_unfinished=len(engine.requests),
    )


@dataclass(slots=True)
class _Add:
    request_id: str
    token_ids: list[int]
    params: SamplingParams
    arrival_time: float
    done: concurrent.futures.Future[None]
    hook: RequestHook | None = None
    lora_request: Any = None
    images: list[Any] | None = None  # processed images filling the prompt's placeholders


@dataclass(slots=True)
class _Abort:
    request_id: str


@dataclass(slots=True)
class _Call:
    fn: Callable[[Engine], Any]
    done: concurrent.futures.Future[Any]


class _Stop:
    pass


class _EndOfStream:
    """Put on a stream's queue at shutdown: the stream ends early, its request is aborted."""


_Command = _Add | _Abort | _Call | _Stop


class RequestStream:
    """Async iterator over one request's RequestOutputs; `close()` aborts it if unfinished."""

    def __init__(self, owner: AsyncEngine, request_id: str, outputs: asyncio.Queue[Any]) -> None:
        self.request_id = request_id
        self._owner = owner
        self._outputs = outputs
        self.finished = False
        self._closed = False

    def __aiter__(self) -> RequestStream:
        return self

    async def __anext__(self) -> RequestOutput:
        if self.finished or self._closed:
            raise StopAsyncIteration
        return self._accept(await self._outputs.get())

    def ready(self) -> list[RequestOutput]:
        """Outputs already waiting, without blocking: a consumer that fell behind the
        engine catches up in one write instead of one per step."""
        outs: list[RequestOutput] = []
        while not (self.finished or self._closed) and not self._outputs.empty():
            try:
                outs.append(self._accept(self._outputs.get_nowait()))
            except StopAsyncIteration:
                break
        return outs

    def _accept(self, item: Any) -> RequestOutput:
        if isinstance(item, _EndOfStream):
            self.close()
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._closed = True
            raise item
        if item.finished:
            self.finished = True
        return item

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._owner._forget(self.request_id, abort=not self.finished)


class AsyncEngine:
    def __init__(
        self, engine: Engine, idle_poll_s: float = 0.5, snapshot_interval_s: float = 0.25
    ) -> None:
        self.engine = engine
        self.tokenizer = engine.tokenizer
        self.max_model_len = engine.max_model_len
        self._idle_poll_s = idle_poll_s
        # Counting evictable prefix-cache blocks walks the whole cache (O(cached blocks)), so
        # a busy engine publishes its state a few times a second, not after every step.
        self._snapshot_interval_s = snapshot_interval_s
        self._hooks: dict[str, RequestHook] = {}  # engine thread only
        self._commands: queue.SimpleQueue[_Command] = queue.SimpleQueue()
        self._streams: dict[str, asyncio.Queue[Any]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._closing = False
        # Set while a weight update drains in-flight requests: new ones wait on it.
        self._admission_gate: asyncio.Event | None = None
        # Admitted streams that have not produced an output yet, with their prompt sizes:
        # the queue the server's overload limits look at (event loop side only).
        self._pending: dict[str, int] = {}
        self.num_failed_steps = 0
        self.snapshot: EngineSnapshot = take_snapshot(engine)

    # --- lifecycle (event loop side) ----------------------------------------------------
    def start(self) -> None:
        """Start the engine thread; call from inside the running event loop."""
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="atlas-engine", daemon=True)
        self._thread.start()

    async def stop(self, timeout_s: float = 10.0) -> None:
        """Abort whatever is still running, then end the thread (freeing every block)."""
        if self._thread is None:
            return
        for request_id in list(self._streams):
            self._commands.put(_Abort(request_id))
        self._commands.put(_Stop())
        await asyncio.to_thread(self._thread.join, timeout_s)
        self._thread = None

    async def drain(self, timeout_s: float) -> None:
        """Shutdown, first half: refuse new requests, give open ones `timeout_s` to finish,
        then end the rest (each ends its HTTP response normally and aborts its request)."""
        self._closing = True
        deadline = time.monotonic() + timeout_s
        while self._streams and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for target in self._streams.values():
            target.put_nowait(_EndOfStream())

    async def admission_open(self) -> None:
        """Return once no weight update is draining (new requests wait for the new weights)."""
        gate = self._admission_gate
        while gate is not None:
            await gate.wait()
            gate = self._admission_gate

    def pause_admission(self) -> None:
        """Hold new requests (they wait, they are not refused) until resume_admission."""
        if self._admission_gate is None:
            self._admission_gate = asyncio.Event()

    def resume_admission(self) -> None:
        gate, self._admission_gate = self._admission_gate, None
        if gate is not None:
            gate.set()

    @property
    def is_running(self) -> bool:
        alive = self._thread is not None and self._thread.is_alive()
        return alive and self._error is None and not self._closing

    @property
    def error(self) -> BaseException | None:
        return self._error

    @property
    def num_streams(self) -> int:
        return len(self._streams)

    @property
    def num_pending(self) -> int:
        """Requests accepted but not yet past their first output (queued or prefilling)."""
        return len(self._pending)

    @property
    def num_pending_tokens(self) -> int:
        return sum(self._pending.values())

    # --- requests (event loop side) ------------------------------------------------------
    async def add_request(
        self,
        request_id: str,
        token_ids: list[int],
        params: SamplingParams,
        arrival_time: float | None = None,
        hook: RequestHook | None = None,
        lora_request: Any = None,
        images: list[Any] | None = None,
    ) -> RequestStream:
        """Queue a request; raises the engine's RequestError when it refuses it.
        `hook`: see RequestHook; `lora_request`: the adapter it runs with; `images`: what
        fills the prompt's image placeholders (Engine.add_request)."""
        await self.admission_open()
        self._check_alive()
        if request_id in self._streams:
            raise ValueError(f"request id {request_id!r} is already in flight")
        outputs: asyncio.Queue[Any] = asyncio.Queue()
        self._streams[request_id] = outputs
        self._pending[request_id] = len(token_ids)
        stream = RequestStream(self, request_id, outputs)
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        arrival = time.monotonic() if arrival_time is None else arrival_time
        self._commands.put(
            _Add(request_id, token_ids, params, arrival, done, hook, lora_request, images)
        )
        try:
            await asyncio.wrap_future(done)
        except BaseException:
            # Refused, or cancelled while waiting: the abort covers the case that it was added.
            stream.close()
            raise
        return stream

    async def call(self, fn: Callable[[Engine], T]) -> T:
        """Run `fn(engine)` on the engine thread, between two steps."""
        return await asyncio.wrap_future(self.submit_call(fn))

    def submit_call(self, fn: Callable[[Engine], T]) -> concurrent.futures.Future[T]:
        """Queue `fn(engine)` for the engine thread from any thread; a future for its result
        (other threads, such as the KV sender's, wait on it with `.result(timeout)`)."""
        self._check_alive(closing_ok=True)
        done: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._commands.put(_Call(fn, done))
        return done

    def _forget(self, request_id: str, abort: bool) -> None:
        self._streams.pop(request_id, None)
        self._pending.pop(request_id, None)
        if abort:
            self._commands.put(_Abort(request_id))

    def _check_alive(self, closing_ok: bool = False) -> None:
        if self._error is not None:
            raise EngineDeadError(f"the engine stopped after an error: {self._error}")
        if self._thread is None:
            raise EngineDeadError("the engine is not running")
        if self._closing and not closing_ok:
            raise EngineDeadError("the server is shutting down")

    # --- delivery (event loop side, scheduled by the engine thread) ---------------------
    def _deliver(self, outputs: list[RequestOutput]) -> None:
        for out in outputs:
            self._pending.pop(out.request_id, None)
            target = self._streams.get(out.request_id)
            if target is not None:  # None: its client already left
                target.put_nowait(out)

    def _fail_some(self, request_ids: list[str], error: StepFailedError) -> None:
        for request_id in request_ids:
            self._pending.pop(request_id, None)
            target = self._streams.get(request_id)
            if target is not None:
                target.put_nowait(error)

    def _fail_all(self, error: BaseException) -> None:
        dead = EngineDeadError(f"the engine stopped after an error: {error}")
        for target in self._streams.values():
            target.put_nowait(dead)

    # --- the engine thread ------------------------------------------------------------------
    def _run(self) -> None:
        engine = self.engine
        next_snapshot = 0.0
        try:
            while True:
                busy = engine.has_unfinished_requests()
                if not self._drain(block=not busy):
                    break
                if not engine.has_unfinished_requests():
                    if busy:  # aborts just emptied it: publish the exact idle state
                        self.snapshot = take_snapshot(engine)
                    continue
                try:
                    outputs = engine.step()
                except Exception as exc:
                    self._recover(exc)
                    continue
                if outputs:
                    self._run_hooks(outputs)
                    self._post(self._deliver, outputs)
                now = time.monotonic()
                if now >= next_snapshot or not engine.has_unfinished_requests():
                    self.snapshot = take_snapshot(engine)
                    next_snapshot = now + self._snapshot_interval_s
        except BaseException as exc:  # a bug in a step: fail every stream, keep the server up
            self._error = exc
            self._post(self._fail_all, exc)
            self._drain_after_death()
        finally:
            # Whatever is left (shutdown) gives its blocks back.
            for request_id in list(engine.requests):
                with contextlib.suppress(Exception):
                    engine.abort(request_id)
            for request_id in list(self._hooks):
                with contextlib.suppress(Exception):
                    self._end_hook(request_id)
            with contextlib.suppress(Exception):
                self.snapshot = take_snapshot(engine)

    def _recover(self, exc: Exception) -> None:
        """Abort the failed step's requests; re-raise when the engine cannot go on."""
        engine = self.engine
        self.num_failed_steps += 1
        victims = sorted(engine.step_request_ids)
        if not victims:  # it failed before touching any request: nothing to blame, stop
            raise exc
        for request_id in victims:
            engine.abort(request_id)
            self._end_hook(request_id)
        # A copy that never ran still holds a reference on its source block.
        engine.kv.copies_done()
        engine.check_integrity()  # raises: the step left the block accounting broken
        error = StepFailedError(
            f"the engine step running this request failed ({type(exc).__name__}: {exc}); "
            "the request was aborted, other requests are unaffected"
        )
        self._post(self._fail_some, victims, error)
        self.snapshot = take_snapshot(engine)

    def _drain(self, block: bool) -> bool:
        """Apply queued commands; False on stop. When idle, wait for the first one."""
        while True:
            try:
                cmd = self._commands.get(timeout=self._idle_poll_s) if block else None
                if cmd is None:
                    cmd = self._commands.get_nowait()
            except queue.Empty:
                return True
            block = False
            if isinstance(cmd, _Stop):
                return False
            self._apply(cmd)

    def _apply(self, cmd: _Command) -> None:
        engine = self.engine
        if isinstance(cmd, _Add):
            # Added even when its caller was cancelled meanwhile: the caller's abort follows.
            if cmd.hook is not None:
                self._hooks[cmd.request_id] = cmd.hook
            try:
                engine.add_request(
                    cmd.request_id, cmd.token_ids, cmd.params, 0, cmd.arrival_time,
                    lora_request=cmd.lora_request, images=cmd.images,
                )  # fmt: skip
            except Exception as exc:  # RequestError and friends: the caller reports it
                self._end_hook(cmd.request_id)
                _settle(cmd.done, exc=exc)
            else:
                _settle(cmd.done, None)
        elif isinstance(cmd, _Abort):
            engine.abort(cmd.request_id)
            self._end_hook(cmd.request_id)
        elif isinstance(cmd, _Call):
            if not cmd.done.set_running_or_notify_cancel():
                return  # its caller was cancelled before it ran: skip it
            try:
                cmd.done.set_result(cmd.fn(engine))
            except Exception as exc:
                cmd.done.set_exception(exc)

    def _run_hooks(self, outputs: list[RequestOutput]) -> None:
        for out in outputs:
            hook = self._hooks.get(out.request_id)
            if hook is not None and (hook(self.engine, out) or out.finished):
                del self._hooks[out.request_id]

    def _end_hook(self, request_id: str) -> None:
        hook = self._hooks.pop(request_id, None)
        if hook is not None:
            hook(self.engine, None)

    def _drain_after_death(self) -> None:
        # Until shutdown, adds and calls that raced past _check_alive must not hang.
        while True:
            cmd = self._commands.get()
            if isinstance(cmd, _Stop):
                return
            if isinstance(cmd, _Add | _Call):
                _settle(cmd.done, exc=EngineDeadError(f"the engine stopped: {self._error}"))

    def _post(self, fn: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed during shutdown
            loop.call_soon_threadsafe(fn, *args)


def _settle(
    done: concurrent.futures.Future[Any], result: Any = None, exc: BaseException | None = None
) -> None:
    """Resolve a future whose waiter may have been cancelled (then nobody reads it)."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        if exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(result)
