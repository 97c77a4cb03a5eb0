"""The check itself, for `atlas check` and the demo: read a book's documents,
extract their references and resolve them against its pins (or an upgrade)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator
from pathlib import Path

from analyzer.refs.check import check_references, check_upgrade, extract_all
from analyzer.refs.config import BookConfig, RefsError, load_book
from analyzer.refs.lineage import Lineage
from analyzer.refs.models import Finding
from analyzer.refs.notebook import notebook_markdown
from analyzer.refs.past_bundle import shipped_past
from analyzer.refs.pinview import PinView
from analyzer.refs.successors import Successors
from analyzer.refs.suggest import History
from analyzer.settings import Settings

PinLoader = Callable[[Settings, str], PinView]


def read_documents(book: BookConfig) -> list[tuple[str, str]]:
    """(display name, markdown text) per document; notebooks give their markdown cells."""
    docs = []
    for path in book.files:
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RefsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        if path.suffix.lower() == ".ipynb":
            text = notebook_markdown(text, str(path))
        docs.append((book.display(path), text))
    return docs


def source_uri(path: Path) -> str:
    """A file's path relative to the working directory (the repository, in CI) when it lies under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


# Allocations between young-generation collections while a check runs (Python's default: 700).
_YOUNG_THRESHOLD = 200_000


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """Python's cycle collector, run far less often for the length of a check, then as before.

    A check builds a few hundred thousand small objects that live until it ends (the past
    releases' names, the pins' answers, the findings) and frees almost none of them; at the
    default thresholds the collector keeps rescanning them (a fifth of a book's check time on
    `benchmarks/check_bench.py`). mypy runs its build under the same thresholds."""
    before = gc.get_threshold()
    gc.set_threshold(_YOUNG_THRESHOLD, 30, 30)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@few_collections()
def run_check(
    settings: Settings,
    paths: list[Path],
    pins: list[str],
    from_pin: str | None,
    to_pin: str | None,
    loader: PinLoader,
    past: list[str] | None = None,
    *,
    use_past: bool = True,
) -> tuple[BookConfig, list[Finding], str]:
    """Findings for a book, and a title for the report. `past`: past releases as evidence that a
    name was the project's (`lineage.py`), replacing the book's `past` for their projects; for
    the other projects, the evidence the toolkit ships (`past_bundle.py`). `use_past` off: the
    pins alone judge (no past release, the book's or the shipped)."""
    if (from_pin is None) != (to_pin is None):
        raise RefsError("--from and --to go together")
    book = load_book(paths, pins, past)
    refs = extract_all(read_documents(book), book.ignores)
    if from_pin is not None and to_pin is not None:
        old, new = loader(settings, from_pin), loader(settings, to_pin)
        if old.project != new.project:
            raise RefsError(f"--from and --to must name the same project ({old.project} vs {new.project})")
        from analyzer.refs.loader import store_renames

        history = History(old, store_renames(settings, old, new))
        return book, check_upgrade(refs, old, new, history), f"{old.pin} → {new.pin}"
    if not book.pins:
        raise RefsError("no pins: add `pins = [\"vllm@0.30.0\", ...]` to atlas.toml or pass --pin")
    views = [loader(settings, p) for p in book.pins]
    lineages: dict[str, Lineage] = {}
    successors: dict[str, Successors] = {}
    if book.past and use_past:
        from analyzer.refs.loader import load_lineages, load_successors

        lineages, successors = load_lineages(settings, book.past), load_successors(settings, book.past)
    if use_past:
        # A project whose past releases the book does not name: the evidence the toolkit ships.
        shipped_lineages, shipped_successors = shipped_past({v.project for v in views} - set(lineages))
        lineages, successors = {**lineages, **shipped_lineages}, {**successors, **shipped_successors}
    return book, check_references(refs, views, lineages=lineages or None, successors=successors or None), ", ".join(book.pins)
