"""A book project: the folder holding `atlas.toml`, found from the working directory.

    [book]
    manuscript = ["chapters"]      # files / folders `atlas check` reads by default
    lock_dir = "locks"             # lock files for the pins, beside atlas.toml

    [check]
    pins = ["vllm@0.30.0", "sglang@0.5.20"]   # what the book is written against
    ignore = ["nano_engine.*"]

One file serves every command run inside the folder: `atlas check` checks the
manuscript against the pins, `atlas report` draws the pins as its columns,
`atlas snapshot lock` writes into the lock folder, and every pin is looked up
there before the toolkit's own lock files. Plain data only: no stage imported.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

CONFIG_NAME = "atlas.toml"
PROJECT_ENV = "ATLAS_PROJECT"  # a folder holding atlas.toml; overrides the search from cwd
DEFAULT_LOCK_DIR = "locks"


class ProjectError(Exception):
    """atlas.toml is unreadable or malformed; the message is shown to the user."""


@dataclass(frozen=True, slots=True)
class BookProject:
    """Read from atlas.toml; owned by nobody (rebuilt on each lookup, never mutated)."""

    root: Path  # the folder holding atlas.toml
    manuscript: tuple[Path, ...]  # absolute; the root itself when atlas.toml names none
    pins: tuple[str, ...]
    lock_dir: Path  # absolute; may not exist yet

    @property
    def config(self) -> Path:
        return self.root / CONFIG_NAME


def find_config(start: Path) -> Path | None:
    folder = start if start.is_dir() else start.parent
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / CONFIG_NAME).is_file():
            return candidate / CONFIG_NAME
    return None


def _strings(value: object, key: str, source: Path) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProjectError(f"{source}: `{key}` must be a list of strings")
    return tuple(value)


def read_project(config: Path) -> BookProject:
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ProjectError(f"{config}: {exc}") from None
    book = data.get("book", {})
    check = data.get("check", data)
    if not isinstance(book, dict) or not isinstance(check, dict):
        raise ProjectError(f"{config}: [book] and [check] must be tables")
    root = config.parent.resolve()
    manuscript = tuple(root / p for p in _strings(book.get("manuscript"), "manuscript", config))
    lock_dir = book.get("lock_dir", DEFAULT_LOCK_DIR)
    if not isinstance(lock_dir, str) or not lock_dir:
        raise ProjectError(f"{config}: `lock_dir` must be a folder name")
    return BookProject(
        root=root,
        manuscript=manuscript or (root,),
        pins=_strings(check.get("pins"), "pins", config),
        lock_dir=(root / lock_dir).resolve(),
    )


def find_project(start: Path | None = None) -> BookProject | None:
    """The project around `start` (default: `$ATLAS_PROJECT`, else the working directory)."""
    if start is None:
        env = os.environ.get(PROJECT_ENV)
        start = Path(env).expanduser() if env else Path.cwd()
    config = find_config(start)
    return read_project(config) if config is not None else None


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "]"


def write_config(
    root: Path,
    *,
    manuscript: list[str],
    pins: list[str],
    ignore: list[str],
    lock_dir: str = DEFAULT_LOCK_DIR,
) -> Path:
    """Write a fresh atlas.toml (refusing to replace one)."""
    path = root / CONFIG_NAME
    if path.exists():
        raise ProjectError(f"{path} already exists; edit it (or remove it to start over)")
    text = f"""# A Serving Atlas book project: commands run in this folder use these settings.
[book]
# Markdown files / folders (and notebooks) `atlas check` reads when given no paths.
manuscript = {_toml_list(manuscript)}
# Lock files for the pins (`atlas snapshot lock vllm@0.31.0` writes here).
lock_dir = {json.dumps(lock_dir)}

[check]
# Releases (or git pins) the book is written against; `atlas report` draws them as columns.
pins = {_toml_list(pins)}
# Names in code font that are not upstream references (the book's own code, ...).
ignore = {_toml_list(ignore)}
"""
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
