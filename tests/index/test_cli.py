"""`atlas index` and `atlas show` on a plain directory, human and --json output."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from analyzer.cli import app

from .test_runner import make_tree

runner = CliRunner()


def atlas(cache: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--cache-dir", str(cache), *args])
    return result.exit_code, result.output


def test_index_json_and_table(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "src")
    code, out = atlas(tmp_path / "cache", "index", str(root), "--json", "--jobs", "1")
    assert code == 0, out
    data = json.loads(out)
    assert data["counts"]["modules"] == 5 and data["counts"]["errors"] == 2
    assert data["counts"]["cache_hits"] == 0
    assert {e["path"] for e in data["errors"]} == {"pkg/bad.py", "pkg/broken.py"}
    code, out = atlas(tmp_path / "cache", "index", str(root), "--jobs", "1")
    assert code == 0 and "cache hits" in out and "skipped pkg/broken.py" in out


def test_show_symbol_module_and_suffix(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "src")
    cache = tmp_path / "cache"
    code, out = atlas(cache, "show", str(root), "pkg.sched.Scheduler.schedule", "--json")
    assert code == 0, out
    (match,) = json.loads(out)["matches"]
    assert match["kind"] == "method" and (match["line"], match["end_line"]) == (47, 72)
    assert match["signature"] == (
        "async def schedule(self, budget: int = 8, /, *args, flag: bool = False, **kwargs) -> list"
    )
    assert match["docstring"] == "Pick requests."

    code, out = atlas(cache, "show", str(root), "pkg/sched.py", "--json")
    (module,) = json.loads(out)["matches"]
    assert module["kind"] == "module" and module["classes"] == ["Request", "Scheduler"]
    assert module["functions"] == ["helper"] and module["docstring"] == "Scheduler module docstring."

    code, out = atlas(cache, "show", str(root), "Scheduler.schedule", "--json")
    assert sorted(m["dotted"] for m in json.loads(out)["matches"]) == [
        "pkg.core.other.Scheduler.schedule",
        "pkg.sched.Scheduler.schedule",
    ]
    code, out = atlas(cache, "show", str(root), "Scheduler.schedule")
    assert code == 0 and "2 matches" in out

    code, out = atlas(cache, "show", str(root), "pkg/sched.py:Scheduler")
    assert code == 0 and "class" in out and "pkg/sched.py:33-82" in out and "Decides what runs next." in out

    # A class lists what an instance carries: fields, class-level names, `self.x` set in methods.
    code, out = atlas(cache, "show", str(root), "pkg.sched.Request", "--json")
    (request,) = json.loads(out)["matches"]
    assert request["fields"] == ["request_id: str", "prompt: list[int]"] and request["attributes"] == ["priority"]
    code, out = atlas(cache, "show", str(root), "pkg.sched.Scheduler", "--json")
    (sched,) = json.loads(out)["matches"]
    assert sched["fields"] == [] and sched["attributes"][:4] == ["config", "waiting", "running", "pool"]
    # `self.count += 1` reads before it writes, so it sets nothing new; a closure over `self` does.
    assert sched["attributes"][4:] == ["a", "b", "inner_state"]


def test_package_directory_is_indexed_from_its_parent(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "src")
    code, out = atlas(tmp_path / "cache", "show", str(root / "pkg"), "pkg.sched.helper", "--json")
    assert code == 0, out
    assert json.loads(out)["matches"][0]["path"] == "pkg/sched.py"


def test_bad_targets_are_clear_errors(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "src")
    code, out = atlas(tmp_path / "cache", "index", str(tmp_path / "nowhere/"))
    assert code == 2 and "no such directory" in out and "Traceback" not in out
    code, out = atlas(tmp_path / "cache", "show", str(root), "Nope.nothing")
    assert code == 2 and "nothing named 'Nope.nothing'" in out
    code, out = atlas(tmp_path / "cache", "index", "vllm@0.0.0-not-pinned")
    assert code == 2 and "Traceback" not in out
