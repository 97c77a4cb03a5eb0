"""The call graph on Jarvis's macro-benchmark: six real projects, written by others,
with expected call graphs made by others.

Jarvis (Huang et al., ICSE 2024) evaluates on six small real applications
(bpytop, furl, rich-cli, sqlparse, sshtunnel, TextRank4ZH, each at a fixed
commit) with a ground-truth call graph per project and setting
(`evaluation/ground_truth/macro_benchmark/<project>/{EA,DA,DW}.json`, PyCG's JSON
format). This script scores against `EA.json`: the *exhaustive, application-only*
graph (every function of the project, edges to the project's own functions and to
builtins; the DA/DW graphs start from chosen entry points and DW follows the
dependencies, which is not what `atlas callgraph DIR` builds). Nothing of it is in
this repository: the programs and graphs are read at run time from the
`jarviscg==0.1.0rc7` source distribution (sha256 pinned in `jarvis_micro.py`),
downloaded with pip into the atlas cache folder (`<cache>/jarvis-micro/`, shared
with `jarvis_micro.py`) unless `--evaluation` points at an unpacked `evaluation`
folder. The artifact states no licence, so nothing of it is copied here.

Each project's package (the files Jarvis's own EA run analyses: its package
folder, or its one module) is copied to a scratch folder under its import name
and goes through exactly what `atlas callgraph DIR --format pycg` runs
(`analyzer.graphs.commands.directory_callgraph`). Only names are mapped, as in
`jarvis_micro.py` (our PyCG container tags written as Jarvis's `<str>`, `<map>`,
...), and our edges to modules outside the project (the standard library,
dependencies) are left out, since an application-only graph has none by
definition (none of the six `EA.json` holds one). Each project is scored on
edges (true positives, extra, missed), twice: edges to the project's own
functions (`<project>/project`) and to builtins (`<project>/builtin`); the rows
after the projects add them up by kind, and "held-out" is the five projects no
rule here was ever written against (sqlparse, at another version, is one of
`library_trace.py`'s libraries).

The ground truth is Jarvis's and keeps Jarvis's conventions, some of which are not
ours, and some of its edges name code that does not exist. The first table is
against it as written; a second one scores the same graphs against it with
`mapped()` applied, which counts and prints each kind of change:

- conventions (the edges stay, under our names, or leave as not call edges in
  our graph): a class body's calls keyed by the class (`furl.compat.UnicodeMixin
  -> <builtin>.property`) are keyed by the function or module the class statement
  runs in, as ours are; `X -> C` for a project class C (the class statement runs
  its body) and `X -> M` for a project module M (an import runs the module's body
  once) are left out, since our graph keys neither a class body nor an import;
  and on our side, a lambda written inside a function (ours `m.f.<lambda1>`,
  numbered per scope) is named `m.<lambda>`, Jarvis's one node per module for
  those (its module- and class-level lambdas are numbered as ours are);
- expectations no run can meet (read off the sources and the interpreter, not
  tuned on): an edge to or from a project name that is no module, class, function
  or lambda of the project (`furl.furl.Fragment.__init__ -> furl.furl.__init__`),
  and one to a builtin type's method that the type does not have
  (`<list>.split`, `<str>.append`).

    .venv/bin/python benchmarks/jarvis_macro.py [--evaluation DIR] [--misses]
"""

from __future__ import annotations

import argparse
import ast
import builtins
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzer.graphs.commands import directory_callgraph
from analyzer.pinned import TreeError
from analyzer.settings import Settings, default_cache_dir
from benchmarks._micro_common import (
    BenchError,
    Case,
    Graph,
    Scores,
    add_options,
    print_report,
    score_cases,
)
from benchmarks.jarvis_micro import download_evaluation, jarvis_names

# project -> (the folder its imports are named from, its package folder or module
# file under it): what Jarvis's own EA run gives its analyser.
PROJECTS: dict[str, tuple[str, str]] = {
    "bpytop": ("bpytop", "bpytop.py"),
    "furl": ("furl", "furl"),
    "rich-cli": ("rich-cli/src", "rich_cli"),
    "sqlparse": ("sqlparse", "sqlparse"),
    "sshtunnel": ("sshtunnel", "sshtunnel.py"),
    "TextRank4ZH": ("TextRank4ZH", "textrank4zh"),
}
SEEN = ("sqlparse",)
# Jarvis's builtin tags -> the type whose methods they name.
_TYPES = {"<str>": str, "<list>": list, "<map>": dict, "<set>": set, "<tuple>": tuple, "<builtin>": builtins}  # a library_trace.py library (0.6.1): rules were written on its misses


def prepare(evaluation: Path, scratch: Path) -> dict[str, tuple[Path, Graph]]:
    """Each project's Python files copied under `scratch/<project>/` by import name,
    with its expected EA graph."""
    pj = evaluation / "dataset" / "macro_benchmark" / "pj"
    truth = evaluation / "ground_truth" / "macro_benchmark"
    out: dict[str, tuple[Path, Graph]] = {}
    for project, (root, package) in PROJECTS.items():
        source = pj / root / package
        expected = truth / project / "EA.json"
        if not source.exists() or not expected.is_file():
            raise BenchError(f"{evaluation}: no {source} or {expected}")
        folder = scratch / project
        files = [source] if source.is_file() else sorted(source.rglob("*.py"))
        for path in files:
            dest = folder / path.relative_to(pj / root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        out[project] = (folder, json.loads(expected.read_text()))
    return out


def definitions(folder: Path) -> tuple[set[str], dict[str, str]]:
    """(modules, {function or class: "function" / "class"}) of the project in `folder`."""
    modules: set[str] = set()
    kinds: dict[str, str] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                kinds[name] = "class" if isinstance(child, ast.ClassDef) else "function"
                walk(child, name + ".")
            else:
                walk(child, prefix)

    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        module = ".".join(parts)
        modules.add(module)
        walk(ast.parse(path.read_bytes()), module + ".")
    return modules, kinds


def mapped(expected: Graph, modules: set[str], kinds: dict[str, str]) -> tuple[Graph, Counter[str]]:
    """Jarvis's expected graph under our conventions, less the edges no run can
    take (see the module's docstring); with how many edges each change touched."""
    counts: Counter[str] = Counter()

    def exists(name: str) -> bool:
        if name.startswith("<"):
            head, _, attr = name.partition(".")
            typ = _TYPES.get(head)
            return typ is None or hasattr(typ, attr)
        return name in modules or name in kinds or name.rpartition(".")[2].startswith("<lambda")

    def runs_in(name: str) -> str:
        """The function or module a class statement `name` runs in."""
        while kinds.get(name) == "class":
            name = name.rpartition(".")[0]
        return name

    out: Graph = {}
    for caller, callees in expected.items():
        key = runs_in(caller)
        if key != caller:
            counts["class body's calls keyed by its module or function"] += len(callees)
        targets = out.setdefault(key, [])
        for callee in callees:
            if kinds.get(callee) == "class":
                counts["class statement -> class body: left out"] += 1
            elif callee in modules:
                counts["import -> module body: left out"] += 1
            elif not exists(caller) or not exists(callee):
                counts["names no code of the project or builtin: left out"] += 1
            elif callee not in targets:
                targets.append(callee)
    return out, counts


_LAMBDAS = "our edges from or to a lambda in a function, named `<module>.<lambda>` as Jarvis names it"


def function_lambdas(graph: Graph, modules: set[str], kinds: dict[str, str]) -> tuple[Graph, int]:
    """Our graph with each lambda written inside a function (`m.f.<lambda1>`, numbered
    per scope) named as Jarvis's ground truth names it, one node per module
    (`m.<lambda>`); lambdas of a module or class body keep their numbered names, as
    Jarvis's do. With how many of our edges the renaming touched."""
    def rename(name: str) -> str:
        head, _, last = name.rpartition(".")
        if not last.startswith("<lambda") or not head:
            return name
        scope = head
        while scope and kinds.get(scope) != "function" and scope not in modules:
            scope = scope.rpartition(".")[0]
        if kinds.get(scope) != "function":
            return name
        module = max((m for m in modules if name.startswith(m + ".")), key=len, default=None)
        return f"{module}.<lambda>" if module is not None else name

    out: Graph = {}
    touched = 0
    for caller, callees in graph.items():
        key = rename(caller)
        targets = out.setdefault(key, [])
        for callee in callees:
            new = rename(callee)
            touched += key != caller or new != callee
            if new not in targets:
                targets.append(new)
    return out, touched


def application_only(graph: Graph, roots: set[str]) -> Graph:
    """Our graph less its edges to modules outside the project (`roots`: the
    project's top-level import names); builtin tags (`<builtin>`, `<str>`) stay."""
    def inside(name: str) -> bool:
        return name.startswith("<") or name.split(".", 1)[0] in roots
    return {k: [v for v in vs if inside(v)] for k, vs in graph.items()}


def by_kind(graph: Graph) -> tuple[Graph, Graph]:
    """(edges to project functions, edges to builtins)."""
    def part(builtin: bool) -> Graph:
        return {k: [v for v in vs if v.startswith("<") == builtin] for k, vs in graph.items()}
    return part(False), part(True)


def graphs(settings: Settings, projects: dict[str, tuple[Path, Graph]], min_confidence: str,
           *, conventions: Counter[str] | None = None) -> list[tuple[Case, Graph, Graph]]:
    """(case, expected, ours) per project and kind of callee; with `conventions`,
    the expected graphs `mapped()`, counting each change into it."""
    out: list[tuple[Case, Graph, Graph]] = []
    for project, (folder, expected) in projects.items():
        roots = {p.stem if p.suffix == ".py" else p.name for p in folder.iterdir()}
        try:
            ours = application_only(jarvis_names(directory_callgraph(settings, folder, min_confidence=min_confidence)),
                                    roots)
        except TreeError as exc:
            raise BenchError(f"{project}: {exc}") from exc
        if conventions is not None:
            modules, kinds = definitions(folder)
            expected, counts = mapped(expected, modules, kinds)
            conventions.update(counts)
            ours, renamed = function_lambdas(ours, modules, kinds)
            conventions[_LAMBDAS] += renamed
        for kind, exp, act in zip(("project", "builtin"), by_kind(expected), by_kind(ours), strict=True):
            out.append((Case(f"{project}/{kind}", folder, folder, f"to {kind}"), exp, act))
    return out


def scores(found: list[tuple[Case, Graph, Graph]]) -> Scores:
    out = score_cases(found)
    held = [0] * 5
    for project, row in out.per.items():
        if project not in SEEN:
            held = [a + b for a, b in zip(held, row, strict=True)]
    out.parts["held-out (5)"] = held
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--evaluation", type=Path, help="the sdist's evaluation folder (default: download)")
    add_options(ap)
    args = ap.parse_args(argv)
    settings = Settings(cache_dir=default_cache_dir())
    try:
        evaluation = args.evaluation if args.evaluation is not None else download_evaluation(settings.cache_dir)
        with tempfile.TemporaryDirectory(prefix="jarvis-macro-") as scratch:
            projects = prepare(evaluation.expanduser().resolve(), Path(scratch))
            result = scores(graphs(settings, projects, args.min_confidence))
            counts: Counter[str] = Counter()
            fixed = scores(graphs(settings, projects, args.min_confidence, conventions=counts))
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_report(f"Jarvis macro-benchmark, EA graphs ({len(projects)} projects, {evaluation}; "
                 "each project's edges to its own code and to builtins counted as two cases)",
                 result, 18, misses=args.misses)
    print()
    print_report("Against Jarvis's expectations under our conventions, less edges no run can take "
                 "(the figure above is Jarvis's as written); edges changed:\n"
                 + "\n".join(f"    {n:4} {why}" for why, n in counts.most_common()), fixed, 18, misses=args.misses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
