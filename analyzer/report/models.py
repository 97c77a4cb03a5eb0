"""What a report page shows, as plain data: built by `pages`, rendered by `html` / `markdown`.

Everything here is already resolved (which lines, which link, which writers),
so both renderers stay dumb and agree with each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Excerpt:
    path: str  # repository path shown to the reader (`python/sglang/srt/...`)
    first: int  # first line shown
    last: int  # last line shown
    end: int  # last line of the whole symbol (> last when cut short)
    code: str  # the raw source lines first..last (the renderers escape / highlight it)
    html: str  # pygments markup (escaped by pygments) with line numbers

    @property
    def truncated(self) -> bool:
        return self.last < self.end


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of consecutive lines of a narrowed excerpt, after `skipped` elided lines."""

    first: int
    last: int
    code: str  # the raw source lines first..last
    html: str  # pygments markup with the file's line numbers
    skipped: int = 0  # lines elided between the previous segment (or the symbol's start) and this one


@dataclass(frozen=True, slots=True)
class Narrowed:
    """A step cell's excerpt cut to the lines doing the step (analyzer/report/narrow.py)."""

    path: str
    first: int  # the symbol's first line
    end: int  # its last line
    segments: tuple[Segment, ...]
    after: int = 0  # lines elided after the last segment
    # step: the lines leading on (the chain's calls, run-time calls, bridges, the mapping's focus);
    # concept: nothing leads on, so its calls into the concept's other mapped code; head: neither
    reason: str = "step"

    @property
    def total(self) -> int:
        return self.end - self.first + 1

    @property
    def label(self) -> str:
        if self.reason == "step":
            return f"{self.shown} of {self.total} lines, the ones doing this step"
        if self.reason == "concept":
            return f"{self.shown} of {self.total} lines, where it calls this concept's other code"
        return f"its first {self.shown} of {self.total} lines"

    @property
    def shown(self) -> int:
        return sum(s.last - s.first + 1 for s in self.segments)


@dataclass(slots=True)
class SymbolView:
    name: str  # as the mapping spells it
    role: str
    found: bool
    kind: str = ""  # class | function | method | module
    path: str = ""
    line: int = 0
    end_line: int = 0
    permalink: str | None = None
    excerpt: Excerpt | None = None
    problem: str = ""  # why it is missing / ambiguous, for the reader
    narrowed: Narrowed | None = None  # in a step cell: the lines doing the step (None: `excerpt` is shown)


@dataclass(frozen=True, slots=True)
class PathStep:
    caller: str
    callee: str
    kind: str  # a call kind from the call graph, or "bridge"
    confidence: str  # certain | inferred | guess (bridges: "mapped")
    site: str = ""  # path:line of the call, or the bridge's transport
    permalink: str | None = None


@dataclass(slots=True)
class CallPathView:
    """From one entry point, the shortest call path to each mapped symbol it reaches."""

    entry: str  # the entry point as mapped
    start: str = ""  # its call-graph node
    routes: list[list[PathStep]] = field(default_factory=list)  # one per reached symbol, nearest first
    problem: str = ""  # no path / unknown entry point, in words
    svg: str | None = None  # inline Graphviz SVG when `dot` is installed
    marked: list[str] = field(default_factory=list)  # mapped symbols the routes pass or end at

    @property
    def reached(self) -> list[str]:
        return [route[-1].callee for route in self.routes]

    @property
    def edges(self) -> list[PathStep]:
        """The routes' union (they share prefixes: a tree rooted at the entry)."""
        seen: dict[tuple[str, str], PathStep] = {}
        for route in self.routes:
            for step in route:
                seen.setdefault((step.caller, step.callee), step)
        return list(seen.values())


@dataclass(frozen=True, slots=True)
class Writer:
    function: str
    outside: bool  # writes another class's state
    site: str
    permalink: str | None = None
    label: str = ""  # the owner's own methods by method name; outside writers in full
    how: str = ""  # `calls add_request()`, `assigns on an element fetched from a container`, ...
    by: str = "owner"  # owner | subclass | mixin | base | outside


@dataclass(slots=True)
class AttrView:
    name: str
    origin: str  # field | class | instance | undeclared
    line: int
    annotation: str | None
    writers: list[Writer]  # outside writers first, at most pages.MAX_WRITERS
    readers: int  # distinct reading functions
    more_writers: int = 0  # writers left out of `writers`


@dataclass(slots=True)
class StateView:
    cls: str
    path: str
    line: int
    attrs: list[AttrView]
    permalink: str | None = None
    svg: str | None = None  # owner -> attributes <- writers, when `dot` is installed

    @property
    def outside_writes(self) -> int:
        return sum(1 for a in self.attrs for w in a.writers if w.outside)


@dataclass(frozen=True, slots=True)
class KnobView:
    name: str
    kind: str  # flag | env
    role: str
    found: bool
    default: str | None = None
    help: str | None = None
    defined_at: str = ""
    permalink: str | None = None


@dataclass(frozen=True, slots=True)
class BridgeView:
    name: str
    source: str
    target: str
    transport: str
    carries: str
    note: str


@dataclass(slots=True)
class Column:
    project: str  # reference | vllm | sglang
    heading: str  # "Reference engine", "vLLM 0.33.0"
    status: str  # the mapping's status
    note: str
    source_line: str = ""  # where the code comes from: commit / tag / local tree
    source_link: str | None = None
    available: bool = True  # False when the release could not be opened for this report
    symbols: list[SymbolView] = field(default_factory=list)
    paths: list[CallPathView] = field(default_factory=list)
    state: list[StateView] = field(default_factory=list)
    knobs: list[KnobView] = field(default_factory=list)
    bridges: list[BridgeView] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StepCell:
    """One side of one step: the code doing it, or a finding saying why there is none."""

    project: str
    symbols: list[SymbolView] = field(default_factory=list)
    none: str = ""  # the mapping says this side has no counterpart, and why
    missing: str = ""  # nothing to show: the mapping is silent, or the side is not in this report
    process: str = ""  # the process / thread the step runs in
    source: int | None = None  # the step it is reached from (call graph + bridges)
    hops: list[tuple[str, str]] = field(default_factory=list)  # (callee, "call", "return", the bridge or "dispatch <call>")
    broken: str = ""  # the chain breaks here: why
    inner: list[str] = field(default_factory=list)  # bridges crossed between the step's own symbols

    @property
    def finding(self) -> str:
        return self.none or self.missing

    @property
    def crossings(self) -> list[str]:
        """Every boundary crossed to reach this step and within it."""
        return [via for _, via in self.hops if via not in ("call", "return") and not via.startswith("dispatch ")] \
            + self.inner


@dataclass(slots=True)
class StepRow:
    index: int  # 1-based
    title: str
    explain: str
    cells: list[StepCell]  # one per column, in the columns' order


@dataclass(slots=True)
class ConceptPage:
    id: str
    title: str
    summary: str
    chapters: list[str]
    related: list[tuple[str, str, bool]]  # (id, title, has a page in this build)
    columns: list[Column]
    steps: list[StepRow] = field(default_factory=list)  # the walkthrough, aligned across columns
    routes: dict[str, str] = field(default_factory=dict)  # column project -> SVG of its steps' route

    @property
    def search_text(self) -> str:
        """What the index's search box matches against (lower-cased)."""
        words = [self.id, self.title, self.summary, *self.chapters]
        for col in self.columns:
            words += [s.name for s in col.symbols] + [k.name for k in col.knobs]
        return " ".join(words).lower()

    @property
    def has_gap(self) -> bool:
        return any(c.status != "implemented" for c in self.columns)


@dataclass(slots=True)
class ReportMeta:
    generated: str  # ISO timestamp
    sides: list[str]  # column headings with their source lines
    graphviz: bool  # SVG graphs (else the text fallback, said on every page)
    no_graphviz_reason: str = ""  # why there are no drawings, shown on every page
    notes: list[str] = field(default_factory=list)
    columns_from: str = ""  # why these releases: "the pins of BOOK/atlas.toml", "--newest", ...
    headings: list[str] = field(default_factory=list)  # the columns: "Reference engine", "vLLM 0.30.0", ...

    @property
    def pins_line(self) -> str:
        """What every page says first about itself: the pins its columns show, and why those."""
        why = f" — {self.columns_from}" if self.columns_from else ""
        return f"Columns: {' | '.join(self.headings)}{why}"
