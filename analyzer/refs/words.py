"""Every identifier a pin's sources spell, defined or merely used.

The symbol index knows what a pin defines. A name in code font that is defined nowhere is
either a removed name (broken) or one the sources use without defining it: a keyword
argument, a config key read with `getattr`, a dependency's function the project imports.
Telling the two apart needs the words themselves, so they are collected once per pin (a few
seconds) and kept beside its view, read only when a check meets a name no pin defines.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from analyzer.refs.jsoncache import read_record, write_record

_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SOURCE_SUFFIXES = (".py", ".pyi", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".cu", ".cuh", ".inl", ".rs")
# Where a package names its plugins and entry points (`lora_filesystem_resolver = "vllm...:f"`).
_PACKAGING_FILES = ("entry_points.txt", "pyproject.toml", "setup.cfg")
_ENV_LITERAL_RE = re.compile(r"[\"'](?P<name>(?:VLLM|SGLANG|SGL)_[A-Z0-9_]+)[\"']")
# A literal the sources read only to say it is gone: `if os.getenv("SGLANG_X"): raise ... "removed"`.
_RETIRED_RE = re.compile(r"\b(?:has been removed|was removed|is removed|no longer (?:supported|used|exists|has any effect))\b", re.IGNORECASE)
# A metric the sources name in full (`Gauge(name="vllm:num_requests_running")`), and one whose
# name they build at run time (`f"vllm:{name}"`, `"vllm:" + name`).
_METRIC_RE = re.compile(r"[\"'](?P<name>(?:vllm|sglang):[A-Za-z_][A-Za-z0-9_]*)[\"']")
_BUILT_METRIC_RE = re.compile(r"f[\"'](?:vllm|sglang):\{|[\"'](?:vllm|sglang):[\"']\s*\+")
FORMAT = 8


@dataclass(frozen=True, slots=True)
class SourceWords:
    """Identifiers of one pin's sources (Python and native), and env var literals the sources
    read only to report them removed. Owned by the `PinView` that loaded it."""

    words: frozenset[str]
    retired_env: frozenset[str]
    metrics: frozenset[str] = frozenset()
    # The words of the paths of the files that build metric names at run time (`kv`, `offload`,
    # `kvcr` of vllm/v1/kv_offload/tiering/kvcr/manager.py): a missing name may be one of theirs.
    metrics_built_in: frozenset[str] = frozenset()
    # Whole string literals that are names (`"fp8"`, `"awq_marlin"`): what a registry can hold.
    quoted: frozenset[str] = frozenset()
    # `model_runner.add_lora`: a member read on an object of two words or more, as code writes it.
    members: frozenset[str] = frozenset()


def _source_files(roots: list[Path]) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in {".git", "__pycache__"}]
            out.extend(Path(folder) / f for f in files if f.endswith(_SOURCE_SUFFIXES) or f in _PACKAGING_FILES)
    return out


def collect(roots: list[Path]) -> SourceWords:
    """Read every source file under `roots` (statically; nothing is imported)."""
    words: set[str] = set()
    live: set[str] = set()
    retired: set[str] = set()
    metrics: set[str] = set()
    quoted: set[str] = set()
    members: set[str] = set()
    built: set[str] = set()
    for path in _source_files(roots):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if path.suffix in {".py", ".pyi"}:
            words.update(_code_words(text, quoted))
            members.update(f"{m.group(1)}.{m.group(2)}" for m in _MEMBER_READ_RE.finditer(text))
        else:
            words.update(_WORD_RE.findall(text))
        if "vllm:" in text or "sglang:" in text:
            metrics.update(_METRIC_RE.findall(text))
            if _BUILT_METRIC_RE.search(text):
                built.update(w for part in path.parts[-4:] for w in re.split(r"[_.]", part) if w)
        if "VLLM_" not in text and "SGL" not in text:
            continue
        lines = text.splitlines()
        for number, line in enumerate(lines):
            for m in _ENV_LITERAL_RE.finditer(line):
                near = " ".join(lines[number : number + 4])
                (retired if _RETIRED_RE.search(near) else live).add(m.group("name"))
    return SourceWords(frozenset(words), frozenset(retired - live), frozenset(metrics), frozenset(built), frozenset(quoted), frozenset(members))


# A string literal that names something (`getattr(cfg, "sliding_window")`, `"vllm.plugins:f"`),
# unlike a message, a docstring or a key built with a separator (`f"send_tensor/{dst}"`).
_NAME_STRING_RE = re.compile(r"[A-Za-z_][\w.:-]*")


# One pass over a Python file: a comment, a string literal (with its prefix), or a name.
_PY_TOKEN_RE = re.compile(
    r"(?P<comment>#[^\n]*)"
    r"|(?P<prefix>[rRbBuUfF]{0,2})(?P<string>\'\'\'[\s\S]*?\'\'\'|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\")"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)
_FIELD_RE = re.compile(r"\{([^{}]*)\}")
_MEMBER_READ_RE = re.compile(r"(?<!\w)([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\.([A-Za-z_]\w*)")


def _code_words(text: str, quoted: set[str]) -> set[str]:
    """Identifiers a Python file spells: its names (those in f-strings' fields too), the words of
    its comments and prose strings (docstrings, messages: they name other programs' things, a
    syscall, a dependency's option, as often as removed ones), and strings that are names. A
    string that is neither, a key or a path built with a separator (`f"send_tensor/{dst}"`), is
    not a use of the names in it. Strings that are names are also added to `quoted`, whole."""
    out: set[str] = set()
    for m in _PY_TOKEN_RE.finditer(text):
        if m.group("name"):
            out.add(m.group("name"))
        elif m.group("comment"):
            out.update(_WORD_RE.findall(m.group("comment")))
        elif m.group("string"):
            body = m.group("string").strip("'\"")
            if "f" in m.group("prefix").lower():
                for field in _FIELD_RE.findall(body):
                    out.update(_WORD_RE.findall(field))
                body = _FIELD_RE.sub("", body)
            if _NAME_STRING_RE.fullmatch(body):
                quoted.add(body)
            if any(c.isspace() for c in body) or _NAME_STRING_RE.fullmatch(body):
                out.update(_WORD_RE.findall(body))
    return out


def load_or_collect(cache: Path, roots: list[Path]) -> SourceWords | None:
    """The cached words at `cache`, else collected from `roots` and saved; None when no root exists."""
    data = read_record(cache, FORMAT)
    if data is not None:
        try:
            return SourceWords(
                frozenset(data["words"]), frozenset(data["retired_env"]), frozenset(data["metrics"]), frozenset(data["metrics_built_in"]),
                frozenset(data["quoted"]), frozenset(data["members"]),
            )
        except (KeyError, TypeError, ValueError):
            pass  # damaged: collect again
    present = [r for r in roots if r.is_dir()]
    if not present:
        return None
    found = collect(present)
    write_record(cache, FORMAT, {
        "words": sorted(found.words), "retired_env": sorted(found.retired_env),
        "metrics": sorted(found.metrics), "metrics_built_in": sorted(found.metrics_built_in), "quoted": sorted(found.quoted),
        "members": sorted(found.members),
    })
    return found
