"""Whole-graph exports: node-link JSON, Graphviz DOT, GraphML."""

from __future__ import annotations

import io
import json

import networkx as nx


def _flat(graph: nx.DiGraph) -> nx.DiGraph:
    """GraphML holds scalars only: lists become `;`-joined strings."""
    out = nx.DiGraph()
    for node, data in graph.nodes(data=True):
        out.add_node(node, **{k: v for k, v in data.items() if v is not None})
    for u, v, data in graph.edges(data=True):
        out.add_edge(u, v, **{k: ";".join(x) if isinstance(x, list) else x for k, x in data.items() if x is not None})
    return out


def to_json(graph: nx.DiGraph) -> str:
    nodes = [{"id": n, **d} for n, d in graph.nodes(data=True)]
    edges = [{"source": u, "target": v, **d} for u, v, d in graph.edges(data=True)]
    return json.dumps({"directed": True, "nodes": nodes, "edges": edges}, indent=1)


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(graph: nx.DiGraph) -> str:
    style = {"certain": "solid", "inferred": "dashed", "guess": "dotted"}
    lines = ["digraph calls {", "  node [shape=box, fontsize=10];"]
    for node, data in graph.nodes(data=True):
        shape = {"module": "folder", "class": "component", "state": "ellipse"}.get(data.get("kind", ""), "box")
        lines.append(f"  {_q(node)} [shape={shape}];")
    for u, v, data in graph.edges(data=True):
        label = f"{data['kind']} {data['site']}" if "site" in data else data["kind"]
        line_style = style.get(data.get("confidence", ""), "solid")
        color = ", color=red" if data.get("outside") else ""
        lines.append(f"  {_q(u)} -> {_q(v)} [label={_q(label)}, style={line_style}{color}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_graphml(graph: nx.DiGraph) -> str:
    buf = io.BytesIO()
    nx.write_graphml(_flat(graph), buf)
    return buf.getvalue().decode()


EXPORTERS = {"json": to_json, "dot": to_dot, "graphml": to_graphml}
