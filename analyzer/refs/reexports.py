"""Names a module re-exports: where `pkg.mod.Name` leads when `mod` does not define `Name`.

A reader who writes `sglang.multimodal_gen.runtime.distributed.divide` can import it: the
package's `__init__.py` does `from .utils import *`, and `utils` defines `divide`. The symbol
index records definitions, so such names looked broken. Read statically from the module's
source (parsed, never imported): a `from X import Name` (or `as Name`), a `from X import *`
whose module defines `Name`, and a lazy table a module-level `__getattr__` serves
(`"fused_x": "norm.fused_x_module"`, or `"norm.fused_x_module:fused_x"`), relative to the package.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.refs.symbols import SymbolEntry

if TYPE_CHECKING:
    from analyzer.refs.pinview import PinView


@lru_cache(maxsize=512)
def _parse(path: str) -> ast.Module | None:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None


def _absolute(module: SymbolEntry, node: ast.ImportFrom) -> str | None:
    if not node.level:
        return node.module
    package = module.full if module.path.endswith("__init__.py") else module.full.rsplit(".", 1)[0]
    parts = package.split(".")
    if node.level - 1 >= len(parts):
        return None
    base = ".".join(parts[: len(parts) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


def reexport_targets(module: SymbolEntry, member: str, tree: str | None) -> list[str]:
    """Full names `module.member` may stand for, in the order a reader would try them."""
    if tree is None or module.kind != "module" or not module.path.endswith(".py"):
        return []
    parsed = _parse(str(Path(tree) / module.path))
    if parsed is None:
        return []
    named: list[str] = []
    starred: list[str] = []
    lazy = any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in parsed.body)
    package = module.full if module.path.endswith("__init__.py") else module.full.rsplit(".", 1)[0]
    for node in _module_level(parsed.body):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if source is None:
                continue
            for alias in node.names:
                if alias.name == "*":
                    starred.append(f"{source}.{member}")
                elif (alias.asname or alias.name) == member:
                    named.append(f"{source}.{alias.name}")
        elif lazy and isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for table in (n for n in ast.walk(node.value) if isinstance(n, ast.Dict)):
                for key, value in zip(table.keys, table.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == member and isinstance(value, ast.Constant) and isinstance(value.value, str):
                        where, _, attr = value.value.partition(":")
                        where = where.removeprefix(".")  # `".entrypoints.llm:LLM"`: relative to the package
                        named.append(f"{package}.{where}.{attr or member}")
    return named + starred


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements that run at import (inside `if`/`try`/`with` too), not function or class bodies."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (ast.If, ast.Try, ast.With)):
            for block in (getattr(stmt, name, []) for name in ("body", "orelse", "finalbody")):
                out.extend(_module_level(block))
            for handler in getattr(stmt, "handlers", []):
                out.extend(_module_level(handler.body))
    return out


def owner_reexports(owner: str, pin: PinView) -> list[str]:
    """Full names a dotted owner stands for when its parent module re-exports it (`vllm.LLM` ->
    `vllm.entrypoints.llm.LLM`), for looking up a member through it."""
    parent, _, name = owner.rpartition(".")
    out: list[str] = []
    for package in (e for e in pin.find_symbol(parent) if e.kind == "module"):
        out.extend(full for full in reexport_targets(package, name, pin.tree) if full != owner and full not in out)
    return out
