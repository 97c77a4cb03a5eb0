"""Python semantics the call graph once missed (found while writing aligned
walkthrough steps): each program is small, and each expectation is the set of
project functions the named function really calls when run."""

from __future__ import annotations

import textwrap

import pytest

from analyzer.graphs.pycg import pycg_callgraph
from analyzer.index.extract import extract_file


def project_calls(source: str, *callers: str) -> dict[str, set[str]]:
    graph = pycg_callgraph([extract_file(textwrap.dedent(source).encode(), "main.py")])
    return {c: {t for t in graph[c] if t.startswith("main.")} for c in callers}


CONTAINERS = """
    from collections import deque
    from typing import Optional
    import torch.nn as nn


    class Handle:
        def result(self):
            return 1


    class Other:
        def result(self):
            return 2


    class Launched:
        def __init__(self, handle: Handle):
            self.handle = handle


    class Layer(nn.Module):
        def forward(self, x):
            return x


    class Missing(nn.Module):
        def forward(self, x):
            return x


    class Queue:
        def __init__(self, n: int):
            self.queue: deque[Launched] = deque()
            self.table: dict[str, Handle] = {}
            self.items: Optional[list[Launched]] = []
            self.layers = nn.ModuleList([Layer() for _ in range(n)])
            self.stages = nn.ModuleList(Layer() if i < n else Missing() for i in range(4))

        def collect(self):
            self.queue.popleft().handle.result()
            self.items.pop().handle.result()

        def lookup(self):
            self.table["a"].result()
            self.table.get("a").result()

        def index(self):
            self.items[0].handle.result()

        def forward(self, x):
            for i in range(2):
                x = self.layers[i](x)
            for layer in self.layers:
                x = layer(x)
            return x

        def stage(self, x):
            return self.stages[0](x)

        def zipped(self, x, caches):
            for layer, cache in zip(self.layers, caches):
                x = layer(x)
            for i, layer2 in enumerate(self.layers):
                x = layer2(x)
            return x
"""


# The pinned releases run without the flow stage (too many modules): both ways.
FLOW = pytest.mark.parametrize("flow", ["always", "never"])


@FLOW
def test_container_elements_reach_subscripts_pops_gets_and_loops(flow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_CALLGRAPH_FLOW", flow)
    calls = project_calls(CONTAINERS, "main.Queue.collect", "main.Queue.lookup", "main.Queue.index", "main.Queue.forward", "main.Queue.stage", "main.Queue.zipped")
    assert calls == {
        "main.Queue.collect": {"main.Handle.result"},
        "main.Queue.lookup": {"main.Handle.result"},
        "main.Queue.index": {"main.Handle.result"},
        "main.Queue.forward": {"main.Layer.forward"},
        "main.Queue.stage": {"main.Layer.forward", "main.Missing.forward"},
        "main.Queue.zipped": {"main.Layer.forward"},
    }


BRANCHES = """
    from typing import Optional


    class ConnectorBaseV1:
        def matched(self):
            return 0


    ConnectorBase = ConnectorBaseV1


    class NixlConnector(ConnectorBaseV1):
        def matched(self):
            return 1


    class Unrelated:
        def matched(self):
            return 2


    def create_connector() -> ConnectorBase:
        return NixlConnector()


    def a2a_reduce(x):
        return x


    def allgather_reduce(x):
        return x


    class Runner:
        pass


    class Executor:
        pass


    class Scheduler:
        def __init__(self, a2a: bool, world: int):
            self.connector = None
            if world:
                self.connector = create_connector()
            self.combine = a2a_reduce if a2a else allgather_reduce
            self.backend = Runner() if world == 1 else Executor()

        def schedule(self):
            self.connector.matched()
            return self.combine(1)

        def which(self):
            return self.backend
"""


@FLOW
def test_type_alias_and_branch_chosen_values(flow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_CALLGRAPH_FLOW", flow)
    calls = project_calls(BRANCHES, "main.Scheduler.schedule")
    assert calls == {
        "main.Scheduler.schedule": {
            "main.ConnectorBaseV1.matched", "main.NixlConnector.matched", "main.a2a_reduce", "main.allgather_reduce",
        },
    }


CONTEXTS = """
    from abc import ABC, abstractmethod
    from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
    from typing import AsyncIterator, Iterator


    class Session(ABC):
        @abstractmethod
        async def pull(self): ...


    class ZmqSession(Session):
        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return None

        async def pull(self):
            return 1


    class Receiver(ABC):
        @abstractmethod
        def session(self) -> AbstractAsyncContextManager[Session]: ...


    class Conn:
        def send(self):
            return 2


    @contextmanager
    def connect() -> Iterator[Conn]:
        yield Conn()


    @asynccontextmanager
    async def aconnect() -> AsyncIterator[Conn]:
        yield Conn()


    @contextmanager
    def unannotated():
        yield Conn()


    async def transfer(receiver: Receiver):
        async with receiver.session() as session:
            await session.pull()
        with connect() as conn:
            conn.send()
        async with aconnect() as conn2:
            conn2.send()
        with unannotated() as conn3:
            conn3.send()
"""


@FLOW
def test_with_binds_what_the_context_manager_enters(flow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_CALLGRAPH_FLOW", flow)
    calls = project_calls(CONTEXTS, "main.transfer")
    # `Session.pull` is abstract on an ABC: an object's class always replaces it, so
    # `session.pull()` runs `ZmqSession.pull`, never the abstract body.
    assert calls["main.transfer"] == {
        "main.Receiver.session", "main.ZmqSession.pull", "main.Conn.send",
        "main.connect", "main.aconnect", "main.unannotated",
    }


FACTORY = """
    class FusedMoE:
        def run(self):
            return 1


    class DeepEPMoE(FusedMoE):
        def run(self):
            return 2


    class Other:
        def run(self):
            return 3


    def impl_class(deepep: bool):
        if deepep:
            return DeepEPMoE
        return FusedMoE


    class Block:
        def __init__(self, deepep: bool):
            self.experts = impl_class(deepep)()

        def forward(self):
            return self.experts.run()
"""


@FLOW
def test_a_class_chosen_by_a_factory_builds_either(flow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_CALLGRAPH_FLOW", flow)
    assert project_calls(FACTORY, "main.Block.forward") == {"main.Block.forward": {"main.FusedMoE.run", "main.DeepEPMoE.run"}}


PROTOCOLS = """
    from typing import Protocol


    class KVSource(Protocol):
        def read(self, tid: int) -> bytes: ...

        def release(self, tid: int) -> None: ...


    class PrefillRole:
        def read(self, tid):
            return b""

        def release(self, tid):
            return None


    class ReadOnly:
        # has `read` but not the whole protocol: not a KVSource
        def read(self, tid):
            return b""


    class Declared(KVSource):
        def read(self, tid):
            return b"x"

        def release(self, tid):
            return None


    class Output(Protocol):
        hidden: int

        @property
        def format(self) -> str: ...


    class Formatter:
        # a `format` method, no `hidden`: not an Output
        def format(self):
            return ""


    class DispatchOutput:
        def __init__(self):
            self.hidden = 1

        @property
        def format(self):
            return "standard"


    class Sender:
        def __init__(self, source: KVSource):
            self.source = source

        def handle(self):
            self.source.read(1)

        def check(self, out: Output):
            return out.format
"""


@FLOW
def test_a_call_through_a_protocol_reaches_its_implementers(flow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_CALLGRAPH_FLOW", flow)
    # Not the protocol's own `read` stub: `Declared`, its one nominal subclass, overrides
    # it, so no object runs it (jsonschema round; it was an edge before).
    assert project_calls(PROTOCOLS, "main.Sender.handle") == {
        "main.Sender.handle": {"main.PrefillRole.read", "main.Declared.read"},
    }
    # A protocol's property and field are part of it: a same-named plain method is no match.
    assert project_calls(PROTOCOLS, "main.Sender.check") == {
        "main.Sender.check": {"main.DispatchOutput.format"},  # (nor the protocol's property stub)
    }


ANY_FIELD = """
    from typing import Any, Optional


    class CustomAllreduce:
        def should_custom_ar(self):
            return True


    class QuickAllreduce:
        def should_custom_ar(self):
            return False


    def dispatch(quick: bool):
        if quick:
            return QuickAllreduce
        return CustomAllreduce


    class GroupCoordinator:
        def __init__(self, quick: bool, world: int):
            self.ca_comm: Optional[Any] = None
            if world > 1:
                ca_class = dispatch(quick)
                self.ca_comm = ca_class()

        def method(self):
            return self.ca_comm is not None and self.ca_comm.should_custom_ar()
"""


@FLOW
def test_an_any_annotation_defers_to_what_is_assigned(flow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATLAS_CALLGRAPH_FLOW", flow)
    assert project_calls(ANY_FIELD, "main.GroupCoordinator.method") == {
        "main.GroupCoordinator.method": {"main.CustomAllreduce.should_custom_ar", "main.QuickAllreduce.should_custom_ar"},
    }


def test_union_types_case_without_the_flow_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    """The micro case `union_types` (run there with the flow stage on), with it off."""
    from pathlib import Path

    monkeypatch.setenv("ATLAS_CALLGRAPH_FLOW", "never")
    source = (Path(__file__).parent / "cases" / "union_types" / "main.py").read_text()
    assert project_calls(source, "main.Engine.run") == {
        "main.Engine.run": {"main.Runner.step", "main.Executor.step", "main.Idle.step", "main.make"},
    }
