"""The Jarvis macro-benchmark's scoring (benchmarks/jarvis_macro.py) on a tiny
project of our own written in its layout: no download, no network."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from analyzer.settings import Settings
from benchmarks.jarvis_macro import application_only, definitions, graphs, mapped, scores

SOURCE = '''\
import os

from app import util


class Box(object):
    make = staticmethod(util.helper)

    def copy(self):
        return self.__class__()

    def name(self):
        os.path.join("a", "b")
        return "ab".upper()


def run():
    return Box().copy()
'''


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "app"
    (folder / "app").mkdir(parents=True)
    (folder / "app" / "__init__.py").write_text("")
    (folder / "app" / "util.py").write_text("def helper():\n    return 1\n")
    (folder / "app" / "main.py").write_text(SOURCE)
    return folder


def test_definitions_and_mapping(tmp_path: Path) -> None:
    modules, kinds = definitions(_project(tmp_path))
    assert modules == {"app", "app.util", "app.main"}
    assert kinds["app.main.Box"] == "class" and kinds["app.main.Box.copy"] == "function"
    jarvis = {
        "app.main": ["app.util", "app.main.Box"],  # import, class statement
        "app.main.Box": ["<builtin>.staticmethod"],  # the class body's call
        "app.main.Box.copy": ["app.main.__init__"],  # no such code
        "app.main.Box.name": ["<str>.upper", "<list>.upper"],  # lists have no upper
        "app.main.run": ["app.main.Box.copy"],
    }
    ours, counts = mapped(jarvis, modules, kinds)
    assert ours == {
        "app.main": ["<builtin>.staticmethod"],
        "app.main.Box.copy": [],
        "app.main.Box.name": ["<str>.upper"],
        "app.main.run": ["app.main.Box.copy"],
    }
    assert sum(counts.values()) == 5 and len(counts) == 4


def test_scored_against_both(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    expected = {
        "app.main": ["app.main.Box"],
        "app.main.Box": ["<builtin>.staticmethod"],
        "app.main.Box.copy": [],
        "app.main.Box.name": ["<str>.upper"],
        "app.main.run": ["app.main.Box.copy"],
    }
    settings = Settings(cache_dir=tmp_path / "cache")
    projects = {"app": (folder, expected)}
    as_written = scores(graphs(settings, projects, "guess"))
    # run -> copy and upper right; the class body's staticmethod keyed by the module
    # (extra), the class statement and the class-keyed call missed.
    assert as_written.per["app"][2:] == [2, 1, 2]
    counts: Counter[str] = Counter()
    fixed = scores(graphs(settings, projects, "guess", conventions=counts))
    # `self.__class__()` is Box's constructor (no __init__: no edge); os.path.join is outside.
    assert fixed.per["app"][2:] == [3, 0, 0], fixed.misses
    assert counts["class body's calls keyed by its module or function"] == 1


def test_application_only() -> None:
    graph = {"app.f": ["os.path.join", "app.g", "<builtin>.len", "appx.h"]}
    assert application_only(graph, {"app"}) == {"app.f": ["app.g", "<builtin>.len"]}


def test_function_lambdas_take_jarvis_names() -> None:
    from benchmarks.jarvis_macro import function_lambdas

    modules = {"app", "app.main"}
    kinds = {"app.main.f": "function", "app.main.Box": "class"}
    ours = {
        "app.main.f": ["app.main.f.<lambda1>", "app.main.f.<lambda2>"],
        "app.main.f.<lambda1>": ["<builtin>.len"],
        "app.main.f.<lambda2>": ["<builtin>.len"],
        "app.main.Box.<lambda1>": ["app.main.f"],  # a class body's lambda keeps its name
        "app.main": ["app.main.<lambda1>"],
    }
    renamed, touched = function_lambdas(ours, modules, kinds)
    assert renamed == {
        "app.main.f": ["app.main.<lambda>"],
        "app.main.<lambda>": ["<builtin>.len"],
        "app.main.Box.<lambda1>": ["app.main.f"],
        "app.main": ["app.main.<lambda1>"],
    }
    assert touched == 4
