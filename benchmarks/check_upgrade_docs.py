"""`atlas check --from OLD --to NEW` on a release's own documentation, against hand verdicts.

A project's docs as shipped with one release (vLLM's sdist carries `docs/`) are a book written
against that release by other people. Checking them through the upgrade to a later release
lists what broke; each such finding was judged by hand (true: the reference really no longer
holds at NEW; false: it still does, or it is not a reference) together with the new home
upstream's own later docs use, in `real_docs/upgrade_verdicts_*.txt`. This prints the
precision of "broke in the upgrade" and how often the best suggestion names that home. Recall
is not measured here (it needs every reference labelled; `check_real_docs.py --upgrade` does
that on the labelled corpus).

vLLM's reserved pages (docs/design, docs/configuration) are never read.

    python benchmarks/check_upgrade_docs.py DOCS_DIR --from vllm@0.30.0 --to vllm@0.33.0 \
        --verdicts benchmarks/real_docs/upgrade_verdicts_vllm_0.30.0_0.33.0.txt [-v]

DOCS_DIR: the `docs/` folder of the OLD release's sdist (`tar xzf vllm-0.30.0.tar.gz`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from analyzer.refs.check import check_upgrade, extract_all
from analyzer.refs.loader import load_pin, store_renames
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.suggest import History
from analyzer.settings import Settings, default_cache_dir

RESERVED = ("design", "configuration")  # an independent check's pages: never read


def same_home(home: str, replacement: str) -> bool:
    home, rep = home.strip(), replacement.strip()
    return rep == home or (rep.endswith("." + home.rsplit(".", 1)[-1]) and home.rsplit(".", 1)[-1] == rep.rsplit(".", 1)[-1])


def load_verdicts(path: Path) -> dict[tuple[str, int, str], tuple[str, str]]:
    """(doc, line, text) -> (true|false, home) from `DOC:LINE | TEXT | VERDICT | HOME | NOTE` rows."""
    out: dict[tuple[str, int, str], tuple[str, str]] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in raw.split("|", 4)]
        if len(cells) != 5 or cells[2] not in {"true", "false"}:
            raise ValueError(f"{path.name}:{number}: expected `DOC:LINE | TEXT | true|false | HOME | NOTE`: {raw!r}")
        doc, _, line = cells[0].rpartition(":")
        out[(doc, int(line), cells[1])] = (cells[2], cells[3])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("docs", type=Path)
    parser.add_argument("--from", dest="old", required=True)
    parser.add_argument("--to", dest="new", required=True)
    parser.add_argument("--verdicts", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args()
    settings = Settings(cache_dir=(args.cache_dir or default_cache_dir()).expanduser().resolve())
    docs = []
    for path in sorted(args.docs.rglob("*.md")):
        rel = path.relative_to(args.docs)
        if rel.parts[0] in RESERVED:
            continue
        docs.append((rel.as_posix(), path.read_text(encoding="utf-8", errors="replace")))
    old, new = load_pin(settings, args.old), load_pin(settings, args.new)
    verdicts = load_verdicts(args.verdicts)
    start = time.perf_counter()
    refs = [r for r in extract_all(docs) if r.framework in {old.project, "ambiguous"}]
    findings = check_upgrade(refs, old, new, History(old, store_renames(settings, old, new)))
    broke = [f for f in findings if f.status == BROKEN and f.previous_status == OK]
    elapsed = time.perf_counter() - start
    right = wrong = unjudged = homes = right_homes = 0
    for f in broke:
        verdict, home = verdicts.get((f.ref.file, f.ref.line, f.ref.text), ("?", ""))
        best = f.best
        if verdict == "true":
            right += 1
            if home not in {"", "-", "?"}:
                homes += 1
                right_homes += best is not None and same_home(home, best.replacement)
        elif verdict == "false":
            wrong += 1
        else:
            unjudged += 1
        if args.verbose:
            shown = f"{best.replacement} ({best.confidence:.2f})" if best else "-"
            print(f"  [{verdict}] {f.ref.file}:{f.ref.line} `{f.ref.text}` -> {shown}; home {home or '?'}")
    judged = right + wrong
    print(
        f"{len(docs)} documents, {len(refs)} references, {args.old} -> {args.new} in {elapsed:.1f} s: "
        f"{len(broke)} flagged as broken by the upgrade; precision {right / judged if judged else 0:.3f} ({right}/{judged}), "
        f"{unjudged} without a verdict; right new home {right_homes}/{homes}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
