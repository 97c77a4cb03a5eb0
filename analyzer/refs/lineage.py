"""The lineage: what past releases of a project defined, as evidence that a name was once its code.

A reader who remembers vLLM 0.6 knows that `profile_num_available_blocks` or `CacheEngine` were
vLLM's names; the pins checked today no longer spell them, so nothing else vouches for them. The
lineage is built from the symbol tables of past pins (their views, `loader.load_pin`: indexed,
never imported) and kept as plain data: a name's last component -> where past releases defined
it, newest release first. It is only evidence of where a name lived; a reference is still judged
against the pins checked.

Plain data in and out; cached as JSON per project and set of past pins.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.refs.classify import BUILTINS, FOREIGN_NAMES, PACKAGE_ROOTS, PYTHON_BUILTINS
from analyzer.refs.jsoncache import read_record, write_record
from analyzer.refs.pinview import is_native
from analyzer.refs.symbols import SymbolEntry

FORMAT = 1
# The past pins `--past` reads when none are named: a spread by era, chosen on the projects'
# histories (vLLM's V0 engine, V0 with V1 beside it, V1 alone, then about every second V1 release
# up to today's pins, so that a rename is seen between two releases close enough for the diff to
# pair the names; SGLang's first router-era release, its frontend-first releases, the srt
# runtime's growth, the scheduler's split, 0.5 up to its last release with an sdist), each the
# sdist pinned as a git commit (`benchmarks/past_pins.py`).
DEFAULT_PAST = (
    "vllm@0.2.7-src", "vllm@0.4.3-src", "vllm@0.6.6-src", "vllm@0.8.5-src", "vllm@0.10.2-src", "vllm@0.12.0-src",
    "vllm@0.13.0-src", "vllm@0.14.1-src", "vllm@0.16.0-src", "vllm@0.18.1-src", "vllm@0.20.0-src", "vllm@0.22.1-src",
    "vllm@0.25.1-src", "vllm@0.27.1-src", "vllm@0.29.0-src",
    "sglang@0.1.6-src", "sglang@0.1.18-src", "sglang@0.2.15-src", "sglang@0.3.6-src", "sglang@0.4.6.post4-src",
    "sglang@0.5.2-src", "sglang@0.5.8-src", "sglang@0.5.10-src",
)
# What a past release vouches for: its definitions (an import is another module's name, an
# attribute or a local a variable's, often a common word of the field: `batch_size`).
_KINDS = ("class", "function", "module")


@dataclass(frozen=True, slots=True)
class PastName:
    release: str  # `vllm@0.6.6-src`: the past pin that defined it (the newest that did)
    full: str  # `vllm.worker.worker.Worker.profile_num_available_blocks`
    kind: str  # class | function | module
    path: str  # package-relative file

    @property
    def evidence(self) -> str:
        return f"was `{self.full}` at {self.release.removesuffix('-src').replace('@', ' ')}"


Lineage = dict[str, list[PastName]]  # last component -> past definitions, newest release first


def version_key(pin: str) -> tuple[int, ...]:
    version = pin.split("@", 1)[-1].removesuffix("-src")
    return tuple(int(n) for n in re.findall(r"\d+", version))


def build_lineage(project: str, past: Iterable[tuple[str, Iterable[SymbolEntry]]]) -> Lineage:
    """`past`: (pin name, its symbols) of past releases of `project`, in any order. Each
    qualified name is kept once, at the newest release that defined it; only the project's
    package counts (an sdist's tests and benchmarks are not names a reader cites)."""
    root = PACKAGE_ROOTS.get(project, project)
    newest: dict[str, PastName] = {}
    for pin, symbols in sorted(past, key=lambda p: version_key(p[0])):
        for e in symbols:
            if e.kind in _KINDS and e.full.split(".", 1)[0] == root and not is_native(e.path):
                newest[e.full] = PastName(pin, e.full, e.kind, e.path)
    out: Lineage = {}
    for name in sorted(newest.values(), key=lambda n: (version_key(n.release), n.full), reverse=True):
        out.setdefault(name.full.rsplit(".", 1)[-1], []).append(name)
    return out


def pins_cache_path(cache_dir: Path, project: str, pins: Sequence[str], suffix: str) -> Path:
    """Where a record drawn from these past pins is cached (one file per project, set of pins and kind)."""
    key = hashlib.sha256("\n".join(sorted(pins)).encode()).hexdigest()[:12]
    return cache_dir / "refs" / "lineage" / f"{project}.{key}.{suffix}.json"


def read_pins_record(path: Path, version: int, pins: Sequence[str]) -> dict[str, Any] | None:
    """The cached record at `path` when it was drawn from exactly these pins, else None."""
    record = read_record(path, version)
    return record if record is not None and record.get("pins") == sorted(pins) else None


def write_pins_record(path: Path, version: int, project: str, pins: Sequence[str], key: str, rows: list[list[str]]) -> None:
    """Cache `rows` under `key`, with the project and pins they were drawn from (`read_pins_record`)."""
    write_record(path, version, {"project": project, "pins": sorted(pins), key: rows})


def _cache_path(cache_dir: Path, project: str, pins: Sequence[str]) -> Path:
    return pins_cache_path(cache_dir, project, pins, f"l{FORMAT}")


def save_lineage(cache_dir: Path, project: str, pins: Sequence[str], lineage: Lineage) -> None:
    rows = [[n.release, n.full, n.kind, n.path] for names in lineage.values() for n in names]
    write_pins_record(_cache_path(cache_dir, project, pins), FORMAT, project, pins, "names", rows)


def cached_lineage(cache_dir: Path, project: str, pins: Sequence[str]) -> Lineage | None:
    record = read_pins_record(_cache_path(cache_dir, project, pins), FORMAT, pins)
    if record is None:
        return None
    out: Lineage = {}
    for release, full, kind, path in record["names"]:
        out.setdefault(full.rsplit(".", 1)[-1], []).append(PastName(release, full, kind, path))
    return out


# Words a past match alone does not make code: English and Python's own words that the projects
# also define (`forward`, `step`), and names other libraries define as well.
_COMMON = frozenset({"forward", "config", "model", "step", "run", "init", "generate", "schedule", "execute", "load", "update"})
# `snake_case` with an underscore, a class of two humps or more, or a dotted name.
_SHAPED_RE = re.compile(r"_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+|_*[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|_*[A-Z]{2,}[a-z][A-Za-z0-9]*")

# A private name of one word (`_preempt`, not `__init__` nor `_x`).
_PRIVATE_RE = re.compile(r"_[a-z][a-z0-9]{3,}")


def code_shaped(name: str) -> bool:
    """Whether a name reads as code by its shape alone (`_run_workers`, `CacheEngine`,
    `worker.profile_num_available_blocks`), not as a word of the sentence."""
    parts = name.split(".")
    if any(not p.isidentifier() or keyword.iskeyword(p) for p in parts):
        return False
    last = parts[-1]
    if last in _COMMON or last in BUILTINS or last in PYTHON_BUILTINS or last in FOREIGN_NAMES:
        return False
    if _PRIVATE_RE.fullmatch(last) and last[1:] not in _COMMON:
        return True  # `_preempt`: no word of a sentence starts with an underscore
    return (len(parts) > 1 and ("_" in last.strip("_") or _SHAPED_RE.fullmatch(last) is not None)) or _SHAPED_RE.fullmatch(last) is not None


def past_names(name: str, project: str, lineages: Mapping[str, Lineage]) -> list[PastName]:
    """Where past releases of `project` defined `name` (`Class.member` or `module.name` must
    match the end of the past qualified name), newest first; [] for a name not shaped like code
    (the precision guard: a one-word lowercase name, a common or another library's word)."""
    lineage = lineages.get(project)
    if not lineage or not code_shaped(name):
        return []
    name = name.removeprefix("self.")
    dotted = "." + name
    return [n for n in lineage.get(name.rsplit(".", 1)[-1], []) if "." not in name or n.full.endswith(dotted)]


def short_name(past: PastName) -> str:
    """`Worker.profile_num_available_blocks` for a method, the name alone otherwise: how the
    checker's suggestions follow a past name to the pin (a class's member, or a module's name)."""
    parts = past.full.split(".")
    # A method's or a nested name's owner starts with a capital; modules are lower case.
    owners = [i for i, p in enumerate(parts[:-1]) if p[:1].isupper()]
    return ".".join(parts[owners[0]:]) if owners else parts[-1]
