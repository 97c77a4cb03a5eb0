"""Call paths as SVG through Graphviz's `dot`, when it is installed.

Without `dot` the pages show the same path as an ordered list and say why; a
report must never fail for want of an optional tool.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess

from analyzer.report.models import CallPathView, StateView, StepRow

DOT_TIMEOUT_S = 30
_STYLE = {"certain": "solid", "inferred": "dashed", "guess": "dotted", "mapped": "bold"}


def find_dot() -> str | None:
    return shutil.which("dot")


def _q(text: str) -> str:
    """A DOT string literal: Graphviz then escapes it again when writing SVG text."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def short_name(dotted: str, parts: int = 2) -> str:
    return ".".join(dotted.split(".")[-parts:])


def path_dot(view: CallPathView) -> str:
    lines = [
        "digraph path {",
        "  rankdir=TB; bgcolor=transparent;",
        '  node [shape=box, style="rounded,filled", fillcolor="#f4f6fa", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    edges = view.edges
    reached = set(view.marked) | set(view.reached)
    nodes = [n for s in edges for n in (s.caller, s.callee)] or [view.start or view.entry]
    for node in dict.fromkeys(nodes):
        extra = ', fillcolor="#dff3e4"' if node in reached else ""
        lines.append(f"  {_q(node)} [label={_q(short_name(node))}, tooltip={_q(node)}{extra}];")
    for step in edges:
        color = ', color="#b35c00", fontcolor="#b35c00"' if step.kind == "bridge" else ""
        label = step.site if step.kind == "bridge" else ""
        lines.append(
            f"  {_q(step.caller)} -> {_q(step.callee)} [label={_q(label)}, "
            f"style={_STYLE.get(step.confidence, 'solid')}{color}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _lines(*parts: str) -> str:
    """A DOT label of several centred lines (`\\n` is Graphviz's own line break)."""
    return "\\n".join(_q(p)[1:-1] for p in parts).join('""')


def route_dot(column: int, rows: list[StepRow]) -> str | None:
    """One side's steps as a route: a box per step, grouped into one cluster per process or
    thread (a boundary the request crosses), an edge from the step each one is reached from,
    labelled with the bridge it crosses or the calls it takes. None when the side names no step."""
    cells = [(row, row.cells[column]) for row in rows if row.cells[column].symbols]
    if not cells:
        return None
    lines = [
        "digraph route {",
        "  rankdir=TB; bgcolor=transparent; compound=true;",
        '  node [shape=box, style="rounded,filled", fillcolor="#f4f6fa", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    processes: dict[str, list[str]] = {}
    for row, cell in cells:
        processes.setdefault(cell.process or "", []).append(f"step{row.index}")
    for n, (process, nodes) in enumerate(processes.items()):
        body = [f"    step{r.index} [label={_lines(f'{r.index}. {r.title}', short_name(c.symbols[0].name))}, "
                f"tooltip={_q(', '.join(s.name for s in c.symbols))}"
                + (', fillcolor="#fde2e1"' if c.broken else "") + "];"
                for r, c in cells if f"step{r.index}" in nodes]
        if process:
            lines += [f"  subgraph cluster_{n} {{", f"    label={_q(process)}; style=dashed; color=\"#9aa3b2\";",
                      *body, "  }"]
        else:
            lines += [b[2:] for b in body]
    # Invisible edges keep the steps in reading order, top to bottom.
    order = [f"step{row.index}" for row, _ in cells]
    lines += [f"  {a} -> {b} [style=invis, weight=4];" for a, b in itertools.pairwise(order)]
    for row, cell in cells:
        if cell.source is None:
            continue
        crossings = cell.crossings
        returns = any(via == "return" for _, via in cell.hops)
        calls = sum(1 for _, via in cell.hops if via == "call" or via.startswith("dispatch "))
        counted = f"{calls} call{'s' if calls != 1 else ''}" if calls else ""
        label = "; ".join(crossings) or ", ".join(p for p in ("back to the loop" if returns else "", counted) if p)
        style = ', color="#b35c00", fontcolor="#b35c00", style=bold' if crossings else ""
        lines.append(f"  step{cell.source} -> step{row.index} [label={_q(label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


MAX_STATE_ATTRS = 14  # a drawing, not the table: the attributes that say the most


def state_dot(state: StateView) -> str | None:
    """Owner -> its attributes <- their writers; outside writers in red. Drawn first:
    state written from outside, then the most-written (set-once config says little);
    None when nothing is written at all."""
    attrs = sorted((a for a in state.attrs if a.writers),
                   key=lambda a: (not any(w.outside for w in a.writers), -len(a.writers) - a.more_writers,
                                  a.line))[:MAX_STATE_ATTRS]
    if not attrs:
        return None
    owner = state.cls
    lines = [
        "digraph state {",
        "  rankdir=LR; bgcolor=transparent;",
        '  node [fontname="Helvetica", fontsize=10];',
        f'  {_q(owner)} [shape=component, label={_q(short_name(owner, 1))}, tooltip={_q(owner)}];',
    ]
    writers: dict[str, bool] = {}
    for a in attrs:
        node = f"{owner}.{a.name}"
        lines.append(f'  {_q(node)} [shape=ellipse, label={_q(a.name)}];')
        lines.append(f"  {_q(owner)} -> {_q(node)} [arrowhead=none, color=\"#9aa3b2\"];")
        for w in a.writers:
            writers[w.function] = writers.get(w.function, False) or w.outside
            color = ', color="#b42318"' if w.outside else ""
            lines.append(f"  {_q(w.function)} -> {_q(node)} [style={'bold' if w.outside else 'solid'}{color}];")
    for fn, outside in writers.items():
        color = ', fontcolor="#b42318", color="#b42318"' if outside else ""
        label = fn if outside else fn.removeprefix(owner + ".")
        lines.append(f'  {_q(fn)} [shape=box, style=rounded, label={_q(label)}, tooltip={_q(fn)}{color}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)


def render_svg(dot_source: str, dot: str) -> str | None:
    """Inline SVG (no XML prolog / doctype), or None when `dot` fails."""
    try:
        done = subprocess.run(
            [dot, "-Tsvg"], input=dot_source, capture_output=True, text=True, timeout=DOT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or "<svg" not in done.stdout:
        return None
    svg = _PROLOG.sub("", done.stdout, count=1)
    return re.sub(r"<!--.*?-->", "", svg, flags=re.S).strip()
