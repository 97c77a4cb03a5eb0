"""What a snapshot fetch costs, step by step, next to a plain unzip.

Side by side in one process, for each wheel given (or a synthetic 3,000-file
wheel when none is): sha256 of the artifact, the safe text-only extraction,
storing the tree as a git commit, the whole `fetch_snapshot` from a
wheelhouse, the no-op re-fetch, and, as the baseline, `zipfile.extractall`
of every entry (no checks, binaries included).

    .venv/bin/python benchmarks/snapshot_fetch.py [/tmp/wheels/vllm-0.30.0-...whl ...] [--repeat 1]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from analyzer.settings import Settings
from analyzer.snapshots import fetch_snapshot
from analyzer.snapshots.archive import extract_zip
from analyzer.snapshots.download import sha256_file
from analyzer.snapshots.gitstore import GitStore


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _synthetic_wheel(folder: Path) -> Path:
    path = folder / "synth-1.0-py3-none-any.whl"
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(200))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(3000):
            zf.writestr(f"synth/mod{i // 100}/m{i}.py", body)
        zf.writestr("synth/_C.so", b"\0" * 5_000_000)
        zf.writestr("synth-1.0.dist-info/top_level.txt", "synth\n")
    return path


def _lock_for(wheel: Path, lock_dir: Path, sha: str) -> str:
    name, version = wheel.name.split("-")[:2]
    lock_dir.mkdir(parents=True, exist_ok=True)
    (lock_dir / f"{name}.toml").write_text(
        f'project = "{name}"\n[releases."{version}"]\nartifact = "{wheel.name}"\nsha256 = "{sha}"\n'
    )
    return f"{name}@{version}"


def bench(wheel: Path, work: Path, repeat: int) -> None:
    sha = sha256_file(wheel)
    ref = _lock_for(wheel, work / "locks", sha)
    rows: list[tuple[str, float]] = []
    rows.append(("sha256 of the artifact", _median(lambda: sha256_file(wheel), repeat)))

    def unzip_all() -> None:
        out = Path(tempfile.mkdtemp(dir=work))
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(out)
        shutil.rmtree(out)

    def safe_extract() -> None:
        out = Path(tempfile.mkdtemp(dir=work))
        extract_zip(wheel, out / "tree")
        shutil.rmtree(out)

    rows.append(("baseline: zipfile.extractall (all)", _median(unzip_all, repeat)))
    rows.append(("safe text-only extraction", _median(safe_extract, repeat)))

    tree = work / "tree-for-commit"
    extract_zip(wheel, tree)
    with GitStore(work / "commit-store") as store:
        rows.append(
            ("git commit of the tree", _median(lambda: store.commit_tree(tree, ref, {}), repeat))
        )

    def full_fetch() -> None:
        cache = Path(tempfile.mkdtemp(dir=work))
        fetch_snapshot(
            Settings(cache_dir=cache), ref, find_links=wheel.parent, lock_dir=work / "locks"
        )
        shutil.rmtree(cache, ignore_errors=True)

    rows.append(("fetch_snapshot (verify+extract+commit+publish)", _median(full_fetch, repeat)))
    warm = Settings(cache_dir=work / "warm")
    fetch_snapshot(warm, ref, find_links=wheel.parent, lock_dir=work / "locks")
    rows.append(
        (
            "re-fetch (no-op)",
            _median(lambda: fetch_snapshot(warm, ref, lock_dir=work / "locks"), repeat),
        )
    )

    base = rows[1][1]
    print(f"\n{wheel.name} ({wheel.stat().st_size / 1e6:.0f} MB), median of {repeat}")
    for label, seconds in rows:
        print(f"  {label:<48} {seconds:8.2f} s   {seconds / base:6.2f}x baseline")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="atlas-bench-") as tmp:
        work = Path(tmp)
        wheels = args.wheels or [_synthetic_wheel(work)]
        for wheel in wheels:
            sub = work / wheel.stem
            sub.mkdir()
            bench(wheel.resolve(), sub, args.repeat)


if __name__ == "__main__":
    main()
