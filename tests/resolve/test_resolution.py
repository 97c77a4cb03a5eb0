from __future__ import annotations

from analyzer.index.models import ModuleFacts
from analyzer.resolve import CallRecord, CallResolver, Project

S = "eng.core.scheduler"
KV = "eng.core.kv"


def resolve_all(facts: list[ModuleFacts]) -> dict[tuple[str, int], CallRecord]:
    project = Project(facts)
    resolver = CallResolver(project)
    out: dict[tuple[str, int], CallRecord] = {}
    for f in facts:
        for rec in resolver.resolve_module(f):
            out[(f.module, rec.line)] = rec
    return out


def edges(rec: CallRecord) -> set[tuple[str, str, str]]:
    return {(e.callee, e.kind, e.confidence) for e in rec.edges}


def test_reexports_star_imports_and_all(facts: list[ModuleFacts]) -> None:
    project = Project(facts)
    assert project.lookup_global("eng.Scheduler").name == f"{S}.Scheduler"  # type: ignore[union-attr]
    assert project.lookup_global("eng.core.KVCacheManager").name == f"{KV}.KVCacheManager"  # type: ignore[union-attr]
    assert project.lookup_global("eng.core.missing") is None
    assert project.lookup_global("torch.nn.Module").kind == "external"  # type: ignore[union-attr]


def test_mro_crosses_modules(facts: list[ModuleFacts]) -> None:
    project = Project(facts)
    assert project.hierarchy.mro(f"{S}.Child") == [
        f"{S}.Child",
        f"{S}.Scheduler",
        f"{S}.SchedulerInterface",
        "abc.ABC",
    ]
    assert project.hierarchy.descendants(f"{S}.SchedulerInterface") == [f"{S}.Scheduler", f"{S}.Child"]


def test_c3_diamond() -> None:
    from resolve.factkit import cls, module

    project = Project([module("d.py", classes=[cls("A"), cls("B", "A"), cls("C", "A"), cls("D", "B", "C")])])
    assert project.hierarchy.mro("d.D") == ["d.D", "d.B", "d.C", "d.A"]


def test_constructor_attribute_type_and_inheritance(facts: list[ModuleFacts]) -> None:
    recs = resolve_all(facts)
    assert edges(recs[(S, 3)]) == {(f"{KV}.KVCacheManager.__init__", "constructor", "certain")}
    assert edges(recs[(S, 20)]) == {(f"{KV}.KVCacheManager.allocate_slots", "via-attribute-type", "inferred")}
    assert edges(recs[(S, 21)]) == {(f"{S}.SchedulerInterface.reset", "inherited", "certain")}
    assert edges(recs[(S, 22)]) == {(f"{S}.SchedulerInterface.schedule", "super", "certain")}
    assert edges(recs[(S, 50)]) == {(f"{S}.Scheduler.schedule", "super", "certain")}
    # Constructor-assigned attribute inside the callee's module, and a parameter
    # annotated with a string forward reference.
    assert edges(recs[(KV, 10)]) == {(f"{KV}.BlockPool.get_blocks", "via-attribute-type", "inferred")}
    assert edges(recs[(KV, 11)]) == {(f"{KV}.BlockPool.free", "via-annotation", "inferred")}


def test_partial_attribute_function_optional_and_type_checking(facts: list[ModuleFacts]) -> None:
    recs = resolve_all(facts)
    assert edges(recs[(S, 23)]) == {(f"{S}.Scheduler.helper", "dynamic", "inferred")}
    assert edges(recs[(S, 24)]) == {(f"{S}.module_hook", "via-attribute-type", "inferred")}
    # `Optional[BlockPool]` where BlockPool comes from a TYPE_CHECKING import.
    assert edges(recs[(S, 25)]) == {(f"{KV}.BlockPool.free", "via-annotation", "inferred")}
    # `BlockPool | None` inside a string annotation of a parameter.
    assert edges(recs[(S, 30)]) == {(f"{KV}.BlockPool.free", "via-annotation", "inferred")}
    # `cls(...)` inside a classmethod constructs the class.
    assert edges(recs[(S, 40)]) == {(f"{S}.Scheduler.__init__", "constructor", "certain")}


def test_module_instances_aliases_and_returns(facts: list[ModuleFacts]) -> None:
    recs = resolve_all(facts)
    m = "eng.main"
    assert edges(recs[(m, 1)]) == {(f"{S}.Scheduler.__init__", "constructor", "certain")}
    got = edges(recs[(m, 10)])
    assert (f"{S}.Scheduler.schedule", "method", "inferred") in got
    # Virtual dispatch: the override in the subclass may run too.
    assert (f"{S}.Child.schedule", "method", "inferred") in got
    assert edges(recs[(m, 11)]) == {(f"{S}.Scheduler.make", "direct", "certain")}
    # Local variable bound to a function's annotated return value.
    assert edges(recs[(m, 12)]) == {(f"{S}.Scheduler.helper", "method", "inferred")}
    assert recs[(m, 13)].external == ["os.path.join"]
    assert recs[(m, 14)].external == ["builtins.print"]
    # Return annotation of a classmethod written as a string.
    assert (f"{S}.Scheduler.schedule", "method", "inferred") in edges(recs[(m, 21)])


def test_name_only_matches_are_guesses_with_candidates(facts: list[ModuleFacts]) -> None:
    recs = resolve_all(facts)
    m = "eng.main"
    one = recs[(m, 15)]
    assert edges(one) == {(f"{KV}.KVCacheManager.allocate_slots", "dynamic", "guess")}
    assert one.edges[0].candidates == (f"{KV}.KVCacheManager.allocate_slots",)
    several = recs[(m, 16)]
    assert {e.confidence for e in several.edges} == {"guess"}
    assert set(several.edges[0].candidates) == {
        f"{S}.SchedulerInterface.schedule",
        f"{S}.Scheduler.schedule",
        f"{S}.Child.schedule",
    }
    none = recs[(m, 17)]
    assert none.edges == [] and none.unresolved == "receiver type unknown"


def test_containers_lambdas_and_nested_functions(facts: list[ModuleFacts]) -> None:
    recs = resolve_all(facts)
    m = "eng.main"
    assert edges(recs[(m, 18)]) == {(f"{m}.helper", "dynamic", "inferred"), (f"{m}.run", "dynamic", "inferred")}
    assert recs[(m, 19)].edges == [] and "lambda" in (recs[(m, 19)].unresolved or "")
    assert edges(recs[(m, 20)]) == {(f"{m}.outer.inner", "direct", "certain")}


def test_property_read_is_a_call(facts: list[ModuleFacts]) -> None:
    recs = resolve_all(facts)
    assert edges(recs[(KV, 12)]) == {(f"{KV}.BlockPool.num_free", "via-attribute-type", "inferred")}


def test_every_site_yields_a_record(facts: list[ModuleFacts]) -> None:
    project = Project(facts)
    resolver = CallResolver(project)
    for f in facts:
        recs = resolver.resolve_module(f)
        assert len([r for r in recs]) >= len(f.calls)
        for rec in recs:
            assert rec.edges or rec.external or rec.unresolved


def test_mixin_methods_and_state_come_from_subclasses() -> None:
    from resolve.factkit import asg, call, cls, meth, module

    facts = [
        module(
            "s.py",
            classes=[
                cls("Cache"),
                cls("PPMixin"),
                cls("Scheduler", "PPMixin", inst=[asg("self.tree_cache", "Scheduler.__init__", "Cache()")]),
            ],
            functions=[
                meth("Cache.match_prefix"),
                meth("PPMixin.event_loop_pp"),
                meth("Scheduler.__init__"),
                meth("Scheduler.recv_requests"),
            ],
            calls=[
                call("self.recv_requests", "PPMixin.event_loop_pp", 5),
                call("self.tree_cache.match_prefix", "PPMixin.event_loop_pp", 6),
            ],
        )
    ]
    recs = resolve_all(facts)
    assert edges(recs[("s", 5)]) == {("s.Scheduler.recv_requests", "method", "inferred")}
    assert edges(recs[("s", 6)]) == {("s.Cache.match_prefix", "via-attribute-type", "inferred")}
