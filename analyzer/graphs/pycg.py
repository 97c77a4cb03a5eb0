"""The PyCG call-graph JSON format: `{"main.A.func": ["main.g", "<builtin>.print"], ...}`.

Every module (its top-level code) and every function / method is a key even when
it calls nothing. Constructor calls point at `__init__` when the project defines
one (a class without one contributes no edge, as there is no code to run);
builtins read `<builtin>.name`, methods of builtin containers and strings PyCG's
`<**PyList**>.append` style; other external callees keep their dotted name.
Lambdas are nodes of their own, `mod.f.<lambda1>` (numbered per enclosing scope).
"""

from __future__ import annotations

from pathlib import Path

from analyzer.graphs.callgraph import RANK
from analyzer.graphs.state_source import SourceReader
from analyzer.index.models import ModuleFacts
from analyzer.resolve import CallResolver, Project

_BUILTIN_TYPES = {
    "str": "<**PyStr**>", "list": "<**PyList**>", "dict": "<**PyDict**>", "set": "<**PySet**>",
    "tuple": "<**PyTuple**>", "int": "<**PyNum**>", "float": "<**PyNum**>",
}


def pycg_name(name: str) -> str:
    """An external callee as PyCG names it: `builtins.len` -> `<builtin>.len`,
    `builtins.list.append` -> `<**PyList**>.append`."""
    if not name.startswith("builtins."):
        return name
    rest = name[len("builtins."):]
    head, _, attr = rest.partition(".")
    if attr and head in _BUILTIN_TYPES:
        return f"{_BUILTIN_TYPES[head]}.{attr}"
    return "<builtin>." + rest


def pycg_callgraph(
    facts: list[ModuleFacts], *, min_confidence: str = "guess", root: Path | None = None
) -> dict[str, list[str]]:
    """`root`: the folder the facts' paths are relative to (function bodies are
    read from it for per-site bindings); None: facts only."""
    project = Project(facts)
    resolver = CallResolver(project, SourceReader(root) if root is not None else None)
    out: dict[str, set[str]] = {name: set() for name in project.modules}
    out.update({name: set() for name in project.functions})
    out.update({name: set() for name in resolver.flow.lambdas})
    for mod in project.modules.values():
        for rec in resolver.resolve_module(mod):
            targets = out.setdefault(rec.caller, set())
            for edge in rec.edges:
                if RANK[edge.confidence] > RANK[min_confidence] or edge.callee in project.classes:
                    continue
                targets.add(edge.callee)
            for name in rec.external:
                targets.add(pycg_name(name))
    return {k: sorted(v) for k, v in sorted(out.items())}


def score(expected: dict[str, list[str]], actual: dict[str, list[str]]) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) over call edges."""
    exp = {(k, v) for k, vs in expected.items() for v in vs}
    act = {(k, v) for k, vs in actual.items() for v in vs}
    return len(exp & act), len(act - exp), len(exp - act)
