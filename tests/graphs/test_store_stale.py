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
from analyzer.graphs.state import Access, ClassState, StateIndex, how
from analyzer.graphs.store import SCHEMA, Graphs, _schema, directory_target, load_graphs
from analyzer.settings import Settings

CASES = Path(__file__).parent / "state_cases"


def _old_row(st: ClassState) -> tuple[object, ...]:
    """A class's state laid out as another version might have: each access with
    fewer fields, in another order (`detail` where `method` now is, `via` where
    `outside` is)."""
    return (st.cls, st.path, st.line, [
        (a.name, a.origin, a.line, a.annotation,
         [(x.function, x.kind, x.site, {"loop": x.detail}, x.via) for x in a.reads],
         [(x.function, x.kind, x.site, {"loop": x.detail}, x.via) for x in a.writes],
         a.created)
        for a in st.attrs.values()
    ], st.inherited)


def _stale_state(fresh: StateIndex, monkeypatch: pytest.MonkeyPatch) -> StateIndex:
    """The fresh index with every class re-pickled in `_old_row`'s layout."""
    states = {name: fresh[name] for name in fresh}
    monkeypatch.setattr(state_mod, "_state_row", _old_row)
    stale = StateIndex(states)
    monkeypatch.undo()
    return stale


def _well_typed(a: Access) -> bool:
    return isinstance(a.outside, bool) and all(
        isinstance(getattr(a, k), str) for k in ("function", "kind", "site", "via", "by")
    ) and all(isinstance(getattr(a, k), str | None) for k in ("method", "detail", "writer_class"))


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
    # The stale entry really is the bug: read as it stands, a class's accesses come
    # out with other fields' values in their slots (long after load_graphs returned).
    read_as_is = pickle.loads(cached.read_bytes()).state["mixins.Sched"].attrs["waiting"].writes
    assert read_as_is and not any(_well_typed(w) for w in read_as_is)

    again = load_graphs(settings, target)
    assert again.meta["schema"] == SCHEMA
    writes = again.state["mixins.Sched"].attrs["waiting"].writes
    assert writes and all(_well_typed(w) for w in writes)
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
