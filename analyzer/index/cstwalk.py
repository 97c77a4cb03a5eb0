"""Which fields of each libcst node type can hold code, in source order.

A generic `node.children` walk visits every whitespace and punctuation node and
is ~10x slower than reading just the fields that can contain expressions.
The tables are computed once at import and never change.
"""

from __future__ import annotations

import dataclasses
import inspect

import libcst as cst

# Fields that only ever hold whitespace, punctuation, plain strings or bare names.
_SKIP = frozenset(
    {
        "lpar", "rpar", "leading_lines", "lines_after_decorators", "comma", "semicolon",
        "header", "footer", "trailing_whitespace", "leading_whitespace", "operator", "equal",
        "colon", "star", "dot", "lbracket", "rbracket", "lbrace", "rbrace", "arrow",
        "asynchronous", "indent", "newline", "default_indent", "default_newline", "encoding",
        "has_trailing_newline", "relative", "posonly_ind", "keyword", "attr", "conversion",
        "whitespace_after_star", "value_whitespace",
    }
)

# libcst declares some fields out of source order; a pre-order walk must follow
# the source so its Calls/Attributes line up with the ast's (see locate.py).
_ORDER: dict[type, tuple[str, ...]] = {
    cst.IfExp: ("body", "test", "orelse"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.ExceptHandler: ("type", "body"),
    cst.ExceptStarHandler: ("type", "body"),
    cst.FunctionDef: ("decorators", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "bases", "keywords", "body"),
}


def _fields_of(tp: type) -> tuple[str, ...]:
    if tp in _ORDER:
        return _ORDER[tp]
    names = []
    for f in dataclasses.fields(tp):
        if f.name in _SKIP or f.name.startswith("whitespace"):
            continue
        names.append(f.name)
    return tuple(names)


def _all_node_types() -> list[type]:
    return [
        obj
        for obj in vars(cst).values()
        if inspect.isclass(obj) and issubclass(obj, cst.CSTNode) and dataclasses.is_dataclass(obj)
    ]


FIELDS: dict[type, tuple[str, ...]] = {tp: _fields_of(tp) for tp in _all_node_types()}

# Nodes that can never contain a call or an attribute.
LEAVES: frozenset[type] = frozenset(
    {
        cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis,
        cst.Pass, cst.Break, cst.Continue, cst.Global, cst.Nonlocal, cst.ParamStar,
        cst.ParamSlash, cst.FormattedStringText, cst.EmptyLine, cst.Newline, cst.Comment,
    }
)
