"""Lazy, per-run access to a package tree: parse a module only when asked, resolve names.

Only the modules a parser's construction actually reaches get parsed (a few dozen
out of thousands), which is what keeps extraction well under a second.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path


@dataclass(slots=True)
class Module:
    name: str  # dotted: vllm.engine.arg_utils
    path: str  # package-relative POSIX path: vllm/engine/arg_utils.py
    tree: ast.Module
    text: str
    is_package: bool
    _lines: list[bytes] | None = None

    def where(self, node: ast.AST) -> str:
        return f"{self.path}:{getattr(node, 'lineno', 0)}"

    def segment(self, node: ast.AST) -> str:
        """Source text of a node (ast.get_source_segment re-splits the file on every call)."""
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None or not self.text:
            return ast.unparse(node)
        if self._lines is None:
            self._lines = [line.encode() for line in self.text.splitlines(keepends=True)]
        line, col = node.lineno - 1, node.col_offset  # type: ignore[attr-defined]
        if line == end_line - 1:
            return self._lines[line][col:end_col].decode(errors="replace")
        parts = [self._lines[line][col:], *self._lines[line + 1 : end_line - 1], self._lines[end_line - 1][:end_col]]
        return b"".join(parts).decode(errors="replace")


@dataclass(slots=True)
class SourceSymbol:
    """What a top-level name is bound to: `kind` is class | function | value | module."""

    kind: str
    module: Module
    node: ast.AST | None  # ClassDef / FunctionDef / the assigned expression; None for a module
    name: str


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Top-level statements, looking into `if`/`try` blocks (TYPE_CHECKING, optional imports)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            out.extend(_top_level(stmt.body))
            out.extend(_top_level(stmt.orelse))
        elif isinstance(stmt, ast.Try):
            out.extend(_top_level(stmt.body))
            for handler in stmt.handlers:
                out.extend(_top_level(handler.body))
        else:
            out.append(stmt)
    return out


class SourceTree:
    """Modules of one package root, parsed on demand and memoised for this run only."""

    def __init__(self, package_root: Path) -> None:
        self.root = package_root
        self._modules: dict[str, Module | None] = {}
        self._resolved: dict[tuple[str, str], SourceSymbol | None] = {}
        self.parsed_files = 0

    def module(self, dotted: str) -> Module | None:
        if dotted in self._modules:
            return self._modules[dotted]
        rel = dotted.replace(".", "/")
        found: Module | None = None
        for candidate, is_pkg in ((f"{rel}.py", False), (f"{rel}/__init__.py", True)):
            path = self.root / candidate
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                try:
                    tree = ast.parse(text, filename=candidate)
                except SyntaxError:
                    break
                self.parsed_files += 1
                found = Module(dotted, candidate, tree, text, is_pkg)
                break
        self._modules[dotted] = found
        return found

    def parsed_modules(self) -> list[Module]:
        """The modules read so far in this run."""
        return [m for m in self._modules.values() if m is not None]

    def is_module(self, dotted: str) -> bool:
        rel = dotted.replace(".", "/")
        return (self.root / f"{rel}.py").is_file() or (self.root / rel).is_dir()

    @staticmethod
    def absolute(module: Module, level: int, target: str | None) -> str:
        if level == 0:
            return target or ""
        parts = module.name.split(".")
        base = parts if module.is_package else parts[:-1]
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return ".".join([*base, target] if target else base)

    def resolve(self, module: Module, name: str, _depth: int = 0) -> SourceSymbol | None:
        """Follow `name` in `module` through definitions, assignments and (re-)imports."""
        if _depth > 12:
            return None
        key = (module.name, name)
        if key not in self._resolved:
            self._resolved[key] = None  # an import cycle resolves to nothing rather than looping
            self._resolved[key] = self._resolve(module, name, _depth)
        return self._resolved[key]

    def _resolve(self, module: Module, name: str, _depth: int) -> SourceSymbol | None:
        found: SourceSymbol | None = None
        cls: SourceSymbol | None = None
        for stmt in _top_level(module.tree.body):
            sym = self._binding(module, stmt, name, _depth)
            if sym is None:
                continue
            # The last binding wins, as at import time, except that `X = wrap(X, ...)`
            # after `class X` (msgspec.defstruct, manual decoration) still means that class.
            if sym.kind == "class":
                cls = sym
            if cls is not None and sym.kind == "value" and isinstance(sym.node, ast.Call):
                continue
            found = sym
        return found

    def _binding(self, module: Module, stmt: ast.stmt, name: str, depth: int) -> SourceSymbol | None:
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return SourceSymbol("class", module, stmt, name)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == name:
            return SourceSymbol("function", module, stmt, name)
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    return SourceSymbol("value", module, stmt.value, name)
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id == name
            and stmt.value is not None
        ):
            return SourceSymbol("value", module, stmt.value, name)
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) != name:
                    continue
                base = self.absolute(module, stmt.level, stmt.module)
                return self.resolve_qualified(base, alias.name, depth + 1)
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname == name:
                    return self._module_symbol(alias.name)
                if alias.asname is None and alias.name.split(".")[0] == name:
                    return self._module_symbol(name)
        return None

    def resolve_qualified(self, base: str, name: str, depth: int = 0) -> SourceSymbol | None:
        """`from base import name`: a submodule, or a name bound in base's module."""
        target = self.module(base)
        if target is not None:
            sym = self.resolve(target, name, depth)
            if sym is not None:
                return sym
        if self.is_module(f"{base}.{name}"):
            return self._module_symbol(f"{base}.{name}")
        return None

    def _module_symbol(self, dotted: str) -> SourceSymbol | None:
        mod = self.module(dotted)
        if mod is None:
            if self.is_module(dotted):  # a namespace package (SGLang has many)
                return SourceSymbol("module", Module(dotted, dotted.replace(".", "/"), ast.Module([], []), "", True), None, dotted)
            return None
        return SourceSymbol("module", mod, None, dotted)
