"""Is a name still importable from a module? Module-level imports and aliases, followed statically.

A definition that left `pkg.a` for `pkg.b` is not removed when `pkg.a` still
binds the name (`from pkg.b import f`, `from .b import *`, `f = b.f`): callers
that import it from the old path keep working. `reexport` finds such a binding
in the new release's index and follows it to the definition it names, through
further re-exports, without importing anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.index import SnapshotIndex
from analyzer.index.models import ModuleFacts

_MAX_HOPS = 8  # re-export chains in the pinned releases are two or three long


@dataclass(frozen=True, slots=True)
class Reexport:
    target: str  # the dotted name of the definition reached, or the last import when none is
    defined: bool  # True when `target` is a class or function of the release
    hops: tuple[str, ...]  # one readable line per binding followed: "`from .b import f` at a.py:3"


def _package(facts: ModuleFacts) -> str:
    """The package relative imports resolve against."""
    return facts.module if facts.path.endswith("__init__.py") else facts.module.rpartition(".")[0]


def _absolute(facts: ModuleFacts, module: str, level: int) -> str:
    if level == 0:
        return module
    base = _package(facts)
    for _ in range(level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{module}" if module and base else module or base


def _binding(facts: ModuleFacts, name: str) -> tuple[str, str] | None:
    """(dotted name `name` is bound to, how) for a module-level binding, else None.
    Imports under `if TYPE_CHECKING:` bind nothing at run time and are skipped."""
    for imp in facts.imports:
        if imp.scope != "<module>" or imp.type_checking or imp.name is None:
            continue
        if imp.name != "*" and (imp.asname or imp.name) == name:
            source = _absolute(facts, imp.module, imp.level)
            spelled = f"from {'.' * imp.level}{imp.module} import {imp.name}" + (f" as {imp.asname}" if imp.asname else "")
            return f"{source}.{imp.name}", f"`{spelled}` at {facts.path}:{imp.line}"
    for assignment in facts.module_attributes:
        value = (assignment.value or "").strip()
        if assignment.target == name and value and value.replace(".", "").replace("_", "").isalnum():
            return _qualify(facts, value), f"`{name} = {value}` at {facts.path}:{assignment.line}"
    return None


def _qualify(facts: ModuleFacts, value: str) -> str:
    """`b.f` / `f` in a module to a dotted name, through the module's own imports."""
    head, _, rest = value.partition(".")
    for imp in facts.imports:
        if imp.scope != "<module>" or imp.type_checking:
            continue
        if imp.name is None and (imp.asname or imp.module.split(".")[0]) == head:
            base = imp.module if imp.asname else head
            return f"{base}.{rest}" if rest else base
        if imp.name not in (None, "*") and (imp.asname or imp.name) == head:
            base = f"{_absolute(facts, imp.module, imp.level)}.{imp.name}"
            return f"{base}.{rest}" if rest else base
    return f"{facts.module}.{value}"


def _star_sources(facts: ModuleFacts) -> list[tuple[str, str]]:
    return [
        (_absolute(facts, imp.module, imp.level), f"`from {'.' * imp.level}{imp.module} import *` at {facts.path}:{imp.line}")
        for imp in facts.imports
        if imp.scope == "<module>" and not imp.type_checking and imp.name == "*"
    ]


def reexport(index: SnapshotIndex, module: str, name: str, defined: set[str]) -> Reexport | None:
    """How `module.name` is still importable in `index` without being defined there.

    `defined`: the dotted names of the release's classes and functions."""
    hops: list[str] = []
    seen: set[str] = set()
    current_module, current_name = module, name
    for _ in range(_MAX_HOPS):
        key = f"{current_module}.{current_name}"
        if key in seen:
            return None
        seen.add(key)
        facts = index.by_module(current_module)
        if facts is None:
            break
        found = _binding(facts, current_name)
        if found is None:
            stars = [(src, how) for src, how in _star_sources(facts) if _exports(index, src, current_name, defined)]
            if not stars:
                return None if not hops else Reexport(key, False, tuple(hops))
            found = (f"{stars[0][0]}.{current_name}", stars[0][1])
        target, how = found
        hops.append(how)
        if target in defined:
            return Reexport(target, True, tuple(hops))
        current_module, _, current_name = target.rpartition(".")
    return Reexport(f"{current_module}.{current_name}", False, tuple(hops)) if hops else None


def _exports(index: SnapshotIndex, module: str, name: str, defined: set[str]) -> bool:
    """Does `from module import *` bring `name`? (`__all__` when known, else public names)."""
    facts = index.by_module(module)
    if facts is None:
        return False
    if facts.all_names is not None:
        return name in facts.all_names
    if name.startswith("_"):
        return False
    return f"{module}.{name}" in defined or _binding(facts, name) is not None
