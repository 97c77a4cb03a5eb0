"""Successors: where upstream itself moved or renamed a name between consecutive past releases.

The lineage (`lineage.py`) says a name was the project's; this says where it went, on the diff
stage's evidence (`analyzer.diff.symbols.compare_symbols`, what `atlas diff A B` prints: a git file
rename, a re-export that keeps the old import working, the same qualified name in another module, a
rename in place with the same parameters or methods). Chained through the past releases in order,
`vllm.v1.worker.gpu_worker.Worker.determine_num_available_blocks` at 0.6.6 becomes
`...Worker.determine_available_memory` at 0.8.5; the pin checked then says whether that name
still stands.

Plain data in and out; cached as JSON beside the lineage, per project and set of past pins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from analyzer.diff.models import SymbolMove
from analyzer.diff.symbols import name_words
from analyzer.refs.lineage import (
    PastName,
    pins_cache_path,
    read_pins_record,
    short_name,
    version_key,
    write_pins_record,
)
from analyzer.refs.models import Suggestion
from analyzer.refs.pinview import PinView
from analyzer.refs.resolve import short_name as pin_short_name

FORMAT = 2
# How many moves a chain may follow (a name renamed in every release is still a handful).
_MAX_STEPS = 12
# A home upstream's own diff vouches for, and that the pin still defines under that name.
CONFIDENCE = 0.7


@dataclass(frozen=True, slots=True)
class Successor:
    old: str  # dotted name at `release`
    new: str  # dotted name at `to`
    release: str  # `vllm@0.6.6-src`: the older pin of the pair
    to: str  # the next past pin
    kind: str  # the diff's: moved | renamed | re-exported | module | merged
    evidence: str  # the diff's first piece of evidence

    @property
    def says(self) -> str:
        """`vllm 0.8.5 renamed it to `X` (same parent ...)`: the note a finding carries."""
        if self.kind == "deprecated":
            return f"{_release(self.to)} deprecates it for `{self.new}` ({self.evidence})"
        verb = {"re-exported": "re-exports it as", "merged": "merged it into", "module": "moved it to"}.get(self.kind, f"{self.kind} it to")
        return f"{_release(self.to)} {verb} `{self.new}` ({self.evidence})"


Successors = dict[str, list[Successor]]  # old dotted name -> where it went, oldest release first


def _release(pin: str) -> str:
    return pin.removesuffix("-src").replace("@", " ")


def build_successors(root: str, pairs: Iterable[tuple[str, str, Iterable[SymbolMove]]], deprecated: Iterable[Successor] = ()) -> Successors:
    """`pairs`: (older pin, next pin, the diff's moves between them); `deprecated`: what the
    releases' deprecation messages name (`deprecations`). Only the project's package (`root`)
    counts: an sdist's tests and benchmarks move with it and are not what a reader cites."""
    out: Successors = {}
    for d in sorted(deprecated, key=lambda d: version_key(d.release)):
        out.setdefault(d.old, []).append(d)
    for older, newer, moves in sorted(pairs, key=lambda p: version_key(p[0])):
        for m in moves:
            if m.old.split(".", 1)[0] == root and m.new.split(".", 1)[0] == root and m.old != m.new:
                out.setdefault(m.old, []).append(Successor(m.old, m.new, older, newer, m.kind, m.evidence[0] if m.evidence else ""))
    return out


# "X is deprecated, use Y instead", "X: Deprecated, use Y", "'--x' is deprecated. Please use '--y ...'":
# the replacement a deprecation message names, and the name it is about when the line writes it.
_DEPRECATED_RE = re.compile(
    r"(?:[`'\"]?(?P<old>--[A-Za-z0-9][\w-]*|[A-Za-z_]\w*)[`'\"]?\s*(?::|\bis|\bhas been|\bwas)?\s+)?"
    r"\(?(?i:deprecated)[.,;:]?\s*(?i:please\s+)?(?i:use|set)\s+[`'\"]?(?P<new>--[A-Za-z0-9][\w-]*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
)
_FLAG_LITERAL_RE = re.compile(r"['\"](--[A-Za-z0-9][\w-]*)['\"]")
_FIELD_RE = re.compile(r"\s*([A-Za-z_]\w*)\s*[:=]")
_LOOK_BACK = 6  # lines from a flag's name to its `help=` in one `add_argument(...)` call


def _named_like_code(name: str) -> bool:
    """A flag, a dotted name, or an identifier with an underscore or a capital after its first
    letter: not a word of the message (`use async with`, `use prefill/decode`)."""
    return name.startswith("--") or "." in name or "_" in name.strip("_") or any(c.isupper() for c in name[1:])


def deprecations(root: str, release: str, files: Mapping[str, str], classes: Sequence[tuple[str, str, int, int]]) -> list[Successor]:
    """What a release's own deprecation messages name as the replacement of a flag or a field:
    `files` (package-relative path -> source text, read as text, never run), `classes` (dotted
    name, path, first and last line) to qualify a field by the class its message sits in. The
    name deprecated is the one the line writes before "deprecated", else, for a `help=` text, the
    flag its `add_argument(...)` names just above, else, for a comment, the field just below."""
    out: list[Successor] = []
    for path, text in sorted(files.items()):
        if not path.startswith(root + "/") or "/third_party/" in path:
            continue
        lines = text.splitlines()
        for i, line in enumerate(lines):
            m = _DEPRECATED_RE.search(line)
            if m is None:
                continue
            old, new = m.group("old"), m.group("new")
            if old is None and line.lstrip().startswith(("help=", "'", '"')):
                flags = [f for back in lines[max(0, i - _LOOK_BACK):i] for f in _FLAG_LITERAL_RE.findall(back)]
                old = flags[-1] if flags else None
            elif old is None and line.lstrip().startswith("#") and i + 1 < len(lines):
                field = _FIELD_RE.match(lines[i + 1])
                old = field.group(1) if field else None
            if old is None or old == new or not _named_like_code(old) or not _named_like_code(new) or old.startswith("--") != new.startswith("--"):
                continue
            owner = "" if old.startswith("--") else _enclosing(classes, path, i + 1)
            full_old, full_new = (f"{owner}.{old}", new if "." in new else f"{owner}.{new}") if owner else (old, new)
            out.append(Successor(full_old, full_new, release, release, "deprecated", f"`{line.strip()[:120]}` at {path}:{i + 1}"))
    return out


def _enclosing(classes: Sequence[tuple[str, str, int, int]], path: str, line: int) -> str:
    inside = [(full, first) for full, where, first, last in classes if where == path and first <= line <= last]
    return max(inside, key=lambda c: c[1])[0] if inside else ""


def follow(past: PastName, successors: Successors) -> list[Successor]:
    """The moves from `past` (a name as its newest past release defined it) forward, in release
    order: each step is the move of the name itself or of its nearest enclosing class or module
    (a class that moved took its methods), out of the release the name is at; [] when none."""
    name, release = past.full, past.release
    steps: list[Successor] = []
    seen = {name}
    while len(steps) < _MAX_STEPS:
        step = _move_of(name, release, successors)
        if step is None:
            break
        move, rest = step
        name, release = move.new + rest, move.to
        if name in seen:
            break
        seen.add(name)
        steps.append(Successor(move.old + rest, name, move.release, move.to, move.kind, move.evidence))
    return steps


def _move_of(name: str, release: str, successors: Successors) -> tuple[Successor, str] | None:
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        owner, rest = ".".join(parts[:cut]), "".join("." + p for p in parts[cut:])
        moves = [m for m in successors.get(owner, []) if version_key(m.release) >= version_key(release)]
        if moves:
            first = min(version_key(m.release) for m in moves)
            out = [m for m in moves if version_key(m.release) == first]
            # Two moves out of one release (a function copied to two homes): no one successor.
            return (out[0], rest) if len({m.new for m in out}) == 1 else None
    return None


def _words(name: str) -> set[str]:
    return set(name_words(name))


def successor_home(past: Sequence[PastName], successors: Successors, pin: PinView, owner: str | None = None) -> Suggestion | None:
    """Where upstream took a past name: the end of the chain of moves out of one of its past
    definitions (`past`, newest first, as `lineage.past_names` gives them), where `pin` defines
    that name in full. Definitions that went to different homes (`Worker.x` renamed one way,
    `Executor.x` another) are told apart by the class names of the newest release that defined
    the name (it had a `Worker.x`, not an `Executor.x`), or, where the reference writes an owner
    (`owner`: `model_executor` of `model_executor.x()`), by the class whose words it all writes;
    none when that leaves several."""
    found: dict[str, tuple[str, list[Successor]]] = {}  # replacement -> (its past short name, the chain)
    for name in past:
        steps = follow(name, successors)
        entries = pin.table.named(steps[-1].new) if steps else []
        if len(entries) == 1:
            found.setdefault(pin_short_name(entries[0], pin), (short_name(name), steps))
    if owner is not None:
        # `model_executor.x()`: the chain out of a class whose words the owner writes (`Executor.x`).
        written = _words(owner.rsplit(".", 1)[-1])
        found = {k: v for k, v in found.items() if "." in v[0] and _words(v[0].rsplit(".", 2)[-2]) <= written}
    elif len(found) > 1:
        # V0's `Worker` kept `x` to the end while V1's `Worker` renamed it: the newest release's
        # own class names pick the chain a reader of that release's name would follow.
        newest = {short_name(n) for n in past if n.release == past[0].release}
        found = {k: v for k, v in found.items() if v[0] in newest}
    if len(found) != 1:
        return None
    (replacement, (_, steps)), = found.items()
    entry = pin.table.named(steps[-1].new)[0]
    return Suggestion(replacement, CONFIDENCE, "; ".join(s.says for s in steps), entry.location)


def written_owner(text: str) -> str | None:
    """What a reference writes before its name (`model_executor` of `model_executor.x()`,
    `parallel_config` of `self.parallel_config.x`), which its target may drop; None for a bare
    name or `self.x` (a snippet's own class, not necessarily the one that defined `x`)."""
    written = text.strip("`").split("(", 1)[0].removeprefix("self.")
    return written.rsplit(".", 1)[0] if "." in written else None


def deprecated_home(target: str, owner: str | None, flag: bool, successors: Successors, pin: PinView) -> Suggestion | None:
    """The replacement a past release's deprecation message names for a gone flag or field
    (`deprecations`), where `pin` still has it: the flag itself, or the field of the class the
    message sat in (`ParallelConfig.distributed_executor_backend`), found once at the pin. A
    field written with an owner (`parallel_config.worker_use_ray`) takes only a class whose
    words the owner all writes (`ParallelConfig`, not `SchedulerConfig`); none when several
    messages are left."""
    if flag:
        said = [d for d in successors.get(target, []) if d.kind == "deprecated"]
        new = said[-1].new if said else None
        if new is None or new not in pin.flag_map:
            return None
        entry = pin.flag_map[new]
        # "Please set `--moe-a2a-backend` to 'deepep' instead": the flag with the value it names,
        # where the pin's flag still takes that value.
        to = re.search(rf"{re.escape(new)}[`'\"]?\s+to\s+[`'\"]?(?P<value>[\w.-]+)", said[-1].evidence)
        values = entry.choices or entry.typed_values
        if to is not None and to.group("value") in values:
            new = f"{new} {to.group('value')}"
        return Suggestion(new, CONFIDENCE, said[-1].says, entry.defined_at)
    last = target.rsplit(".", 1)[-1]
    said = [d for moves in successors.values() for d in moves if d.kind == "deprecated" and "." in d.old and d.old.rsplit(".", 1)[-1] == last]
    if owner is not None:
        words = _words(owner.rsplit(".", 1)[-1])
        said = [d for d in said if _words(d.old.rsplit(".", 2)[-2]) <= words]
    homes = {".".join(d.new.split(".")[-2:]) for d in said}
    if len(homes) != 1:
        return None
    entries = pin.find_symbol(homes.pop())
    if len(entries) != 1:
        return None
    return Suggestion(pin_short_name(entries[0], pin), CONFIDENCE, said[-1].says, entries[0].location)


def _cache_path(cache_dir: Path, project: str, pins: Sequence[str]) -> Path:
    return pins_cache_path(cache_dir, project, pins, f"s{FORMAT}")


def save_successors(cache_dir: Path, project: str, pins: Sequence[str], successors: Successors) -> None:
    rows = [[s.old, s.new, s.release, s.to, s.kind, s.evidence] for moves in successors.values() for s in moves]
    write_pins_record(_cache_path(cache_dir, project, pins), FORMAT, project, pins, "moves", rows)


def cached_successors(cache_dir: Path, project: str, pins: Sequence[str]) -> Successors | None:
    record = read_pins_record(_cache_path(cache_dir, project, pins), FORMAT, pins)
    if record is None:
        return None
    out: Successors = {}
    for old, new, release, to, kind, evidence in record["moves"]:
        out.setdefault(old, []).append(Successor(old, new, release, to, kind, evidence))
    return out
