"""Narrow a symbol's excerpt to the lines that do a step.

A step cell should not show a 900-line `schedule()`: the reader wants the
signature, the lines that lead to the next step (a call the chain takes, a call
written for a run-time dispatch, a bridge's send), and the `focus` the mapping
names, each with the statement around it and the `if` / `for` headers it sits
under, so the skeleton reads as code. Everything else is elided with a count.
Line numbers are found in the pinned source at render time, never stored.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

WHOLE_MAX = 15  # a symbol this short is shown whole
MIN_ELIDED = 5  # narrowing that would hide fewer lines than this shows the symbol whole
CONTEXT = 1  # lines kept either side of a focus line
STATEMENT_MAX = 8  # a longer statement around a focus line is cut to its first lines
HEADER_MAX = 3  # lines of an enclosing `if` / `for` header kept
HEAD_LINES = 12  # a long symbol with nothing to focus on: its first lines
_SIGNATURE_MAX = 15


@dataclass(frozen=True, slots=True)
class Kept:
    """Lines `first..last` (1-based, inclusive, the file's own numbering) are shown."""

    first: int
    last: int


def signature_end(lines: list[str], first: int, end: int) -> int:
    """The last line of the `def` / `class` header starting at `first` (decorators included)."""
    depth = 0
    seen_def = False
    for n in range(first, min(end, first + _SIGNATURE_MAX) + 1):
        text = _code_part(lines[n - 1])
        stripped = text.strip()
        if not seen_def and re.match(r"(async\s+)?(def|class)\b", stripped):
            seen_def = True
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if seen_def and depth <= 0 and stripped.endswith(":"):
            return n
    return first


def _code_part(line: str) -> str:
    """A line without a trailing comment (good enough for headers: no `#` inside their strings)."""
    return line.split("#", 1)[0] if "#" in line and "'" not in line and '"' not in line else line


def call_lines(lines: list[str], first: int, end: int, texts: list[str]) -> set[int]:
    """Lines of the body `first..end` containing any of `texts` (a call as written, a fragment)."""
    out: set[int] = set()
    for n in range(first, min(end, len(lines)) + 1):
        if any(t and t in lines[n - 1] for t in texts):
            out.add(n)
    return out


def calls_of(lines: list[str], first: int, end: int, callee: str) -> set[int]:
    """Lines calling `callee` (its last dotted part) by name: `self._admit(`, `Foo(`."""
    short = callee.rsplit(".", 1)[-1]
    if short.startswith("__") and short.endswith("__"):
        return set()  # `__init__` / `__call__` are not written as such at the call site
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(short)}\s*\(")
    return {n for n in range(first + 1, min(end, len(lines)) + 1) if pattern.search(lines[n - 1])}


def narrow(
    lines: list[str], first: int, end: int, focus: set[int], *, context: int = CONTEXT, whole_max: int = WHOLE_MAX
) -> list[Kept] | None:
    """The kept ranges of the symbol at `first..end`, or None when it is shown whole
    (short, or nothing to narrow to: then the head is kept)."""
    end = min(end, len(lines))
    if end - first + 1 <= whole_max:
        return None
    sig = signature_end(lines, first, end)
    keep: set[int] = set(range(first, sig + 1))
    focus = {n for n in focus if sig < n <= end}
    blocks = _blocks(lines, first, end)
    if not focus:
        # Nothing known to lead on: the docstring's first line, then the first lines of code.
        doc = _docstring(blocks, sig)
        start = sig + 1
        if doc is not None:
            keep.add(doc.first)
            start = doc.last + 1
        keep.update(range(start, min(end, start + HEAD_LINES - 1) + 1))
    else:
        for n in focus:
            statement, headers = _around(blocks, n)
            lo, hi = (min(statement), max(statement)) if statement else (n, n)
            keep.update(range(max(sig + 1, lo - context), min(end, hi + context) + 1))
            keep.update(statement | headers)
    # A kept run never starts or ends on a blank line: the elision marker says where the gap is.
    keep = {n for n in keep if first <= n <= end and (n <= sig or lines[n - 1].strip())}
    ranges = _ranges(sorted(keep))
    # An elision marker costs a line: a gap of one or two lines is shown instead.
    merged: list[Kept] = []
    for r in ranges:
        if merged and r.first - merged[-1].last - 1 <= 2:
            merged[-1] = Kept(merged[-1].first, r.last)
        else:
            merged.append(r)
    if (end - first + 1) - sum(k.last - k.first + 1 for k in merged) < MIN_ELIDED:
        return None
    return merged


def _docstring(blocks: list[_Block], sig: int) -> _Block | None:
    """The statement right after the signature when it is a string (the docstring)."""
    after = [b for b in blocks if b.first > sig]
    if not after:
        return None
    head = min(after, key=lambda b: b.first)
    return head if head.docstring else None


@dataclass(frozen=True, slots=True)
class _Block:
    first: int  # the statement's first line
    last: int  # its last line
    header_last: int  # compound statements: the header's last line (else == last)
    compound: bool
    else_line: int = 0  # the `else:` / `finally:` line of an orelse branch, when there is one
    else_first: int = 0  # the orelse branch's first statement
    docstring: bool = False  # a bare string statement


def _blocks(lines: list[str], first: int, end: int) -> list[_Block]:
    """Every statement of the symbol, by the file's line numbers (empty if it does not parse)."""
    body = lines[first - 1:end]
    indent = len(body[0]) - len(body[0].lstrip())
    text = "\n".join(line[indent:] if line[:indent].isspace() or not line[:indent] else line.lstrip() for line in body)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    shift = first - 1
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt | ast.ExceptHandler) or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        last = (node.end_lineno or node.lineno) + shift
        inner = getattr(node, "body", None)
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):  # a block body: statements
            else_line = else_first = 0
            orelse = getattr(node, "orelse", None) or getattr(node, "finalbody", None)
            if orelse:
                else_first = orelse[0].lineno + shift
                before = lines[else_first - 2].strip() if else_first >= 2 else ""
                if before.startswith(("else", "finally")):
                    else_line = else_first - 1
            out.append(_Block(node.lineno + shift, last, inner[0].lineno + shift - 1, True, else_line, else_first))
        else:
            doc = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            out.append(_Block(node.lineno + shift, last, last, False, docstring=doc))
    return out


def _around(blocks: list[_Block], n: int) -> tuple[set[int], set[int]]:
    """The statement holding line `n` (a compound one: its header), and the headers it sits under."""
    keep: set[int] = set()
    headers: set[int] = set()
    holding = [b for b in blocks if b.first <= n <= b.last]
    if not holding:
        return keep, headers
    inner = max(holding, key=lambda b: (b.first, -b.last))
    for b in holding:
        header = range(b.first, min(b.header_last, b.first + HEADER_MAX - 1) + 1)
        if b is inner and (not b.compound or n <= b.header_last):
            last = b.header_last if b.compound else b.last
            keep.update(range(b.first, min(last, b.first + STATEMENT_MAX - 1, max(n + 1, b.first)) + 1)
                        if last - b.first >= STATEMENT_MAX else range(b.first, last + 1))
        elif n > b.header_last:
            headers.update(header)
            if b.else_line and n >= b.else_first:
                headers.add(b.else_line)
    return keep, headers


def _ranges(numbers: list[int]) -> list[Kept]:
    out: list[Kept] = []
    for n in numbers:
        if out and n == out[-1].last + 1:
            out[-1] = Kept(out[-1].first, n)
        else:
            out.append(Kept(n, n))
    return out
