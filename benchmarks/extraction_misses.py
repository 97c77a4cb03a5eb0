"""Labelled broken references the checker never extracts, by where and how they are written.

A measuring aid for the extraction side of `atlas check` (issue 12 §1): for each labelled part, run
the extractor alone (`extract_all`, no pin needed) and list the rows labelled broken at some pin that
no extracted reference claims (same document, line and text, as `check_real_docs.match` pairs them).
Each is counted by

- form: where the text stands (`python block`, `shell block`, `text block`, another block language,
  `table`, `heading`, `link text`, `code span` in prose, or plain `prose`, with `CJK` when the
  line holds CJK characters);
- shape: `path`, `flag`, `env`, `Class.method`, `dotted`, `call()`, `CamelCase`, `snake_case`, `word`.

    python benchmarks/extraction_misses.py [--part heldout3 ...] [-v]

`check_real_docs.py -v` says "not extracted" for a labelled row no FINDING claims, which is also the
case of a row the extractor found but the checker gave no finding (a tentative name no pin defines,
a name judged another program's). `--dropped` counts those apart, per part and release (it needs
the four pins indexed, as `check_real_docs.py` does): the extraction side's share of the misses.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.document import parse_snippet
from analyzer.refs.extract import markdown_parser
from analyzer.refs.loader import load_pin
from analyzer.refs.models import Finding
from analyzer.settings import Settings, default_cache_dir
from benchmarks.check_real_docs import BLIND_PARTS, PARTS, RELEASES, Label, load_corpus, match

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def block_languages(text: str) -> tuple[dict[int, str], set[int]]:
    """1-based line -> the language of the fenced or indented block holding it (`-` for none),
    and the lines of Python blocks that `parse_snippet` reads no statement on."""
    out: dict[int, str] = {}
    unread: set[int] = set()
    for token in markdown_parser().parse(text):
        if token.type in {"fence", "code_block"} and token.map:
            lang = (token.info or "").strip().split()[0].lower() if token.info.strip() else "-"
            first = token.map[0] + (2 if token.type == "fence" else 1)  # 1-based line of the content
            for line in range(token.map[0] + 1, token.map[1] + 1):
                out[line] = lang
            if _LANG_FORM.get(lang) == "python":
                read: set[int] = set()
                for base, tree in parse_snippet(token.content):
                    for node in tree.body:
                        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
                        read.update(range(first + base + start - 1, first + base + (node.end_lineno or node.lineno)))
                unread.update(line for line in range(first, first + len(token.content.splitlines())) if line not in read)
    return out, unread


_LANG_FORM = {"python": "python", "py": "python", "python3": "python", "pycon": "python", "bash": "shell", "sh": "shell",
              "shell": "shell", "console": "shell", "zsh": "shell", "text": "text", "txt": "text", "-": "text", "plain": "text",
              "plaintext": "text"}


def form(label: Label, lines: list[str], blocks: dict[int, str]) -> str:
    """Where the label's text stands in its document."""
    line = lines[label.line - 1] if 0 < label.line <= len(lines) else ""
    cjk = " CJK" if _CJK_RE.search(line) else ""
    if label.line in blocks:
        lang = blocks[label.line]
        return f"{_LANG_FORM.get(lang, lang)} block"
    text = label.text.strip("`")
    stripped = line.lstrip()
    if stripped.startswith("#"):
        where = "heading"
    elif stripped.startswith("|"):
        where = "table"
    elif re.search(r"\[[^\]]*" + re.escape(text) + r"[^\]]*\]\(", line):
        where = "link text"
    elif any(text in span for span in re.findall(r"`([^`]+)`", line)):
        where = "code span"
    else:
        where = "prose"
    return where + cjk


def shape(text: str) -> str:
    t = text.strip("`").strip()
    if re.match(r"^-{1,2}[A-Za-z]", t):
        return "flag"
    if re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+(=\S*)?", t):
        return "env"
    if "/" in t or re.search(r"\.(py|cu|cuh|cpp|h|rs|md|sh|toml|yaml|json)\b", t):
        return "path"
    bare = re.sub(r"\(.*\)$", "", t)
    if re.fullmatch(r"_*[A-Z]\w*\.\w+", bare):
        return "Class.method" + ("()" if bare != t else "")
    if "." in bare:
        return "dotted" + ("()" if bare != t else "")
    if bare != t:
        return "call()"
    if re.fullmatch(r"_*[A-Z][a-z0-9]+[A-Z]\w*|_*[A-Z]{2,}[a-z]\w*", bare):
        return "CamelCase"
    if "_" in bare.strip("_"):
        return "snake_case"
    return "word"


def misses(part: str, every: bool = False) -> list[tuple[Label, str, str, str]]:
    """(label, form, shape, why) of each row labelled broken at some pin that no extracted reference
    claims. Why: `in a longer reference` (a reference on its line holds the text, claimed by another
    label: `self.scorer.score_proposals` is one reference, labelled `self.scorer` and
    `score_proposals`), `in a comment` (after `#` in a Python or shell block), `snippet unparsed` (its Python
    block's line is read by no statement), or
    `no rule`. `every`: rows labelled a reference (ok, broken, unchecked) at some pin, not only broken ones."""
    labels, docs = load_corpus([part])
    refs = extract_all(docs.items())
    # `match` pairs findings with labels; an extracted reference stands in for its finding here.
    claimed, _ = match(labels, [Finding(ref=r, pin="", status="", note="") for r in refs])
    out: list[tuple[Label, str, str, str]] = []
    lines_of = {doc: text.splitlines() for doc, text in docs.items()}
    blocks_of = {doc: block_languages(text) for doc, text in docs.items()}
    on_line: dict[tuple[str, int], list[str]] = {}
    for r in refs:
        on_line.setdefault((r.file, r.line), []).append(r.text.strip("`"))
    for i, label in enumerate(labels):
        if i in claimed or not ({"ok", "broken", "unchecked"} if every else {"broken"}) & set(label.labels.values()):
            continue
        blocks, unread = blocks_of[label.doc]
        text = label.text.strip("`")
        inside = re.compile(rf"(?<!\w){re.escape(text)}(?!\w)")
        if any(inside.search(written) for written in on_line.get((label.doc, label.line), ())):
            why = "in a longer reference"
        elif "#" in (line := lines_of[label.doc][label.line - 1]) and text in line.split("#", 1)[1] and blocks.get(label.line) in _LANG_FORM and _LANG_FORM[blocks[label.line]] in {"python", "shell"}:
            why = "in a comment"
        elif label.line in unread:
            why = "snippet unparsed"
        else:
            why = "no rule"
        out.append((label, form(label, lines_of[label.doc], blocks), shape(label.text), why))
    return out


def dropped(part: str, settings: Settings) -> list[tuple[Label, str]]:
    """(label, pin) of each row labelled broken at a pin that an extracted reference claims but no
    finding of the checker does, at that pin's release."""
    labels, docs = load_corpus([part])
    refs = extract_all(docs.items())
    extracted, _ = match(labels, [Finding(ref=r, pin="", status="", note="") for r in refs])
    out: list[tuple[Label, str]] = []
    for pins in RELEASES.values():
        findings, _ = match(labels, check_references(refs, [load_pin(settings, p) for p in pins]))
        project_pin = {p.partition("@")[0]: p for p in pins}
        for i, label in enumerate(labels):
            pin = project_pin[label.project]
            if label.at(pin) == "broken" and i in extracted and i not in findings:
                out.append((label, pin))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", nargs="*", choices=(*PARTS, *BLIND_PARTS), default=list(BLIND_PARTS))
    parser.add_argument("--verbose", "-v", action="store_true", help="list every row under its form")
    parser.add_argument("--every", action="store_true", help="every row labelled a reference (ok, broken, unchecked), not only broken ones")
    parser.add_argument("--dropped", action="store_true", help="instead: broken rows extracted but given no finding, per release (needs the pins)")
    args = parser.parse_args()
    if args.dropped:
        settings = Settings(cache_dir=default_cache_dir().expanduser().resolve())
        for part in args.part:
            lost = dropped(part, settings)
            print(f"[{part}] labelled broken, extracted, no finding: {len(lost)} (rows x releases)")
            for label, pin in lost if args.verbose else ():
                print(f"    {Path(label.doc).name}:{label.line} `{label.text}` [{pin}]")
        return 0
    forms: Counter[str] = Counter()
    shapes: Counter[tuple[str, str]] = Counter()
    per_part: Counter[tuple[str, str]] = Counter()
    whys: Counter[tuple[str, str]] = Counter()
    rows: list[tuple[str, Label, str, str, str]] = []
    for part in args.part:
        for label, where, kind, why in misses(part, args.every):
            forms[where] += 1
            shapes[(where, kind)] += 1
            whys[(where, why)] += 1
            per_part[(part, where)] += 1
            rows.append((part, label, where, kind, why))
    print(f"labelled {'a reference' if args.every else 'broken'}, never extracted: {sum(forms.values())} rows in {', '.join(args.part)}")
    print(f"  {'form':<22} {'rows':>5}  per part; shapes; why")
    for where, n in forms.most_common():
        parts = " ".join(f"{p.removeprefix('heldout')}:{per_part[(p, where)]}" for p in args.part if per_part[(p, where)])
        kinds = ", ".join(f"{k} {c}" for (w, k), c in shapes.most_common() if w == where)
        reasons = ", ".join(f"{y} {c}" for (w, y), c in whys.most_common() if w == where)
        print(f"  {where:<22} {n:>5}  {parts}; {kinds}; {reasons}")
    if args.verbose:
        for _part, label, where, kind, why in sorted(rows, key=lambda r: (r[2], r[4], r[0], r[1].doc, r[1].line)):
            print(f"    {where:<18} {kind:<14} {why:<22} {Path(label.doc).parent.name}/{Path(label.doc).name}:{label.line} `{label.text}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
