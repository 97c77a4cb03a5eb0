"""A pin's commands besides its server, read once and cached beside the pin's words: the
console script's subcommands (`sglang generate`, the diffusion side of `sglang serve`) with
their parsers' options, the known benchmark commands (`vllm bench serve`), and every option a
parser of the project registers by a literal name (its tools and scripts).

A flag written with no command may be any of these; finding out reads a few dozen modules
(under a second), so the result is kept on disk, keyed like the words (pin and store commit),
and a warm check never pays it again.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.flags.cli_classes import CliCommand
from analyzer.flags.entry_points import dispatched_subcommands, registered_subcommands
from analyzer.refs.commandflags import CommandFlags, interpret, read_literal
from analyzer.refs.jsoncache import read_record, write_record
from analyzer.refs.shell import SERVER_COMMANDS

if TYPE_CHECKING:
    from analyzer.refs.pinview import PinView

FORMAT = 5  # bump when what the index reads changes (entry_flags, the literal reader): old files are then ignored
_KEY = "\0index"
# `add_argument("--x", "--x-alias", ...)`: the option strings a call spells first.
_REGISTERED_RE = re.compile(r"""add_argument\(\s*((?:[rRbB]?["']-[^"'\n]*["']\s*(?:,\s*|\)))+)""")
_OPTION_RE = re.compile(r"""["'](-[^"'\n]*)["']""")


@dataclass(frozen=True, slots=True)
class CommandIndex:
    subcommands: dict[str, str]  # `sglang generate` -> `sglang.cli.generate`
    commands: dict[str, CommandFlags | None]  # every command but the server, with its parser's options
    registered: dict[str, str]  # option -> the first file that registers it


def project_index(pin: PinView) -> CommandIndex:
    cache = pin.memo
    if _KEY not in cache:
        path = _cache_path(pin)
        index = _load(path) if path is not None else None
        if index is None:
            index = _build(pin)
            if path is not None and pin.tree is not None:
                _save(path, index)
        cache[_KEY] = index
    found: CommandIndex = cache[_KEY]
    return found


def subcommands(pin: PinView) -> dict[str, str]:
    """`sglang generate` -> the module its console script's `main` imports to run it."""
    return project_index(pin).subcommands


def other_commands(pin: PinView) -> list[str]:
    """Every command of the project whose parser is not the server's: where a flag written
    alone (no command in the passage) may come from."""
    return list(project_index(pin).commands)


def registered_options(pin: PinView) -> dict[str, str]:
    """Every option some parser of the project registers by a literal name, anywhere in its
    package (tools, benchmarks, the scripts a guide ships beside itself), with the file of the
    first registration."""
    return project_index(pin).registered


def _build(pin: PinView) -> CommandIndex:
    if pin.tree is None:
        return CommandIndex({}, {}, {})
    root = Path(pin.tree)
    dispatched: dict[str, str] = {}
    registered: dict[str, CliCommand] = {}
    for project in pin.packages:
        dispatched.update(dispatched_subcommands(root, project))
        registered.update(registered_subcommands(root, project))
    # The server's own subcommand is judged against the server's flags, not read again here.
    registered = {c: r for c, r in registered.items() if c not in SERVER_COMMANDS}
    # The interpreter runs the parser a module builds or the adders it defines. Options added
    # by a CLI class's own methods (several commands to a module) are read as literal names.
    commands: dict[str, CommandFlags | None] = {c: interpret(pin, m) for c, m in dispatched.items()}
    for command, found in registered.items():
        parsed = None if found.in_class else interpret(pin, found.module)
        commands[command] = parsed or read_literal(pin, found.module)
    subs = {**dispatched, **{c: r.module for c, r in registered.items()}}
    return CommandIndex(subs, commands, _registered(root, pin.packages))


def _registered(root: Path, packages: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "add_argument" not in text:
                continue
            rel = path.relative_to(root).as_posix()
            for call in _REGISTERED_RE.finditer(text):
                for option in _OPTION_RE.findall(call.group(1)):
                    found.setdefault(option, rel)
    return found


def _cache_path(pin: PinView) -> Path | None:
    """Beside the pin's words cache (refs/words/PIN.COMMIT.wN.json -> refs/commands/PIN.COMMIT.cN.json)."""
    if not pin.words_path:
        return None
    words = Path(pin.words_path)
    stem = words.name.rsplit(".w", 1)[0]
    return words.parent.parent / "commands" / f"{stem}.c{FORMAT}.json"


def _load(path: Path) -> CommandIndex | None:
    data = read_record(path, FORMAT)
    if data is None:
        return None
    try:
        commands = {c: _flags(v) for c, v in data["commands"].items()}
        return CommandIndex(dict(data["subcommands"]), commands, dict(data["registered"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # damaged: read the sources again


def _flags(value: dict[str, Any] | None) -> CommandFlags | None:
    if value is None:
        return None
    return CommandFlags(
        value["module"], frozenset(value["flags"]), bool(value["complete"]), bool(value["server"]),
        tuple(value["prefixes"]), tuple(value["suffixes"]),
    )


def _save(path: Path, index: CommandIndex) -> None:
    commands = {
        c: None if f is None else {**asdict(f), "flags": sorted(f.flags)}
        for c, f in index.commands.items()
    }
    write_record(path, FORMAT, {"subcommands": index.subcommands, "commands": commands, "registered": index.registered})
