from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app

CASES = Path(__file__).parent / "cases"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A package directory built from two micro-benchmark cases."""
    pkg = tmp_path / "eng"
    shutil.copytree(CASES / "attr_constructor", pkg)
    (pkg / "__init__.py").write_text("")
    for f in pkg.glob("*.py"):  # make the imports package-relative
        f.write_text(f.read_text().replace("from pool import", "from .pool import"))
    return pkg


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--cache-dir", str(tmp_path / "cache"), *args])
    return result.exit_code, result.output


def test_calls_json_and_terminal(project: Path, tmp_path: Path) -> None:
    code, out = run(tmp_path, "calls", str(project), "Scheduler.schedule", "--depth", "2", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["symbol"] == "eng.main.Scheduler.schedule"
    pairs = {(e["caller"], e["callee"], e["depth"]) for e in data["edges"]}
    assert ("eng.main.Scheduler.schedule", "eng.pool.KVCacheManager.allocate_slots", 1) in pairs
    assert ("eng.pool.KVCacheManager.allocate_slots", "eng.pool.BlockPool.allocate", 2) in pairs
    code, out = run(tmp_path, "calls", str(project), "allocate_slots", "--reverse")
    assert code == 0 and "Scheduler.schedule" in out


def test_path_state_graph(project: Path, tmp_path: Path) -> None:
    code, out = run(tmp_path, "path", str(project), "Scheduler.schedule", "BlockPool.allocate", "--json")
    assert code == 0, out
    path = json.loads(out)["paths"][0]
    assert [s["callee"] for s in path] == ["eng.pool.KVCacheManager.allocate_slots", "eng.pool.BlockPool.allocate"]
    code, out = run(tmp_path, "state", str(project), "KVCacheManager", "--json")
    assert code == 0, out
    attrs = {a["name"]: a for a in json.loads(out)["attributes"]}
    assert attrs["block_pool"]["writers"] == ["eng.pool.KVCacheManager.__init__"]
    assert attrs["block_pool"]["readers"] == ["eng.pool.KVCacheManager.allocate_slots"]
    for fmt, marker in (("json", '"edges"'), ("dot", "digraph"), ("graphml", "<graphml")):
        code, out = run(tmp_path, "graph", str(project), "--format", fmt)
        assert code == 0 and marker in out


def test_unresolved_sites_are_listed(project: Path, tmp_path: Path) -> None:
    code, out = run(tmp_path, "graph", str(project), "--unresolved", "--json")
    assert code == 0, out
    records = json.loads(out)
    # `list(range(n))` and friends resolve as builtins; nothing here is left unknown.
    assert all({"caller", "site", "expr", "reason"} <= set(r) for r in records)
    code, out = run(tmp_path, "graph", str(project), "--stats", "--json")
    assert json.loads(out)["unresolved_sites"] == len(records)


def test_callgraph_pycg(tmp_path: Path) -> None:
    code, out = run(tmp_path, "callgraph", str(CASES / "imports_alias"), "--format", "pycg")
    assert code == 0, out
    expected = json.loads((CASES / "imports_alias" / "callgraph.json").read_text())
    assert json.loads(out) == expected


@pytest.mark.parametrize("case", ["operators/subscript", "assignments/per_site"])
def test_callgraph_pycg_reads_function_bodies(tmp_path: Path, case: str) -> None:
    """The CLI resolves what only a function's body says (an item store calling
    `__setitem__`, a name rebound between two calls) as the library path does."""
    folder = Path(__file__).parent / "flow_cases" / case
    code, out = run(tmp_path, "callgraph", str(folder), "--format", "pycg")
    assert code == 0, out
    expected = json.loads((folder / "callgraph.json").read_text())
    assert {k: set(v) for k, v in json.loads(out).items()} == {k: set(v) for k, v in expected.items()}


def test_bad_input_is_a_clear_error(project: Path, tmp_path: Path) -> None:
    code, out = run(tmp_path, "calls", str(project), "NoSuchThing")
    assert code == 2 and "no symbol matches" in out and "Traceback" not in out
    code, out = run(tmp_path, "calls", str(tmp_path / "missing"), "x")
    assert code == 2 and "no such directory, and not a release" in out
    code, out = run(tmp_path, "graph", str(project), "--format", "svg")
    assert code == 2 and "--format must be one of" in out
    code, out = run(tmp_path, "calls", "nosuch@1.0", "x")
    assert code == 2 and "Traceback" not in out
