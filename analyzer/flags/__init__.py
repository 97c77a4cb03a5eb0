"""Command-line flags and environment variables of vLLM / SGLang releases, read statically.

    extract_flags(package_root, "vllm")  -> list[Flag]   (the `vllm serve` parser)
    extract_envs(package_root, "sglang") -> list[EnvVar] (the `Envs` registry)
    command_report(package_root, "sglang generate") -> EntryFlags (another command's parser)

`flag_report` / `env_report` return the same lists plus the warnings about
anything that could not be resolved statically.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.flags.entry_flags import EntryFlags, entry_flags
from analyzer.flags.entry_points import command_module
from analyzer.flags.models import EnvReport, EnvVar, Flag, FlagReport, FlagsError, Positional
from analyzer.flags.sglang_envs import extract_sglang_envs
from analyzer.flags.sglang_flags import extract_sglang_flags
from analyzer.flags.source import SourceTree
from analyzer.flags.vllm_envs import extract_vllm_envs
from analyzer.flags.vllm_flags import extract_vllm_flags

PROJECTS = ("vllm", "sglang")

__all__ = [
    "EntryFlags", "EnvReport", "EnvVar", "Flag", "FlagReport", "FlagsError", "Positional",
    "command_report", "detect_project", "env_report", "extract_envs", "extract_flags", "flag_report",
]


def detect_project(package_root: Path) -> str:
    """Which project a package root holds (`vllm/` or `sglang/` beside each other is ambiguous)."""
    found = [p for p in PROJECTS if (package_root / p).is_dir()]
    if len(found) != 1:
        what = "both vllm/ and sglang/" if found else "neither vllm/ nor sglang/"
        raise FlagsError(f"{package_root}: holds {what}; pass the project explicitly")
    return found[0]


def _tree(package_root: Path, project: str | None) -> tuple[SourceTree, str]:
    root = Path(package_root)
    if not root.is_dir():
        raise FlagsError(f"{root}: not a directory")
    if root.name in PROJECTS and (root / "__init__.py").is_file():
        root = root.parent  # given the package itself (…/vllm) rather than the folder holding it
    name = project or detect_project(root)
    if name not in PROJECTS:
        raise FlagsError(f"unknown project {name!r}; expected one of {', '.join(PROJECTS)}")
    if not (root / name).is_dir():
        raise FlagsError(f"{root}: no {name}/ package in this directory")
    return SourceTree(root), name


def flag_report(package_root: Path, project: str | None = None) -> FlagReport:
    tree, name = _tree(package_root, project)
    report = extract_vllm_flags(tree) if name == "vllm" else extract_sglang_flags(tree)
    _mark_negations(report.flags)
    return report


def command_report(package_root: Path, command: str) -> EntryFlags:
    """The parser of a command other than the server (`sglang generate`, `vllm bench serve`, a
    module as `python -m` runs it)."""
    root = Path(package_root)
    if root.name in PROJECTS and (root / "__init__.py").is_file():
        root = root.parent
    module = command_module(root, command)
    if module is None:
        raise FlagsError(f"{command!r}: no such command or module in {root}")
    found = entry_flags(SourceTree(root), module)
    if found is None:
        raise FlagsError(f"{command!r} ({module}): no parser found in that module")
    _mark_negations(found.report.flags)
    return found


def env_report(package_root: Path, project: str | None = None) -> EnvReport:
    tree, name = _tree(package_root, project)
    return extract_vllm_envs(tree) if name == "vllm" else extract_sglang_envs(tree)


def extract_flags(package_root: Path, project: str | None = None, warnings: list[str] | None = None) -> list[Flag]:
    """Options the server's parser accepts; unresolved spots are appended to `warnings` if given."""
    report = flag_report(package_root, project)
    if warnings is not None:
        warnings.extend(report.warnings)
    return report.flags


def extract_envs(package_root: Path, project: str | None = None, warnings: list[str] | None = None) -> list[EnvVar]:
    report = env_report(package_root, project)
    if warnings is not None:
        warnings.extend(report.warnings)
    return report.envs


def _mark_negations(flags: list[Flag]) -> None:
    """`--disable-x` (store_false) registered beside `--enable-x` on the same dest negates it."""
    by_dest: dict[str, list[Flag]] = {}
    for f in flags:
        by_dest.setdefault(f.dest, []).append(f)
    for group in by_dest.values():
        positives = [f for f in group if f.action != "store_false"]
        for f in group:
            if f.action == "store_false" and positives:
                f.negates = positives[0].flag
