"""The function-value flow suite: small programs per construct (args, kwargs,
assignments, returns, lambdas, dicts, lists, builtins, decorators, generators,
exceptions, classes, external, imports, operators), each with a hand-written expected call
graph in PyCG's format (`flow_cases/<category>/<case>/callgraph.json`).

`score_suite()` scores the static graph per category. `traced_edges()` runs a
case program (our own code, written for this suite) under `sys.setprofile` and
returns the project edges that really happened, so the tests can check that
every hand-written expectation is what Python does.
"""

from __future__ import annotations

import ast
import gc
import json
import runpy
import sys
from pathlib import Path
from types import FrameType

from analyzer.graphs.pycg import pycg_callgraph, score
from analyzer.index.extract import extract_file
from analyzer.index.models import ModuleFacts

_CO_OPTIMIZED = 0x1
FLOW_CASES = Path(__file__).parent / "flow_cases"
CASE_IDS = sorted(
    p.parent.relative_to(FLOW_CASES).as_posix() for p in FLOW_CASES.glob("*/*/callgraph.json")
)


def case_facts(case: Path) -> list[ModuleFacts]:
    return [extract_file(p.read_bytes(), p.relative_to(case).as_posix()) for p in sorted(case.rglob("*.py"))]


def untraced(case_id: str) -> set[tuple[str, str]]:
    """Expected edges the case's run does not take (the other branch, a lambda
    never called): `untraced.json` lists them, each a real call in the source."""
    path = FLOW_CASES / case_id / "untraced.json"
    return {tuple(e.split(" -> ")) for e in json.loads(path.read_text())} if path.is_file() else set()  # type: ignore[misc]


def expected(case_id: str) -> dict[str, list[str]]:
    return json.loads((FLOW_CASES / case_id / "callgraph.json").read_text())


def actual(case_id: str) -> dict[str, list[str]]:
    return pycg_callgraph(case_facts(FLOW_CASES / case_id), root=FLOW_CASES / case_id)


def score_suite() -> dict[str, tuple[int, int, int]]:
    """category -> (true positives, false positives, false negatives)."""
    out: dict[str, tuple[int, int, int]] = {}
    for case_id in CASE_IDS:
        cat = case_id.split("/")[0]
        t, f, n = score(expected(case_id), actual(case_id))
        a, b, c = out.get(cat, (0, 0, 0))
        out[cat] = (a + t, b + f, c + n)
    return out


def format_scores(scores: dict[str, tuple[int, int, int]]) -> list[str]:
    lines = []
    total = [0, 0, 0]
    for cat, (t, f, n) in sorted(scores.items()):
        total = [total[0] + t, total[1] + f, total[2] + n]
        p = t / (t + f) if t + f else 1.0
        r = t / (t + n) if t + n else 1.0
        lines.append(f"  {cat:12} precision {p:6.1%}  recall {r:6.1%}  ({t} right, {f} extra, {n} missed)")
    t, f, n = total
    lines.append(
        f"  {'TOTAL':12} precision {t / (t + f):6.1%}  recall {t / (t + n):6.1%}  ({t} right, {f} extra, {n} missed)"
    )
    return lines


# -- the dynamic oracle ----------------------------------------------------------


def _lambda_names(path: Path, module: str) -> dict[tuple[int, str], list[str]]:
    """(line, enclosing qualname) -> lambda names in the index's numbering
    (`<lambdaN>` counted per enclosing scope, in source order)."""
    out: dict[tuple[int, str], list[str]] = {}
    counts: dict[str, int] = {}

    def walk(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for d in getattr(child, "decorator_list", []):
                    walk(d, scope)
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    walk(child.args, scope)
                inner = f"{scope}.{child.name}" if scope else child.name
                for stmt in child.body:
                    walk_stmt(stmt, inner)
            elif isinstance(child, ast.Lambda):
                counts[scope] = counts.get(scope, 0) + 1
                name = f"{scope}.<lambda{counts[scope]}>" if scope else f"<lambda{counts[scope]}>"
                out.setdefault((child.lineno, scope), []).append(name)
                walk(child.args, scope)
                walk(child.body, name)
            else:
                walk(child, scope)

    def walk_stmt(stmt: ast.AST, scope: str) -> None:
        walk(ast.Module(body=[stmt], type_ignores=[]), scope)

    walk(ast.parse(path.read_text()), "")
    return {k: [f"{module}.{n}" for n in v] for k, v in out.items()}


def traced_edges(case_id: str) -> set[tuple[str, str]]:
    """Run the case's main.py and return caller -> callee edges between its
    functions / lambdas / module bodies (callee modules excluded: imports)."""
    case = FLOW_CASES / case_id
    modules = {p.stem for p in case.glob("*.py")}
    lambdas: dict[tuple[int, str], list[str]] = {}
    for p in case.glob("*.py"):
        lambdas.update({(line, f"{p.stem}:{sc}"): names for (line, sc), names in _lambda_names(p, p.stem).items()})
    edges: set[tuple[str, str]] = set()

    def name_of(frame: FrameType) -> str | None:
        if frame.f_code.co_filename == "<string>":  # source run by eval / exec: the evaluating frame's
            return name_of(frame.f_back) if frame.f_back is not None else None
        module = frame.f_globals.get("__name__")
        if module not in modules:
            return None
        qual = frame.f_code.co_qualname
        if qual == "<module>":
            return module
        if not frame.f_code.co_flags & _CO_OPTIMIZED:  # a class body runs in its enclosing scope
            return name_of(frame.f_back) if frame.f_back is not None else None
        parts = [p for p in qual.split(".") if p != "<locals>"]
        if parts[-1] == "<lambda>":
            scope = ".".join(p for p in parts[:-1] if p != "<lambda>")
            found = lambdas.get((frame.f_code.co_firstlineno, f"{module}:{scope}"), [])
            return found[0] if len(found) == 1 else f"{module}.?lambda"
        if any(p.startswith("<") for p in parts):
            return name_of(frame.f_back) if frame.f_back is not None else None  # comprehension
        return f"{module}.{'.'.join(parts)}"

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        qual = frame.f_code.co_qualname
        if qual == "<module>" or (qual.rpartition(".")[2].startswith("<") and not qual.endswith("<lambda>")):
            return
        if not frame.f_code.co_flags & _CO_OPTIMIZED:
            return
        callee = name_of(frame)
        back = frame.f_back
        caller = name_of(back) if back is not None else None
        if callee is not None and caller is not None:
            edges.add((caller, callee))

    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    sys.path.insert(0, str(case))
    # A generator an earlier case left unfinished runs its frame once more (to
    # close) whenever it is collected; finalize those before this run is traced.
    gc.collect()
    sys.setprofile(profile)  # type: ignore[arg-type]
    try:
        runpy.run_path(str(case / "main.py"), run_name="main")
    finally:
        sys.setprofile(None)
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            del sys.modules[name]
    return edges
