"""`atlas check` on real documents written by others, against hand labels.

The corpus (`benchmarks/real_docs/`, see its README) holds verbatim excerpts of
upstream feature docs and third-party study notes about vLLM and SGLang, with a
label for every code-looking string: ok, broken (and where it went), not a
reference, or a repository-only file a wheel cannot hold. This script runs the
checker's own pipeline (extraction, resolution, suggestions) on each document
against both releases of each project and prints, per part (dev / held-out),
per release and per kind of reference:

- broken-reference precision and recall,
- false alarms on distractors (strings that are not references),
- extraction coverage (labelled references the checker found at all),
- suggestion accuracy on moved references with one clear new home,
- calibration: how often the best suggestion is right in each confidence band, per part
  and release (the table a `--fix` threshold is chosen from),
- per category (paths, symbols, flags, env vars, links): precision, recall, false alarms on
  the distractors of that shape, and suggestion accuracy, per release.

    python benchmarks/check_real_docs.py [--part dev|heldout|heldout2|all|heldout3|heldout4|heldout5|heldout6|heldout7|heldout8|heldout9] [--verbose]

`all` leaves out `heldout3` to `heldout9` on purpose: those parts are kept blind for whoever tunes the
checker (run them only with `--part heldout3` / `heldout4` / `heldout5` / `heldout6` / `heldout7` / `heldout8` / `heldout9`, and only to measure).

`--each-part DIR` measures every part, the blind ones too, in one process (the pins and the past evidence
loaded once): each part's `-v` report, line for line what `--part PART -v` prints, goes to DIR/PART.txt
(about five minutes per mode for all parts on two cores, where one process per part takes several times that).

`--dropped` adds, per part and release, the broken rows the checker missed with no finding although it
extracted a reference there, grouped by why it dropped them (`drop_reason`; `-v` lists them).

Needs the four pins indexed in the cache (`atlas demo` does it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.refs.check import check_reference, check_references, check_upgrade, extract_all
from analyzer.refs.fields import accepts
from analyzer.refs.lineage import DEFAULT_PAST, Lineage
from analyzer.refs.loader import load_lineages, load_pin, load_successors, store_renames
from analyzer.refs.models import AMBIGUOUS, BROKEN, OK, Finding, Reference
from analyzer.refs.past_bundle import shipped_past
from analyzer.refs.pinview import PinView
from analyzer.refs.successors import Successors
from analyzer.refs.suggest import History
from analyzer.settings import Settings, default_cache_dir

ROOT = Path(__file__).resolve().parent / "real_docs"
RELEASES = {"old": ("vllm@0.30.0", "sglang@0.5.20"), "new": ("vllm@0.33.0", "sglang@0.5.23")}
# `--source`: vLLM's sdists (csrc/, rust/, tests/ with the package) pinned as git commits, so
# kernel and repository references resolve; see benchmarks/real_docs/README.md for the commands.
SOURCE_RELEASES = {"old": ("vllm@0.30.0-src", "sglang@0.5.20"), "new": ("vllm@0.33.0-src", "sglang@0.5.23")}
BANDS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01))
PARTS = ("dev", "heldout", "heldout2")  # `--part all`
BLIND_PARTS = ("heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11", "heldout12", "heldout13", "heldout13o", "heldout13b", "heldout14", "heldout14x", "heldout15", "heldout16", "heldout17", "heldout18", "heldout19", "heldout20", "heldout21", "heldout22", "heldout23", "heldout24", "heldout25", "heldout26", "heldout27", "heldout28", "heldout29", "heldout30", "heldout31", "heldout32", "heldout33", "heldout34", "heldout35", "heldout36", "heldout37", "heldout38", "heldout39", "heldout40", "heldout41", "heldout42", "heldout43", "heldout44", "heldout45", "heldout46", "heldout47", "heldout48", "heldout49", "heldout50", "heldout51", "heldout52", "heldout53", "heldout54", "heldout55", "heldout56", "heldout57", "heldout58", "heldout59", "heldout60", "heldout61", "heldout62", "heldout63", "heldout64", "heldout65", "heldout66", "heldout67", "heldout68", "heldout69", "heldout70", "heldout71", "heldout72", "heldout73", "heldout74", "heldout75", "heldout76", "heldout77", "heldout78", "heldout79", "heldout80", "heldout81", "heldout82", "heldout83", "heldout84", "heldout85", "heldout86", "heldout87", "heldout88", "heldout89", "heldout90", "heldout91", "heldout92", "heldout93", "heldout94", "heldout95", "heldout96", "heldout97", "heldout98", "heldout99", "heldout100", "heldout101", "heldout102", "heldout103", "heldout104", "heldout105", "heldout106", "heldout107", "heldout108", "heldout109", "heldout110", "heldout111", "heldout112", "heldout113", "heldout114", "heldout115", "heldout116", "heldout117", "heldout118", "heldout119", "heldout120", "heldout121", "heldout122", "heldout123", "heldout124", "heldout125", "heldout126", "heldout127", "heldout128", "heldout129", "heldout130", "heldout131", "heldout132", "heldout133", "heldout134", "heldout135", "heldout136", "heldout137", "heldout138", "heldout139", "heldout140", "heldout141", "heldout142", "heldout143", "heldout144", "heldout145", "heldout146", "heldout147", "heldout148", "heldout149", "heldout150", "heldout151", "heldout152", "heldout153", "heldout154", "heldout155", "heldout156", "heldout157", "heldout158", "heldout159", "heldout160", "heldout161", "heldout162", "heldout163", "heldout164", "heldout165", "heldout166", "heldout167", "heldout168", "heldout169", "heldout170", "heldout171", "heldout172", "heldout173", "heldout174", "heldout175", "heldout176", "heldout177", "heldout178", "heldout179", "heldout180", "heldout181", "heldout182", "heldout183", "heldout184", "heldout185", "heldout186", "heldout187", "heldout188", "heldout189")  # only on request: kept blind for whoever tunes the checker
# Categories of the per-category table: a label's kind, or for a distractor (`none`) the shape
# of its text, so that "false alarms on flags" counts the flag-looking strings that are not flags.
CATEGORIES = ("paths", "symbols", "flags", "env vars", "links")
_KIND_CATEGORY = {"path": "paths", "symbol": "symbols", "param": "symbols", "flag": "flags", "env": "env vars", "link": "links"}
REF_LABELS = {"ok", "broken", "unchecked"}


def category(kind: str, text: str) -> str:
    """The category a label (or an unlabelled finding) is counted under: its kind, or for a
    string labelled `none` the kind of reference it looks like."""
    if kind in _KIND_CATEGORY:
        return _KIND_CATEGORY[kind]
    t = text.strip("`").strip()
    if re.match(r"^-{1,2}[A-Za-z]", t):
        return "flags"
    if re.match(r"^(https?://|gh-\w+:)", t):
        return "links"
    if re.fullmatch(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+(=\S*)?", t):
        return "env vars"
    if "/" in t or re.search(r"\.(py|cu|cuh|cpp|h|rs|md|sh|toml|yaml|json)\b", t):
        return "paths"
    return "symbols"


@dataclass(frozen=True, slots=True)
class Label:
    doc: str  # `dev/x.md`
    project: str
    line: int
    kind: str
    text: str
    labels: dict[str, str]  # pin -> label; key "*" for every pin of the project
    home: str
    note: str

    def at(self, pin: str) -> str:
        if pin.endswith("-src") and pin not in self.labels:
            # A source pin answers as its release does, except for what only a repository holds:
            # a label that says `unchecked` there was never labelled against the sources.
            value = self.at(pin.removesuffix("-src"))
            return "skip" if value == "unchecked" else value
        return self.labels.get(pin, self.labels.get("*", "skip"))


_CELL_SPLIT_RE = re.compile(r"(?<!\\)\|")


def parse_labels(path: Path) -> list[Label]:
    """Rows of one label file; ValueError naming the line on a malformed row."""
    out: list[Label] = []
    doc = project = ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = re.fullmatch(r"\[(?P<doc>[^\]]+)\]\s+project=(?P<project>vllm|sglang)", line)
        if header:
            doc, project = header.group("doc"), header.group("project")
            continue
        # A cell may hold a `|` written `\|` (`<\|grounding\|>`, a model's prompt token).
        cells = [c.strip().replace("\\|", "|") for c in _CELL_SPLIT_RE.split(line, maxsplit=5)]
        if len(cells) != 6 or not doc:
            raise ValueError(f"{path.name}:{number}: expected 6 cells under a [doc] header: {raw!r}")
        line_no, kind, text, label, home, note = cells
        labels: dict[str, str] = {}
        for part in label.split():
            pin, sep, value = part.rpartition(":")
            labels[pin if sep else "*"] = value
        for value in labels.values():
            if value not in {"ok", "broken", "not-ref", "unchecked", "skip"}:
                raise ValueError(f"{path.name}:{number}: unknown label {value!r}")
        out.append(Label(doc, project, int(line_no), kind, text, labels, home, note))
    return out


def load_corpus(parts: Iterable[str]) -> tuple[list[Label], dict[str, str]]:
    labels: list[Label] = []
    docs: dict[str, str] = {}
    for part in parts:
        labels.extend(parse_labels(ROOT / f"labels_{part}.txt"))
        for path in sorted((ROOT / part).glob("*.md")):
            docs[f"{part}/{path.name}"] = path.read_text(encoding="utf-8")
    return labels, docs


def _texts_match(label: str, written: str) -> bool:
    a, b = label.strip("`"), written.strip("`")
    return bool(b) and (a == b or b in a or a in b)


def match(labels: list[Label], findings: list[Finding]) -> tuple[dict[int, Finding], list[Finding]]:
    """Label index -> the finding about it (same document, line and text), and the
    findings no label claims. One finding per label, exact text first."""
    by_line: dict[tuple[str, int], list[Finding]] = defaultdict(list)
    for f in findings:
        by_line[(f.ref.file, f.ref.line)].append(f)
    taken: set[int] = set()
    claimed: dict[int, Finding] = {}
    for exact in (True, False):
        for i, label in enumerate(labels):
            if i in claimed:
                continue
            for f in by_line.get((label.doc, label.line), ()):
                if id(f) in taken:
                    continue
                # (A label gives the text as the document writes it, Markdown escapes and all.)
                spellings = [f.ref.text] if f.ref.escaped is None else [f.ref.text, f.ref.escaped]
                ok = any(t.strip("`") == label.text.strip("`") if exact else _texts_match(label.text, t) for t in spellings)
                if ok:
                    claimed[i] = f
                    taken.add(id(f))
                    break
    # A text written twice on one line is one labelled reference (labels are one row per distinct
    # text per line): a second finding for it is that label's, not an unlabelled alarm.
    labelled = {(labels[i].doc, labels[i].line, f.ref.text.strip("`")) for i, f in claimed.items()}
    return claimed, [f for f in findings if id(f) not in taken and (f.ref.file, f.ref.line, f.ref.text.strip("`")) not in labelled]


def same_home(home: str, replacement: str) -> bool:
    """Whether a suggestion names the labelled home (paths by suffix, symbols by their
    last two components: `Executor.profile` == `vllm.v1.executor.abstract.Executor.profile`,
    flags by the flag, with or without a value)."""
    home, rep = home.strip("/"), replacement.split("#", 1)[0].strip("/")
    if home.startswith("--") and rep.startswith("--") and (len(home.split()) == 1 or len(rep.split()) == 1):
        # A flag, with or without the value it is set to (`--moe-a2a-backend deepep`): labellers
        # write either, and either names the flag the option went to (two values must agree).
        return home.split()[0] == rep.split()[0]
    if "/" in home or "/" in rep:
        rep = re.sub(r"^https?://github\.com/[^/]+/[^/]+/(blob|tree)/[^/]+/|^gh-(?:file|dir):", "", rep)
        rep = rep.removeprefix("python/")
        home = home.removeprefix("python/")
        return rep == home or rep.endswith("/" + home) or home.endswith("/" + rep)
    tail = ".".join(home.split(".")[-2:])
    return rep in (home, tail) or rep.endswith("." + tail)


@dataclass(slots=True)
class Tally:
    tp: int = 0
    fn: int = 0
    fp: int = 0
    distractors: int = 0
    false_alarms: int = 0
    refs: int = 0
    found: int = 0
    homes: int = 0
    right_homes: int = 0
    misses: list[str] = field(default_factory=list)
    alarms: list[str] = field(default_factory=list)
    wrong_homes: list[str] = field(default_factory=list)
    suggested: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("tp", "fn", "fp", "distractors", "false_alarms", "refs", "found", "homes", "right_homes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.misses += other.misses
        self.alarms += other.alarms
        self.wrong_homes += other.wrong_homes
        self.suggested += other.suggested


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f} ({a}/{b})" if b else "n/a (0/0)"


def evaluate(
    labels: list[Label], findings: list[Finding], pins: tuple[str, ...], bands: Counter[tuple[str, int, bool]], release: str = ""
) -> tuple[dict[str, Tally], dict[str, Tally]]:
    """Tallies per kind of reference and per category (see `category`) for one release's run.
    `bands` counts the best suggestion on each labelled broken reference by (release, band, right)."""
    claimed, unclaimed = match(labels, findings)
    tallies: dict[str, Tally] = defaultdict(Tally)
    categories: dict[str, Tally] = defaultdict(Tally)
    project_pin = {p.partition("@")[0]: p for p in pins}
    for i, label in enumerate(labels):
        pin = project_pin[label.project]
        value = label.at(pin)
        if value == "skip":
            continue
        f = claimed.get(i)
        where = f"{label.doc}:{label.line} `{label.text}` [{pin}]"
        flagged = f is not None and f.status == BROKEN
        best = f.best if f is not None else None
        suggestion: tuple[int, bool] | None = None
        if value == "broken" and flagged and f is not None and f.pin == pin and best is not None and label.home != "?":
            right = label.home != "-" and same_home(label.home, best.replacement)
            band = next(b for b, (lo, hi) in enumerate(BANDS) if lo <= best.confidence < hi)
            suggestion = (band, right)
            bands[(release, band, right)] += 1
        for t in (tallies[label.kind], categories[category(label.kind, label.text)]):
            if value in REF_LABELS:
                t.refs += 1
                t.found += f is not None
            if value == "broken":
                if flagged and f is not None and f.pin == pin:
                    t.tp += 1
                    if label.home not in {"-", "?"}:
                        t.homes += 1
                        right = best is not None and same_home(label.home, best.replacement)
                        t.right_homes += right
                        if not right:
                            t.wrong_homes.append(f"{where}: wanted {label.home}, got {best.replacement if best else None}")
                    if suggestion is not None and best is not None:
                        t.suggested.append(
                            f"{where}: {'right' if suggestion[1] else 'WRONG'} {best.confidence:.2f} {best.replacement} ({best.reason}); home {label.home}"
                        )
                else:
                    t.fn += 1
                    status = "not extracted" if f is None else f"{f.status} at {f.pin}: {f.note}"
                    t.misses.append(f"{where}: {status}")
            elif flagged:
                t.fp += 1
                assert f is not None
                t.alarms.append(f"{where} ({value}): {f.note}")
            if value == "not-ref":
                t.distractors += 1
                t.false_alarms += flagged
    for f in unclaimed:
        if f.status == BROKEN:
            alarm = f"{f.ref.file}:{f.ref.line} `{f.ref.text}` [{f.pin}] (no label): {f.note}"
            for t in (tallies["unlabelled"], categories[category(f.ref.kind, f.ref.text)]):
                t.fp += 1
                t.alarms.append(alarm)
    return tallies, categories


def report(title: str, tallies: dict[str, Tally], verbose: bool) -> Tally:
    total = Tally()
    print(f"\n{title}")
    print(f"  {'kind':<11} {'precision':>16} {'recall':>16} {'false alarms':>14} {'extracted':>16} {'right home':>14}")
    for kind in sorted(tallies):
        t = tallies[kind]
        total.add(t)
        print(
            f"  {kind:<11} {_ratio(t.tp, t.tp + t.fp):>16} {_ratio(t.tp, t.tp + t.fn):>16} "
            f"{_ratio(t.false_alarms, t.distractors):>14} {_ratio(t.found, t.refs):>16} {_ratio(t.right_homes, t.homes):>14}"
        )
    t = total
    print(
        f"  {'ALL':<11} {_ratio(t.tp, t.tp + t.fp):>16} {_ratio(t.tp, t.tp + t.fn):>16} "
        f"{_ratio(t.false_alarms, t.distractors):>14} {_ratio(t.found, t.refs):>16} {_ratio(t.right_homes, t.homes):>14}"
    )
    if verbose:
        for name, items in (("missed", t.misses), ("false alarms", t.alarms), ("wrong homes", t.wrong_homes), ("suggested", t.suggested)):
            for item in items:
                print(f"    {name}: {item}")
    return total


def report_categories(title: str, categories: dict[str, Tally]) -> None:
    """Per category: precision and recall of "broken", false alarms on the distractors that look
    like that category, and how often the best suggestion names the labelled new home."""
    print(f"\n{title}: per category")
    print(f"  {'category':<10} {'precision':>16} {'recall':>16} {'false alarms':>14} {'right home':>14}")
    for name in CATEGORIES:
        t = categories.get(name, Tally())
        print(
            f"  {name:<10} {_ratio(t.tp, t.tp + t.fp):>16} {_ratio(t.tp, t.tp + t.fn):>16} "
            f"{_ratio(t.false_alarms, t.distractors):>14} {_ratio(t.right_homes, t.homes):>14}"
        )


def report_calibration(part: str, bands: Counter[tuple[str, int, bool]], releases: Iterable[str]) -> None:
    """How often the best suggestion is right in each confidence band, per release and in all:
    a suggestion at 0.9 should be right about nine times in ten. Counted on labelled broken
    references the checker flagged, whose label names one new home or says the thing is gone
    (`-`: any suggestion is wrong); `?` rows are left out."""
    names = list(releases)
    width = max(18, *(len(name) for name in names))
    print(f"[{part}] calibration of the best suggestion (right / offered):")
    header = "".join(f" {name:>{width}}" for name in [*names, "all"])
    print(f"    {'confidence':<12}{header}")
    for b, (lo, hi) in enumerate(BANDS):
        label = f"< {hi:.1f}" if lo == 0.0 else (f">= {lo:.1f}" if hi > 1.0 else f"{lo:.1f}-{hi:.1f}")
        cells = []
        for name in names:
            right, wrong = bands[(name, b, True)], bands[(name, b, False)]
            cells.append(_ratio(right, right + wrong))
        right = sum(bands[(name, b, True)] for name in names)
        wrong = sum(bands[(name, b, False)] for name in names)
        cells.append(_ratio(right, right + wrong))
        print(f"    {label:<12}" + "".join(f" {c:>{width}}" for c in cells))


def evaluate_upgrade(
    labels: list[Label], docs: dict[str, str], old: PinView, new: PinView, settings: Settings, verbose: bool
) -> Tally:
    """`atlas check --from OLD --to NEW`: what broke in the upgrade. Truth: labelled ok at the old
    pin and broken at the new one. A finding counts when it is broken at NEW and was ok at OLD."""
    history = History(old, store_renames(settings, old, new))
    refs = [r for r in extract_all(docs.items()) if r.framework in {old.project, "ambiguous"}]
    findings = check_upgrade(refs, old, new, history)
    mine = [lb for lb in labels if lb.project == old.project]
    claimed, unclaimed = match(mine, findings)
    t = Tally()
    for i, label in enumerate(mine):
        before, after = label.at(old.pin), label.at(new.pin)
        if "skip" in (before, after):
            continue
        f = claimed.get(i)
        where = f"{label.doc}:{label.line} `{label.text}`"
        flagged = f is not None and f.status == BROKEN and f.previous_status == OK
        if before == "ok" and after == "broken":
            t.refs += 1
            t.found += f is not None
            if flagged:
                assert f is not None
                t.tp += 1
                if label.home not in {"-", "?"}:
                    t.homes += 1
                    best = f.best
                    right = best is not None and same_home(label.home, best.replacement)
                    t.right_homes += right
                    if not right:
                        t.wrong_homes.append(f"{where}: wanted {label.home}, got {best.replacement if best else None}")
            else:
                t.fn += 1
                t.misses.append(f"{where}: {'not extracted' if f is None else f'{f.status} (was {f.previous_status}): {f.note}'}")
        elif flagged:
            t.fp += 1
            t.alarms.append(f"{where} ({before} -> {after})")
        if after == "not-ref":
            t.distractors += 1
            t.false_alarms += flagged
    for f in unclaimed:
        if f.status == BROKEN and f.previous_status == OK:
            t.fp += 1
            t.alarms.append(f"{f.ref.file}:{f.ref.line} `{f.ref.text}` (no label)")
    print(
        f"  {old.pin} -> {new.pin}: broke in the upgrade: precision {_ratio(t.tp, t.tp + t.fp)}, recall {_ratio(t.tp, t.tp + t.fn)}, "
        f"right home {_ratio(t.right_homes, t.homes)}, false alarms on distractors {_ratio(t.false_alarms, t.distractors)}"
    )
    if verbose:
        for name, items in (("missed", t.misses), ("false alarms", t.alarms), ("wrong homes", t.wrong_homes)):
            for item in items:
                print(f"    {name}: {item}")
    return t


def drop_reason(ref: Reference, pins: list[PinView], judged: list[Finding]) -> str:
    """Why the checker extracted a reference and then reported nothing on it, by the reference's
    shape (the early returns of `check._check_reference`) or by the pass that removed its finding."""
    if judged:
        return f"judged {'/'.join(sorted({f.status for f in judged}))}, removed by a later pass (block vote, siblings, ...)"
    mine = [p for p in pins if ref.framework in {AMBIGUOUS, p.project}]
    if ref.callee or (ref.field_of and ref.spelled):
        callee = ref.callee or ref.field_of or ""
        verdicts = {accepts(callee, ref.target, p) for p in mine}
        if ref.framework == AMBIGUOUS:
            return "keyword: text names no project"
        if verdicts == {None}:
            return "keyword: callee's signature undecided (not found, opaque **kwargs), name spelled elsewhere"
        return f"keyword: other ({sorted(map(str, verdicts))})"
    if ref.field_of:
        return "field/parameter: place undecided or ambiguous project"
    if ref.past:
        return "prose word no past release defines"
    if ref.quiet:
        return "quiet CJK word no pin defines"
    if ref.spelled and ref.text.startswith("self."):
        return "loose/quoted self.x: spelled somewhere (or text names no project)"
    if ref.spelled and ref.fragment_of and "." not in ref.text:
        return "keyword of a call in a quoted method: callee not recorded, name spelled somewhere"
    if ref.spelled:
        return "quoted attribute: spelled somewhere / code not the project's"
    if ref.fragment_of:
        return "member of a quoted method no project class defines"
    if ref.bare_call:
        return "bare call: a module function of that name exists"
    if ref.doc_defined or ref.scope:
        return "snippet's own name/class the project does not define"
    if ref.diagram:
        return "tree entry without its folder"
    if ref.held_by:
        return "held_by"
    return "other"


def dropped(
    labels: list[Label], refs: list[Reference], findings: list[Finding], pins: tuple[str, ...], views: dict[str, PinView],
    lineages: Mapping[str, Lineage] | None, successors: Mapping[str, Successors] | None,
) -> list[tuple[str, str]]:
    """(reason, row) for every broken row the checker missed with no finding although it extracted
    a reference there (same document, line and text): the extracted-then-dropped misses."""
    claimed, _ = match(labels, findings)
    project_pin = {p.partition("@")[0]: p for p in pins}
    by_line: dict[tuple[str, int], list[Reference]] = defaultdict(list)
    for r in refs:
        by_line[(r.file, r.line)].append(r)
    out = []
    for i, label in enumerate(labels):
        pin = project_pin[label.project]
        if label.at(pin) != "broken" or i in claimed:
            continue
        here = by_line.get((label.doc, label.line), [])
        head = re.split(r"\s*[=:]", label.text.strip("`"), maxsplit=1)[0]  # a keyword row's name: `best_of=1`
        ref = next(
            (r for want in (label.text.strip("`"), head) for r in here if r.text.strip("`") == want),
            next((r for r in here if _texts_match(label.text, r.text)), None),
        )
        if ref is None:
            continue
        judged = [f for f in check_reference(ref, [views[p] for p in pins], None, lineages, successors) if f.pin == pin]
        reason = drop_reason(ref, [views[pin]], judged)
        out.append((reason, f"{label.doc}:{label.line} `{label.text}` [{pin}] {ref.kind} callee={ref.callee} field_of={ref.field_of}"))
    return out


def settings_for(args: argparse.Namespace) -> Settings:
    return Settings(cache_dir=(args.cache_dir or default_cache_dir()).expanduser().resolve())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--part", choices=(*PARTS, "all", *BLIND_PARTS), default="all", help="`all` is dev, heldout and heldout2; heldout3 to heldout189 only when named"
    )
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--verbose", "-v", action="store_true", help="list every miss, false alarm and wrong home")
    parser.add_argument("--upgrade", action="store_true", help="measure `--from OLD --to NEW` (what broke between each project's two releases) instead")
    parser.add_argument("--source", action="store_true", help="vLLM from its sdists pinned as git commits (vllm@0.30.0-src, vllm@0.33.0-src) instead of its wheels")
    parser.add_argument(
        "--past", nargs="*", default=None, metavar="PIN",
        help="past releases as evidence that a name was the project's (analyzer/refs/lineage.py); no PIN: the default thirteen (benchmarks/past_pins.py pins them)",
    )
    parser.add_argument(
        "--shipped-past", action="store_true",
        help="the past-release evidence the toolkit ships (snapshots/past/, what `atlas check` reads by default) instead of --past's pins",
    )
    parser.add_argument("--dropped", action="store_true", help="per part: broken rows missed with no finding that the checker did extract, by why it dropped them")
    parser.add_argument(
        "--each-part", type=Path, default=None, metavar="DIR",
        help="every part, the blind ones too, in one process: each part's -v report into DIR/PART.txt",
    )
    args = parser.parse_args()
    settings = settings_for(args)
    past = None if args.past is None else args.past or DEFAULT_PAST
    lineages = load_lineages(settings, past) if past is not None else None
    successors = load_successors(settings, past) if past is not None else None
    if args.shipped_past:
        if past is not None:
            parser.error("--shipped-past and --past exclude each other")
        lineages, successors = shipped_past(("vllm", "sglang"))
    releases = SOURCE_RELEASES if args.source else RELEASES
    parts = (*PARTS, *BLIND_PARTS) if args.each_part is not None else PARTS if args.part == "all" else (args.part,)
    verbose = args.verbose or args.each_part is not None
    views: dict[str, PinView] = {}
    for pins in releases.values():
        for pin in pins:
            views[pin] = load_pin(settings, pin)
    if args.upgrade:
        old_pins, new_pins = releases["old"], releases["new"]
        for part in parts:
            labels, docs = load_corpus([part])
            print(f"\n[{part}] --from/--to ({len(docs)} documents)")
            total = Tally()
            for old, new in zip(old_pins, new_pins, strict=True):
                total.add(evaluate_upgrade(labels, docs, views[old], views[new], settings, args.verbose))
            print(f"[{part}] both projects: precision {_ratio(total.tp, total.tp + total.fp)}, recall {_ratio(total.tp, total.tp + total.fn)}, "
                  f"extracted {_ratio(total.found, total.refs)}, right home {_ratio(total.right_homes, total.homes)}")
        return 0
    for part in parts:
        with _report_to(args.each_part, part):
            _measure_part(part, releases, views, lineages, successors, args.dropped, verbose)
    return 0


@contextlib.contextmanager
def _report_to(folder: Path | None, part: str) -> Iterator[None]:
    """Standard output as is, or (`--each-part`) into folder/PART.txt, written whole or not at all."""
    if folder is None:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield
    partial = folder / f".{part}.txt.tmp"
    partial.write_text(buffer.getvalue(), encoding="utf-8")
    os.replace(partial, folder / f"{part}.txt")


def _measure_part(
    part: str,
    releases: Mapping[str, tuple[str, ...]],
    views: dict[str, PinView],
    lineages: Mapping[str, Lineage] | None,
    successors: Mapping[str, Successors] | None,
    show_dropped: bool,
    verbose: bool,
) -> None:
    labels, docs = load_corpus([part])
    grand = Tally()
    bands: Counter[tuple[str, int, bool]] = Counter()
    for pins in releases.values():
        start = time.perf_counter()
        refs = extract_all(docs.items())
        findings = check_references(refs, [views[p] for p in pins], lineages=lineages, successors=successors)
        elapsed = time.perf_counter() - start
        release = " + ".join(pins)
        tallies, categories = evaluate(labels, findings, pins, bands, release)
        title = f"[{part}] {release}"
        grand.add(report(f"{title}  ({len(docs)} documents, {elapsed:.2f} s)", tallies, verbose))
        report_categories(title, categories)
        if show_dropped:
            rows = dropped(labels, refs, findings, pins, views, lineages, successors)
            print(f"\n{title}: extracted, then dropped (broken rows with no finding): {len(rows)}")
            for reason, n in Counter(r for r, _ in rows).most_common():
                print(f"  {n:>4}  {reason}")
            if verbose:
                for reason, row in sorted(rows):
                    print(f"    dropped: {row}: {reason}")
    print(f"\n[{part}] both releases: broken precision {_ratio(grand.tp, grand.tp + grand.fp)}, recall {_ratio(grand.tp, grand.tp + grand.fn)}, "
          f"false alarms per 100 distractors {100 * grand.false_alarms / max(1, grand.distractors):.1f}, "
          f"extraction {_ratio(grand.found, grand.refs)}, right home {_ratio(grand.right_homes, grand.homes)}")
    report_calibration(part, bands, (" + ".join(pins) for pins in releases.values()))


if __name__ == "__main__":
    sys.exit(main())
