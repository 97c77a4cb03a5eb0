"""A minimal standalone HTML page for a diff (`atlas report` has the full site).

Everything is escaped; the page needs no network (inline CSS, no scripts)."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from analyzer.diff.models import DesignDiff, VersionDiff

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem; max-width: 80rem; }
code { font-size: 0.9em; } h2 { border-bottom: 1px solid #ccc; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 1.5rem; }
.added { color: #176117; } .removed { color: #a11; } .evidence { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; } td, th { padding: 0.2rem 0.6rem; border-bottom: 1px solid #eee; text-align: left; }
"""


def _list(title: str, items: list[str], css: str = "") -> str:
    rows = "".join(f"<li class='{css}'><code>{escape(i)}</code></li>" for i in items)
    return f"<h3>{escape(title)} ({len(items)})</h3><ul>{rows}</ul>"


def _version_body(diff: VersionDiff) -> str:
    parts = [
        _list("Symbols added", diff.added, "added"),
        _list("Symbols removed", diff.removed, "removed"),
        "<h3>Moved or renamed ({})</h3><ul>{}</ul>".format(
            len(diff.moved),
            "".join(
                f"<li><code>{escape(m.old)}</code> → <code>{escape(m.new)}</code> ({escape(m.kind)})"
                f"<div class='evidence'>{escape('; '.join(m.evidence))}</div></li>"
                for m in diff.moved
            ),
        ),
        "<h3>Modules split, merged or folded into a package ({})</h3><ul>{}</ul>".format(
            len(diff.modules),
            "".join(
                f"<li><code>{escape(m.old)}</code> → {', '.join(f'<code>{escape(n)}</code>' for n in m.new)}"
                f" ({escape(m.kind)})<div class='evidence'>{escape('; '.join(m.evidence))}</div></li>"
                for m in diff.modules
            ),
        ),
        _list("Flags added", diff.flags_added, "added"),
        _list("Flags removed", diff.flags_removed, "removed"),
        _list("Option strings added to existing flags", diff.options_added, "added"),
        _list("Option strings removed from existing flags", diff.options_removed, "removed"),
        _list("Env vars added", diff.envs_added, "added"),
        _list("Env vars removed", diff.envs_removed, "removed"),
    ]
    for c in diff.concepts:
        edges = [f"+ {e.caller} → {e.callee}" for e in c.added] + [f"- {e.caller} → {e.callee}" for e in c.removed]
        parts.append(_list(f"Calls: {c.concept}", edges))
    return "".join(parts)


def _side(side: dict[str, Any]) -> str:
    state = "".join(
        f"<tr><td><code>{escape(s['name'])}</code></td><td>{escape(', '.join(s['attributes']))}</td></tr>"
        for s in side["state"]
    )
    calls = [f"{c['caller']} → {c['callee']}" for c in side["calls"]]
    knobs = [f"{k['name']} = {k['default']}" if k["default"] is not None else k["name"] for k in side["knobs"]]
    bridges = [f"{b['name']}: {b['source']} → {b['target']} ({b['transport']})" for b in side["bridges"]]
    note = f"<p>{escape(side['note'])}</p>" if side["note"] else ""
    return (
        f"<div><h3>{escape(side['pin'])}: {escape(side['status'])}</h3>{note}"
        f"<h4>State owners</h4><table>{state}</table>"
        f"{_list('Calls', calls)}{_list('Flags and env vars', knobs)}{_list('Process bridges', bridges)}</div>"
    )


def _design_body(diff: DesignDiff) -> str:
    out = []
    for c in diff.to_dict()["concepts"]:
        out.append(f"<h2>{escape(c['title'])}</h2><div class='cols'>{_side(c['left'])}{_side(c['right'])}</div>")
    return "".join(out)


def render_html(diff: VersionDiff | DesignDiff) -> str:
    if isinstance(diff, VersionDiff):
        title, body = f"{diff.old} → {diff.new}", _version_body(diff)
    else:
        title, body = f"{diff.left} vs {diff.right}", _design_body(diff)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>\n"
    )


def write_html(diff: VersionDiff | DesignDiff, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(diff), encoding="utf-8")
    return path
