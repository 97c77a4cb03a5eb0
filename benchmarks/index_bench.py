"""Index benchmark: cold index vs. `libcst.parse_module` alone, warm re-index, peak memory.

    .venv/bin/python benchmarks/index_bench.py /tmp/src/vllm-0.30.0 /tmp/src/sglang-0.5.20
    .venv/bin/python benchmarks/index_bench.py vllm@0.30.0 sglang@0.5.20 --jobs 2

Targets are package-root directories (holding `vllm/...`) or snapshot refs
(opened from the cache, `--cache-dir` / $ATLAS_CACHE_DIR). Every phase runs in
its own child process, one after another in this run, over the same files with
the same number of worker processes and the same largest-first schedule, so the
ratio compares like with like. The cold index writes into a fresh database.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from analyzer.index.runner import _plan, index_tree, list_python_files  # noqa: E402


def _targets(names: list[str], cache_dir: str | None) -> list[tuple[str, str, list[str]]]:
    """(label, package root, package-relative paths) per target."""
    out = []
    for name in names:
        if Path(name).is_dir():
            root = Path(name).resolve()
            out.append((root.name, str(root), list_python_files(root)))
            continue
        from analyzer.settings import Settings, default_cache_dir
        from analyzer.snapshots import open_snapshot

        settings = Settings(cache_dir=Path(cache_dir) if cache_dir else default_cache_dir())
        snap = open_snapshot(settings, name)
        out.append((snap.name, str(snap.package_root), list(snap.python_files())))
    return out


# -- phases (each runs in a fresh child process) ---------------------------------


def _parse_batch(root: str, paths: list[str], nogc: bool) -> int:
    import gc

    import libcst

    if nogc:
        gc.disable()
    for p in paths:
        libcst.parse_module((Path(root) / p).read_bytes())
    return len(paths)


def _disable_gc() -> None:
    import gc

    gc.disable()


def phase_parse(targets: list[tuple[str, str, list[str]]], jobs: int, nogc: bool) -> dict[str, float]:
    started = time.perf_counter()
    for _, root, paths in targets:
        tasks = _plan(Path(root), paths)
        with ProcessPoolExecutor(max_workers=jobs, initializer=_disable_gc if nogc else None) as pool:
            list(pool.map(_parse_batch, [root] * len(tasks), tasks, [nogc] * len(tasks)))
    return {"seconds": time.perf_counter() - started}


def phase_index(targets: list[tuple[str, str, list[str]]], jobs: int, db: str, decode: bool) -> dict[str, float]:
    started = time.perf_counter()
    totals: dict[str, float] = {}
    indexes = []
    for label, root, paths in targets:
        index = index_tree(Path(root), paths, db=Path(db), jobs=jobs, name=label)
        indexes.append(index)
        for key, value in index.counts().items():
            totals[key] = totals.get(key, 0) + value
    totals["seconds"] = time.perf_counter() - started
    if decode:  # what a consumer reading every fact (the graphs stage) pays on top
        t = time.perf_counter()
        for index in indexes:
            for facts in index.modules.values():
                assert facts.path
        totals["decode_seconds"] = time.perf_counter() - t
    return totals


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _sample_peak(stop: threading.Event, peak: list[int]) -> None:
    """Peak of (this process + its workers) RSS, sampled every 50 ms (Linux /proc)."""
    me = os.getpid()
    while not stop.is_set():
        total = _rss_kib(me) + sum(_rss_kib(c) for c in _children(me))
        peak[0] = max(peak[0], total)
        stop.wait(0.05)


def run_phase() -> None:
    spec = json.loads(sys.stdin.read())
    targets = [tuple(t) for t in spec["targets"]]
    stop, peak = threading.Event(), [0]
    sampler = threading.Thread(target=_sample_peak, args=(stop, peak), daemon=True)
    sampler.start()
    if spec["phase"] == "parse":
        result = phase_parse(targets, spec["jobs"], spec["nogc"])  # type: ignore[arg-type]
    else:
        result = phase_index(targets, spec["jobs"], spec["db"], spec["decode"])  # type: ignore[arg-type]
    stop.set()
    sampler.join()
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds of parent + workers: much less sensitive than wall time to other load on the machine.
    result["cpu_seconds"] = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    result["peak_sampled_mib"] = peak[0] / 1024
    result["peak_parent_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["peak_one_worker_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(result))


def _child(spec: dict[str, object]) -> dict[str, float]:
    # The spec (thousands of paths) goes through stdin: too long for a command line.
    out = subprocess.run(
        [sys.executable, __file__, "--phase"], input=json.dumps(spec), check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:] == ["--phase"]:
        run_phase()
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="*", default=["/tmp/src/vllm-0.30.0", "/tmp/src/sglang-0.5.20"])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache-dir", default=None, help="atlas cache holding the snapshots (for refs)")
    ap.add_argument("--parse-nogc", action="store_true", help="also time the parse with the GC off")
    ap.add_argument("--keep-db", type=Path, default=None, help="copy the benchmark's database here")
    args = ap.parse_args()

    targets = _targets(args.targets, args.cache_dir)
    files = sum(len(t[2]) for t in targets)
    print(f"targets: {', '.join(t[0] for t in targets)}; {files} files; {args.jobs} worker processes")
    base = {"targets": targets, "jobs": args.jobs}

    parse = _child(base | {"phase": "parse", "nogc": False})
    print(f"libcst.parse_module alone:          {parse['seconds']:8.1f} s wall, {parse['cpu_seconds']:.1f} s CPU")
    if args.parse_nogc:
        nogc = _child(base | {"phase": "parse", "nogc": True})
        print(f"libcst.parse_module, GC off:        {nogc['seconds']:8.1f} s wall, {nogc['cpu_seconds']:.1f} s CPU")
    with tempfile.TemporaryDirectory(prefix="index-bench-") as tmp:
        db = str(Path(tmp) / "index.sqlite")
        cold = _child(base | {"phase": "index", "db": db, "decode": False})
        warm = _child(base | {"phase": "index", "db": db, "decode": True})
        db_mib = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 2**20
        if args.keep_db is not None:
            import sqlite3

            with sqlite3.connect(db) as src, sqlite3.connect(args.keep_db) as dst:
                src.backup(dst)
    print(f"cold index (fresh db):              {cold['seconds']:8.1f} s wall, {cold['cpu_seconds']:.1f} s CPU")
    print(f"  ratio cold / parse alone:         {cold['seconds'] / parse['seconds']:8.2f} wall,"
          f" {cold['cpu_seconds'] / parse['cpu_seconds']:.2f} CPU")
    if args.parse_nogc:
        print(f"  ratio cold / parse with GC off:   {cold['seconds'] / nogc['seconds']:8.2f} wall,"
              f" {cold['cpu_seconds'] / nogc['cpu_seconds']:.2f} CPU")
    print(
        f"  peak memory, parent + workers:    {cold['peak_sampled_mib']:8.0f} MiB sampled"
        f" (parent max {cold['peak_parent_mib']:.0f} MiB, largest worker {cold['peak_one_worker_mib']:.0f} MiB)"
    )
    print(f"  files {cold['files']:.0f}, errors {cold['errors']:.0f}, lines {cold['lines']:.0f},"
          f" call sites {cold['call_sites']:.0f}, accesses {cold['accesses']:.0f}; db {db_mib:.0f} MiB")
    print(f"warm re-index (nothing changed):    {warm['seconds']:8.2f} s wall"
          f" ({warm['cache_hits']:.0f} cache hits)")
    print(f"  then decoding every file's facts: {warm['decode_seconds']:8.2f} s"
          f" (peak {warm['peak_sampled_mib']:.0f} MiB)")


if __name__ == "__main__":
    main()
