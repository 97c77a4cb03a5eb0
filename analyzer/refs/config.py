"""The book's `atlas.toml` (pins and ignore list) and the Markdown files to check."""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.refs.models import Reference

CONFIG_NAME = "atlas.toml"
MARKDOWN_SUFFIXES = (".md", ".markdown", ".ipynb")  # notebooks are read as Markdown (see notebook.py)


class RefsError(Exception):
    """Bad input for the reference checker; the message is shown to the user."""


@dataclass(frozen=True, slots=True)
class BookConfig:
    root: Path | None  # folder holding atlas.toml, None when there is none
    pins: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    files: tuple[Path, ...] = field(default=())
    # Past releases (`past = ["vllm@0.6.6-src", ...]`): evidence that a name the pins no longer
    # define was the project's (`lineage.py`); none by default.
    past: tuple[str, ...] = ()

    def ignores(self, ref: Reference) -> bool:
        """Glob patterns matched against the text as written and the normalised target."""
        return any(fnmatch.fnmatchcase(ref.text, p) or fnmatch.fnmatchcase(ref.target, p) for p in self.ignore)

    def display(self, path: Path) -> str:
        """A file's name in findings: relative to the book root when there is one."""
        base = self.root or Path.cwd()
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            return path.as_posix()


def find_config(start: Path) -> Path | None:
    folder = start if start.is_dir() else start.parent
    for candidate in (folder.resolve(), *folder.resolve().parents):
        if (candidate / CONFIG_NAME).is_file():
            return candidate / CONFIG_NAME
    return None


def _strings(value: object, key: str, source: Path) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RefsError(f"{source}: `{key}` must be a list of strings")
    return tuple(value)


def collect_files(paths: list[Path]) -> tuple[Path, ...]:
    files: list[Path] = []
    for path in paths:
        if not path.exists():
            raise RefsError(f"no such file or folder: {path}")
        if path.is_dir():
            files.extend(p for p in sorted(path.rglob("*")) if p.suffix.lower() in MARKDOWN_SUFFIXES and p.is_file())
        elif path.suffix.lower() in MARKDOWN_SUFFIXES:
            files.append(path)
        else:
            raise RefsError(f"not a Markdown file or notebook: {path}")
    if not files:
        raise RefsError("no Markdown files found in " + ", ".join(str(p) for p in paths))
    return tuple(dict.fromkeys(files))


def _project_manuscript() -> tuple[Path, ...]:
    from analyzer.project import ProjectError, find_project

    try:
        project = find_project()
    except ProjectError as exc:
        raise RefsError(str(exc)) from None
    if project is None:
        raise RefsError(
            "name the Markdown files or folders to check, or run inside a book project "
            "(a folder with atlas.toml; `atlas init` writes one)"
        )
    return project.manuscript


def load_book(paths: list[Path], cli_pins: list[str] | None = None, cli_past: list[str] | None = None) -> BookConfig:
    """Files to check, and pins: atlas.toml's, with command-line pins replacing those of the same project
    (past pins likewise). Without paths: the manuscript the book project around the working directory names."""
    if not paths:
        paths = list(_project_manuscript())
    files = collect_files(paths)
    config_path = find_config(paths[0])
    pins: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    past: tuple[str, ...] = ()
    root = None
    if config_path is not None:
        root = config_path.parent
        try:
            data = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RefsError(f"{config_path}: {exc}") from None
        section = data.get("check", data)
        if not isinstance(section, dict):
            raise RefsError(f"{config_path}: [check] must be a table")
        pins = _strings(section.get("pins"), "pins", config_path)
        ignore = _strings(section.get("ignore"), "ignore", config_path)
        past = _strings(section.get("past"), "past", config_path)
    pins, past = _overridden(pins, cli_pins), _overridden(past, cli_past)
    for pin in (*pins, *past):
        project, sep, version = pin.partition("@")
        if not sep or not project or not version:
            raise RefsError(f"expected PROJECT@VERSION (e.g. vllm@0.30.0), got {pin!r}")
    return BookConfig(root=root, pins=pins, ignore=ignore, files=files, past=past)


def _overridden(pins: tuple[str, ...], cli: list[str] | None) -> tuple[str, ...]:
    """The config's pins less those of a project the command line names, then the command line's."""
    if not cli:
        return pins
    overridden = {p.partition("@")[0].strip().lower() for p in cli}
    return tuple(p for p in pins if p.partition("@")[0].strip().lower() not in overridden) + tuple(cli)
