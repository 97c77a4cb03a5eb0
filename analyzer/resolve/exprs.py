"""Turn the expression texts stored in the facts into small `ast` trees.

Most callee texts are plain dotted names (`self.pool.free`), so those are built
directly; only the rest goes through `ast.parse`, memoised per parser instance
because the same texts recur thousands of times in a tree.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")


def dotted_to_ast(text: str) -> ast.expr:
    parts = [p.strip() for p in text.split(".")]
    node: ast.expr = ast.Name(id=parts[0], ctx=ast.Load())
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def parse_function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The first function of `source` (a function's text from its first line, decorators
    included, however indented); None when it does not parse or holds no function."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError, RecursionError):
        return None
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)


def _parse(text: str | None) -> ast.expr | None:
    if not text:
        return None
    if _DOTTED.fullmatch(text):
        return dotted_to_ast(text)
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        # Multi-line texts from parenthesised sources parse once wrapped.
        try:
            return ast.parse("(" + text.strip() + ")", mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            return None


class _Parsed(dict[str | None, ast.expr | None]):
    """text -> its expression, parsed on first lookup."""

    def __missing__(self, text: str | None) -> ast.expr | None:
        node = self[text] = _parse(text)
        return node


class ExprParser:
    """Parses fact texts into expressions; unparsable text (or none) yields None."""

    def __init__(self) -> None:
        self._memo = _Parsed()
        # `parse(text)` is the memo's own lookup: a text seen before (most of the
        # hundreds of thousands of lookups in a tree) costs no Python call.
        self.parse: Callable[[str | None], ast.expr | None] = self._memo.__getitem__
        # annotation text -> its type references (`annotations.annotation_types`)
        self.type_refs: dict[str, list] = {}
