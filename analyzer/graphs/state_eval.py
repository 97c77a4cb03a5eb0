"""Scoring the state graph against hand-written expectations: which functions
write (and read) an attribute, per rule. Used by `benchmarks/state_accuracy.py`
and the tests; the expectations live in TOML files
(`tests/graphs/state_cases/expected.toml`, `benchmarks/state_labels/*.toml`)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.graphs.state import ClassState, build_state
from analyzer.graphs.state_source import SourceReader
from analyzer.index.extract import extract_file
from analyzer.resolve import CallResolver, Project


@dataclass(slots=True)
class Score:
    rule: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    misses: list[str] = field(default_factory=list)  # `Class.attr: function`
    extras: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def load_expectations(path: Path) -> list[dict]:
    data = tomllib.loads(path.read_text())
    return list(data.get("expect", data.get("attr", [])))


def found(states: Mapping[str, ClassState], cls: str, attr: str, what: str) -> set[str]:
    st = states.get(cls)
    if st is None or attr not in st.attrs:
        return set()
    accesses = st.attrs[attr].writes if what == "writers" else st.attrs[attr].reads
    return {a.function for a in accesses}


def score(states: Mapping[str, ClassState], expectations: Iterable[dict], prefix: str = "",
          rule_key: str = "rule") -> dict[str, Score]:
    """Per rule: writers (or readers) found against expected, names under `prefix`.
    An expectation listing several rules counts toward each of them."""
    out: dict[str, Score] = {}
    for e in expectations:
        rules = e[rule_key] if isinstance(e.get(rule_key), list) else [e.get(rule_key, "all")]
        what = "readers" if "readers" in e else "writers"
        cls = prefix + e["cls"]
        expected = {prefix + f for f in e[what]}
        got = found(states, cls, e["attr"], what)
        for rule in [*rules, "all"] if "all" not in rules else rules:
            s = out.setdefault(rule, Score(rule))
            s.tp += len(got & expected)
            s.fp += len(got - expected)
            s.fn += len(expected - got)
            if rule != "all":
                s.misses += [f"{e['cls']}.{e['attr']}: {f}" for f in sorted(expected - got)]
                s.extras += [f"{e['cls']}.{e['attr']}: {f}" for f in sorted(got - expected)]
    return out


def project_of_directory(root: Path, package: str | None = None) -> Project:
    """Index every .py under `root` (or under `root/package`), names relative to `root`."""
    files = sorted((root / package if package else root).rglob("*.py"))
    return Project([extract_file(p.read_bytes(), p.relative_to(root).as_posix()) for p in files])


def states_of_directory(root: Path, package: str | None = None) -> dict[str, ClassState]:
    """The state graph of every .py under `root` (or under `root/package`)."""
    project = project_of_directory(root, package)
    return build_state(project, CallResolver(project), SourceReader(root))
