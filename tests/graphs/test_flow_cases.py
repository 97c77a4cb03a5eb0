"""The function-value flow suite (tests/graphs/flow_cases): the static graph
per category against hand-written expectations, and every expectation checked
against what Python really runs (each case program executed under a profiler)."""

from __future__ import annotations

import pytest
from graphs.flow_suite import (
    CASE_IDS,
    FLOW_CASES,
    actual,
    expected,
    format_scores,
    score_suite,
    traced_edges,
    untraced,
)

# Cases whose modules are not all in the case folder (`ext` stands for an
# installed package), so they cannot run.
_NOT_RUNNABLE = {c for c in CASE_IDS if c.startswith("external/")}


def _edges(graph: dict[str, list[str]]) -> set[tuple[str, str]]:
    return {(k, v) for k, vs in graph.items() for v in vs}


@pytest.mark.parametrize("case_id", sorted(set(CASE_IDS) - _NOT_RUNNABLE))
def test_expectation_is_what_python_runs(case_id: str) -> None:
    modules = {p.stem for p in (FLOW_CASES / case_id).glob("*.py")}
    exp = {(a, b) for a, b in _edges(expected(case_id)) if b.split(".")[0] in modules}
    ran = traced_edges(case_id)
    assert ran - exp == set(), "the run took calls the expectation lacks"
    assert exp - ran == untraced(case_id), "expected calls the run did not take (list them in untraced.json)"


def test_every_node_is_a_key() -> None:
    for case_id in CASE_IDS:
        missing = set(expected(case_id)) - set(actual(case_id))
        assert {k for k in missing if not k.startswith(("<", "ext."))} == set(), case_id


def test_flow_suite_scores() -> None:
    scores = score_suite()
    print("\nfunction-value flow suite (" + str(len(CASE_IDS)) + " cases)")
    print("\n".join(format_scores(scores)))
    tp = sum(t for t, _, _ in scores.values())
    fp = sum(f for _, f, _ in scores.values())
    fn = sum(n for _, _, n in scores.values())
    assert len(scores) >= 14 and len(CASE_IDS) >= 60
    assert tp / (tp + fp) >= 0.98 and tp / (tp + fn) >= 0.97
    for cat, (t, _f, n) in scores.items():
        assert t / (t + n) >= 0.9, f"{cat}: recall below 0.9"


_JARVIS_ROUND = [
    "operators/with_constructed",
    "imports/star_last_wins",
    "imports/import_rebinds",
    "assignments/alias_of_rebound",
    "assignments/swap_names",
    "classes/conditional_receiver",
    "assignments/loop_else",
    "operators/with_enter_value",
    "classes/property_called",
    "classes/declared_outside_type",
    "classes/super_past_builtin",
]


@pytest.mark.parametrize("case_id", _JARVIS_ROUND)
def test_jarvis_round_cases_exact(case_id: str) -> None:
    """`with Resource() as r:` (a constructed object, in a function or at module
    level) runs its `__enter__`/`__exit__`; of two `from m import *` giving one
    name, the later binds it; an import over an assigned name is what a call
    after it reaches; `alias = name` holds name's binding at that line, and
    `a, b = b, a` swaps them; `x.m()` on a rebound `x` reaches the classes of
    every assignment that reaches it (both arms of an `if`), and a loop with no
    `break` always runs its `else`; `with cm as x` binds x to what `cm.__enter__`
    returns (a `@contextmanager` call's value is what it yields, not entered again);
    calling a property's value (`self.state(restore=True)`) runs the getter, then
    what it returns; a project object assigned where an outside type is declared
    (`cache: MutableMapping[...] = LRUCache(50)`) is that object; `super()` goes
    past a builtin base that does not define the name (rules found by the Jarvis
    micro-benchmark and its round)."""
    assert _edges(actual(case_id)) == _edges(expected(case_id))


def test_a_loop_runs_its_else_unless_it_breaks() -> None:
    graph = actual("assignments/loop_else")
    assert graph["main.no_break"] == ["main.third"]
    # What follows the loop: its `else`, or the state at a `break` (not the state before the loop).
    assert set(graph["main.with_break"]) == {"main.second", "main.third"}


_PRECISION_ROUND = [
    "classes/property_setter_return",
    "classes/isinstance_narrowing",
    "external/returned_instance",
]


@pytest.mark.parametrize("case_id", _PRECISION_ROUND)
def test_precision_round_cases_exact(case_id: str) -> None:
    """Reading a property is its getter's value (not what the setter returns); inside
    `if isinstance(x, C):` x is a C; a function whose every return is one outside
    class's object types its result (rules found on Jarvis's macro-benchmark)."""
    assert _edges(actual(case_id)) == _edges(expected(case_id))


@pytest.mark.parametrize("case_id", ["args/default_always_passed", "args/default_kept"])
def test_a_default_flows_only_where_a_call_may_omit_it(case_id: str) -> None:
    """A parameter every seen call names never holds its default (`run(step=other)`,
    `Worker(main_step)`, `Tool.use(t, x)`, a staticmethod); the default is kept where a
    call omits it, the function is handed around as a value, the class has a subclass
    or makes itself with `cls()`, or a call passes `*args` (rule found on Jarvis's
    micro-benchmark: `new_arguments/*_default_args`, `kwargs/chained_call`)."""
    assert _edges(actual(case_id)) == _edges(expected(case_id))


def test_no_builtin_method_a_builtin_type_lacks() -> None:
    graph = actual("builtins/no_such_builtin_attribute")
    assert not any(c.startswith(("<builtin>.None.", "<**PyTuple**>.")) for cs in graph.values() for c in cs)


def test_isinstance_guard_holds_only_without_a_store() -> None:
    from analyzer.resolve.calls import _isinstance_guards

    guards = _isinstance_guards(
        "def f(x, y):\n"
        "    if isinstance(x, A):\n"
        "        x.m()\n"
        "    if isinstance(y, (A, b.B)) and y:\n"
        "        y = other()\n"
        "        y.m()\n"
        "    if ready and isinstance(x, A):\n"
        "        x.n()\n"
    )
    assert [(g.first, g.last, g.types) for g in guards["x"]] == [(3, 3, ("A",)), (8, 8, ("A",))]
    assert "y" not in guards


_JSONSCHEMA_ROUND = [
    "classes/class_body_closure",
    "dicts/dict_copy",
    "classes/protocol_implementer",
]


@pytest.mark.parametrize("case_id", _JSONSCHEMA_ROUND)
def test_jsonschema_round_cases_exact(case_id: str) -> None:
    """A class body reads its enclosing function's names (a table handed to a class
    factory); `dict(...)` copies a mapping's values, pairs' second items and
    keywords; an object a Protocol types is one of a class implementing it, so its
    methods, constructor and attributes are that class's, never the protocol's own
    stubs, and a call on a receiver of unknown type does not guess a stub either
    (rules found on jsonschema's traced run, `benchmarks/library_trace.py`)."""
    assert _edges(actual(case_id)) == _edges(expected(case_id))


def test_no_protocol_stub_is_an_edge() -> None:
    graph = actual("classes/protocol_implementer")
    assert not any(c.startswith("main.Step.") for cs in graph.values() for c in cs)
    assert graph["main.anything"] == ["main.Doubler.run"]  # a guess by name, the stub left out


def test_per_site_bindings_hold_inside_methods() -> None:
    """`per_site` in a class's methods: `x = f1; x(); x = f2` calls only f1, and a receiver
    bound in both arms of an `if` reaches both classes (the sites of an indented method
    were once looked up at the wrong columns, so each fell back to the name's whole set)."""
    assert _edges(actual("assignments/per_site_method")) == _edges(expected("assignments/per_site_method"))


def test_a_tuple_slot_of_a_declared_container_is_its_declared_type() -> None:
    """`self._body[i][1]` with `_body: list[tuple[Key, Item]]` is an `Item` (tomlkit's
    `Container.unwrap`): no guess by name reaches an unrelated class's `unwrap`."""
    assert _edges(actual("lists/tuple_slot")) == _edges(expected("lists/tuple_slot"))


def test_a_builtin_named_method_on_a_receiver_named_after_a_class() -> None:
    """`token.match(...)` on an untyped parameter: `match` is a builtin's name too (no guess
    by name), but a receiver named after a project class that has it (`token` -> `Token`,
    `token_list` -> `TokenList`) reaches that class's method and its subclasses' overrides;
    `regex.match`, `d.get` stay unresolved (sqlparse's traced run, `benchmarks/library_trace.py`)."""
    assert _edges(actual("classes/named_receiver")) == _edges(expected("classes/named_receiver"))


def test_a_metaclass_call_makes_the_object() -> None:
    """Calling a class whose metaclass defines `__call__` runs that `__call__`, and the
    class's `__new__` / `__init__` run from it (through `type.__call__` or `super()`),
    only for the classes the program calls, not every class the metaclass makes."""
    assert _edges(actual("classes/metaclass_call")) == _edges(expected("classes/metaclass_call"))
