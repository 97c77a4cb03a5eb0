"""Read `mappings/*.toml` into `ConceptMapping`s, strictly.

Unknown keys are errors (a typo such as `symbol =` would otherwise silently map
nothing), and every fault of every file is collected before raising, so one run
shows the author all of them. File layout:

    title = "Paged KV cache"
    summary = "one or two sentences"
    chapters = ["Chapter 3"]            # optional
    related = ["prefix-cache"]          # optional: other concept ids

    [reference]                         # our engine; also [vllm] and [sglang]
    status = "implemented"              # implemented | partial | not-implemented | unmapped
    note = "why partial / what is missing"
    symbols = ["pkg.mod.Class", { name = "pkg.mod.f", role = "...", releases = ["0.33.0"] }]
    entry_points = ["pkg.mod.Class.method"]
    flags = ["--block-size"]            # upstream only
    envs = ["VLLM_X"]                   # upstream only
    bridges = [{ name = "...", source = "a.b.send", target = "c.d.recv", transport = "zmq" }]
    dispatch = [{ source = "a.Runner.run", target = "m.Model.forward", call = "self.model(" }]
                                        # a call the call graph cannot follow (chosen at run time)

    [[steps]]                           # optional, in order, after the side tables
    title = "Admit waiting requests"
    explain = "one or two sentences, ours"
    reference = ["pkg.mod.Class.method"]                      # the symbol(s) doing it
    vllm = { symbols = ["..."], process = "EngineCore" }      # process: drawn as a boundary
    sglang = { none = "why SGLang has no counterpart" }       # a design difference
    # focus = ["if x > budget"]: lines the step's excerpt must show, as written in a step symbol
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from analyzer.mappings.models import (
    REFERENCE,
    SIDES,
    STATUSES,
    UPSTREAMS,
    Bridge,
    ConceptMapping,
    Dispatch,
    Focus,
    KnobRef,
    MappingError,
    SideMapping,
    Step,
    StepSide,
    SymbolRef,
)

MAPPINGS_ENV = "ATLAS_MAPPINGS_DIR"
_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
_DOTTED_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_FLAG_RE = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9_.-]*")
_ENV_RE = re.compile(r"[A-Z_][A-Z0-9_]*")
_VERSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+!-]*")

_TOP_KEYS = {"title", "summary", "chapters", "related", "steps", *SIDES}
_STEP_KEYS = {"title", "explain", *SIDES}
_STEP_SIDE_KEYS = {"symbols", "none", "process", "focus"}
_FOCUS_KEYS = {"text", "releases"}
_SIDE_KEYS = {"status", "note", "symbols", "entry_points", "flags", "envs", "bridges", "dispatch"}
_SYMBOL_KEYS = {"name", "role", "releases"}
_BRIDGE_KEYS = {"name", "source", "target", "transport", "carries", "note", "releases"}
_DISPATCH_KEYS = {"source", "target", "call", "note", "releases"}


def default_mappings_dir() -> Path:
    """`$ATLAS_MAPPINGS_DIR`, else `mappings/` beside the `analyzer` package (source checkout)."""
    import os

    env = os.environ.get(MAPPINGS_ENV)
    if env:
        return Path(env).expanduser()
    from analyzer.paths import bundled_dir

    return bundled_dir("mappings")


def load_mappings(dir: Path | None = None) -> list[ConceptMapping]:
    """Every concept in `dir` (default: the repository's `mappings/`), sorted by id.

    Raises MappingError listing every problem found in every file."""
    root = Path(dir) if dir is not None else default_mappings_dir()
    if not root.is_dir():
        raise MappingError([f"{root}: no such mappings directory"])
    problems: list[str] = []
    concepts: list[ConceptMapping] = []
    for path in sorted(root.iterdir()):
        if path.suffix in (".yaml", ".yml"):
            problems.append(f"{path.name}: YAML mappings are not supported; write TOML ({path.stem}.toml)")
            continue
        if path.suffix != ".toml" or not path.is_file():
            continue
        concept = load_mapping_file(path, problems)
        if concept is not None:
            concepts.append(concept)
    known = {c.id for c in concepts}
    for c in concepts:
        for other in c.related:
            if other not in known:
                problems.append(f"{c.path.name}: related concept {other!r} has no mapping file")
    if problems:
        raise MappingError(problems)
    return sorted(concepts, key=lambda c: c.id)


def load_concepts(dir: Path | None = None, concept_ids: list[str] | None = None) -> list[ConceptMapping]:
    """`load_mappings`, narrowed to `concept_ids` when given. Raises MappingError
    whose message is the whole user-facing error: every problem of unreadable
    mappings, or the unknown ids with the known ones."""
    try:
        concepts = load_mappings(dir)
    except MappingError as exc:
        raise MappingError(["the mappings cannot be read:", *(f"  {p}" for p in exc.problems)]) from None
    if concept_ids:
        known = {c.id for c in concepts}
        unknown = [c for c in concept_ids if c not in known]
        if unknown:
            raise MappingError([f"no such concept: {', '.join(unknown)} (known: {', '.join(sorted(known))})"])
        concepts = [c for c in concepts if c.id in concept_ids]
    return concepts


def load_mapping_file(path: Path, problems: list[str]) -> ConceptMapping | None:
    """One file; faults are appended to `problems` (prefixed by the file name)."""
    where = path.name
    if not _ID_RE.fullmatch(path.stem):
        problems.append(f"{where}: file name must be a concept id (lowercase letters, digits, '-')")
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"{where}: not valid TOML: {exc}")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{where}: cannot read: {exc}")
        return None
    before = len(problems)
    _unknown_keys(data, _TOP_KEYS, where, problems)
    title = _text(data, "title", where, problems, required=True)
    summary = _text(data, "summary", where, problems, required=True)
    chapters = _text_list(data, "chapters", where, problems)
    related = _text_list(data, "related", where, problems)
    for other in related:
        if not _ID_RE.fullmatch(other):
            problems.append(f"{where}: related: {other!r} is not a concept id")
    if REFERENCE not in data:
        problems.append(f"{where}: missing [reference] table (say status = \"not-implemented\" if so)")
    sides = {name: _side(name, data.get(name), where, problems) for name in SIDES if name in data}
    steps = _steps(data.get("steps", []), sides, where, problems)
    if len(problems) > before:
        return None
    return ConceptMapping(
        id=path.stem,
        title=title,
        summary=summary,
        path=path,
        reference=sides[REFERENCE],
        upstream={name: sides[name] for name in UPSTREAMS if name in sides},
        chapters=tuple(chapters),
        related=tuple(related),
        steps=tuple(steps),
    )


def _steps(raw: Any, sides: dict[str, SideMapping], where: str, problems: list[str]) -> list[Step]:
    if not isinstance(raw, list) or not all(isinstance(v, dict) for v in raw):
        problems.append(f"{where}: steps must be an array of tables ([[steps]])")
        return []
    out = []
    for i, item in enumerate(raw, start=1):
        spot = f"{where}: step {i}"
        _unknown_keys(item, _STEP_KEYS, spot, problems)
        title = _text(item, "title", spot, problems, required=True)
        explain = _text(item, "explain", spot, problems, required=True)
        per_side = {}
        for name in SIDES:
            if name in item:
                per_side[name] = _step_side(item[name], sides.get(name), f"{spot} ({title or '?'}) [{name}]", problems)
        if not per_side:
            problems.append(f"{spot}: names no side (reference, vllm, sglang)")
        out.append(Step(title, explain, per_side))
    return out


def _step_side(raw: Any, side: SideMapping | None, spot: str, problems: list[str]) -> StepSide:
    """A list of symbols (shorthand) or a table with `symbols` or `none`, and `process`."""
    table = {"symbols": raw} if isinstance(raw, list) else raw
    if not isinstance(table, dict):
        problems.append(f"{spot}: must be a list of symbols or a table")
        return StepSide()
    _unknown_keys(table, _STEP_SIDE_KEYS, spot, problems)
    symbols = _symbols(table, "symbols", spot, problems)
    none = _text(table, "none", spot, problems)
    process = _text(table, "process", spot, problems)
    focus = _focus(table, spot, problems)
    if focus and not symbols:
        problems.append(f"{spot}: focus names lines of the step's symbols; this side names none")
    if symbols and none:
        problems.append(f"{spot}: a step side names symbols or says why there is none, not both")
    elif not symbols and not none:
        problems.append(f"{spot}: name the symbol(s) or say why there is no counterpart (none = \"...\")")
    if symbols and side is not None and side.is_gap:
        problems.append(f"{spot}: the side's status is {side.status!r}; a step cannot name its symbols")
    return StepSide(tuple(symbols), none, process, tuple(focus))


def _focus(raw: dict[str, Any], where: str, problems: list[str]) -> list[Focus]:
    """`focus = ["text", { text = "...", releases = ["0.33.0"] }]`: what the step's excerpt must show."""
    value = raw.get("focus", [])
    if not isinstance(value, list):
        problems.append(f"{where}: focus must be a list of strings or tables")
        return []
    out = []
    for i, item in enumerate(value):
        spot = f"{where}: focus[{i}]"
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            problems.append(f"{spot}: must be a string or a table with text")
            continue
        _unknown_keys(item, _FOCUS_KEYS, spot, problems)
        text = _text(item, "text", spot, problems, required=True)
        if text:
            out.append(Focus(text, _releases(item, spot, problems)))
    return out


def _side(project: str, raw: Any, where: str, problems: list[str]) -> SideMapping:
    where = f"{where} [{project}]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be a table")
        return SideMapping(project=project, status="unmapped")
    _unknown_keys(raw, _SIDE_KEYS, where, problems)
    status = _text(raw, "status", where, problems, required=True)
    if status and status not in STATUSES:
        problems.append(f"{where}: status {status!r} is not one of {', '.join(STATUSES)}")
    note = _text(raw, "note", where, problems)
    symbols = _symbols(raw, "symbols", where, problems)
    entry_points = _symbols(raw, "entry_points", where, problems)
    flags = _knobs(raw, "flags", "flag", where, problems)
    envs = _knobs(raw, "envs", "env", where, problems)
    bridges = _bridges(raw, where, problems)
    dispatches = _dispatches(raw, where, problems)
    if project == REFERENCE and (flags or envs):
        problems.append(f"{where}: the reference engine has no flags / envs to map")
    if status in ("implemented", "partial") and not symbols:
        problems.append(f"{where}: status {status!r} needs at least one symbol")
    if status in ("not-implemented", "unmapped") and (symbols or entry_points or bridges):
        problems.append(f"{where}: status {status!r} cannot list symbols; use \"partial\"")
    if status in ("partial", "not-implemented") and not note:
        problems.append(f"{where}: status {status!r} needs a note saying what is missing")
    return SideMapping(
        project=project,
        status=status,
        note=note,
        symbols=tuple(symbols),
        entry_points=tuple(entry_points),
        flags=tuple(flags),
        envs=tuple(envs),
        bridges=tuple(bridges),
        dispatches=tuple(dispatches),
    )


def _entries(raw: dict[str, Any], key: str, where: str, problems: list[str]) -> list[dict[str, Any]]:
    """A list of strings (shorthand for `{ name = ... }`) or inline tables."""
    value = raw.get(key, [])
    if not isinstance(value, list):
        problems.append(f"{where}: {key} must be a list")
        return []
    out: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append({"name": item})
        elif isinstance(item, dict):
            out.append(item)
        else:
            problems.append(f"{where}: {key}[{i}] must be a string or a table")
    return out


def _releases(item: dict[str, Any], where: str, problems: list[str]) -> tuple[str, ...]:
    value = item.get("releases", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: releases must be a list of version strings")
        return ()
    for v in value:
        if not _VERSION_RE.fullmatch(v) or "@" in v:
            problems.append(f"{where}: release {v!r} must be a bare version like \"0.30.0\"")
    return tuple(value)


def _symbols(raw: dict[str, Any], key: str, where: str, problems: list[str]) -> list[SymbolRef]:
    return [SymbolRef(name, role, releases) for name, role, releases in _named(
        raw, key, _DOTTED_RE, "is not a dotted qualified name", where, problems)]


def _knobs(raw: dict[str, Any], key: str, kind: str, where: str, problems: list[str]) -> list[KnobRef]:
    pattern, example = (_FLAG_RE, "--block-size") if kind == "flag" else (_ENV_RE, "VLLM_USE_V1")
    return [KnobRef(name, kind, role, releases) for name, role, releases in _named(
        raw, key, pattern, f"does not look like a {kind} (e.g. {example})", where, problems)]


def _named(
    raw: dict[str, Any], key: str, pattern: re.Pattern[str], mismatch: str, where: str, problems: list[str]
) -> list[tuple[str, str, tuple[str, ...]]]:
    """A list of names or `{ name, role, releases }` tables (symbols, flags, env vars):
    each one's name, checked against `pattern` (else "'name' `mismatch`"), role and releases."""
    out = []
    for i, item in enumerate(_entries(raw, key, where, problems)):
        spot = f"{where}: {key}[{i}]"
        _unknown_keys(item, _SYMBOL_KEYS, spot, problems)
        name = _text(item, "name", spot, problems, required=True)
        if name and not pattern.fullmatch(name):
            problems.append(f"{spot}: {name!r} {mismatch}")
        out.append((name, _text(item, "role", spot, problems), _releases(item, spot, problems)))
    return out


def _bridges(raw: dict[str, Any], where: str, problems: list[str]) -> list[Bridge]:
    keys = ("name", "source", "target", "transport", "carries", "note")
    return [Bridge(**fields, releases=releases) for fields, releases in _edges(
        raw, "bridges", _BRIDGE_KEYS, keys, ("carries", "note"), where, problems)]


def _dispatches(raw: dict[str, Any], where: str, problems: list[str]) -> list[Dispatch]:
    keys = ("source", "target", "call", "note")
    return [Dispatch(**fields, releases=releases) for fields, releases in _edges(
        raw, "dispatch", _DISPATCH_KEYS, keys, ("note",), where, problems)]


def _edges(
    raw: dict[str, Any],
    key: str,
    allowed: set[str],
    keys: tuple[str, ...],
    optional: tuple[str, ...],
    where: str,
    problems: list[str],
) -> list[tuple[dict[str, str], tuple[str, ...]]]:
    """A list of tables each joining a `source` to a `target` symbol (bridges, dispatch):
    every table's `keys` as text, checked, and its releases."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        problems.append(f"{where}: {key} must be a list of tables")
        return []
    out = []
    for i, item in enumerate(value):
        spot = f"{where}: {key}[{i}]"
        _unknown_keys(item, allowed, spot, problems)
        fields = {k: _text(item, k, spot, problems, required=k not in optional) for k in keys}
        for end in ("source", "target"):
            if fields[end] and not _DOTTED_RE.fullmatch(fields[end]):
                problems.append(f"{spot}: {end} {fields[end]!r} is not a dotted qualified name")
        out.append((fields, _releases(item, spot, problems)))
    return out


def _text(raw: dict[str, Any], key: str, where: str, problems: list[str], *, required: bool = False) -> str:
    value = raw.get(key)
    if value is None:
        if required:
            problems.append(f"{where}: missing {key}")
        return ""
    if not isinstance(value, str):
        problems.append(f"{where}: {key} must be a string")
        return ""
    if required and not value.strip():
        problems.append(f"{where}: {key} is empty")
    return value.strip()


def _text_list(raw: dict[str, Any], key: str, where: str, problems: list[str]) -> list[str]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: {key} must be a list of strings")
        return []
    return [v.strip() for v in value]


def _unknown_keys(raw: dict[str, Any], allowed: set[str], where: str, problems: list[str]) -> None:
    for key in sorted(set(raw) - allowed):
        problems.append(f"{where}: unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")
