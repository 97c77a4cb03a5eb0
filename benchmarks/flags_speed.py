"""How fast is `extract_flags` / `extract_envs` next to parsing the whole tree?

Both run side by side in one process on each given package root: extraction
parses only the modules the parser construction reaches, so the ratio to a
full `ast.parse` of every file shows what that saves.

    .venv/bin/python benchmarks/flags_speed.py /tmp/src/vllm-0.30.0 /tmp/src/sglang-0.5.20 [--repeat 3]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from analyzer.flags import detect_project, extract_envs, flag_report
from analyzer.flags.sglang_flags import extract_sglang_flags
from analyzer.flags.source import SourceTree
from analyzer.flags.vllm_flags import extract_vllm_flags


def _median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _parse_all(root: Path, project: str) -> int:
    count = 0
    for path in (root / project).rglob("*.py"):
        try:
            ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", type=Path, help="package roots (holding vllm/ or sglang/)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'tree':<28} {'flags':>6} {'envs':>6} {'files read':>10} {'flags s':>8} {'envs s':>7} {'parse-all s':>11} {'ratio':>7}")
    for root in args.roots:
        project = detect_project(root)
        tree = SourceTree(root)
        extract = extract_vllm_flags if project == "vllm" else extract_sglang_flags
        extract(tree)
        files_read = tree.parsed_files
        flags_s = _median_seconds(lambda r=root, p=project: flag_report(r, p), args.repeat)
        envs_s = _median_seconds(lambda r=root, p=project: extract_envs(r, p), args.repeat)
        all_s = _median_seconds(lambda r=root, p=project: _parse_all(r, p), 1)
        n_flags = len(flag_report(root, project).flags)
        n_envs = len(extract_envs(root, project))
        print(f"{root.name:<28} {n_flags:>6} {n_envs:>6} {files_read:>10} {flags_s:>8.3f} {envs_s:>7.3f} "
              f"{all_s:>11.2f} {all_s / (flags_s + envs_s):>6.0f}x")


if __name__ == "__main__":
    main()
