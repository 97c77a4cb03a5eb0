"""Every fact kind extracted from one fixture file, with exact lines (see fixtures.py)."""

from __future__ import annotations

import pytest

from analyzer.index.extract import extract_file, module_name
from analyzer.index.models import Class, Function, ModuleFacts
from analyzer.index.source import SourceError

from .fixtures import BROKEN, LATIN1, SCHED


@pytest.fixture(scope="module", params=["fast", "slow"])
def facts(request: pytest.FixtureRequest) -> ModuleFacts:
    # Both locators must produce the same facts: the ast-paired fast path and
    # the libcst PositionProvider fallback.
    return extract_file(SCHED.encode(), "vllm/core/sched.py", fast=request.param == "fast")


def cls(facts: ModuleFacts, qualname: str) -> Class:
    return next(c for c in facts.classes if c.qualname == qualname)


def fn(facts: ModuleFacts, qualname: str) -> Function:
    return next(f for f in facts.functions if f.qualname == qualname)


def test_module_level(facts: ModuleFacts) -> None:
    assert facts.path == "vllm/core/sched.py"
    assert facts.module == "vllm.core.sched"
    assert facts.lines == 86
    assert facts.docstring == "Scheduler module docstring.\n\nMore text."
    assert facts.all_names == ["Scheduler", "Request", "helper"]
    attrs = [(a.target, a.line, a.value, a.annotation) for a in facts.module_attributes]
    assert ("MAX_SEQS", 20, "256", "int") in attrs
    assert ("DEFAULT_NAME", 21, '"sched"', None) in attrs
    assert ("__all__", 17, '["Scheduler", "Request"]', None) in attrs


def test_module_names() -> None:
    assert module_name("vllm/v1/core/sched/scheduler.py") == "vllm.v1.core.sched.scheduler"
    assert module_name("vllm/__init__.py") == "vllm"
    assert module_name("top.py") == "top"


def test_imports(facts: ModuleFacts) -> None:
    got = {(i.module, i.name, i.asname, i.level, i.line, i.scope, i.type_checking) for i in facts.imports}
    assert ("heapq", None, None, 0, 6, "<module>", False) in got
    assert ("collections.abc", None, "cabc", 0, 7, "<module>", False) in got
    assert ("dataclasses", "field", None, 0, 8, "<module>", False) in got
    assert ("core", "block_pool", None, 2, 11, "<module>", False) in got
    assert ("", "utils", "u", 1, 12, "<module>", False) in got
    assert ("vllm.config", "VllmConfig", None, 0, 15, "<module>", True) in got
    assert ("os", None, None, 0, 81, "Scheduler.build", False) in got
    assert len(facts.imports) == 10


def test_classes(facts: ModuleFacts) -> None:
    req = cls(facts, "Request")
    assert (req.line, req.end_line) == (25, 30)
    assert req.decorators == ["dataclass(frozen=True)"]
    assert req.is_dataclass and req.docstring == "One request."
    assert [(f.target, f.line, f.annotation, f.value) for f in req.fields] == [
        ("request_id", 28, "str", None),
        ("prompt", 29, "list[int]", "field(default_factory=list)"),
    ]
    assert [(a.target, a.value) for a in req.class_attributes] == [("priority", "0")]

    sched = cls(facts, "Scheduler")
    assert (sched.line, sched.end_line) == (33, 82)
    assert sched.bases == ["Base"] and sched.keywords == ["metaclass=Meta"]
    assert not sched.is_dataclass and sched.docstring == "Decides what runs next."


def test_instance_attributes(facts: ModuleFacts) -> None:
    got = [(a.target, a.line, a.scope, a.value, a.annotation) for a in cls(facts, "Scheduler").instance_attributes]
    assert got == [
        ("self.config", 37, "Scheduler.__init__", "config", None),
        ("self.waiting", 38, "Scheduler.__init__", "[]", "list[Request]"),
        ("self.running", 39, "Scheduler.__init__", "collections.deque()", None),
        ("self.pool", 40, "Scheduler.__init__", "block_pool.BlockPool(config.num_blocks)", None),
        ("self.a", 41, "Scheduler.__init__", "1", None),
        ("self.b", 41, "Scheduler.__init__", "2", None),
        ("self.inner_state", 65, "Scheduler.schedule.inner", "n", None),  # closure still sees self
    ]


def test_functions(facts: ModuleFacts) -> None:
    names = [f.qualname for f in facts.functions]
    assert names == [
        "Scheduler.__init__",
        "Scheduler.num_waiting",
        "Scheduler.schedule",
        "Scheduler.schedule.inner",
        "Scheduler.make",
        "Scheduler.build",
        "helper",
    ]
    init = fn(facts, "Scheduler.__init__")
    assert (init.line, init.end_line, init.is_method, init.returns) == (36, 41, True, "None")
    assert [(p.name, p.kind, p.annotation, p.default) for p in init.params] == [
        ("self", "positional", None, None),
        ("config", "positional", '"VllmConfig"', None),
        ("pool", "keyword_only", None, "None"),
    ]
    prop = fn(facts, "Scheduler.num_waiting")
    assert prop.is_property and prop.decorators == ["property"] and prop.line == 44

    sched = fn(facts, "Scheduler.schedule")
    assert sched.is_async and (sched.line, sched.end_line) == (47, 72)
    assert sched.docstring == "Pick requests.\n\nLonger text."
    assert [(p.name, p.kind, p.default) for p in sched.params] == [
        ("self", "positional_only", None),
        ("budget", "positional_only", "8"),
        ("args", "var_positional", None),
        ("flag", "keyword_only", "False"),
        ("kwargs", "var_keyword", None),
    ]
    assert sched.returns == "list"

    inner = fn(facts, "Scheduler.schedule.inner")
    assert not inner.is_method and (inner.line, inner.end_line) == (64, 66)
    assert fn(facts, "Scheduler.make").is_staticmethod
    build = fn(facts, "Scheduler.build")
    assert build.is_classmethod and not build.is_staticmethod
    assert not fn(facts, "helper").is_method and fn(facts, "helper").line == 85


def test_local_assignments(facts: ModuleFacts) -> None:
    got = {(a.target, a.line, a.scope, a.value) for a in facts.assignments}
    assert ("out", 51, "Scheduler.schedule", "[]") in got
    assert ("req", 53, "Scheduler.schedule", "self.waiting.pop()") in got
    assert ("fh", 68, "Scheduler.schedule", 'open("f")') in got  # with ... as
    assert ("data", 69, "Scheduler.schedule", "fh.read()") in got
    assert ("n", 70, "Scheduler.schedule", "len(out)") in got  # walrus
    assert ("lazy", 80, "Scheduler.build", "cls(cfg)") in got
    # class- and module-level names are not local bindings
    assert not {a.target for a in facts.assignments} & {"MAX_SEQS", "priority", "request_id"}


def test_call_sites(facts: ModuleFacts) -> None:
    calls = {(c.callee, c.line): c for c in facts.calls}
    free = calls[("self.pool.free", 56)]
    assert (free.col, free.scope, free.args, free.keywords) == (12, "Scheduler.schedule", ["req.request_id", "budget"], [])
    bp = calls[("block_pool.BlockPool", 40)]
    assert bp.scope == "Scheduler.__init__" and bp.args == ["config.num_blocks"]
    assert calls[("dataclass", 24)].keywords == ["frozen"]
    assert calls[("field", 29)].scope == "Request"
    assert calls[("helper", 66)].scope == "Scheduler.schedule.inner"
    assert calls[("Scheduler", 76)].args == ["None"]
    assert ("heapq.heappush", 55) in calls and ("open", 68) in calls and ("len", 70) in calls


def test_attribute_accesses(facts: ModuleFacts) -> None:
    got = {(a.base, a.attr, a.kind, a.line, a.scope, a.method) for a in facts.accesses}
    s = "Scheduler.schedule"
    expected = {
        ("self", "config", "assign", 37, "Scheduler.__init__", None),
        ("self", "waiting", "assign", 38, "Scheduler.__init__", None),
        ("config", "num_blocks", "read", 40, "Scheduler.__init__", None),
        ("self", "waiting", "read", 52, s, None),
        ("self", "waiting", "mutating_call", 53, s, "pop"),
        ("self", "running", "mutating_call", 54, s, "append"),
        ("self", "queue", "mutating_call", 55, s, "heappush"),
        ("heapq", "heappush", "read", 55, s, None),
        ("self.pool", "free", "read", 56, s, None),
        ("self", "pool", "read", 56, s, None),
        ("self", "stats", "item_assign", 57, s, None),
        ("self", "count", "augassign", 58, s, None),
        ("self", "cache", "del", 59, s, None),
        ("self", "table", "item_del", 60, s, None),
        ("self.x", "y", "assign", 61, s, None),
        ("self", "x", "read", 61, s, None),
        ("self", "requests", "mutating_call", 62, s, "append"),
        ("self", "inner_state", "assign", 65, "Scheduler.schedule.inner", None),
        ("self", "a", "assign", 41, "Scheduler.__init__", None),
    }
    assert expected <= got, expected - got
    # `self.waiting.pop` is recorded as a mutation of self.waiting, not as a read of `.pop`
    assert not any(a.attr in ("pop", "append") for a in facts.accesses)


def test_latin1_coding_cookie() -> None:
    facts = extract_file(LATIN1.encode("latin-1"), "pkg/latin.py")
    assert facts.docstring == "Café."
    assert [(a.target, a.value) for a in facts.module_attributes] == [("NAME", '"été"')]
    assert [(c.callee, c.line) for c in facts.calls] == [("NAME.upper", 7)]


def test_utf8_bom_and_non_ascii_columns() -> None:
    src = "\ufeffx = 'é'; y = f(x)\n"
    facts = extract_file(src.encode("utf-8"), "bom.py")
    (call,) = facts.calls
    assert (call.callee, call.line, call.col) == ("f", 1, 13)  # characters (BOM dropped), not bytes


def test_syntax_error_is_reported() -> None:
    with pytest.raises(SourceError, match="ParserSyntaxError"):
        extract_file(BROKEN.encode(), "broken.py")


def test_undecodable_is_reported() -> None:
    with pytest.raises(SourceError, match="UnicodeDecodeError"):
        extract_file(b"x = '\xff\xfe\xfa'\n", "bad.py")


def test_crlf_and_semicolons() -> None:
    facts = extract_file(b"a = 1; b = g(a)\r\nclass K:\r\n    def m(self):\r\n        self.v = b\r\n", "crlf.py")
    assert [(c.callee, c.line) for c in facts.calls] == [("g", 1)]
    assert [(a.target, a.line) for a in facts.module_attributes] == [("a", 1), ("b", 1)]
    assert [(a.target, a.line) for a in facts.classes[0].instance_attributes] == [("self.v", 4)]


def test_fast_parsing_restores_libcst_and_gc() -> None:
    import gc

    import libcst as cst

    from analyzer.index.extract import fast_parsing

    before = cst.CSTNode.__post_init__
    assert gc.isenabled()
    with fast_parsing():
        assert not gc.isenabled() and cst.CSTNode.__post_init__ is not before
        facts = extract_file(SCHED.encode(), "s.py")
    assert gc.isenabled() and cst.CSTNode.__post_init__ is before
    assert facts == extract_file(SCHED.encode(), "s.py")  # same facts either way
    with pytest.raises(cst.CSTValidationError):  # validation is back for hand-built nodes
        cst.Tuple(elements=[], lpar=[], rpar=[])
