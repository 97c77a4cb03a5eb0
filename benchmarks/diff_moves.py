"""How many real moves does `atlas diff` still call removals? An independent count.

    .venv/bin/python benchmarks/diff_moves.py
    .venv/bin/python benchmarks/diff_moves.py --baseline 3ca6227   # before / after side by side

For each pair of pinned releases (vllm 0.30.0 -> 0.33.0, sglang 0.5.20 -> 0.5.23)
it runs `atlas diff OLD NEW --no-calls --json` and then, with nothing but `ast`
on the two source trees (none of the analyzer's symbol tables or move logic),
counts the module-level functions and classes that the diff reports as removed
although a definition of the same name and kind exists exactly once in the new
release, in another module: named in the removed list ("listed": the issue's
count, "about half of the real moves are reported as removals"), and also those
hidden inside a removed module the diff lists ("+ in removed modules"). Of the
listed ones it says how many have a surviving namesake that already existed in
the old release (a dropped wrapper or copy beside it; not always a move, so the
census is an upper bound). Last, how many of the diff's claimed moves of
module-level definitions the census confirms (same name and kind, one definition
in the new release): a check that moves are not claimed loosely.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAIRS = [("vllm@0.30.0", "vllm@0.33.0"), ("sglang@0.5.20", "sglang@0.5.23")]


def top_level_defs(package_root: Path) -> dict[str, tuple[str, str, str]]:
    """dotted name -> (module, name, kind) for every module-level def / class in the tree."""
    out: dict[str, tuple[str, str, str]] = {}
    for path in sorted(package_root.rglob("*.py")):
        rel = path.relative_to(package_root)
        if ".dist-info" in rel.parts[0]:
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(parts)
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                out[f"{module}.{stmt.name}"] = (module, stmt.name, "function")
            elif isinstance(stmt, ast.ClassDef):
                out[f"{module}.{stmt.name}"] = (module, stmt.name, "class")
    return out


def census(old_defs: dict[str, tuple[str, str, str]], new_defs: dict[str, tuple[str, str, str]],
           diff: dict) -> dict[str, int]:
    where_new: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, name, kind in new_defs.values():
        where_new[(name, kind)].append(module)
    removed = diff["symbols"]["removed"]
    removed_set = set(removed)

    def reported_removed(dotted: str) -> bool:
        probe = dotted
        while probe:
            if probe in removed_set:
                return True
            probe = probe.rpartition(".")[0]
        return False

    gone = {d: v for d, v in old_defs.items() if d not in new_defs}
    listed = hidden = existed = 0
    for dotted, (module, name, kind) in gone.items():
        homes = where_new.get((name, kind), [])
        if not (len(homes) == 1 and homes[0] != module):
            continue
        if dotted in removed_set:
            listed += 1
            existed += f"{homes[0]}.{name}" in old_defs
        elif reported_removed(dotted):
            hidden += 1
    claimed = confirmed = 0
    for move in diff["symbols"]["moved"]:
        if move["old"] in old_defs and move["kind"] != "module":
            claimed += 1
            _, name, kind = old_defs[move["old"]]
            homes = where_new.get((name, kind), [])
            confirmed += len(homes) == 1 and move["new"] == f"{homes[0]}.{name}"
    return {"gone": len(gone), "listed": listed, "hidden": hidden, "existed": existed,
            "claimed": claimed, "confirmed": confirmed}


def run_diff_json(old: str, new: str, pythonpath: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    code = "from analyzer.cli import app; app()"
    out = subprocess.run([sys.executable, "-c", code, "diff", old, new, "--no-calls", "--no-fetch", "--json",
                          "--mappings", str(ROOT / "mappings")],
                         check=True, capture_output=True, text=True, env=env, cwd=pythonpath).stdout
    return json.loads(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="Also run the analyzer of git revision REV.")
    args = parser.parse_args()
    from analyzer.settings import Settings, default_cache_dir
    from analyzer.snapshots import open_snapshot

    settings = Settings(cache_dir=default_cache_dir())
    trees: dict[str, Path] = {}
    from benchmarks._revision import unpack_analyzer

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if args.baseline:
            unpack_analyzer(args.baseline, tmp)
        print("command: atlas diff OLD NEW --no-calls --json; census: ast over both trees")
        print(f"{'pair, analyzer':40} {'defs gone':>9} | {'moves listed as removed':>23} "
              f"{'(namesake existed)':>18} {'+ in removed modules':>20} | claimed moves (census-confirmed)")
        for old, new in PAIRS:
            for ref in (old, new):
                trees[ref] = open_snapshot(settings, ref).package_root
            old_defs, new_defs = top_level_defs(trees[old]), top_level_defs(trees[new])
            runs = [("this tree", ROOT)] + ([(f"baseline {args.baseline}", base)] if args.baseline else [])
            for label, path in runs:
                c = census(old_defs, new_defs, run_diff_json(old, new, path))
                print(f"{old + ' -> ' + new.split('@')[1] + ', ' + label:40} {c['gone']:>9} | {c['listed']:>23} "
                      f"{c['existed']:>18} {c['hidden']:>20} | {c['claimed']:>5} ({c['confirmed']} ok)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
