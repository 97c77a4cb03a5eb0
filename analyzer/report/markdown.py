"""The same pages as Markdown (one file per concept), for reading in an editor or a
Git host. Columns become sections; excerpts become fenced blocks with line numbers."""

from __future__ import annotations

import re
from pathlib import Path

from analyzer.report.models import CallPathView, Column, ConceptPage, ReportMeta, SymbolView

_SPECIAL = re.compile(r"([\\`*_\[\]<>|#&])")


def esc(text: str) -> str:
    """Markdown-escape inline text (mapping prose, names) so it cannot become markup."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def code(text: str) -> str:
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(body: str, lang: str = "python") -> str:
    ticks = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", body)), default=0) + 1)
    return f"{ticks}{lang}\n{body.rstrip()}\n{ticks}"


def link(text: str, url: str | None) -> str:
    return f"[{esc(text)}](<{url}>)" if url else esc(text)


def render_markdown(pages: list[ConceptPage], meta: ReportMeta, out: Path) -> list[Path]:
    folder = out / "md"
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["# Serving Atlas walkthrough", "", esc(meta.pins_line), "", f"Generated {meta.generated} from: {esc('; '.join(meta.sides))}."
             + (f" Columns: {esc(meta.columns_from)}." if meta.columns_from else ""), ""]
    lines += [f"> {esc(n)}" for n in meta.notes]
    for page in pages:
        status = ", ".join(f"{c.heading}: {c.status}" for c in page.columns)
        lines.append(f"- [{esc(page.title)}]({page.id}.md): {esc(page.summary)} ({esc(status)})")
    written = [folder / "index.md"]
    written[0].write_text("\n".join(lines) + "\n", encoding="utf-8")
    for page in pages:
        path = folder / f"{page.id}.md"
        path.write_text(concept_markdown(page, meta), encoding="utf-8")
        written.append(path)
    return written


def concept_markdown(page: ConceptPage, meta: ReportMeta) -> str:
    out = [f"# {esc(page.title)}", "", esc(meta.pins_line), "", esc(page.summary), ""]
    if page.chapters:
        out += [f"In the book: {esc(', '.join(page.chapters))}", ""]
    if page.related:
        out += ["Related: " + ", ".join(f"[{esc(t)}]({i}.md)" if linked else esc(t) for i, t, linked in page.related), ""]
    if page.steps:
        out += _steps(page)
    for col in page.columns:
        out += _column(col, meta.graphviz)
    return "\n".join(out) + "\n"


def _steps(page: ConceptPage) -> list[str]:
    """Each step as a section with one sub-section per side (Markdown has no grid)."""
    out = ["## Step by step", ""]
    for row in page.steps:
        out += [f"### {row.index}. {esc(row.title)}", "", esc(row.explain), ""]
        for col, cell in zip(page.columns, row.cells, strict=True):
            where = f" ({esc(cell.process)})" if cell.process else ""
            out.append(f"**{esc(col.heading)}**{where}:")
            out.append("")
            if cell.none:
                out += [f"> No counterpart: {esc(cell.none)}", ""]
            elif cell.missing:
                out += [f"> {esc(cell.missing)}", ""]
            if cell.broken:
                out += [f"> The chain breaks here: {esc(cell.broken)}", ""]
            elif cell.source:
                hops = " → ".join(("returns to the loop " if via == "return" else
                                   f"calls at run time (written {code(via.removeprefix('dispatch '))}) → "
                                   if via.startswith("dispatch ") else
                                   f"crosses {esc(via)} → " if via != "call" else "") + code(callee)
                                  for callee, via in cell.hops)
                inner = "".join(f"; within the step crosses {esc(via)}" for via in cell.inner)
                out += [f"Reached from step {cell.source}: {hops or '(same code)'}{inner}", ""]
            for s in cell.symbols:
                out += _symbol(s, "####") if s.narrowed is None else _narrowed(s)
    return out


def _narrowed(s: SymbolView) -> list[str]:
    """A step symbol cut to the lines doing the step; elided runs read `...  # 42 lines`."""
    n = s.narrowed
    assert n is not None
    out = [f"#### {code(s.name)}"] + ([esc(s.role)] if s.role else [])
    out += ["", f"{s.kind}, {link(f'{s.path}:{s.line}-{s.end_line}', s.permalink)}: {n.label}", ""]
    width = len(str(n.end))
    body: list[str] = []
    for seg in n.segments:
        lines = seg.code.rstrip("\n").split("\n")
        if seg.skipped:
            body.append(_elision(width, next((t for t in lines if t.strip()), ""), seg.skipped))
        body += [f"{k:>{width}}  {text}" for k, text in enumerate(lines, start=seg.first)]
    if n.after:
        body.append(_elision(width, n.segments[-1].code.rstrip("\n").split("\n")[-1], n.after))
    return [*out, fence("\n".join(body)), ""]


def _elision(width: int, beside: str, count: int) -> str:
    indent = beside[: len(beside) - len(beside.lstrip())]
    return f"{'':>{width}}  {indent}...  # {count} line{'s' if count > 1 else ''}"


def _column(col: Column, graphviz: bool) -> list[str]:
    out = [f"## {esc(col.heading)} — {col.status}", ""]
    if col.source_line:
        out += [f"Source: {link(col.source_line, col.source_link)}", ""]
    if col.note:
        out += [esc(col.note), ""]
    out += [f"> {esc(w)}" for w in col.warnings] + ([""] if col.warnings else [])
    for s in col.symbols:
        out += _symbol(s)
    if col.paths:
        out += ["### Life of a request", ""]
        for p in col.paths:
            out += _path(p)
    if col.state:
        out += ["### State and who writes it", ""]
        for st in col.state:
            out += [f"{code(st.cls)}:", "", "| attribute | written by | readers |", "|---|---|---|"]
            for a in st.attrs:
                writers = ", ".join(
                    ("**outside** " if w.outside else "") + code(w.function)
                    + (f" ({esc(w.how)}{', mixin' if w.by == 'mixin' else ''})" if w.how else "")
                    for w in a.writers
                )
                more = f" +{a.more_writers} more" if a.more_writers else ""
                out.append(f"| {code(a.name)} | {writers}{more} | {a.readers} |")
            out.append("")
    if col.knobs:
        out += ["### Flags and environment variables", "", "| name | default | role |", "|---|---|---|"]
        for k in col.knobs:
            default = code(k.default) if k.found and k.default else ("not found" if not k.found else "—")
            out.append(f"| {code(k.name)} | {default} | {esc(k.role)} |")
        out.append("")
    return out


def _symbol(s: SymbolView, level: str = "###") -> list[str]:
    out = [f"{level} {code(s.name)}"]
    if s.role:
        out.append(esc(s.role))
    if not s.found:
        return [*out, "", "Not found in this release.", ""]
    out += ["", f"{s.kind}, {link(f'{s.path}:{s.line}-{s.end_line}', s.permalink)}", ""]
    if s.excerpt is not None:
        width = len(str(s.excerpt.last))
        body = "\n".join(f"{n:>{width}}  {text}" for n, text in
                         enumerate(s.excerpt.code.rstrip("\n").split("\n"), start=s.excerpt.first))
        out += [fence(body), ""]
        if s.excerpt.truncated:
            out += [f"(lines {s.excerpt.first}-{s.excerpt.last} of {s.excerpt.first}-{s.excerpt.end})", ""]
    return out


def _path(p: CallPathView) -> list[str]:
    if p.problem:
        return [f"From {code(p.entry)}: {esc(p.problem)}", ""]
    out = [f"From {code(p.entry)}:", ""]
    for route in p.routes:
        out += [f"- to {code(route[-1].callee)}:", ""]
        for i, st in enumerate(route, start=1):
            if st.kind == "bridge":
                out.append(f"    {i}. crosses {esc(st.site)} to {code(st.callee)}")
            else:
                out.append(f"    {i}. {code(st.callee)} ({st.confidence}, {link(st.site, st.permalink)})")
        out.append("")
    return out
