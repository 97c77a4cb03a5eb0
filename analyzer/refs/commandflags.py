"""Flags of the projects' other entry points (benchmarks, profiling and offline scripts, the
console script's other subcommands), read statically from the pinned sources: `vllm bench
serve`, `python -m sglang.bench_serving`, `sglang generate`.

A console subcommand (`sglang generate`, the diffusion side of `sglang serve`) is found from the
console script's dispatch and its parser run by the flags interpreter (analyzer/flags/entry_flags.py).
Other commands are read as below.

A flag belongs to the command the passage runs: a benchmark's `--num-prompts` is judged
against the benchmark's own parser, never against the server's. The parser is found by
reading (never importing) the command's module and the project modules it imports:
every `add_argument("--x", ...)` whose name is a literal. When some names are not
literals (`add_argument(f"--{name}")`), the set is incomplete and a flag missing from it
is not called broken.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analyzer.refs.pinview import PinView

# Parsers whose flags are the engine's or server's own (`EngineArgs.add_cli_args(parser)`).
_SERVER_PARSERS = {"EngineArgs", "AsyncEngineArgs", "ServerArgs"}
# The modules of the servers' own parsers (a class of those names elsewhere is another parser).
_MAIN_PARSER_MODULES = {"vllm.engine.arg_utils", "vllm.entrypoints.openai.cli_args", "sglang.srt.server_args"}
_MAX_DEPTH = 2
_SHIM_LINES = 60  # a module this short that re-exports another (`from x import *`) is followed


@dataclass(frozen=True, slots=True)
class CommandFlags:
    module: str  # the module whose parser was read
    flags: frozenset[str]
    complete: bool  # every add_argument name was a literal
    server: bool  # the command also takes the engine/server flags
    # Option families the command reads from the arguments its parser left over:
    # `--component-paths.<x>` (prefixes), `--<x>-path` (suffixes).
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()

    def takes(self, spellings: set[str]) -> bool:
        """Whether the command accepts any of these spellings of one option."""
        if spellings & self.flags:
            return True
        return any(
            s.startswith(self.prefixes) or any(s.endswith(x) and len(s) > len(x) + 2 for x in self.suffixes)
            for s in spellings if s.startswith("--")
        )


def _module_file(pin: PinView, module: str) -> str | None:
    base = module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__init__.py", f"{base}/__main__.py"):
        if candidate in pin.files:
            return candidate
    return None


def _resolve_relative(current: str, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    package = current.split(".")
    package = package[: len(package) - node.level]
    return ".".join([*package, node.module] if node.module else package) or None


def command_flags(pin: PinView, command: str) -> CommandFlags | None:
    """The flags a command other than the server's own parser accepts at this pin (a
    benchmark's, `sglang generate`'s, the diffusion side of `sglang serve`), or None when the
    command's module is not in the snapshot (or the snapshot's sources are not on disk)."""
    cache = pin.memo
    if command in cache:
        return cache[command]
    # Imported here: the index reads the parsers through this module.
    from analyzer.refs.commandindex import project_index

    index = project_index(pin)
    if command in index.commands:
        result = index.commands[command]
    else:
        result = read_literal(pin, command)
        if result is not None and not result.flags and (target := delegate(pin, command)) is not None:
            # A deprecated `python -m` path kept as a shim: its parser is the module it runs.
            found = interpret(pin, target)
            if found is not None:
                result = CommandFlags(target, found.flags, found.complete, result.server, found.prefixes, found.suffixes)
    cache[command] = result
    return result


def delegate(pin: PinView, module: str) -> str | None:
    """The project module a shim's main block runs (`if __name__ == "__main__": from
    vllm.entrypoints.launchers.run_batch import main, parse_args`), when the shim itself
    registers no option; None for any other module."""
    path = _module_file(pin, module)
    if path is None or pin.tree is None:
        return None
    try:
        tree = ast.parse((Path(pin.tree) / path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for stmt in tree.body:
        if not (isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test)):
            continue
        for node in ast.walk(stmt):
            target = _resolve_relative(module, node) if isinstance(node, ast.ImportFrom) else None
            if target and target.split(".", 1)[0] in pin.packages and target != module and _module_file(pin, target) is not None:
                return target
    return None


def interpret(pin: PinView, module: str) -> CommandFlags | None:
    """The parsers the subcommand's module builds, run by the flags interpreter."""
    from analyzer.flags.entry_flags import accepted, entry_flags
    from analyzer.flags.source import SourceTree

    if pin.tree is None:
        return None
    found = entry_flags(SourceTree(Path(pin.tree)), module)
    if found is None:
        return None
    return CommandFlags(module, frozenset(accepted(found.report) | set(found.by_hand)), found.complete, False,
                        tuple(found.prefixes), tuple(found.suffixes))


def _script_file(pin: PinView, command: str) -> str | None:
    """The package file a script run by path is (`python python/sglang/x/run_suite.py`: the
    repository's layout prefix dropped), when the snapshot holds it."""
    path = command.removeprefix("./")
    if pin.layout_prefix and path.startswith(pin.layout_prefix):
        path = path[len(pin.layout_prefix):]
    return path if path.endswith(".py") and path in pin.files else None


def read_literal(pin: PinView, command: str) -> CommandFlags | None:
    """The command's module (`python -m` form, or a script run by path) and the project modules
    it imports, read for `add_argument` literals."""
    module = command
    script = _script_file(pin, command) if command.endswith(".py") else None
    if script is not None:
        # A script run by path: read like a module (its own folder is its "parent").
        module = script.removesuffix(".py").replace("/", ".")
    if module.split(".", 1)[0] not in pin.packages or pin.tree is None:
        return None
    start = script or _module_file(pin, module)
    if start is None:
        return None
    parent = module.rsplit(".", 1)[0]
    flags: set[str] = set()
    complete = True
    server = False
    seen: set[str] = set()
    queue: list[tuple[str, str, int]] = [(module, start, 0)]
    while queue:
        name, path, depth = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        try:
            source = (Path(pin.tree) / path).read_text(encoding="utf-8", errors="replace")
            tree = ast.parse(source)
        except (OSError, SyntaxError, ValueError):
            complete = False
            continue
        shim = source.count("\n") < _SHIM_LINES
        # Where each name of the file comes from (`ServerArgs` from the diffusion runtime's own
        # server_args, not the server's).
        origins = {a.asname or a.name: target for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and (target := _resolve_relative(name, node)) for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "add_argument" and node.args:
                    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                    if len(names) < len(node.args):
                        complete = False
                    flags.update(n for n in names if n.startswith("-"))
                elif node.func.attr == "add_cli_args" and isinstance(node.func.value, ast.Name) and node.func.value.id in _SERVER_PARSERS:
                    origin = origins.get(node.func.value.id)
                    if origin is None or origin in _MAIN_PARSER_MODULES or origin.split(".", 1)[0] not in pin.packages or depth >= _MAX_DEPTH:
                        server = True
                    elif file := _module_file(pin, origin):
                        # Another parser of the same class name (`sglang.multimodal_gen`'s
                        # `ServerArgs`): its own options, read like the command's.
                        queue.append((origin, file, depth + 1))
            elif isinstance(node, ast.ImportFrom) and depth < _MAX_DEPTH:
                target = _resolve_relative(name, node)
                if not target or target.split(".", 1)[0] not in pin.packages:
                    continue
                related = target.startswith(parent + ".") or ".benchmark" in target or shim
                for alias in node.names:
                    # `from vllm.benchmarks.datasets import add_dataset_parser` may name a module or a member.
                    for mod in (f"{target}.{alias.name}", target):
                        file = _module_file(pin, mod)
                        if file and related:
                            queue.append((mod, file, depth + 1))
                            break
    return CommandFlags(module, frozenset(flags), complete, server)
