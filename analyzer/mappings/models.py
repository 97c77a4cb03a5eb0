"""The concept catalogue as plain data: one `ConceptMapping` per `mappings/*.toml` file.

A mapping NAMES things (dotted qualified names, flag spellings, env var names);
it never quotes upstream code. Every entry may be limited to some pinned
releases (`releases = ["0.33.0"]`); an entry without `releases` claims to hold
in every pinned release of its project, and `atlas map verify` checks that claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.pinned import REFERENCE as REFERENCE  # one definition, re-exported
from analyzer.pinned import UPSTREAMS as UPSTREAMS

# Who a side of a mapping describes. "reference" is our own CPU engine.
SIDES: tuple[str, ...] = (REFERENCE, *UPSTREAMS)

# implemented: the project has it and the mapping names it.
# partial: some of it is there / mapped; `note` says what is missing.
# not-implemented: the project does not have it (reported by verify, never failed).
# unmapped: the project has it but nobody has written the mapping yet (a coverage gap).
STATUSES: tuple[str, ...] = ("implemented", "partial", "not-implemented", "unmapped")


class MappingError(Exception):
    """A mapping file that cannot be read; `problems` holds one line per fault."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True, slots=True)
class SymbolRef:
    """A class, function, method or module named by its dotted qualified name."""

    name: str
    role: str = ""
    releases: tuple[str, ...] = ()  # versions it holds in; empty = every pinned release

    def applies_to(self, version: str | None) -> bool:
        return not self.releases or version is None or version in self.releases

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "releases": list(self.releases)}


@dataclass(frozen=True, slots=True)
class KnobRef:
    """A command-line flag (`--block-size`) or an environment variable (`VLLM_USE_V1`)."""

    name: str
    kind: str  # "flag" | "env"
    role: str = ""
    releases: tuple[str, ...] = ()

    def applies_to(self, version: str | None) -> bool:
        return not self.releases or version is None or version in self.releases

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "role": self.role, "releases": list(self.releases)}


@dataclass(frozen=True, slots=True)
class Bridge:
    """Where a request crosses a process (or thread) boundary.

    `source` is the symbol that sends, `target` the one that receives on the other
    side; a call-graph path that reaches `source` continues from `target`.
    """

    name: str
    source: str
    target: str
    transport: str  # "zmq", "pipe", "shared-memory", "queue", "http", ...
    carries: str = ""  # the message type, by qualified name or in words
    note: str = ""
    releases: tuple[str, ...] = ()

    def applies_to(self, version: str | None) -> bool:
        return not self.releases or version is None or version in self.releases

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "target": self.target,
            "transport": self.transport,
            "carries": self.carries,
            "note": self.note,
            "releases": list(self.releases),
        }

    @property
    def via(self) -> str:
        return f"bridge {self.name} ({self.transport})"


@dataclass(frozen=True, slots=True)
class Dispatch:
    """A call the static call graph cannot follow: the callee is chosen at run time (a model
    class picked by the registry, a layer swapped in for LoRA, a hook torch calls).

    Not a boundary: `call` is the call as written in `source` (`self.model(`), and
    `atlas map verify` checks it is there, and lists every dispatch a chain relies on as a
    call-graph gap, so it stays visible until the call graph resolves the edge itself."""

    source: str
    target: str
    call: str
    note: str = ""
    releases: tuple[str, ...] = ()

    def applies_to(self, version: str | None) -> bool:
        return not self.releases or version is None or version in self.releases

    @property
    def via(self) -> str:
        return f"{DISPATCH} {self.call}"

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "call": self.call, "note": self.note,
                "releases": list(self.releases)}


DISPATCH = "dispatch"  # how a trace step through a Dispatch starts its `via`


def is_crossing(via: str) -> bool:
    """A trace step's `via` that crosses a process or thread boundary (a bridge)."""
    return via not in ("call", "return") and not via.startswith(DISPATCH + " ")


@dataclass(frozen=True, slots=True)
class SideMapping:
    """What one project (reference engine, vLLM or SGLang) has for a concept."""

    project: str  # one of SIDES
    status: str  # one of STATUSES
    note: str = ""
    symbols: tuple[SymbolRef, ...] = ()
    entry_points: tuple[SymbolRef, ...] = ()  # where a request enters this concept's code
    flags: tuple[KnobRef, ...] = ()
    envs: tuple[KnobRef, ...] = ()
    bridges: tuple[Bridge, ...] = ()
    dispatches: tuple[Dispatch, ...] = ()  # calls the call graph cannot follow (see Dispatch)

    @property
    def is_gap(self) -> bool:
        return self.status in ("not-implemented", "unmapped")

    def symbols_for(self, version: str | None) -> list[SymbolRef]:
        return [s for s in self.symbols if s.applies_to(version)]

    def entry_points_for(self, version: str | None) -> list[SymbolRef]:
        return [s for s in self.entry_points if s.applies_to(version)]

    def knobs_for(self, version: str | None) -> list[KnobRef]:
        return [k for k in (*self.flags, *self.envs) if k.applies_to(version)]

    def bridges_for(self, version: str | None) -> list[Bridge]:
        return [b for b in self.bridges if b.applies_to(version)]

    def dispatches_for(self, version: str | None) -> list[Dispatch]:
        return [d for d in self.dispatches if d.applies_to(version)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "status": self.status,
            "note": self.note,
            "symbols": [s.to_dict() for s in self.symbols],
            "entry_points": [s.to_dict() for s in self.entry_points],
            "flags": [k.to_dict() for k in self.flags],
            "envs": [k.to_dict() for k in self.envs],
            "bridges": [b.to_dict() for b in self.bridges],
            "dispatches": [d.to_dict() for d in self.dispatches],
        }


@dataclass(frozen=True, slots=True)
class Focus:
    """Lines a step cell must show beyond the chain's calls: `text` is a call or a statement
    fragment as written in one of the step's symbols (`if num_new_tokens > token_budget`);
    `atlas map verify` checks it is in a step symbol's body at every pin it claims."""

    text: str
    releases: tuple[str, ...] = ()

    def applies_to(self, version: str | None) -> bool:
        return not self.releases or version is None or version in self.releases

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "releases": list(self.releases)}


@dataclass(frozen=True, slots=True)
class StepSide:
    """What one project does for one step: the symbol(s) doing it, or why nothing does."""

    symbols: tuple[SymbolRef, ...] = ()
    none: str = ""  # "no counterpart" and why (a design difference, a finding)
    process: str = ""  # the process / thread the step runs in (drawn as a boundary)
    focus: tuple[Focus, ...] = ()  # lines the step's excerpt must show (see Focus)

    @property
    def written(self) -> bool:
        """False when the mapping says nothing for this side (a gap in the mapping)."""
        return bool(self.symbols or self.none)

    def symbols_for(self, version: str | None) -> list[SymbolRef]:
        return [s for s in self.symbols if s.applies_to(version)]

    def focus_for(self, version: str | None) -> list[str]:
        return [f.text for f in self.focus if f.applies_to(version)]

    def to_dict(self) -> dict[str, Any]:
        return {"symbols": [s.to_dict() for s in self.symbols], "none": self.none, "process": self.process,
                "focus": [f.to_dict() for f in self.focus]}


@dataclass(frozen=True, slots=True)
class Step:
    """One row of a walkthrough: what happens, in our words, and who does it per side."""

    title: str
    explain: str
    sides: dict[str, StepSide] = field(default_factory=dict)  # side name -> what it does

    def side(self, project: str) -> StepSide:
        return self.sides.get(project, StepSide())

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "explain": self.explain,
                "sides": {name: self.side(name).to_dict() for name in SIDES}}


@dataclass(frozen=True, slots=True)
class ConceptMapping:
    """One concept of the book and where it lives in each project."""

    id: str  # the file stem: `paged-kv`
    title: str
    summary: str
    path: Path
    reference: SideMapping
    upstream: dict[str, SideMapping] = field(default_factory=dict)  # "vllm" / "sglang"
    chapters: tuple[str, ...] = ()  # book chapters / sections that discuss it, free text
    related: tuple[str, ...] = ()  # other concept ids
    steps: tuple[Step, ...] = ()  # the walkthrough, in order

    def side(self, project: str) -> SideMapping:
        """The mapping for `reference`, `vllm` or `sglang` (an `unmapped` one if absent)."""
        if project == REFERENCE:
            return self.reference
        found = self.upstream.get(project)
        return found if found is not None else SideMapping(project=project, status="unmapped")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "path": str(self.path),
            "chapters": list(self.chapters),
            "related": list(self.related),
            "reference": self.reference.to_dict(),
            "upstream": {name: self.side(name).to_dict() for name in UPSTREAMS},
            "steps": [step.to_dict() for step in self.steps],
        }
