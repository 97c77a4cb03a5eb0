"""Benchmark for `atlas check`: a generated 70-chapter book against two real pins.

The book cites real paths, symbols, flags, env vars and anchored GitHub links of
vllm@0.30.0 and sglang@0.5.20, in the book's style (prose naming the project,
server commands, "Source code" boxes). A known share is made stale the way
upstream code goes stale: a class or function renamed, a method renamed, a
file moved to another folder, a boolean flag respelled, an env var renamed,
a link whose line anchor no longer starts at the method it names. Every stale
name is verified not to resolve in the pin before it is planted.

The script prints the warm check time (pin views opened from the cache,
extraction, resolution and suggestions) and the precision and recall of the
broken findings (and stale-anchor warnings) on the planted stale references.

    python benchmarks/check_bench.py [--cache-dir DIR] [--chapters 70] [--stale 0.15]

The first run fetches and indexes both snapshots (many minutes); that warm-up is
reported separately and not counted.
"""

from __future__ import annotations

import argparse
import os
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
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, WARNING
from analyzer.refs.past_bundle import shipped_past
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import find_symbol, short_name
from analyzer.refs.run import few_collections
from analyzer.settings import Settings, default_cache_dir

PINS = {"vllm": "vllm@0.30.0", "sglang": "sglang@0.5.20"}
LABEL = {"vllm": "vLLM", "sglang": "SGLang"}
REPO = {"vllm": "vllm-project/vllm", "sglang": "sgl-project/sglang"}
COMMAND = {"vllm": "vllm serve Qwen/Qwen3-0.6B", "sglang": "python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B"}


@dataclass(slots=True)
class Pool:
    """Citable things of one project: valid at the checked pin, or made stale."""

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


def _symbol_pool(pin: PinView, known: Callable[[str], bool]) -> Pool:
    """Symbols written the way the book writes them, kept when `known(written)` holds."""
    pool = Pool()
    for entry in pin.table:
        if entry.kind not in {"class", "function"} or not _is_public(entry, pin):
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


def _renamed(name: str, rng: random.Random) -> str:
    """A plausible new spelling of an identifier (the old name is what the book keeps citing)."""
    suffix = rng.choice(["_v0", "_legacy", "_impl"]) if name[:1].islower() else rng.choice(["V0", "Legacy", "Impl"])
    return name + suffix


def _stale_pool(pin: PinView, valid: Pool, rng: random.Random, per_kind: int = 300) -> Pool:
    """Real names turned stale; each one checked not to resolve in `pin`."""
    stale = Pool()

    def sample(values: list[str]) -> list[str]:
        return rng.sample(values, min(per_kind, len(values)))

    for cls in sample(valid.classes):
        cand = _renamed(cls, rng)
        if not find_symbol(cand, pin)[0]:
            stale.classes.append(cand)
    for meth in sample(valid.methods):
        owner, name = meth.rsplit(".", 1)
        cand = f"{owner}.{_renamed(name, rng)}"
        if not find_symbol(cand, pin)[0]:
            stale.methods.append(cand)
    for fn in sample(valid.functions):
        cand = _renamed(fn.removesuffix("()"), rng) + "()"
        if not find_symbol(cand.removesuffix("()"), pin)[0]:
            stale.functions.append(cand)
    for path in sample(valid.paths):
        folder, _, base = path.rpartition("/")
        cand = f"{folder}/{rng.choice(['legacy', 'old', 'core'])}/{base}"  # moved one level down
        if not pin.has_path(cand.removeprefix(pin.layout_prefix)):
            stale.paths.append(cand)
    for flag in sample(valid.flags):
        if flag.startswith("--enable-"):
            cand = "--" + flag.removeprefix("--enable-")  # the `--enable-` prefix dropped
        elif flag.startswith("--disable-"):
            cand = "--no-" + flag.removeprefix("--disable-")
        else:
            cand = flag + rng.choice(["-size", "-mode", "-legacy"])
        if cand not in pin.flag_map and cand.replace("--no-", "--", 1) not in pin.flag_map:
            stale.flags.append(cand)
    for env in sample(valid.envs):
        cand = env + rng.choice(["_V0", "_LEGACY", "_MODE"])
        if cand not in pin.env_map and cand not in pin.deprecated_env:
            stale.envs.append(cand)
    # A real method whose anchor points past its end, at the next definition in the file.
    stale.anchors = [(p, sym, end + 10, end + 12) for p, sym, _start, end in sample_anchors(valid.anchors, rng, per_kind) if _next_def_after(pin, p, end)]
    return stale


def sample_anchors(anchors: list[tuple[str, str, int, int]], rng: random.Random, n: int) -> list[tuple[str, str, int, int]]:
    return rng.sample(anchors, min(n, len(anchors)))


def build_pools(pin: PinView, rng: random.Random) -> tuple[Pool, Pool]:
    """(valid at `pin`, made stale from the valid ones)."""
    valid = _symbol_pool(pin, lambda name: True)
    valid_files = sorted(f for f in pin.files if f.endswith(".py") and "/test" not in f and "__init__" not in f)
    valid.paths = [_written_path(pin, f) for f in valid_files]
    valid.flags = sorted(f.flag for f in pin.flags if f.flag.startswith("--") and f.flag != "--help")
    valid.envs = sorted(e.name for e in pin.envs if _classifies(e.name, "env"))
    for entry in pin.table:
        if entry.kind == "function" and _is_public(entry, pin) and entry.end_line - entry.line >= 5 and "." in short_name(entry, pin):
            valid.anchors.append((entry.path, short_name(entry, pin), entry.line, entry.end_line))
    return valid, _stale_pool(pin, valid, rng)


def _next_def_after(pin: PinView, path: str, end: int) -> bool:
    return any(e.line > end + 12 for e in pin.definitions_in(path))


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
    parser.add_argument("--no-past", action="store_true", help="time the check without the shipped past-release evidence (`atlas check --no-past`)")
    args = parser.parse_args()
    settings = Settings(cache_dir=(args.cache_dir or default_cache_dir()).expanduser().resolve())

    t0 = time.perf_counter()
    views = {project: load_pin(settings, name) for project, name in PINS.items()}
    warmup = time.perf_counter() - t0
    rng = random.Random(args.seed)
    pools = {project: build_pools(view, rng) for project, view in views.items()}
    book = generate(pools, views, args.chapters, args.stale, args.seed)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in book.chapters.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        documents = [(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.md"))]

        # Timed: what `atlas check book/` does with warm indexes. Wall clock and this
        # process's CPU time side by side: on a shared, loaded machine the wall clock
        # mostly measures waiting for a core.
        # (`run_check` runs under `few_collections` too.)
        with few_collections():
            c1, t1 = time.process_time(), time.perf_counter()
            pins = [load_pin(settings, name) for name in PINS.values()]
            # The past releases' evidence `atlas check` reads by default (`--no-past`: without it).
            lineages, successors = shipped_past(() if args.no_past else PINS)
            c2, t2 = time.process_time(), time.perf_counter()
            refs = extract_all(documents)
            c3, t3 = time.process_time(), time.perf_counter()
            findings = check_references(refs, pins, lineages=lineages or None, successors=successors or None)
            c4, t4 = time.process_time(), time.perf_counter()

    def key(f: object) -> tuple[str, int, str]:
        ref = f.ref  # type: ignore[attr-defined]
        return (ref.file, ref.line, ref.text)

    # A stale line anchor is reported as a warning (the file is fine): detected all the same.
    broken = {key(f) for f in findings if f.status in (BROKEN, WARNING)}
    hits = broken & book.planted
    precision = len(hits) / len(broken) if broken else 1.0
    recall = len(hits) / len(book.planted) if book.planted else 1.0
    not_checkable = sum(1 for f in findings if f.status == NOT_CHECKABLE)
    with_suggestion = sum(1 for f in findings if f.status in (BROKEN, WARNING) and f.best is not None)
    total = t4 - t1
    print(f"book: {args.chapters} chapters, {book.total} generated references ({len(book.planted)} stale), {len(refs)} extracted")
    print(f"pins: {', '.join(p.pin for p in pins)}; stale share {args.stale:.0%} (seed {args.seed})")
    print(f"warm-up (first open, or fetch + index + build, of the pin views): {warmup:.2f} s (not counted)")
    cpu = c4 - c1
    print(f"check time, warm, wall: {total:.2f} s  [open views and past evidence {t2 - t1:.2f} s, extract {t3 - t2:.2f} s, resolve+suggest {t4 - t3:.2f} s]  target <= 3 s: {'PASS' if total <= 3 else 'FAIL'}")
    print(f"check time, warm, CPU:  {cpu:.2f} s  [open views and past evidence {c2 - c1:.2f} s, extract {c3 - c2:.2f} s, resolve+suggest {c4 - c3:.2f} s]  wall/CPU {total / max(cpu, 1e-9):.1f}x")
    print(f"machine load average (1 min) during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
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
