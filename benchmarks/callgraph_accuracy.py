"""How well does the static call graph match what actually runs?

1. Runs the reference engine's generation (the built-in tiny model by default)
   under `sys.setprofile`, collecting caller -> callee edges between functions
   of `reference_engine` (frames of other packages in between, e.g. torch's
   `Module.__call__`, are skipped over, so `self.mlp(x)` -> `MLP.forward`).
2. Builds the static graph of `reference_engine/` the same way `atlas` does.
3. Reports recall of the dynamic edges (overall and per confidence level) and
   precision on a seeded sample of static edges: an edge seen at run time is
   correct; the others are looked up in benchmarks/callgraph_labels.json
   (hand labels, "edge": true/false) and listed when unlabelled.
4. Reruns the micro-benchmark cases (tests/graphs/cases) and prints their totals.
5. Scores the function-value flow suite (tests/graphs/flow_cases: one folder per
   construct, expectations checked against profiled runs by its tests) per category.
6. Traces pure-Python libraries the project does not own (markdown_it parsing and
   rendering a document, jinja2 compiling and rendering templates: see
   benchmarks/library_trace.py) and compares their traced
   edges with the static graph of its installed source: recall, and precision both
   against the trace and on call sites whose line ran.

    .venv/bin/python benchmarks/callgraph_accuracy.py [--model DIR] [--sample 60] [--skip-engine]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
PACKAGE = "reference_engine"
LABELS = Path(__file__).with_name("callgraph_labels.json")
_MAX_HOPS = 12


def frame_function(frame: FrameType) -> str | None:
    """`module.Class.method` for a project frame (closures and comprehensions
    are named after the function they sit in, as the index names them)."""
    module = frame.f_globals.get("__name__", "")
    if not isinstance(module, str) or not (module == PACKAGE or module.startswith(PACKAGE + ".")):
        return None
    qual = frame.f_code.co_qualname
    if qual == "<module>":
        return module
    if qual.startswith("__create_fn__"):
        # A dataclass-generated method: its `__init__` is the class's constructor,
        # which the static graph links to the class itself.
        obj = frame.f_locals.get("self") if frame.f_code.co_name == "__init__" else None
        cls = type(obj) if obj is not None else None
        return f"{cls.__module__}.{cls.__qualname__}" if cls is not None else None
    parts = [p for p in qual.split(".") if p != "<locals>"]
    keep: list[str] = []
    for part in parts:
        if part.startswith("<"):  # <lambda>, <genexpr>, <listcomp>: belongs to the enclosing def
            break
        keep.append(part)
    return f"{module}.{'.'.join(keep)}" if keep else module


def collect_dynamic_edges(workload: Callable[[], Any]) -> set[tuple[str, str]]:
    edges: set[tuple[str, str]] = set()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        qual = frame.f_code.co_qualname
        if qual.rpartition(".")[2].startswith("<") and qual != "<module>":
            return  # a comprehension / lambda frame is not a node of the graph
        callee = frame_function(frame)
        if callee is None:
            return
        back, hops = frame.f_back, 0
        while back is not None and hops < _MAX_HOPS:
            caller = frame_function(back)
            if caller is not None:
                if caller != callee or back.f_code is not frame.f_code:
                    edges.add((caller, callee))
                return
            back, hops = back.f_back, hops + 1

    threading.setprofile(profile)  # type: ignore[arg-type]
    sys.setprofile(profile)  # type: ignore[arg-type]
    try:
        workload()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return edges


def generation_workload(model: str | None) -> Callable[[], Any]:
    from reference_engine import LLM, SamplingParams

    llm = LLM(model) if model else LLM()
    prompts = ["The scheduler decides", "Paged attention keeps", "A radix tree shares prefixes"]
    params = [
        SamplingParams(max_tokens=12, temperature=0.0),
        SamplingParams(max_tokens=8, temperature=0.8, top_p=0.9, seed=7),
    ]

    def run() -> Any:
        out = llm.generate(prompts, params[0])
        out += llm.generate(prompts[:2], params[1])
        return out

    return run


def static_graph(settings_cache: Path) -> nx.DiGraph:
    from analyzer.graphs.store import directory_target, load_graphs
    from analyzer.settings import Settings

    settings = Settings(cache_dir=settings_cache)
    return load_graphs(settings, directory_target(ROOT / PACKAGE), rebuild=True).calls.to_nx()


def recall_report(graph: nx.DiGraph, dynamic: set[tuple[str, str]]) -> dict[str, object]:
    levels = {"certain": {"certain"}, "inferred": {"certain", "inferred"}, "guess": {"certain", "inferred", "guess"}}
    out: dict[str, object] = {"dynamic_edges": len(dynamic)}
    for level, allowed in levels.items():
        hit = {e for e in dynamic if graph.has_edge(*e) and graph.edges[e]["confidence"] in allowed}
        out[f"recall_{level}"] = len(hit) / len(dynamic) if dynamic else 1.0
    missed = sorted(e for e in dynamic if not graph.has_edge(*e))
    out["missed"] = [f"{a} -> {b}" + ("" if a in graph and b in graph else "  (node unknown)") for a, b in missed]
    return out


def precision_report(
    graph: nx.DiGraph, dynamic: set[tuple[str, str]], sample: int, seed: int
) -> dict[str, object]:
    labels: dict[str, bool] = json.loads(LABELS.read_text()) if LABELS.is_file() else {}
    function_edges = sorted(
        (u, v) for u, v in graph.edges
        if graph.nodes[u].get("kind") in ("function", "method") and graph.nodes[v].get("kind") in ("function", "method")
    )
    picked = random.Random(seed).sample(function_edges, min(sample, len(function_edges)))
    right = wrong = 0
    unlabelled: list[str] = []
    by_conf: dict[str, list[int]] = {}
    for u, v in picked:
        key = f"{u} -> {v}"
        if (u, v) in dynamic:
            ok: bool | None = True
        else:
            ok = labels.get(key)
        if ok is None:
            unlabelled.append(f"{key}  [{graph.edges[u, v]['confidence']} {graph.edges[u, v]['site']}]")
            continue
        right, wrong = right + ok, wrong + (not ok)
        by_conf.setdefault(graph.edges[u, v]["confidence"], [0, 0])[0 if ok else 1] += 1
    labelled = right + wrong
    return {
        "sampled": len(picked),
        "labelled": labelled,
        "precision": right / labelled if labelled else None,
        "by_confidence": {k: {"right": r, "wrong": w} for k, (r, w) in by_conf.items()},
        "unlabelled": unlabelled,
    }


def micro_benchmark() -> tuple[float, float, int]:
    sys.path.insert(0, str(ROOT / "tests"))
    from graphs.test_micro_benchmark import CASE_NAMES, CASES, case_facts

    from analyzer.graphs.pycg import pycg_callgraph, score

    tp = fp = fn = 0
    for name in CASE_NAMES:
        expected = json.loads((CASES / name / "callgraph.json").read_text())
        t, f, n = score(expected, pycg_callgraph(case_facts(CASES / name)))
        tp, fp, fn = tp + t, fp + f, fn + n
    return tp / (tp + fp), tp / (tp + fn), len(CASE_NAMES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="Model folder (default: the built-in tiny model).")
    parser.add_argument("--sample", type=int, default=60, help="Static edges sampled for precision.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/atlas-graphs-bench"))
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--skip-engine", action="store_true", help="Leave out the reference engine's trace.")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    report: dict[str, object] = {}
    p, r, n = micro_benchmark()
    report["micro_benchmark"] = {"cases": n, "precision": p, "recall": r}
    sys.path.insert(0, str(ROOT / "tests"))
    from graphs.flow_suite import CASE_IDS, format_scores, score_suite
    from library_trace import WORKLOADS, format_categories, format_causes, library_report

    scores = score_suite()
    report["flow_suite"] = {cat: {"right": t, "extra": f, "missed": m} for cat, (t, f, m) in scores.items()}
    libraries = {package: library_report(package) for package in WORKLOADS}
    report["library_trace"] = libraries
    if not args.skip_engine:
        workload = generation_workload(args.model)
        dynamic = collect_dynamic_edges(workload)
        graph = static_graph(args.cache_dir)
        report["recall"] = recall_report(graph, dynamic)
        report["precision_sample"] = precision_report(graph, dynamic, args.sample, args.seed)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"micro-benchmark: {n} cases, precision {p:.1%}, recall {r:.1%}")
    print(f"function-value flow suite: {len(CASE_IDS)} cases")
    print("\n".join(format_scores(scores)))
    for library in libraries.values():
        print(f"library trace ({library['library']}): {library['traced_edges']} traced edges, "
              f"{library['static_edges']} static edges")
        print(f"  recall {library['recall']:.1%}; precision vs trace {library['precision_vs_trace']:.1%} (lower bound); "
              f"on executed sites {library['executed_site_precision']:.1%} of {library['executed_site_edges']} edges")
        print("\n".join(format_categories(library)))
        print("\n".join(format_causes(library)))
        for line in library["missed"]:  # type: ignore[attr-defined]
            print(f"    missed: {line}")
    if args.skip_engine:
        return 0
    rec = report["recall"]
    prec = report["precision_sample"]
    assert isinstance(rec, dict) and isinstance(prec, dict)
    print(f"dynamic edges observed: {rec['dynamic_edges']}")
    for level in ("certain", "inferred", "guess"):
        print(f"  recall with edges up to {level:9}: {rec[f'recall_{level}']:.1%}")
    for line in rec["missed"]:  # type: ignore[union-attr]
        print(f"    missed: {line}")
    precision = prec["precision"]
    print(f"precision on a sample of {prec['sampled']} static edges ({prec['labelled']} labelled): "
          + (f"{precision:.1%}" if precision is not None else "n/a"))
    print(f"  by confidence: {prec['by_confidence']}")
    for line in prec["unlabelled"]:  # type: ignore[union-attr]
        print(f"    unlabelled: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
