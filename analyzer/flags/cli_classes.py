"""Subcommands registered as classes: `vllm run-batch`, `vllm chat`, `vllm bench serve`.

vLLM's console script does not dispatch on a word (as `sglang`'s does, entry_points.py): each
module of its CLI package returns instances of `CLISubcommand` subclasses from `cmd_init()`,
each with a class-level `name = "run-batch"`; a group (`bench`, `launch`) adds one nested
parser per subclass of its own base class (`for cls in BenchmarkSubcommandBase.__subclasses__()`).
This module reads that shape statically from the CLI package's files:

- a command is a class with a literal `name`, instantiated in a `cmd_init()` return list;
- a group is such a command whose methods name another class of the package that has named
  subclasses: each of those is `<group> <name>`;
- the module whose parser a command runs is the project module its `add_cli_args` /
  `subparser_init` (own or inherited) calls a function from (`from vllm.benchmarks.serve import
  add_cli_args`), else the module that defines the command class (whose methods then add the
  options themselves, beside other commands' in the same module: `vllm chat`, `vllm complete`).

The files are parsed, never imported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

_PARSER_METHODS = ("add_cli_args", "subparser_init")


@dataclass(frozen=True, slots=True)
class CliCommand:
    module: str  # where the command's options are added
    in_class: bool  # by the command class's own methods (the module is the CLI package's)


@dataclass(slots=True)
class _Class:
    node: ast.ClassDef
    module: str
    imports: dict[str, str]  # local name -> module it comes from (module level)
    bases: list[str] = field(default_factory=list)

    @property
    def command_name(self) -> str | None:
        for stmt in self.node.body:
            if (
                isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "name"
                and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
            ):
                return stmt.value.value
        return None

    def method(self, name: str) -> ast.FunctionDef | None:
        return next((s for s in self.node.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def _imports(body: list[ast.stmt] | list[ast.AST], module: str) -> dict[str, str]:
    """`from x import f` -> {f: x}; relative imports made absolute."""
    out: dict[str, str] = {}
    for node in body:
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                package = module.split(".")[: -node.level]
                source = ".".join([*package, source] if source else package)
            for alias in node.names:
                out[alias.asname or alias.name] = source
    return out


def _base_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _read_package(root: Path, package_dir: Path) -> dict[str, _Class]:
    classes: dict[str, _Class] = {}
    for path in sorted(package_dir.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        module = _module_name(root, path)
        imports = _imports(tree.body, module)
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                bases = [b for b in map(_base_name, stmt.bases) if b]
                # Names are unique enough inside one CLI package; the first definition wins.
                classes.setdefault(stmt.name, _Class(stmt, module, imports, bases))
    return classes


def _registered(classes: dict[str, _Class], root: Path, package_dir: Path) -> list[str]:
    """Class names instantiated in a `cmd_init()` return value, in file order."""
    found: list[str] = []
    for path in sorted(package_dir.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        for fn in tree.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "cmd_init"):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes:
                    found.append(node.func.id)
    return found


def _descendants(classes: dict[str, _Class], base: str) -> list[str]:
    out: list[str] = []
    frontier = [base]
    while frontier:
        current = frontier.pop(0)
        for name, cls in classes.items():
            if current in cls.bases and name not in out:
                out.append(name)
                frontier.append(name)
    return out


def _ancestors(classes: dict[str, _Class], name: str) -> list[str]:
    out: list[str] = []
    frontier = [name]
    while frontier:
        cls = classes.get(frontier.pop(0))
        for base in cls.bases if cls else []:
            if base not in out:
                out.append(base)
                frontier.append(base)
    return out


def _parser_module(classes: dict[str, _Class], name: str, project: str) -> CliCommand:
    """The project module the command's parser methods call into, else the class's own."""
    for owner in (name, *_ancestors(classes, name)):
        cls = classes.get(owner)
        if cls is None:
            continue
        for method_name in _PARSER_METHODS:
            method = cls.method(method_name)
            if method is None:
                continue
            local = _imports(list(ast.walk(method)), cls.module)
            for node in ast.walk(method):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    source = local.get(node.func.id) or cls.imports.get(node.func.id)
                    if source and source.split(".", 1)[0] == project:
                        return CliCommand(source, in_class=False)
    return CliCommand(classes[name].module, in_class=True)


def class_subcommands(root: Path, target: str, project: str) -> dict[str, CliCommand]:
    """`{"vllm run-batch": CliCommand("vllm.entrypoints.launchers.run_batch", False), "vllm
    bench serve": CliCommand("vllm.benchmarks.serve", False), ...}` for the console script
    `target` (`module:function`)."""
    module = target.partition(":")[0]
    package_dir = root / module.rsplit(".", 1)[0].replace(".", "/")
    if not package_dir.is_dir():
        return {}
    classes = _read_package(root, package_dir)
    out: dict[str, CliCommand] = {}
    for name in _registered(classes, root, package_dir):
        word = classes[name].command_name
        if word is None:
            continue
        lineage = {name, *_ancestors(classes, name)}
        groups = [
            cls for cls in classes
            if cls not in lineage and any(classes[d].command_name for d in _descendants(classes, cls))
            and any(isinstance(n, ast.Name) and n.id == cls for n in ast.walk(classes[name].node))
        ]
        if not groups:
            out.setdefault(f"{project} {word}", _parser_module(classes, name, project))
        for group in groups:
            for sub in _descendants(classes, group):
                sub_word = classes[sub].command_name
                if sub_word is not None:
                    out.setdefault(f"{project} {word} {sub_word}", _parser_module(classes, sub, project))
    return out
