"""Micro-benchmark: tiny programs with hand-written expected call graphs (PyCG
format), one per resolution pattern. Prints precision / recall per case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.graphs.pycg import pycg_callgraph, score
from analyzer.index.extract import extract_file
from analyzer.index.models import ModuleFacts

CASES = Path(__file__).parent / "cases"
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if (p / "callgraph.json").is_file())


def case_facts(case: Path) -> list[ModuleFacts]:
    return [
        extract_file(p.read_bytes(), p.relative_to(case).as_posix())
        for p in sorted(case.rglob("*.py"))
    ]


def run_case(name: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    case = CASES / name
    expected = json.loads((case / "callgraph.json").read_text())
    return expected, pycg_callgraph(case_facts(case))


@pytest.mark.parametrize("name", CASE_NAMES)
def test_case_matches_expected(name: str) -> None:
    expected, actual = run_case(name)
    assert sorted(actual) == sorted(expected), "every function and module is a key"
    missing = {k: sorted(set(v) - set(actual.get(k, []))) for k, v in expected.items()}
    extra = {k: sorted(set(v) - set(expected.get(k, []))) for k, v in actual.items()}
    assert {k: v for k, v in missing.items() if v} == {}, "missed edges"
    assert {k: v for k, v in extra.items() if v} == {}, "spurious edges"


def test_micro_benchmark_summary() -> None:
    tp = fp = fn = 0
    lines = []
    for name in CASE_NAMES:
        expected, actual = run_case(name)
        t, f, n = score(expected, actual)
        tp, fp, fn = tp + t, fp + f, fn + n
        p = t / (t + f) if t + f else 1.0
        r = t / (t + n) if t + n else 1.0
        lines.append(f"  {name:24} precision {p:6.1%}  recall {r:6.1%}")
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    print(f"\ncall-graph micro-benchmark ({len(CASE_NAMES)} cases)")
    print("\n".join(lines))
    print(f"  {'TOTAL':24} precision {precision:6.1%}  recall {recall:6.1%}  ({tp} edges right, {fp} extra, {fn} missed)")
    assert len(CASE_NAMES) >= 20
    assert precision >= 0.95 and recall >= 0.95
