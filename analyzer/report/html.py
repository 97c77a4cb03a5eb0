"""Render `ConceptPage`s to a self-contained static site (CSS and JS inlined).

Jinja autoescaping is on: every string from mappings or source trees is
escaped; only pygments' and Graphviz's own (escaped) output is marked safe.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from analyzer.report.excerpt import pygments_css
from analyzer.report.models import ConceptPage, ReportMeta


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("analyzer.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _static(name: str) -> str:
    return resources.files("analyzer.report").joinpath("static", name).read_text(encoding="utf-8")


def render_site(pages: list[ConceptPage], meta: ReportMeta, out: Path) -> list[Path]:
    """Write index.html and concepts/<id>.html under `out`; returns the files written."""
    env = _environment()
    css = _static("report.css") + "\n" + pygments_css()
    common = {"meta": meta, "css": css}
    written: list[Path] = []
    index = out / "index.html"
    index.write_text(
        env.get_template("index.html").render(pages=pages, root="", js=_static("report.js"), **common),
        encoding="utf-8",
    )
    written.append(index)
    folder = out / "concepts"
    folder.mkdir(parents=True, exist_ok=True)
    template = env.get_template("concept.html")
    for page in pages:
        path = folder / f"{page.id}.html"
        path.write_text(template.render(page=page, root="../", **common), encoding="utf-8")
        written.append(path)
    return written
