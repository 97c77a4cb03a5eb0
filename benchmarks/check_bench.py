"""Benchmark for `atlas check`: a generated 70-chapter book against two real pins.

The book cites real paths, symbols, flags, env vars and anchored GitHub links of
vllm@0.30.0 and sglang@0.5.20. A known share is made stale with names that
exist only in the next releases (vllm@0.33.0, sglang@0.5.23): new files,
classes, methods, flags and env vars, plus links whose line anchors point at
the wrong lines. The script prints the warm check time (views loaded from the
cache, extraction, resolution and suggestions) and the precision and recall of
the broken findings on the planted stale references.

    python benchmarks/check_bench.py [--cache-dir DIR] [--chapters 70] [--stale 0.15]

The first run builds the snapshots' indexes (minutes); that warm-up is reported
separately and not counted.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.classify import classify
from analyzer.refs.loader import load_pin
from analyzer.refs.models import BROKEN, NOT_CHECKABLE
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import find_symbol, short_name
from analyzer.settings import Settings, default_cache_dir

PINS = {"vllm": ("vllm@0.30.0", "vllm@0.33.0"), "sglang": ("sglang@0.5.20", "sglang@0.5.23")}
LABEL = {"vllm": "vLLM", "sglang": "SGLang"}
REPO = {"vllm": "vllm-project/vllm", "sglang": "sgl-project/sglang"}
COMMAND = {"vllm": "vllm serve Qwen/Qwen3-0.6B", "sglang": "python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B"}


@dataclass(slots=True)
class Pool:
    """Citable things of one project: valid at the checked pin, or stale (newer release only)."""

    paths: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    envs: list[str] = field(default_factory=list)
    anchors: list[tuple[str, str, int, int]] = field(default_factory=list)  # path, symbol, start, end


def _classifies(text: str, kind: str) -> bool:
    found = classify(text)
    return found is not None and found.kind == kind and not found.tentative


def _is_public(entry: SymbolEntry, pin: PinView) -> bool:
    name = short_name(entry, pin)
    return not any(part.startswith("_") for part in name.split(".")) and "/test" not in entry.path


def _symbol_pool(pin: PinView, known: Callable[[str], bool], skip: set[str] | None = None) -> Pool:
    """Symbols written the way the book writes them, kept when `known(written)` holds."""
    pool = Pool()
    for entry in pin.table:
        if entry.kind not in {"class", "function"} or not _is_public(entry, pin):
            continue
        if skip is not None and entry.full in skip:
            continue
        name = short_name(entry, pin)
        parts = name.split(".")
        if entry.kind == "class" and len(parts) == 1 and _classifies(name, "symbol") and known(name):
            pool.classes.append(name)
        elif entry.kind == "function" and len(parts) == 2 and parts[0][:1].isupper() and _classifies(name, "symbol") and known(name):
            pool.methods.append(name)
        elif entry.kind == "function" and len(parts) == 1 and _classifies(name + "()", "symbol") and known(name):
            pool.functions.append(name + "()")
    return pool


def _written_path(pin: PinView, package_path: str) -> str:
    return pin.layout_prefix + package_path


def build_pools(pin: PinView, newer: PinView) -> tuple[Pool, Pool]:
    """(valid at `pin`, stale at `pin` but real in `newer`)."""
    valid = _symbol_pool(pin, lambda name: True)
    old_names = {e.full for e in pin.table}
    # Names the newer release added (its full dotted name is new) that the pin can't resolve at all.
    stale = _symbol_pool(newer, lambda name: not find_symbol(name, pin)[0], skip=old_names)
    valid_files = sorted(f for f in pin.files if f.endswith(".py") and "/test" not in f and "__init__" not in f)
    valid.paths = [_written_path(pin, f) for f in valid_files]
    stale.paths = [
        _written_path(pin, f) for f in sorted(newer.files)
        if f.endswith(".py") and not pin.has_path(f) and "/test" not in f
    ]
    valid.flags = sorted(f.flag for f in pin.flags if f.flag.startswith("--"))
    stale.flags = sorted(
        f.flag for f in newer.flags
        if f.flag.startswith("--") and f.flag not in pin.flag_map and f.flag.replace("--no-", "--", 1) not in pin.flag_map
    )
    valid.envs = sorted(e.name for e in pin.envs if _classifies(e.name, "env"))
    stale.envs = sorted(e.name for e in newer.envs if _classifies(e.name, "env") and e.name not in pin.env_map and e.name not in pin.deprecated_env)
    for entry in pin.table:
        if entry.kind == "function" and _is_public(entry, pin) and entry.end_line - entry.line >= 5 and "." in short_name(entry, pin):
            valid.anchors.append((entry.path, short_name(entry, pin), entry.line, entry.end_line))
    # Stale anchors: a real method, with the anchor moved past its end.
    stale.anchors = [(p, s, end + 10, end + 12) for p, s, _start, end in valid.anchors if _next_def_after(pin, p, end)]
    return valid, stale


def _next_def_after(pin: PinView, path: str, end: int) -> bool:
    lines = [e for e in pin.definitions_in(path) if e.line > end + 12]
    return bool(lines)


@dataclass(slots=True)
class Book:
    chapters: dict[str, str]
    planted: set[tuple[str, int, str]]  # (file, line, text) of every stale reference
    total: int


def generate(pools: dict[str, tuple[Pool, Pool]], pins: dict[str, PinView], chapters: int, stale_share: float, seed: int) -> Book:
    rng = random.Random(seed)
    planted: set[tuple[str, int, str]] = set()
    out: dict[str, str] = {}
    total = 0
    for number in range(1, chapters + 1):
        name = f"chapters/{number:02d}.md"
        lines: list[str] = [f"# {number}. A chapter on serving", ""]

        def cite(project: str, kind: str, lines: list[str] = lines, name: str = name) -> str:
            nonlocal total
            valid, stale = pools[project]
            values = getattr(valid, kind)
            stale_values = getattr(stale, kind)
            is_stale = bool(stale_values) and rng.random() < stale_share
            text = rng.choice(stale_values if is_stale else values)
            total += 1
            if is_stale:
                planted.add((name, len(lines) + 1, text))
            return text

        for project in ("vllm", "sglang"):
            label = LABEL[project]
            lines += [f"## {label}", ""]
            for _ in range(4):
                cls, meth, fn = cite(project, "classes"), cite(project, "methods"), cite(project, "functions")
                lines.append(f"In {label}, `{cls}` works with `{meth}`, and `{fn}` helps.")
                path = cite(project, "paths")
                lines.append(f"The {label} code for this sits in `{path}`.")
                env = cite(project, "envs")
                lines.append(f"{label} reads `{env}` at start-up.")
                lines.append("")
            # An anchored link to a method.
            valid, stale = pools[project]
            is_stale = bool(stale.anchors) and rng.random() < stale_share
            path, symbol, start, end = rng.choice(stale.anchors if is_stale else valid.anchors)
            url = f"https://github.com/{REPO[project]}/blob/main/{pins[project].layout_prefix}{path}#L{start}-L{end}"
            if is_stale:
                planted.add((name, len(lines) + 1, url))
            total += 1
            lines += [f"{label}'s [`{symbol}`]({url}) is the heart of it.", ""]
            # A server command with flags.
            lines += ["```bash", f"{COMMAND[project]} \\"]
            for i in range(3):
                flag = cite(project, "flags")
                continuation = " \\" if i < 2 else ""
                lines.append(f"    {flag}{continuation}")
            lines += ["```", ""]
            lines += ["> **Source code**", ">"]
            lines.append(f"> - {label}: `{cite(project, 'paths')}` (`{cite(project, 'classes')}`)")
            lines.append("")
        lines += ["Ordinary code is not a reference:", "", "```python", "x = torch.cat([a, b])", "```", ""]
        out[name] = "\n".join(lines)
    return Book(out, planted, total)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--chapters", type=int, default=70)
    parser.add_argument("--stale", type=float, default=0.15)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    settings = Settings(cache_dir=(args.cache_dir or default_cache_dir()).expanduser().resolve())

    t0 = time.perf_counter()
    views = {name: load_pin(settings, name) for pair in PINS.values() for name in pair}
    warmup = time.perf_counter() - t0
    pools = {project: build_pools(views[old], views[new]) for project, (old, new) in PINS.items()}
    checked = {project: views[old] for project, (old, _new) in PINS.items()}
    book = generate(pools, checked, args.chapters, args.stale, args.seed)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in book.chapters.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        documents = [(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.md"))]

        # Timed: what `atlas check book/` does with warm indexes.
        t1 = time.perf_counter()
        pins = [load_pin(settings, old) for old, _new in PINS.values()]
        t2 = time.perf_counter()
        refs = extract_all(documents)
        t3 = time.perf_counter()
        findings = check_references(refs, pins)
        t4 = time.perf_counter()

    def key(f: object) -> tuple[str, int, str]:
        ref = f.ref  # type: ignore[attr-defined]
        return (ref.file, ref.line, ref.text)

    broken = {key(f) for f in findings if f.status == BROKEN}
    hits = broken & book.planted
    precision = len(hits) / len(broken) if broken else 1.0
    recall = len(hits) / len(book.planted) if book.planted else 1.0
    not_checkable = sum(1 for f in findings if f.status == NOT_CHECKABLE)
    with_suggestion = sum(1 for f in findings if f.status == BROKEN and f.best is not None)
    total = t4 - t1
    print(f"book: {args.chapters} chapters, {book.total} generated references ({len(book.planted)} stale), {len(refs)} extracted")
    print(f"pins: {', '.join(p.pin for p in pins)} (stale names from {', '.join(new for _o, new in PINS.values())})")
    print(f"warm-up (build or load 4 pin views): {warmup:.2f} s (not counted)")
    print(f"check time, warm: {total:.2f} s  [load views {t2 - t1:.2f} s, extract {t3 - t2:.2f} s, resolve+suggest {t4 - t3:.2f} s]  target <= 3 s: {'PASS' if total <= 3 else 'FAIL'}")
    print(f"findings: {len(findings)}; broken {len(broken)} ({with_suggestion} with a suggestion), not-checkable {not_checkable}")
    print(f"precision on planted stale references: {precision:.3f} ({len(hits)}/{len(broken)})")
    print(f"recall on planted stale references:    {recall:.3f} ({len(hits)}/{len(book.planted)})")
    for name, line, text in sorted(broken - book.planted)[:5]:
        print(f"  unexpected broken: {name}:{line} {text}")
    for name, line, text in sorted(book.planted - broken)[:5]:
        print(f"  missed stale: {name}:{line} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
