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


# Code a re-post flattened onto one line: each line break was dropped and the next line's
# indentation kept (`if x:    self.a = 1else:    self.b = 2`), so a statement at the left margin
# is glued to the one before it (`tp_rankself.pp_rank = pp_rank`, `...)t.start()`) and a comment
# runs on into the code after it (`# 省略部分代码self.x = ...`, `# ...if self.y:`).
_GAP_RE = re.compile(r"(?<=\S) {4,}(?=\S)")  # a line break, then that line's indentation
_GLUED_RE = re.compile(
    r"(?<=[A-Za-z0-9_)\]])(?=self\.)"  # `server_argsself.tp_rank`, `[]self.running`
    r"|(?<=[)\]])(?=[A-Za-z_])"  # `(...)t.start()`: nothing follows a bracket without a space or operator
    r"|(?<=[A-Za-z0-9_)\]])(?=(?:else|finally|try)\s*:|(?:elif|except)\b)"  # `TpModelWorkerClientelse:`
)
# Where code resumes inside a comment run on: `self.`, an ASCII name right after CJK text, a
# name right after an ellipsis (`# ...if`), after a colon (`# Inside f:self.x`).
_COMMENT_END_RE = re.compile(r"(?=self\.)|(?<=[\u3000-\u9fff\uff00-\uffef])(?=[A-Za-z_])|(?<=\.\.\.)(?=[A-Za-z_])|(?<=:)(?=[A-Za-z_])")
# A string literal on one line.
_LITERAL_RE = re.compile(r"\'\'\'.*?\'\'\'|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"")


def _breaks(line: str) -> tuple[list[int], bool]:
    """Where a flattened line's lost line breaks were (before each indentation gap, each glued
    statement, and where the code after a run-on comment resumes; never inside a string), and
    whether any is more than a gap (a glued statement, or code resumed after a comment)."""
    masked = _LITERAL_RE.sub(lambda m: m.group(0)[0] + "x" * (len(m.group(0)) - 2) + m.group(0)[-1], line)
    cuts: set[int] = set()
    glued = False
    at = masked.find("#")
    while at >= 0:
        gap = _GAP_RE.search(masked, at)
        resume = _COMMENT_END_RE.search(masked, at + 1)
        stop = min([m.start() for m in (gap, resume) if m is not None], default=len(masked))
        if resume is not None and resume.start() == stop:
            cuts.add(stop)
            glued = True
        masked = masked[:at] + "#" * (stop - at) + masked[stop:]
        at = masked.find("#", stop)
    cuts.update(m.start() for m in _GAP_RE.finditer(masked))
    for m in _GLUED_RE.finditer(masked):
        cuts.add(m.start())
        glued = True
    return sorted(c for c in cuts if 0 < c < len(line)), glued


def _flattened_cuts(line: str) -> list[int]:
    """`_breaks`'s cuts of a flattened line (see `is_flattened`); none for any other line."""
    cuts, glued = _breaks(line)
    flattened = len(cuts) >= 2 and (glued or any(line[:c].rstrip().endswith(":") for c in cuts))
    return cuts if flattened else []


def is_flattened(line: str) -> bool:
    """A line that reads as several lines of code run together: a block's opening line glued to
    its indented body (`:    `), or statements glued to each other (two at least)."""
    return bool(_flattened_cuts(line))


def unflatten(lines: list[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """The lines with each flattened one (`is_flattened`) cut where its line breaks were: the
    new lines, and for each the (index, column) in `lines` where it starts, so that names keep
    the document's places. A cut at an indentation gap keeps the gap as the line's indentation."""
    out: list[str] = []
    origin: list[tuple[int, int]] = []
    for index, line in enumerate(lines):
        cuts = _flattened_cuts(line)
        starts = [0, *cuts]
        for start, end in zip(starts, [*cuts, len(line)], strict=True):
            out.append(line[start:end].rstrip())
            origin.append((index, start))
    return out, origin
