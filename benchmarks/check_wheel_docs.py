"""`atlas check` on the Markdown files the pinned wheels ship (READMEs and guides that upstream
keeps next to its code), each against the release it ships in.

These documents are written by others and mostly current with their own release, so a broken
finding here is either a page upstream let go stale or a false alarm of the checker: the list is
a probe for false alarms on text nobody labelled (compare two checkouts' outputs with `diff`).

    python benchmarks/check_wheel_docs.py [--release old|new] [--cache-dir DIR] [--labels FILE ...]

`--labels benchmarks/wheel_docs_sample.json` (a sample of one run's broken findings, judged by
hand) also prints the precision of what is still reported broken among the labelled findings, and
how many findings labelled broken are no longer reported.

Needs the pins in the cache (`atlas demo` fetches them).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.loader import load_pin
from analyzer.refs.models import BROKEN
from analyzer.settings import Settings, default_cache_dir

RELEASES = {"old": ("vllm@0.30.0", "sglang@0.5.20"), "new": ("vllm@0.33.0", "sglang@0.5.23")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", choices=sorted(RELEASES), default="new")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--labels", type=Path, action="append", default=[], help="hand-judged sample of broken findings (repeatable)")
    args = parser.parse_args()
    settings = Settings(cache_dir=args.cache_dir or default_cache_dir())
    pins = [load_pin(settings, pin) for pin in RELEASES[args.release]]
    docs: list[tuple[str, str]] = []
    for pin in pins:
        tree = Path(pin.tree or "")
        for path in sorted(tree.rglob("*.md")):
            if ".dist-info" not in str(path):
                docs.append((f"{pin.pin}/{path.relative_to(tree)}", path.read_text(encoding="utf-8", errors="replace")))
    findings = check_references(extract_all(docs), pins)
    broken = sorted({(f.ref.file, f.ref.line, f.ref.text, f.note) for f in findings if f.status == BROKEN})
    print(f"{len(docs)} documents, {len(findings)} findings, {len(broken)} broken")
    for file, line, text, note in broken:
        print(f"  {file}:{line} `{text}`: {note}")
    for labels in args.labels:
        _precision(labels.name, json.loads(labels.read_text(encoding="utf-8"))["items"], {(f, ln, t) for f, ln, t, _ in broken})


def _precision(name: str, items: list[dict[str, object]], reported: set[tuple[str, int, str]]) -> None:
    """Precision over the labelled findings that are still reported broken."""
    kept = [i for i in items if (i["file"], i["line"], i["text"]) in reported]
    right = sum(1 for i in kept if i["label"] == "broken")
    lost = sum(1 for i in items if i["label"] == "broken" and i not in kept)
    share = f"{right / len(kept):.2f}" if kept else "n/a"
    print(f"{name}: {len(kept)} of {len(items)} still reported broken, precision {share} ({right}/{len(kept)}); "
          f"{lost} labelled broken no longer reported")


if __name__ == "__main__":
    main()
