"""Which module runs a command: `sglang generate` -> `sglang.cli.generate`, read from the
project's console script (`*.dist-info/entry_points.txt`: `sglang = sglang.cli.main:main`) and
the dispatch in that function (`if args.subcommand == "generate": from sglang.cli.generate
import generate`). Static: the files are read, never imported."""

from __future__ import annotations

import ast
from pathlib import Path

# `vllm bench <sub>` runs these modules' `add_cli_args(parser)` (vLLM's CLI registers its
# subcommands through classes, not a dispatch this module reads).
KNOWN_COMMANDS = {
    "vllm bench serve": "vllm.benchmarks.serve",
    "vllm bench latency": "vllm.benchmarks.latency",
    "vllm bench throughput": "vllm.benchmarks.throughput",
    "vllm bench startup": "vllm.benchmarks.startup",
    "vllm bench mm-processor": "vllm.benchmarks.mm_processor",
}


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
    """`{"sglang generate": "sglang.cli.generate", ...}`: each subcommand the console script
    dispatches by comparing a word with a literal and importing a project module for it. A
    tree without a dist-info (a git checkout) is read at `<project>.cli.main:main`."""
    target = console_script(root, project) or f"{project}.cli.main:main"
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
    """The module whose parser `command` runs: a subcommand (`sglang generate`), a known
    command (`vllm bench serve`), or a module given as `python -m` takes it (`sglang.bench_serving`)."""
    if " " not in command.strip():
        return command.strip() if _module_path(root, command.strip()) is not None else None
    project = command.split()[0]
    return KNOWN_COMMANDS.get(command) or subcommand_modules(root, project).get(command)
