"""The code's shape, kept by scanning it (issue 18 §4): one way to open a pinned tree,
one name per class across analyzer/, one place that reads `__file__`, one exit-code
convention for every command."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Opening a tree's parts directly: the snapshot store, the indexer, the graphs cache.
_OPENERS = {"open_snapshot", "ensure_snapshot", "index_snapshot", "index_tree", "directory_target",
            "load_graphs", "load_facts", "load_unresolved", "snapshot_target"}
# Where they may be called: the stages that implement them, and `analyzer/pinned.py`, the one
# object every other stage opens a tree through. refs/loader.py reads a snapshot's store
# commit to tell whether its cached view is stale (it opens the tree through pinned.py).
_ALLOWED = {"analyzer/pinned.py", "analyzer/refs/loader.py", "analyzer/graphs/store.py",
            "analyzer/index/runner.py"}


def _py(folder: str) -> list[Path]:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert len(files) > 20  # the scan sees the whole package
    return files


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _called_names(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            out.append((node.lineno, name))
    return out


def test_stages_open_pinned_trees_only_through_pinned_tree() -> None:
    offenders = []
    for path in _py("analyzer"):
        rel = _rel(path)
        if rel in _ALLOWED or rel.startswith("analyzer/snapshots/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{rel}:{line}: {name}()" for line, name in _called_names(tree) if name in _OPENERS]
    assert offenders == []


def test_the_opener_scan_sees_a_call() -> None:
    code = "def f(s):\n    return store.load_graphs(s, t), open_snapshot(s, 'vllm@0.30.0')\n"
    assert {name for _, name in _called_names(ast.parse(code))} & _OPENERS == {"load_graphs", "open_snapshot"}


@pytest.mark.parametrize("folder", ["analyzer", "reference_engine"])
def test_no_public_class_name_is_defined_twice(folder: str) -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in _py(folder):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where[node.name].append(_rel(path))
    assert {name: files for name, files in where.items() if len(files) > 1} == {}


def test_only_analyzer_paths_reads_dunder_file() -> None:
    offenders = []
    for folder in ("analyzer", "reference_engine"):
        for path in _py(folder):
            if _rel(path) == "analyzer/paths.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(tree)):
                offenders.append(_rel(path))
    assert offenders == []


def test_commands_exit_through_the_named_codes() -> None:
    """`typer.Exit(1)` written as a bare number is how six private conventions began; every
    command names EXIT_FINDINGS / EXIT_ERROR (reference_engine/exit_codes.py) instead."""
    offenders = []
    for folder in ("analyzer", "reference_engine"):
        for path in _py(folder):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "Exit" and node.args
                        and isinstance(node.args[0], ast.Constant) and node.args[0].value != 0):
                    offenders.append(f"{_rel(path)}:{node.lineno}")
    assert offenders == []
