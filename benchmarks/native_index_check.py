"""How well tree-sitter reads the C/C++/CUDA/Rust sources of pinned trees (analyzer/index/native.py).

For each tree: native files (vendored folders left out), symbols found, files whose parse
tree has errors with the plain C++ grammar and after blanking CUDA's qualifiers, and the
kernels found against an independent count: every `__global__ void NAME(` a regular
expression finds in `.cu`/`.cuh` files.

    python benchmarks/native_index_check.py [TREE ...]   # default: every fetched snapshot tree

A tree is a snapshot's folder (`atlas snapshot path vllm@0.30.0-src`) or any source folder.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import analyzer.index.native as native
from analyzer.settings import default_cache_dir

_KERNEL_RE = re.compile(
    rb"__global__\s+(?:static\s+)?(?:inline\s+)?void\s+(?:__(?:launch_bounds|cluster_dims)__\s*\((?:[^()]|\([^()]*\))*\)\s*)*(\w+)\s*\("
)


def measure(root: Path) -> str:
    paths = list(native.native_files(root))
    start = time.perf_counter()
    files = native.index_native(root, paths)
    elapsed = time.perf_counter() - start
    symbols = sum(len(f.symbols) for f in files)
    unreadable = sum(1 for f in files if f.error and not f.error.startswith("parsed with errors"))
    blanked_errors = sum(1 for f in files if f.error and f.error.startswith("parsed with errors"))
    cuda = [f for f in files if f.language == "cuda"]
    raw_errors = 0
    parser = native._parser("c++")
    want: set[tuple[str, str]] = set()
    got = {(f.path, s.qualname.rsplit(".", 1)[-1]) for f in cuda for s in f.symbols}
    for f in cuda:
        data = (root / f.path).read_bytes()
        raw_errors += parser.parse(data).root_node.has_error
        want.update((f.path, m.group(1).decode()) for m in _KERNEL_RE.finditer(data))
    cuda_blanked_errors = sum(1 for f in cuda if f.error and f.error.startswith("parsed with errors"))
    rust = sum(1 for f in files if f.language == "rust")
    return (
        f"{root.name}: {len(files)} files ({len(cuda)} CUDA, {rust} Rust), {symbols} symbols in {elapsed:.1f} s; "
        f"parse trees with errors: {blanked_errors} of {len(files)} (CUDA files: {raw_errors} with the plain C++ grammar, "
        f"{cuda_blanked_errors} after blanking qualifiers); unreadable {unreadable}; "
        f"kernels found {len(want & got)}/{len(want)}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", type=Path)
    args = parser.parse_args()
    trees = args.trees or sorted(p for p in (default_cache_dir() / "snapshots" / "trees").iterdir() if p.is_dir())
    for tree in trees:
        print(measure(tree))
    return 0


if __name__ == "__main__":
    sys.exit(main())
