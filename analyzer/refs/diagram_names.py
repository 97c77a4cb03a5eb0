"""A Mermaid diagram's own names: the id of a node drawn with a label (`FreeQueue["FreeKVCacheBlockQueue"]`,
where the label is the reference and the id the author's handle for it) and the states of a state
diagram (`Free --> InUse: get_new_blocks()`). A careful editor cites them only where they are the
project's names too (`Scheduler["Scheduler"]`, a `RequestStatus` value as a state): elsewhere they
are the author's words, not stale references.

Plain lines in, plain names out."""

from __future__ import annotations

import re
from collections.abc import Sequence

# The diagram kind, on the block's first non-empty line.
_GRAPH_RE = re.compile(r"\s*(?:graph|flowchart)\b")
_STATE_RE = re.compile(r"\s*stateDiagram(?:-v2)?\b")
# A node with its label: `Id[...]`, `Id["..."]`, `Id(...)`, `Id((...))`, `Id{...}`, `Id>...]`.
_NODE_RE = re.compile(r"(?<![\w.\"'])([A-Za-z_]\w*)\s*(?:\[\[|\[\(|\(\(|\[|\(|\{\{|\{|>)\s*\"?([^\]\)\}\"]*)")
# A subgraph with a title: `subgraph Id["title"]`, `subgraph Id [title]`.
_SUBGRAPH_RE = re.compile(r"\s*subgraph\s+([A-Za-z_]\w*)\s*\[\s*\"?([^\]\"]*)")
# The name a label starts with (`Scheduler.schedule` in `Scheduler.schedule()`); may be empty.
_LEAD_NAME_RE = re.compile(r"[\w.]*")
# States: the names on each side of a transition, and `state X` declarations.
_TRANSITION_RE = re.compile(r"^\s*(\[\*\]|[A-Za-z_]\w*)\s*-->\s*(\[\*\]|[A-Za-z_]\w*)")
_STATE_DECL_RE = re.compile(r"^\s*state\s+(?:\"[^\"]*\"\s+as\s+)?([A-Za-z_]\w*)")


def diagram_names(lines: Sequence[str]) -> set[str]:
    """The names a Mermaid block gives its own nodes or states (see the module's docstring)."""
    first = next((line for line in lines if line.strip()), "")
    out: set[str] = set()
    if _GRAPH_RE.match(first):
        for line in lines[1:]:
            if m := _SUBGRAPH_RE.match(line):
                # `subgraph SamplerForward["Sampler.forward() flow"]`: a titled subgraph's id is the
                # author's handle, as a labelled node's is (an untitled one shows its id as the title).
                lead = m2.group(0) if (m2 := _LEAD_NAME_RE.match(m.group(2).strip())) else ""
                if m.group(2).strip() and lead.split(".", 1)[0] != m.group(1):
                    out.add(m.group(1))
                continue
            if line.lstrip().startswith(("subgraph", "classDef", "class ", "style ", "click ", "%%")):
                continue
            pos = 0
            while m := _NODE_RE.search(line, pos):
                ident, label = m.group(1), m.group(2).strip()
                # `Scheduler["Scheduler.schedule()"]`: the id is the name the label gives.
                lead = m2.group(0) if (m2 := _LEAD_NAME_RE.match(label)) else ""
                if label and lead.split(".", 1)[0] != ident:
                    out.add(ident)
                # Past the label: `get_new_blocks(n)` inside `Alloc["get_new_blocks(n)"]` is no node.
                closer = _label_end(line, m.end())
                pos = max(closer, m.end())
    elif _STATE_RE.match(first):
        for line in lines[1:]:
            if m := _TRANSITION_RE.match(line):
                out.update(g for g in m.groups() if g != "[*]")
            elif m := _STATE_DECL_RE.match(line):
                out.add(m.group(1))
    return out


def _label_end(line: str, start: int) -> int:
    """Where a node's label that begins before `start` ends: after its closing quote, else after
    the first closing bracket."""
    before = line[:start]
    if before.rstrip().endswith('"') or '"' in line[start - 1 : start]:
        end = line.find('"', start)
        return end + 1 if end >= 0 else len(line)
    ends = [i for i in (line.find(c, start) for c in "])}") if i >= 0]
    return min(ends) + 1 if ends else len(line)
