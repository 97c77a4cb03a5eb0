"""`run_report`: choose the columns, open them and render the site (what `atlas report`
and the demo run; no CLI code here)."""

from __future__ import annotations

import re
from pathlib import Path

from analyzer.paths import REPO_ROOT, is_source_checkout, reference_root, sample_book
from analyzer.pinned import PinnedTree
from analyzer.report.build import ReportResult, build_report
from analyzer.report.sources import ReportError, snapshot_side, tree_side
from analyzer.settings import Settings

ENGINE_DIR = reference_root()
DEFAULT_OUT = REPO_ROOT / "reports"


def version_key(version: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"[.+-]", version))


def newest_per_project(refs: list[str]) -> list[str]:
    """One release per upstream column: the newest of each project among `refs`."""
    newest: dict[str, str] = {}
    for ref in refs:
        project, _, version = ref.partition("@")
        if project in ("vllm", "sglang") and (
            project not in newest or version_key(version) > version_key(newest[project].partition("@")[2])
        ):
            newest[project] = ref
    return [newest[p] for p in ("vllm", "sglang") if p in newest]


def newest_releases() -> list[str]:
    """The newest locked release of each upstream project (`--newest`)."""
    from analyzer.snapshots import load_locks

    return newest_per_project(list(load_locks()))


def book_columns(pins: tuple[str, ...] | list[str]) -> list[str]:
    """A book's first vLLM pin and first SGLang pin, in that order."""
    first: dict[str, str] = {}
    for pin in pins:
        first.setdefault(pin.partition("@")[0].strip().lower(), pin.strip())
    return [first[p] for p in ("vllm", "sglang") if p in first]


def default_columns() -> tuple[list[str], str]:
    """The report's columns when none are named, and why: the pins of the book
    project around the working directory, else the sample book's, else the
    newest locked releases. One setting (atlas.toml's pins) serves check and report."""
    from analyzer.project import ProjectError, find_project, read_project

    try:
        project = find_project()
        if project is not None and book_columns(project.pins):
            return book_columns(project.pins), f"the pins of {project.config}"
        sample = sample_book() / "atlas.toml"
        if sample.is_file() and book_columns(read_project(sample).pins):
            return (
                book_columns(read_project(sample).pins),
                "the pins of the sample book examples/book/atlas.toml "
                "(`atlas report --newest` shows the newest locked releases)",
            )
    except ProjectError as exc:
        raise ReportError(str(exc)) from None
    return newest_releases(), "the newest locked release of each project"


def default_releases() -> list[str]:
    return default_columns()[0]


def default_out() -> Path:
    """`reports/` of the book project, else of the source checkout, else of the working directory."""
    from analyzer.project import ProjectError, find_project

    try:
        project = find_project()
    except ProjectError:
        project = None
    if project is not None:
        return project.root / "reports"
    if is_source_checkout():
        return DEFAULT_OUT
    return Path.cwd() / "reports"


def open_sides(settings: Settings, releases: list[str], *, progress: bool) -> dict[str, PinnedTree | None]:
    """The reference engine plus one release per upstream project."""
    projects = [ref.split("@", 1)[0] for ref in releases]
    for ref, project in zip(releases, projects, strict=True):
        # Checked before anything is indexed: a typo should cost no time.
        if project not in ("vllm", "sglang") or "@" not in ref:
            raise ReportError(f"{ref!r}: a report column is vllm@VERSION or sglang@VERSION")
        if projects.count(project) > 1:
            raise ReportError(f"{ref}: one release per project (got {projects.count(project)} for {project})")
    sides: dict[str, PinnedTree | None] = {"reference": tree_side(settings, "reference", ENGINE_DIR)}
    for ref, project in zip(releases, projects, strict=True):
        sides[project] = snapshot_side(settings, ref, progress=progress)
    return sides


def run_report(
    settings: Settings,
    *,
    out: Path | None = None,
    releases: list[str] | None = None,
    newest: bool = False,
    columns_from: str | None = None,
    mappings_dir: Path | None = None,
    only: list[str] | None = None,
    fmt: str = "both",
    graphviz: bool = True,
    progress: bool = False,
) -> ReportResult:
    """Load the catalogue, open the sides, render. Raises ReportError with a readable message."""
    from analyzer.mappings import MappingError, load_mappings
    from analyzer.snapshots import SnapshotError

    try:
        concepts = load_mappings(mappings_dir)
    except MappingError as exc:
        raise ReportError("the concept mappings have problems:\n  " + "\n  ".join(exc.problems)) from None
    catalogue = concepts
    if only:
        known = {c.id for c in concepts}
        unknown = [c for c in only if c not in known]
        if unknown:
            raise ReportError(f"no concept mapping named {', '.join(unknown)} (have: {', '.join(sorted(known))})")
        concepts = [c for c in concepts if c.id in only]
    if releases is not None:
        columns_from = columns_from or "chosen with --release"
    elif newest:
        releases, columns_from = newest_releases(), "the newest locked release of each project (--newest)"
    else:
        releases, columns_from = default_columns()
    out = out if out is not None else default_out()
    try:
        sides = open_sides(settings, releases, progress=progress)
    except SnapshotError as exc:
        raise ReportError(str(exc)) from None
    try:
        return build_report(concepts, sides, out, fmt=fmt, dot=graphviz, columns_from=columns_from,
                            catalogue=catalogue)
    except OSError as exc:
        raise ReportError(f"cannot write the report under {out}: {exc}") from None
