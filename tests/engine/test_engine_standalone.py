"""The reference engine stands alone: nothing under reference_engine/ imports analyzer/."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):  # function-level (deferred) imports count too
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_no_module_of_the_engine_imports_the_analyzer() -> None:
    files = sorted((ROOT / "reference_engine").rglob("*.py"))
    assert len(files) > 50  # the scan sees the whole package
    offenders = [f"{p.relative_to(ROOT)}:{line}: {name}" for p in files for line, name in _imports(p)
                 if name == "analyzer" or name.startswith("analyzer.")]
    assert offenders == []


def test_the_scan_catches_a_deferred_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from analyzer.settings import Settings\n    import analyzer.cli as cli\n")
    assert [name for _, name in _imports(bad)] == ["analyzer.settings", "analyzer.cli"]


def test_engine_server_entry_runs_with_the_analyzer_unimportable() -> None:
    """`python -m reference_engine.server --help` with `analyzer` blocked from import."""
    code = ("import runpy, sys; sys.modules['analyzer'] = None; sys.argv = ['server', '--help']; "
            "runpy.run_module('reference_engine.server', run_name='__main__')")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--port" in done.stdout


def test_one_cache_folder_for_both_sides(monkeypatch, tmp_path: Path) -> None:
    from analyzer.settings import default_cache_dir as analyzer_default
    from reference_engine.cache_dir import default_cache_dir

    monkeypatch.setenv("ATLAS_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == analyzer_default() == tmp_path
