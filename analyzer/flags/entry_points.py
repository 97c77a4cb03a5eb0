"""Which module runs a command: `sglang generate` -> `sglang.cli.generate`, read from the
project's console script (`*.dist-info/entry_points.txt`: `sglang = sglang.cli.main:main`) and
the dispatch in that function (`if args.subcommand == "generate": from sglang.cli.generate
import generate`). Static: the files are read, never imported."""

from __future__ import annotations

import ast
from pathlib import Path

from analyzer.flags.cli_classes import CliCommand, class_subcommands


def console_script(root: Path, project: str) -> str | None:
    """`module:function` of the project's console script, from the dist-info beside the package."""
    for entry_points in sorted(root.glob("*.dist-info/entry_points.txt")):
        try:
            text = entry_points.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        section = ""
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("["):
                section = line
            elif section == "[console_scripts]" and "=" in line:
                name, target = (part.strip() for part in line.split("=", 1))
                if name == project:
                    return target
    return None


def _module_path(root: Path, module: str) -> Path | None:
    base = root / module.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def subcommand_modules(root: Path, project: str) -> dict[str, str]:
    """`{"sglang generate": "sglang.cli.generate", "vllm bench serve": "vllm.benchmarks.serve",
    ...}`: each subcommand of the console script, with the module whose parser it runs."""
    registered = {c: r.module for c, r in registered_subcommands(root, project).items()}
    return {**dispatched_subcommands(root, project), **registered}


def registered_subcommands(root: Path, project: str) -> dict[str, CliCommand]:
    """Subcommands registered as classes (vLLM's `CLISubcommand`s; cli_classes.py)."""
    return class_subcommands(root, _script_target(root, project), project)


def dispatched_subcommands(root: Path, project: str) -> dict[str, str]:
    return _dispatched(root, project, _script_target(root, project))


def _script_target(root: Path, project: str) -> str:
    """The console script's `module:function`; a tree without a dist-info (a git checkout) is
    read at `<project>.cli.main:main`, else at vLLM's `<project>.entrypoints.cli.main:main`."""
    target = console_script(root, project)
    if target is not None:
        return target
    candidates = (f"{project}.cli.main:main", f"{project}.entrypoints.cli.main:main")
    return next((t for t in candidates if _module_path(root, t.partition(":")[0]) is not None), candidates[0])


def _dispatched(root: Path, project: str, target: str) -> dict[str, str]:
    """Subcommands the console script's function dispatches by comparing a word with a
    literal and importing a project module for it (`if args.subcommand == "generate": from
    sglang.cli.generate import generate`)."""
    module, _, function = target.partition(":")
    path = _module_path(root, module)
    if path is None:
        return {}
    try:
        parsed = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    out: dict[str, str] = {}
    for fn in parsed.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name == (function or "main")):
            continue
        for node in ast.walk(fn):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)):
                continue
            words = [c.value for c in node.test.comparators if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            imports = [s for s in node.body if isinstance(s, ast.ImportFrom) and s.module and s.level == 0]
            if len(words) == 1 and imports and words[0] and " " not in words[0]:
                out.setdefault(f"{project} {words[0]}", imports[0].module or "")
    return out


def command_module(root: Path, command: str) -> str | None:
    """The module whose parser `command` runs: a subcommand (`sglang generate`, `vllm bench
    serve`), or a module given as `python -m` takes it (`sglang.bench_serving`)."""
    if " " not in command.strip():
        return command.strip() if _module_path(root, command.strip()) is not None else None
    project = command.split()[0]
    return subcommand_modules(root, project).get(" ".join(command.split()))
