from __future__ import annotations

from resolve.factkit import acc, asg, cls, fn, imp, meth, module

from analyzer.graphs.queries import state_query, state_to_dict
from analyzer.graphs.state import build_state
from analyzer.resolve import Project


def _facts() -> list:
    sched = module(
        "s/sched.py",
        imports=[],
        classes=[
            cls(
                "Scheduler",
                class_attrs=[asg("MAX", "Scheduler", "8")],
                inst=[
                    asg("self.waiting", "Scheduler.__init__", "deque()", line=3),
                    asg("self.running", "Scheduler.__init__", "[]", "list[int]", line=4),
                ],
            ),
            cls("Sub", "Scheduler"),
            cls("Req", fields=[asg("n", "Req", None, "int")]),
        ],
        functions=[
            meth("Scheduler.__init__"),
            meth("Scheduler.schedule"),
            meth("Sub.step"),
            meth("Req.bump"),
        ],
        accesses=[
            acc("self", "waiting", "assign", "Scheduler.__init__", 3),
            acc("self", "running", "assign", "Scheduler.__init__", 4),
            acc("self", "waiting", "read", "Scheduler.schedule", 10),
            acc("self", "waiting", "mutating_call", "Scheduler.schedule", 11, "popleft"),
            acc("self", "running", "mutating_call", "Scheduler.schedule", 12, "heappush"),
            acc("self", "running", "del", "Sub.step", 20),
            acc("self", "n", "augassign", "Req.bump", 30),
        ],
    )
    engine = module(
        "s/engine.py",
        imports=[],
        classes=[cls("Engine", inst=[asg("self.scheduler", "Engine.__init__", "Scheduler()")])],
        functions=[meth("Engine.__init__"), meth("Engine.add"), fn("poke", "s: 'Scheduler'")],
        accesses=[
            acc("self.scheduler", "waiting", "mutating_call", "Engine.add", 5, "append"),
            acc("s", "running", "item_assign", "poke", 9),
            acc("s", "MAX", "read", "poke", 10),
            acc("s", "extra", "assign", "poke", 11),
        ],
    )
    engine.imports.append(imp("s.sched", "Scheduler"))
    return [sched, engine]


def test_owned_state_and_inside_writers() -> None:
    states = build_state(Project(_facts()))
    st = states["s.sched.Scheduler"]
    assert {"MAX", "waiting", "running"} <= set(st.attrs)
    assert st.attrs["MAX"].origin == "class" and st.attrs["waiting"].origin == "instance"
    waiting = st.attrs["waiting"]
    assert {r.function for r in waiting.reads} == {"s.sched.Scheduler.schedule"}
    kinds = {(w.function, w.kind, w.method, w.outside) for w in waiting.writes}
    assert ("s.sched.Scheduler.__init__", "assign", None, False) in kinds
    assert ("s.sched.Scheduler.schedule", "mutating_call", "popleft", False) in kinds
    # A subclass method writing inherited state is not an outside write.
    running = st.attrs["running"]
    assert ("s.sched.Sub.step", "del", False) in {(w.function, w.kind, w.outside) for w in running.writes}
    assert states["s.sched.Req"].attrs["n"].origin == "field"
    assert [w.kind for w in states["s.sched.Req"].attrs["n"].writes] == ["augassign"]


def test_outside_writes_are_flagged() -> None:
    st = build_state(Project(_facts()))["s.sched.Scheduler"]
    outside = {(name, w.function, w.kind, w.method) for name, w in st.outside_writes}
    assert outside == {
        ("waiting", "s.engine.Engine.add", "mutating_call", "append"),
        ("running", "s.engine.poke", "item_assign", None),
        ("extra", "s.engine.poke", "assign", None),
    }
    assert st.attrs["extra"].origin == "undeclared"
    assert {r.function for r in st.attrs["MAX"].reads} == {"s.engine.poke"}


def test_state_query_by_short_name_and_dict() -> None:
    states = build_state(Project(_facts()))
    st = state_query(states, "Scheduler")
    data = state_to_dict(st)
    names = [a["name"] for a in data["attributes"]]
    assert "waiting" in names and "running" in names
    waiting = next(a for a in data["attributes"] if a["name"] == "waiting")
    assert "s.engine.Engine.add" in waiting["writers"]
    assert waiting["outside_writes"][0]["method"] == "append"


def test_mixin_writes_count_as_inside_the_owner() -> None:
    facts = [
        module(
            "m.py",
            classes=[
                cls("Mixin"),
                cls("Scheduler", "Mixin", inst=[asg("self.waiting_queue", "Scheduler.__init__", "[]")]),
            ],
            functions=[meth("Mixin.resume"), meth("Scheduler.__init__")],
            accesses=[acc("self", "waiting_queue", "mutating_call", "Mixin.resume", 4, "extend")],
        )
    ]
    st = build_state(Project(facts))["m.Scheduler"]
    writes = [(w.function, w.method, w.outside) for w in st.attrs["waiting_queue"].writes]
    assert writes == [("m.Mixin.resume", "extend", False)]
    assert "waiting_queue" not in build_state(Project(facts))["m.Mixin"].attrs


def test_state_graph_export_flags_outside_writers() -> None:
    import json

    from analyzer.graphs.export import to_dot, to_graphml, to_json
    from analyzer.graphs.state import state_graph

    g = state_graph(build_state(Project(_facts())))
    node = "s.sched.Scheduler.waiting"
    assert g.nodes[node]["kind"] == "state" and g.has_edge("s.sched.Scheduler", node)
    assert g.edges["s.engine.Engine.add", node] == {
        "kind": "writes",
        "accesses": ["append"],
        "sites": ["s/engine.py:5"],
        "outside": True,
    }
    assert g.edges["s.sched.Scheduler.schedule", node]["outside"] is False
    assert json.loads(to_json(g))["nodes"] and "color=red" in to_dot(g) and "<graphml" in to_graphml(g)
