"""The state graph on small class hierarchies, one module per rule
(tests/graphs/state_cases), and on the reference engine's own hand labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.graphs.queries import attr_query, attr_to_dict
from analyzer.graphs.state import ClassState, how
from analyzer.graphs.state_eval import load_expectations, score, states_of_directory

CASES = Path(__file__).parent / "state_cases"
ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "benchmarks" / "state_labels"
EXPECTED = load_expectations(CASES / "expected.toml")
RULES = sorted({e["rule"] for e in EXPECTED})
P = "statecases."


@pytest.fixture(scope="module")
def states() -> dict[str, ClassState]:
    return states_of_directory(CASES)


@pytest.mark.parametrize("rule", RULES)
def test_rule_finds_exactly_the_expected_writers(states: dict[str, ClassState], rule: str) -> None:
    s = score(states, [e for e in EXPECTED if e["rule"] == rule], P)[rule]
    assert s.misses == [] and s.extras == [], (s.misses, s.extras)
    assert s.tp > 0


def test_reference_engine_hand_labels() -> None:
    engine = states_of_directory(ROOT, "reference_engine")
    labels = load_expectations(LABELS / "reference_engine.toml")
    s = score(engine, labels, rule_key="rules")["all"]
    assert s.misses == [] and s.extras == [], (s.misses, s.extras)
    assert s.tp == sum(len(e["writers"]) for e in labels)


def _writes(states: dict[str, ClassState], cls: str, attr: str, func: str) -> list:
    return [w for w in states[P + cls].attrs[attr].writes if w.function == P + func]


def test_mixins_come_from_the_class_hierarchy_not_names(states: dict[str, ClassState]) -> None:
    from analyzer.graphs.inheritance import Inheritance
    from analyzer.graphs.state_eval import project_of_directory

    inh = Inheritance(project_of_directory(CASES))
    c = P + "composed.engine."
    # Constructor-less classes with subclasses; a `...Mixin` with a constructor is a base,
    # a constructor-less class nothing inherits is a plain class.
    assert {c + "QueueOps", c + "CounterOps", c + "AccelLoopMixin", P + "composed.accel_ops.AccelLoopMixin"} <= inh.mixins
    assert not {c + "LoggingMixin", c + "Stats", c + "Engine", c + "Worker"} & inh.mixins
    # The real mixin, bound to the stub's name in another branch, runs on Engine's instances.
    assert inh.is_subclass(c + "Engine", P + "composed.accel_ops.AccelLoopMixin")
    assert c + "Engine" in inh.descendants(P + "composed.accel_ops.AccelLoopMixin")
    # A single plainly named constructor-less base: the counter it resets is Worker's.
    (w,) = _writes(states, "composed.engine.Worker", "done", "composed.engine.CounterOps.reset")
    assert (w.by, w.outside, w.writer_class) == ("mixin", False, c + "CounterOps")
    assert states[c + "CounterOps"].inherited == {"done": [c + "Worker"]}
    (w,) = _writes(states, "composed.engine.Engine", "running", "composed.accel_ops.AccelLoopMixin.accel_loop")
    assert (w.by, w.outside) == ("mixin", False)
    assert "running" not in states[P + "composed.accel_ops.AccelLoopMixin"].attrs  # owns nothing
    # A base with its own constructor owns what it sets up.
    assert {w.by for w in states[c + "LoggingMixin"].attrs["lines"].writes} == {"owner"}


def test_each_write_keeps_its_kind_how_and_site(states: dict[str, ClassState]) -> None:
    # A mixin's method writing the composite's queue: attributed to the mixin, owner named.
    (w,) = _writes(states, "mixins.Sched", "waiting", "mixins.QueueMixin.requeue")
    assert (w.kind, w.method, w.by, w.outside, w.writer_class) == (
        "mutating_call", "append", "mixin", False, P + "mixins.QueueMixin")
    assert w.site == "statecases/mixins.py:8"
    assert "waiting" not in states[P + "mixins.QueueMixin"].attrs  # the mixin owns nothing
    # A subclass override writes the base's counter; the subclass's table points to the owner.
    (w,) = _writes(states, "subclasses.Cache", "evictable", "subclasses.HiCache.lock")
    assert (w.kind, w.by) == ("augassign", "subclass")
    assert states[P + "subclasses.HiCache"].inherited == {"evictable": [P + "subclasses.Cache"]}
    # An element fetched from a typed mapping.
    (w,) = _writes(states, "elements.Req", "status", "elements.Sched.start")
    assert (w.kind, w.via, w.by, w.outside) == ("assign", "element", "outside", True)
    assert w.detail == "req = self.requests[rid]"
    assert how(w) == "assigns on an element fetched from a container"
    (w,) = _writes(states, "elements.Req", "status", "elements.Sched.finish_all")
    assert w.detail == "for req in self.running"
    # A user-defined mutating method, found through a helper (push -> _push_impl).
    (w,) = _writes(states, "mutating_methods.BlockPool", "free", "mutating_methods.BlockPool.give_back")
    assert (w.kind, w.method, how(w)) == ("mutating_call", "push", "calls push()")
    # A method handing out an attribute, then a call on the alias.
    (w,) = _writes(states, "aliases.Sched", "waiting", "aliases.Sched.admit")
    assert (w.kind, w.method, w.via, w.detail) == ("mutating_call", "pop", "alias", "queue = self._pick(False)")
    (w,) = _writes(states, "aliases.Sched", "running", "aliases.Sched.replace_head")
    assert (w.kind, w.via) == ("item_assign", "alias")
    # A store into the attribute's own field writes both.
    (w,) = _writes(states, "fields.Sched", "running_batch", "fields.Sched.pause")[:1]
    assert (w.kind, w.method, how(w)) == ("field_write", "reqs", "sets .reqs")
    # Passed by keyword to a parameter the callee changes, directly or through another call.
    (w,) = _writes(states, "keywords.Sched", "waiting", "keywords.Sched.admit")
    assert (w.kind, w.method, how(w)) == ("mutating_call", "drain", "calls drain()")
    (w,) = _writes(states, "keywords.Sched", "waiting", "keywords.Sched.admit_via")
    assert (w.kind, w.method) == ("mutating_call", "forward")
    assert _writes(states, "keywords.Sched", "waiting", "keywords.Sched.head") == []
    # Passed to a function that sorts its argument in place (through a static helper).
    (w,) = _writes(states, "arguments.Sched", "waiting", "arguments.Sched.order")
    assert (w.kind, w.method) == ("mutating_call", "calc_priority")
    (w,) = _writes(states, "arguments.Sched", "waiting", "arguments.Sched.shuffle")
    assert (w.kind, w.method) == ("mutating_call", "shuffle")


def test_attribute_story(states: dict[str, ClassState]) -> None:
    st, name = attr_query(states, "aliases.Sched.waiting", None)
    data = attr_to_dict(st, name)
    assert data["created"] == ["statecases/aliases.py:6  self.waiting: list[int] = []  (in Sched.__init__)"]
    assert P + "aliases.Sched.finish" in data["writers"] and P + "aliases.Sched.count" in data["readers"]
    assert {w["via"] for w in data["writes"]} == {"direct", "alias"}


def test_cli_state_groups_writers_and_tells_one_attribute(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["--cache-dir", str(tmp_path / "cache")]
    target = str(CASES / "statecases")
    result = runner.invoke(app, [*base, "state", target, "mixins.Sched"])
    assert result.exit_code == 0, result.output
    flat = "".join(result.output.split())  # the table wraps cells at the runner's width
    assert "callsappend()" in flat and "QueueMixin.requeue[mixin]" in flat
    result = runner.invoke(app, [*base, "state", target, "aliases.Sched", "--attr", "waiting"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "created" in out and "statecases/aliases.py:6" in out
    assert "calls pop() through a local alias" in out and "queue = self._pick(False)" in out
    assert "read by" in out and "count" in out
    result = runner.invoke(app, [*base, "state", target, "aliases.Sched.waiting", "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["attribute"] == "waiting"
    result = runner.invoke(app, [*base, "state", target, "aliases.Sched", "--attr", "nope"])
    assert result.exit_code == 2 and "owns no attribute 'nope'" in result.output
    result = runner.invoke(app, [*base, "state", target, "subclasses.HiCache", "--attr", "evictable"])
    assert result.exit_code == 2 and "subclasses.Cache does" in result.output
