"""Check that a change to the analyzer leaves the built graphs exactly as they were.

    .venv/bin/python benchmarks/graphs_identity.py vllm@0.30.0 sglang@0.5.20 --save /tmp/graphs-before
    ... optimise ...
    .venv/bin/python benchmarks/graphs_identity.py vllm@0.30.0 sglang@0.5.20 --check /tmp/graphs-before
    .venv/bin/python benchmarks/graphs_identity.py vllm@0.30.0 --against main   # same run, no saved file

Each target's graphs are built from its (warm) index the way `build_graphs` does
it, in this process, bypassing the graph cache, and written down in a canonical
form: every call-graph node and edge with all its data, every class's state (each
attribute's declarations, reads and writes in order), the meta counts and the
unresolved sites. `--save DIR` writes that form; `--check DIR` compares with it and
prints, per part, what was added or lost (exit status 1 on any difference);
`--against REV` builds the same targets with the analyzer of git revision REV in a
child process and compares the two. A speed-up must pass this unchanged: a change
of output is a change of semantics and belongs in its own commit.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

Canon = dict[str, list[str]]


def canonical(graphs: object, unresolved: list) -> Canon:
    """One sorted list of lines per part: order-free where the graph is a set
    (nodes, edges), order-kept inside an attribute's access lists (their order is
    what a reader sees)."""
    calls = graphs.calls  # type: ignore[attr-defined]
    state = graphs.state  # type: ignore[attr-defined]
    nodes = sorted(json.dumps([n, *row]) for n, row in calls.node_rows.items())
    edges = sorted(json.dumps([u, v, *row]) for (u, v), row in calls.edge_rows.items())
    classes = sorted(json.dumps(asdict(state[name]), sort_keys=True) for name in state)
    meta = {k: v for k, v in graphs.meta.items() if k != "schema"}  # type: ignore[attr-defined]
    return {
        "nodes": nodes,
        "edges": edges,
        "state": classes,
        "meta": [json.dumps(meta, sort_keys=True)],
        "unresolved": sorted(json.dumps(asdict(u)) for u in unresolved),
    }


def build_canonical(targets: list[str], cache_dir: str | None) -> dict[str, Canon]:
    sys.path.insert(0, os.getcwd())
    from analyzer.graphs.store import build_graphs, load_facts, open_target
    from analyzer.settings import Settings, default_cache_dir

    settings = Settings(cache_dir=Path(cache_dir) if cache_dir else default_cache_dir())
    out: dict[str, Canon] = {}
    for text in targets:
        target = open_target(settings, text)
        graphs, unresolved = build_graphs(load_facts(settings, target), target.label, target.root)
        out[text] = canonical(graphs, unresolved)
    return out


def _child_build(rev: str, targets: list[str], cache_dir: str | None) -> dict[str, Canon]:
    """The same build with the analyzer of `rev`, in a child process (this file's
    `canonical` is used on both sides, so only the analyzer differs)."""
    sys.path.insert(0, str(ROOT))  # (here only: the child imports the unpacked analyzer)
    from benchmarks._revision import unpack_analyzer

    with tempfile.TemporaryDirectory() as tmp:
        unpack_analyzer(rev, tmp)
        dump = Path(tmp) / "canon.pickle"
        code = (
            "import pickle, sys\n"
            f"sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
            "import graphs_identity as gi\n"
            "out = gi.build_canonical(sys.argv[3:], sys.argv[2] or None)\n"
            "pickle.dump(out, open(sys.argv[1], 'wb'))\n"
        )
        subprocess.run([sys.executable, "-c", code, str(dump), cache_dir or "", *targets], cwd=tmp,
                       env={**os.environ, "PYTHONPATH": tmp}, check=True)
        with dump.open("rb") as fh:
            return pickle.load(fh)


def compare(before: dict[str, Canon], after: dict[str, Canon]) -> int:
    """Print the differences part by part; the number of differing lines."""
    total = 0
    for target in sorted(set(before) | set(after)):
        b, a = before.get(target), after.get(target)
        if b is None or a is None:
            print(f"{target}: only {'after' if b is None else 'before'}")
            total += 1
            continue
        for part in sorted(set(b) | set(a)):
            old, new = set(b.get(part, [])), set(a.get(part, []))
            lost, gained = sorted(old - new), sorted(new - old)
            same = len(b.get(part, [])) == len(a.get(part, [])) and not lost and not gained
            print(f"{target} {part}: {len(a.get(part, []))} lines, "
                  + ("identical" if same else f"+{len(gained)} / -{len(lost)}"))
            for line in lost[:5]:
                print(f"    - {line[:300]}")
            for line in gained[:5]:
                print(f"    + {line[:300]}")
            total += 0 if same else max(1, len(lost) + len(gained))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="+", help="Snapshots (vllm@0.30.0) or directories.")
    parser.add_argument("--cache-dir", default=None, help="Default: $ATLAS_CACHE_DIR / platform cache.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path, metavar="DIR", help="Write the canonical graphs to DIR.")
    group.add_argument("--check", type=Path, metavar="DIR", help="Compare with what --save wrote to DIR.")
    group.add_argument("--against", metavar="REV", help="Compare with the analyzer of git revision REV.")
    args = parser.parse_args()
    after = build_canonical(args.targets, args.cache_dir)
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for target, canon in after.items():
            with gzip.open(args.save / f"{target.replace('/', '_')}.json.gz", "wt") as fh:
                json.dump(canon, fh)
            print(f"{target}: {len(canon['edges'])} edges, {len(canon['state'])} classes with state -> {args.save}")
        return 0
    if args.check:
        before = {}
        for target in args.targets:
            path = args.check / f"{target.replace('/', '_')}.json.gz"
            with gzip.open(path, "rt") as fh:
                before[target] = json.load(fh)
    else:
        # The child runs another checkout: hand it the trees as opened here (`reference` is a path).
        from analyzer.graphs.store import open_target
        from analyzer.settings import Settings, default_cache_dir

        settings = Settings(cache_dir=Path(args.cache_dir) if args.cache_dir else default_cache_dir())
        labels = {open_target(settings, t).label: t for t in args.targets}
        built = _child_build(args.against, list(labels), args.cache_dir)
        before = {labels[label]: canon for label, canon in built.items()}
    differences = compare(before, after)
    print("IDENTICAL" if not differences else f"DIFFERENT: {differences} lines")
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
