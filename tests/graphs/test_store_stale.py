"""A cache entry written by another version of the analyzer (a shared cache used by
trees whose pickled classes differ) is rebuilt, never read field by field into the
wrong slots: `how(access)` once crashed in `atlas report` on an `Access` whose
`via` held another field's value."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import pytest

import analyzer.graphs.state as state_mod
from analyzer.graphs.state import StateIndex, how
from analyzer.graphs.store import SCHEMA, Graphs, _schema, directory_target, load_graphs
from analyzer.settings import Settings

CASES = Path(__file__).parent / "state_cases"


@dataclass(frozen=True, slots=True)
class _OldAccess:
    """An `Access` laid out as another version might have: frozen (restored by
    position) with its fields in another order."""

    function: str
    kind: str
    site: str
    detail: dict
    via: str = "direct"


_OldAccess.__module__, _OldAccess.__qualname__ = "analyzer.graphs.state", "Access"


def _stale_state(fresh: StateIndex, monkeypatch: pytest.MonkeyPatch) -> StateIndex:
    """The fresh index with every access re-pickled as `_OldAccess` under `Access`'s name."""
    states = {name: fresh[name] for name in fresh}
    monkeypatch.setattr(state_mod, "Access", _OldAccess)  # pickle finds the class by name
    for st in states.values():
        for attr in st.attrs.values():
            attr.writes = [_OldAccess(a.function, a.kind, a.site, {"loop": a.detail}) for a in attr.writes]
            attr.reads = [_OldAccess(a.function, a.kind, a.site, {"loop": a.detail}) for a in attr.reads]
    stale = StateIndex(states)
    monkeypatch.undo()
    return stale


@pytest.mark.parametrize("claims_current_schema", [False, True])
def test_a_mismatched_entry_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       claims_current_schema: bool) -> None:
    settings = Settings(cache_dir=tmp_path)
    target = directory_target(CASES / "statecases", as_package=False)
    fresh = load_graphs(settings, target)
    assert fresh.meta["schema"] == SCHEMA
    cached = tmp_path / "graphs" / target.key / "graphs.pickle"

    meta = dict(fresh.meta)
    if not claims_current_schema:
        meta.pop("schema")  # as written before entries recorded their schema
    stale = Graphs(fresh.calls, _stale_state(load_graphs(settings, target).state, monkeypatch), meta)
    cached.write_bytes(pickle.dumps(stale))
    # The stale entry really is the bug: read as it stands, the state of a class fails
    # to unpickle when first asked for (long after load_graphs returned), or worse.
    with pytest.raises((pickle.UnpicklingError, TypeError, AttributeError)):
        how(pickle.loads(cached.read_bytes()).state["mixins.Sched"].attrs["waiting"].writes[0])

    again = load_graphs(settings, target)
    assert again.meta["schema"] == SCHEMA
    writes = again.state["mixins.Sched"].attrs["waiting"].writes
    assert writes and all(isinstance(w.via, str) for w in writes)
    assert {how(w) for w in writes} >= {"calls append()"}
    assert pickle.loads(cached.read_bytes()).meta["schema"] == SCHEMA  # the entry was rewritten


def test_the_schema_follows_the_pickled_fields() -> None:
    @dataclass(slots=True)
    class A:
        x: str
        y: str

    @dataclass(slots=True)
    class B:  # same fields, another order
        y: str
        x: str

    B.__qualname__ = A.__qualname__
    assert _schema(A) != _schema(B)
    assert _schema(A) == _schema(A)
