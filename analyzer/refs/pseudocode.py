"""A copied class whose indentation slipped: the structure an author means, read from its lines.

Source-reading notes type simplified copies of the project's classes by hand, and the indentation
slips: a method's body shifted by a column, a `def` left inside the body of the method before it,
tabs mixed with spaces. Python rejects such a snippet as a whole, and read line by line it loses
what the lines say together (which class a method belongs to, a method's parameters). A reader
sees the intended structure: a `def` inside a class is one of its methods, and a body line is
nested under the line before it only when that line opens a block. `reindent` rewrites the
indentation that way, one output line per input line (line numbers stay the document's), and
is the identity on indentation Python accepts, apart from its width (one space a level, so no
name moves to the right of where the document writes it).
"""

from __future__ import annotations

import re

_CLASS_RE = re.compile(r"class\s+\w+")
_DEF_RE = re.compile(r"(?:async\s+)?def\s+\w+|@")
_STRING_RE = re.compile(r"'''|\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|#.*")


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def _scan(line: str, depth: int, triple: str | None) -> tuple[int, str | None, bool]:
    """Bracket depth and open triple quote after `line`, and whether its code ends with `:`."""
    code = ""
    at = 0
    while at < len(line):
        if triple is not None:
            end = line.find(triple, at)
            if end < 0:
                return depth, triple, False
            at, triple = end + 3, None
            continue
        m = _STRING_RE.search(line, at)
        chunk = line[at : m.start()] if m else line[at:]
        code += chunk
        depth = max(0, depth + sum(chunk.count(c) for c in "([{") - sum(chunk.count(c) for c in ")]}"))
        if m is None:
            break
        token = m.group(0)
        if token.startswith("#"):
            break
        if token in {"'''", '"""'}:
            triple = token
        code += "''"
        at = m.end()
    return depth, triple, code.rstrip().endswith(":")


def reindent(lines: list[str]) -> list[str]:
    """The lines with their indentation rewritten as the structure they mean (see the module's
    docstring): a `class` at the snippet's least indentation is top-level; a `def` (or its
    decorator) inside that class is a method, however deep it is written; within a body, a line
    deeper than the one before is nested only under a line that opens a block, and a line that
    dedents to between two levels stays at the deeper one."""
    code = [_indent(raw) for raw in lines if raw.strip() and not raw.lstrip().startswith("#")]
    least = min(code, default=0)
    out: list[str] = []
    depth, triple = 0, None
    in_class = False
    base = 0  # the level of the current body's first line
    stack: list[int] = []  # indentation of each open level of the current body, from `base`
    opens = False  # the last logical line ends with `:`
    level = 0
    opener = (-1, 0)  # where the last logical line ends in `out`, and its level
    for raw in lines:
        text = raw.strip()
        if depth or triple is not None:
            # A continuation inside brackets or a string: its indentation means nothing to Python.
            out.append(raw if triple is not None else " " * (level + 1) + text)
            depth, triple, ends = _scan(raw, depth, triple)
            opens = ends if not depth and triple is None else opens
            opener = (len(out) - 1, opener[1])
            continue
        if not text or text.startswith("#"):
            out.append(raw if not text else " " * level + text)
            continue
        ind = _indent(raw)
        if _CLASS_RE.match(text) and ind == least:
            level, base, stack, in_class = 0, 1, [], True
        elif _DEF_RE.match(text) and (ind == least or in_class):
            in_class = in_class and ind > least
            level = 1 if in_class else 0
            base, stack = level + 1, []
        elif not stack:
            stack = [ind]
            level = base
        elif opens and ind > stack[-1]:
            stack.append(ind)
            level = base + len(stack) - 1
        elif ind >= stack[-1]:
            level = base + len(stack) - 1
        else:
            popped = stack.pop()
            while stack and stack[-1] > ind:
                popped = stack.pop()
            if not stack or stack[-1] < ind:
                stack.append(popped)  # between two levels: the deeper one
            level = base + len(stack) - 1
        if opens and opener[0] >= 0 and level <= opener[1]:
            # A block opened with no body (`def step(self):` then the next `def`): an empty one.
            out[opener[0]] = _with_body(out[opener[0]])
        out.append(" " * level + text)
        opener = (len(out) - 1, level)
        depth, triple, opens = _scan(raw, 0, None)
    if opens and opener[0] >= 0:
        out[opener[0]] = _with_body(out[opener[0]])
    return out


def _with_body(line: str) -> str:
    """`def f(self):` as `def f(self): ...`; a line with a comment is left as it is."""
    return line if "#" in line else line.rstrip() + " ..."
