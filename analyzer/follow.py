"""Following upstream: check a book against its pins and every newer release at
once, and say per reference where it first broke and where it went.

`atlas check --against latest` (every locked release newer than the book's pin
of the same project) or `--against vllm@0.31.0 --against vllm@0.33.0`;
`atlas watch` locks the newest releases first, then does the same and exits
non-zero (with SARIF) when anything broke. The checker does the resolving
(`check_upgrade` between the book's pin and each newer one); this module only
orders the releases and folds the findings into one timeline per reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from analyzer.refs.check import check_upgrade, extract_all
from analyzer.refs.config import BookConfig, RefsError, load_book
from analyzer.refs.models import BROKEN, OK, Finding
from analyzer.refs.suggest import History
from analyzer.settings import Settings

if TYPE_CHECKING:
    from rich.console import Console

    from analyzer.diff.models import VersionDiff
    from analyzer.refs.run import PinLoader

LATEST = "latest"


@dataclass(slots=True)
class Timeline:
    """One reference followed from the book's pin through newer releases."""

    file: str
    line: int
    text: str
    pin: str  # the book's pin it was checked from
    statuses: dict[str, str] = field(default_factory=dict)  # newer release -> status
    broke_in: str | None = None  # first newer release where it is broken (ok at the pin)
    went_to: str | None = None  # best suggestion there, "replacement (confidence)"
    final: Finding | None = None  # the finding against the newest release

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "text": self.text,
            "pin": self.pin,
            "statuses": self.statuses,
            "broke_in": self.broke_in,
            "went_to": self.went_to,
        }


def _version(ref: str) -> Version | None:
    try:
        return Version(ref.partition("@")[2])
    except InvalidVersion:
        return None


def newer_releases(pin: str, against: list[str], locked: list[str]) -> list[str]:
    """The releases of `pin`'s project to follow it through, oldest first:
    `latest` means every locked release newer than the pin."""
    project = pin.partition("@")[0].lower()
    base = _version(pin)
    chosen: set[str] = set()
    for item in against:
        if item == LATEST:
            chosen |= {
                r for r in locked
                if r.partition("@")[0] == project and base is not None
                and (v := _version(r)) is not None and v > base
            }
        elif item.partition("@")[0].strip().lower() == project and item.strip() != pin:
            chosen.add(item.strip())
    return sorted(chosen, key=lambda r: (_version(r) or Version("0"), r))


def follow_book(
    settings: Settings,
    paths: list[Path],
    against: list[str],
    loader: PinLoader,
    *,
    locked: list[str] | None = None,
) -> tuple[BookConfig, list[Timeline], list[str]]:
    """Timelines for every reference of every pinned project; the releases followed."""
    from analyzer.refs.loader import store_renames
    from analyzer.refs.run import read_documents

    if locked is None:
        from analyzer.snapshots import load_locks

        locked = list(load_locks())
    book = load_book(paths)
    if not book.pins:
        raise RefsError("no pins: add `pins = [\"vllm@0.30.0\", ...]` to atlas.toml")
    unknown = [a for a in against if a != LATEST and a.partition("@")[0].lower() not in
               {p.partition("@")[0].lower() for p in book.pins}]
    if unknown:
        raise RefsError(f"--against {', '.join(unknown)}: the book pins no release of that project")
    refs = extract_all(read_documents(book), book.ignores)
    timelines: dict[tuple[str, int, int, str, str], Timeline] = {}
    followed: list[str] = []
    for pin in book.pins:
        releases = newer_releases(pin, against, locked)
        if not releases:
            continue
        old = loader(settings, pin)
        for release in releases:
            new = loader(settings, release)
            followed.append(release)
            history = History(old, store_renames(settings, old, new))
            for finding in check_upgrade(refs, old, new, history):
                ref = finding.ref
                key = (ref.file, ref.line, ref.col, ref.text, pin)
                line = timelines.setdefault(key, Timeline(ref.file, ref.line, ref.text, pin))
                line.statuses[release] = finding.status
                line.final = finding
                if finding.status == BROKEN and finding.previous_status == OK and line.broke_in is None:
                    line.broke_in = release
                    best = finding.best
                    if best is not None:
                        line.went_to = f"{best.replacement} ({best.confidence:.2f})"
    ordered = sorted(timelines.values(), key=lambda t: (t.file, t.line, t.text))
    return book, ordered, followed


def broken_timelines(timelines: list[Timeline]) -> list[Timeline]:
    return [t for t in timelines if t.broke_in is not None]


def print_timelines(console: Console, timelines: list[Timeline], followed: list[str], *, show_all: bool = False) -> None:
    """A table of the references that broke (all of them with `show_all`), then one summary line."""
    from rich.markup import escape
    from rich.table import Table

    broken = broken_timelines(timelines)
    rows = timelines if show_all else broken
    if rows:
        table = Table(title="what breaks in newer releases", title_justify="left")
        for column in ("where", "reference", "book pin", "first broken in", "went to"):
            table.add_column(column, overflow="fold")
        for t in rows:
            table.add_row(
                f"{escape(t.file)}:{t.line}", escape(t.text), t.pin, t.broke_in or "—",
                escape(t.went_to or ("no suggestion" if t.broke_in else "")),
            )
        console.print(table)
    console.print(
        f"{len(timelines)} references followed through {', '.join(followed) or 'no newer release'}: "
        f"{len(broken)} break",
        highlight=False,
    )


def sarif_for(book: BookConfig, timelines: list[Timeline]) -> dict[str, object]:
    """SARIF of the references that broke, as found against the newest release followed."""
    from analyzer.refs.report import to_sarif
    from analyzer.refs.run import source_uri

    findings = [t.final for t in broken_timelines(timelines) if t.final is not None]
    return to_sarif(findings, {book.display(p): source_uri(p) for p in book.files})


def follow_command(
    settings: Settings,
    paths: list[Path],
    against: list[str],
    as_json: bool,
    sarif: Path | None,
    show_all: bool,
) -> int:
    """`atlas check --against ...` (and the second half of `atlas watch`): the exit
    status, 1 when a reference breaks in a newer release, 2 on bad input."""
    import json
    import sys

    from rich.console import Console

    from analyzer.commandline import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, print_error, stdout_console
    from analyzer.refs.loader import load_pin

    err = Console(stderr=True, soft_wrap=True)
    try:
        book, timelines, followed = follow_book(settings, paths, against, load_pin)
    except RefsError as exc:
        print_error(str(exc))
        return EXIT_ERROR
    if as_json:
        payload = {"followed": followed, "references": [t.to_dict() for t in timelines]}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
    elif sarif != Path("-"):
        print_timelines(stdout_console(), timelines, followed, show_all=show_all)
    if sarif is not None:
        text = json.dumps(sarif_for(book, timelines), indent=2)
        if sarif == Path("-"):
            sys.stdout.write(text + "\n")
        else:
            sarif.write_text(text + "\n", encoding="utf-8")
    if not followed:
        err.print(
            "[yellow]no newer release to follow[/]: lock one first "
            "(`atlas snapshot lock vllm@latest`) or name it with --against PROJECT@VERSION"
        )
    return EXIT_FINDINGS if broken_timelines(timelines) else EXIT_OK


# ------------------------------------------------------------------ a changelog for an author


def _cited(paths: list[Path]) -> tuple[set[tuple[str, ...]], set[str], set[str], set[str]]:
    """What a book cites: symbols (as dotted parts), modules, flags, env vars."""
    from analyzer.refs.models import ENV, FLAG, PATH, SYMBOL
    from analyzer.refs.run import read_documents

    book = load_book(paths)
    symbols: set[tuple[str, ...]] = set()
    modules: set[str] = set()
    flags: set[str] = set()
    envs: set[str] = set()
    for ref in extract_all(read_documents(book), book.ignores):
        target = ref.target.strip()
        if ref.kind == SYMBOL:
            symbols.add(tuple(p for p in target.split(".") if p))
        elif ref.kind == PATH and target.endswith(".py"):
            module = target.removeprefix("python/").removesuffix(".py").removesuffix("/__init__")
            modules.add(module.replace("/", "."))
        elif ref.kind == FLAG:
            flags.add(_flag_key(target))
        elif ref.kind == ENV:
            envs.add(target)
    return symbols, modules, flags, envs


def _flag_key(flag: str) -> str:
    return flag.strip().lstrip("-").replace("_", "-").lower()


def _symbol_cited(name: str, symbols: set[tuple[str, ...]], modules: set[str]) -> bool:
    """A changed definition concerns the book when the book cites it, something inside
    it (`Scheduler.schedule` when `Scheduler` went), or the module it lives in."""
    parts = tuple(name.split("."))
    for cited in symbols:
        n = len(cited)
        if any(parts[i : i + n] == cited for i in range(len(parts) - n + 1)):
            return True
        # The cited name lives inside the changed one: `Scheduler.schedule` when
        # `vllm.core.Scheduler` went (the changed name's tail is the cited name's head).
        if any(cited[:k] == parts[-k:] for k in range(1, min(n, len(parts) + 1))):
            return True
    return any(name == m or name.startswith(m + ".") for m in modules)


def limit_to_cited(diff: VersionDiff, paths: list[Path]) -> VersionDiff:
    """Keep only the changes that touch what the book at `paths` cites: symbols
    (and what contains them), cited modules, flags and env vars. Call-graph
    sections are dropped: a book cites names, not edges."""
    symbols, modules, flags, envs = _cited(paths)
    diff.added = [n for n in diff.added if any(n.startswith(m + ".") for m in modules)]
    diff.removed = [n for n in diff.removed if _symbol_cited(n, symbols, modules)]
    diff.moved = [m for m in diff.moved if _symbol_cited(m.old, symbols, modules)]
    diff.modules = [m for m in diff.modules if _symbol_cited(m.old, symbols, modules)]
    diff.flags_added = [f for f in diff.flags_added if _flag_key(f) in flags]
    diff.flags_removed = [f for f in diff.flags_removed if _flag_key(f) in flags]
    diff.options_added = [f for f in diff.options_added if _flag_key(f) in flags]
    diff.options_removed = [f for f in diff.options_removed if _flag_key(f) in flags]
    diff.envs_added = [e for e in diff.envs_added if e in envs]
    diff.envs_removed = [e for e in diff.envs_removed if e in envs]
    diff.concepts = []
    diff.warnings.append(
        f"limited to what {', '.join(str(p) for p in paths) or 'the book'} cites: "
        f"{len(symbols)} symbols, {len(modules)} modules, {len(flags)} flags, {len(envs)} env vars"
    )
    return diff
