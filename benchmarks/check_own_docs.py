"""Links of vLLM's own docs pages checked against the sdist they ship in.

A release's docs are written against its own tree, so at its source pin almost every link of
a page should resolve: what does not is either stale upstream (a page linking a file the release
dropped) or a false alarm of the link rules (`analyzer/refs/links.py`: `gh-file:` macros,
relative links, docs pages, autorefs). No labels: the figure is how many links of each status
the checker reports, and the list of those not ok, to read.

    python benchmarks/check_own_docs.py [--pin vllm@0.30.0-src] [-v]

The pages of docs/design and docs/configuration are left out unread (reserved for an
independent check). Needs the source pins (see benchmarks/real_docs/README.md).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.loader import load_pin
from analyzer.refs.models import OK
from analyzer.settings import Settings, default_cache_dir

RESERVED = {"design", "configuration"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--pin", action="append", help="a vLLM source pin (default: vllm@0.30.0-src and vllm@0.33.0-src)")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--verbose", "-v", action="store_true", help="list every link that is not ok")
    args = parser.parse_args()
    settings = Settings(cache_dir=(args.cache_dir or default_cache_dir()).expanduser().resolve())
    for name in args.pin or ["vllm@0.30.0-src", "vllm@0.33.0-src"]:
        pin = load_pin(settings, name)
        if pin.repo_tree is None and pin.tree is None:
            raise SystemExit(f"{name}: no tree on disk")
        docs_root = Path(pin.repo_tree or pin.tree or "") / "docs"
        pages = [p for p in sorted(docs_root.rglob("*.md")) if p.relative_to(docs_root).parts[0] not in RESERVED]
        start = time.process_time()
        refs = [r for r in extract_all((str(p.relative_to(docs_root.parent)), p.read_text(encoding="utf-8")) for p in pages) if r.origin == "link"]
        findings = check_references(refs, [pin])
        cpu = time.process_time() - start
        counts = Counter(f.status for f in findings)
        kinds = Counter(("gh-file/gh-dir" if f.ref.text.startswith("gh-") else "GitHub URL" if f.ref.text.startswith("http") else "autoref" if f.ref.kind == "symbol" else "relative") for f in findings)
        print(f"{name}: {len(pages)} pages, {len(findings)} link findings ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}); "
              f"{', '.join(f'{s} {n}' for s, n in sorted(counts.items()))}; {cpu:.1f} s CPU")
        if args.verbose:
            for f in findings:
                if f.status != OK:
                    best = f" -> {f.best.replacement} ({f.best.confidence:.2f})" if f.best else ""
                    print(f"    {f.status}: {f.ref.file}:{f.ref.line} {f.ref.text}: {f.note}{best}")


if __name__ == "__main__":
    main()
