"""The past releases' evidence the toolkit ships: what `--past` reads, without the past releases.

`atlas check --past` builds a lineage (`lineage.py`: the names past releases defined) and the
successors (`successors.py`: where upstream's diffs between them took a name) from past pins,
which must be fetched and indexed first. Both are plain name tables, a few hundred kilobytes for
the default past pins (`lineage.DEFAULT_PAST`), so they are shipped with the toolkit
(`snapshots/past/<project>.json.gz`, names and paths only, no code) and read whenever a check
names no past release of a project itself: a reader of a book on vLLM 0.30 still learns that
`CacheEngine` was vLLM's, with no network. `benchmarks/past_pins.py --bundle` rebuilds them.

Plain data in and out; a file that cannot be read is an error that names it, never a silent
check without the evidence.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from analyzer.paths import bundled_dir
from analyzer.refs.config import RefsError
from analyzer.refs.lineage import Lineage, PastName
from analyzer.refs.successors import Successor, Successors

FORMAT = 1


def bundle_path(project: str, root: Path | None = None) -> Path:
    return (root or bundled_dir("snapshots")) / "past" / f"{project}.json.gz"


def write_bundle(path: Path, project: str, pins: Sequence[str], lineage: Lineage, successors: Successors) -> None:
    """Rows in the order the lineage and the successors hold them (newest release first within a
    name, oldest first within a move: what `--past` reads) and the gzip header's time left out:
    the same evidence, the same bytes."""
    record = {
        "format": FORMAT,
        "project": project,
        "pins": sorted(pins),
        "names": [[n.release, n.full, n.kind, n.path] for names in lineage.values() for n in names],
        "moves": [[s.old, s.new, s.release, s.to, s.kind, s.evidence] for moves in successors.values() for s in moves],
    }
    data = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    tmp.replace(path)


def read_bundle(project: str, root: Path | None = None) -> tuple[list[str], Lineage, Successors] | None:
    """(past pins, lineage, successors) the toolkit ships for `project`; None when it ships none."""
    path = bundle_path(project, root)
    if not path.is_file():
        return None
    try:
        record = json.loads(gzip.decompress(path.read_bytes()))
        if record.get("format") != FORMAT or record.get("project") != project:
            raise ValueError(f"format {record.get('format')!r} of {record.get('project')!r}, expected {FORMAT} of {project!r}")
        lineage: Lineage = {}
        for release, full, kind, rel in record["names"]:
            lineage.setdefault(full.rsplit(".", 1)[-1], []).append(PastName(release, full, kind, rel))
        successors: Successors = {}
        for old, new, release, to, kind, evidence in record["moves"]:
            successors.setdefault(old, []).append(Successor(old, new, release, to, kind, evidence))
        return list(record["pins"]), lineage, successors
    except (OSError, EOFError, gzip.BadGzipFile, ValueError, KeyError, TypeError) as exc:
        raise RefsError(f"cannot read the shipped past-release evidence {path}: {exc} (check with --no-past)") from None


def shipped_past(projects: Iterable[str], root: Path | None = None) -> tuple[dict[str, Lineage], dict[str, Successors]]:
    """(lineages, successors) the toolkit ships, for those of `projects` it ships any for."""
    lineages: dict[str, Lineage] = {}
    successors: dict[str, Successors] = {}
    for project in sorted(set(projects)):
        found = read_bundle(project, root)
        if found is not None:
            _, lineages[project], successors[project] = found
    return lineages, successors
