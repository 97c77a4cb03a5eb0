"""Highlighted code excerpts with the file's own line numbers.

Pygments escapes the source it highlights, so upstream text never reaches the
page as markup. Long symbols (a 1,500-line scheduler class) are cut to their
head: the excerpt is a map into the code, the permalink has the rest.
"""

from __future__ import annotations

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from analyzer.report.models import Excerpt

MAX_LINES = {"class": 40, "module": 30}
DEFAULT_MAX_LINES = 80
CSS_CLASS = "hl"


def excerpt_lines(kind: str) -> int:
    return MAX_LINES.get(kind, DEFAULT_MAX_LINES)


def make_excerpt(
    lines: list[str], path: str, first: int, end: int, kind: str, max_lines: int | None = None
) -> Excerpt | None:
    """Lines first..end (1-based, inclusive) of a file, cut to the kind's budget (or `max_lines`)."""
    if first < 1 or first > len(lines):
        return None
    end = max(first, min(end, len(lines)))
    last = min(end, first + (max_lines or excerpt_lines(kind)) - 1)
    code = "\n".join(lines[first - 1 : last]) + "\n"
    return Excerpt(path, first, last, end, code, highlight_python(code, first))


def highlight_python(code: str, first_line: int) -> str:
    formatter = HtmlFormatter(linenos="table", linenostart=first_line, cssclass=CSS_CLASS, wrapcode=True)
    return highlight(code, PythonLexer(stripnl=False, ensurenl=True), formatter)


def pygments_css() -> str:
    return HtmlFormatter(cssclass=CSS_CLASS, style="default").get_style_defs(f".{CSS_CLASS}")
