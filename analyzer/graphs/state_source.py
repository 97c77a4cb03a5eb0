"""What the index facts do not say about a function body, read from its source
on demand: loop and comprehension bindings, return expressions (an `ast` parse
of the function's lines) and stores into a plain name (`q[k] = v`, `del q[k]`,
`q += x`: a regex over them).

The state graph needs these for a few functions only (those whose accesses go
through a loop variable, a local alias or a parameter), so instead of parsing
whole trees it parses one function's lines, when asked, with `ast` (static:
nothing is imported or run). A file whose bytes no longer match the facts'
hash is never read: its functions simply have no body facts.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.index.models import ModuleFacts
from analyzer.resolve.models import immutable
from analyzer.resolve.project import FuncDef


@immutable
class LoopBinding:
    """`for <target> in <iterable>` (statement or comprehension); `position` is the
    index of `name` in a tuple target (`for rid, req in d.items()`), None when the
    target is the name itself."""

    name: str
    iterable: str
    line: int
    position: int | None = None
    target: str | None = None  # the whole target list, for an unpacking (`idx, blk`)


@immutable
class NameStore:
    """A change of the object a plain name holds: `q[k] = v` (item_assign),
    `del q[k]` (item_del), `q += x` (augassign)."""

    name: str
    kind: str
    line: int


@dataclass(slots=True)
class BodyFacts:
    loops: dict[str, list[LoopBinding]] = field(default_factory=dict)
    return_nodes: list[ast.expr] = field(default_factory=list)
    # `a, b = value` (filled by SourceReader.unpacks): each name with the value's text and
    # its position (a LoopBinding whose `iterable` is the unpacked value); the facts record
    # these names without a value.
    unpacks: dict[str, list[LoopBinding]] = field(default_factory=dict)

    @property
    def returns(self) -> list[str]:
        return [ast.unparse(n) for n in self.return_nodes]


_EMPTY = BodyFacts()
# The target list of a `for` (statement or comprehension): names, commas, brackets.
# (The word boundary before `for` is tested by `_loop_targets`: a pattern that starts
# with the literal is searched for as a string, an order of magnitude faster.)
_LOOP_TARGET = re.compile(r"for\s+([\w\s,()\[\]]+?)\s+in\b")
_STOP_WORDS = (" if ", " for ", " async for ")  # (each starts with a space: `_iterable_text` tests that first)


def _loop_targets(text: str) -> Iterator[re.Match[str]]:
    """The matches of `\\b` + _LOOP_TARGET, left to right, not overlapping (as
    `finditer` of that pattern would give them)."""
    pos = 0
    search = _LOOP_TARGET.search
    while (m := search(text, pos)) is not None:
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            pos = start + 1  # `xfor`: not a word boundary; a match may still start after it
            continue
        yield m
        pos = m.end()


def _loop_headers(text: str, first_line: int) -> list[LoopBinding]:
    out: list[LoopBinding] = []
    for m in _loop_targets(text):
        targets = [t.strip(" ()[]") for t in m.group(1).split(",")]
        names = [t for t in targets if t.isidentifier()]
        if not names:
            continue
        iterable = _iterable_text(text, m.end())
        if not iterable:
            continue
        line = first_line + text.count("\n", 0, m.start())
        if len(targets) == 1:
            out.append(LoopBinding(names[0], iterable, line))
        else:
            out.extend(LoopBinding(t, iterable, line, i) for i, t in enumerate(targets) if t.isidentifier())
    return out


def _iterable_text(text: str, start: int) -> str | None:
    """The expression after `in`: up to the `:` of a statement, or the `if` / `for` /
    closing bracket of a comprehension, at bracket depth 0."""
    depth = 0
    i = start
    quote = ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (ch in ":\n#" or (ch == " " and text.startswith(_STOP_WORDS, i))):
            break
        i += 1
    expr = " ".join(text[start:i].split())
    return expr or None
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _walk(func: ast.FunctionDef | ast.AsyncFunctionDef, out: BodyFacts, offset: int) -> None:
    """One function's own code: nested defs, classes and lambdas are other scopes."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.For or t is ast.AsyncFor:
            _bind(node.target, node.iter, node.lineno + offset, out)  # type: ignore[attr-defined]
        elif t is ast.comprehension:
            _bind(node.target, node.iter, node.iter.lineno + offset, out)  # type: ignore[attr-defined]
        elif t is ast.Return and node.value is not None:  # type: ignore[attr-defined]
            out.return_nodes.append(node.value)  # type: ignore[attr-defined]
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                stack.append(child)


def _bind(target: ast.expr, iterable: ast.expr, line: int, out: BodyFacts) -> None:
    if isinstance(target, ast.Name):
        out.loops.setdefault(target.id, []).append(LoopBinding(target.id, ast.unparse(iterable), line))
    elif isinstance(target, ast.Tuple | ast.List):
        text = None
        for i, el in enumerate(target.elts):
            if isinstance(el, ast.Name):
                text = text or ast.unparse(iterable)
                out.loops.setdefault(el.id, []).append(LoopBinding(el.id, text, line, i))


# A statement assigning to a target list: `a, b = ...`, `(a, b) = ...`, `x[i], x[j] = ...`.
_UNPACK_HEAD = re.compile(r"^[\w\s()\[\].]*,[\w\s,()\[\].]*=(?!=)")


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # what `\w` matches


def _has_word(text: str, name: str) -> bool:
    """`re.search(rf"\b{name}\b", text)` for an identifier `name`, without compiling
    a pattern per name (the regex cache holds 512; a tree has many more names)."""
    n, i = len(name), text.find(name)
    while i >= 0:
        if (i == 0 or not _is_word_char(text[i - 1])) and (i + n == len(text) or not _is_word_char(text[i + n])):
            return True
        i = text.find(name, i + 1)
    return False


def _unpack_statements(lines: list[str], first_line: int, out: BodyFacts, name: str) -> None:
    """Tuple assignments to `name` in a function's lines, each parsed alone (with up to
    four continuation lines): far cheaper than parsing the whole body."""
    for i, line in enumerate(lines):
        if name not in line:
            continue
        stripped = line.strip()
        head = _UNPACK_HEAD.match(stripped)
        if head is None or not _has_word(head.group(), name):
            continue
        for extra in range(5):
            try:
                tree = ast.parse("\n".join([stripped, *(x.strip() for x in lines[i + 1 : i + 1 + extra])]))
            except SyntaxError:
                continue
            node = tree.body[0] if tree.body else None
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Tuple | ast.List):
                        _unpack(target, node.value, first_line + i, out)
            break


def _unpack(target: ast.Tuple | ast.List, value: ast.expr, line: int, out: BodyFacts) -> None:
    if any(isinstance(el, ast.Starred) for el in target.elts):
        return  # positions after a starred name are not fixed
    if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
        # `a, b = self.x, self.y`: each name takes its own expression.
        for el, v in zip(target.elts, value.elts, strict=True):
            if isinstance(el, ast.Name):
                out.unpacks.setdefault(el.id, []).append(LoopBinding(el.id, ast.unparse(v), line))
        return
    text = None
    targets = ast.unparse(target).strip("()[]")
    for i, el in enumerate(target.elts):
        if isinstance(el, ast.Name):
            text = text or ast.unparse(value)
            out.unpacks.setdefault(el.id, []).append(LoopBinding(el.id, text, line, i, targets))


def name_stores(text: str, name: str, first_line: int, lines: list[str] | None = None) -> list[NameStore]:
    """`name[...] = v`, `del name[...]`, `name += x` in a function's text (`lines`: the
    text split, when at hand): a scan of its lines, enough for the plain statements these are."""
    out: list[NameStore] = []
    if not _may_store(text, name):
        return out
    for i, line in enumerate(text.splitlines() if lines is None else lines):
        if name not in line:
            continue
        stripped = line.lstrip()
        if stripped.startswith("del ") and stripped[4:].lstrip().startswith(name + "["):
            out.append(NameStore(name, "item_del", first_line + i))
            continue
        if not stripped.startswith(name):
            continue
        rest = stripped[len(name):].lstrip()
        if rest.startswith("["):
            depth = 0
            for j, ch in enumerate(rest):
                depth += ch == "["
                depth -= ch == "]"
                if depth == 0:
                    tail = rest[j + 1 :].lstrip()
                    if (tail.startswith("=") and not tail.startswith("==")) or tail[:2] in _AUG:
                        out.append(NameStore(name, "item_assign", first_line + i))
                    break
        elif rest[:2] in _AUG:
            out.append(NameStore(name, "augassign", first_line + i))
    return out


_AUG = frozenset({"+=", "-=", "|=", "&=", "*="})
_STORE_TAILS = ("[", " [", " +=", "+=", " |=", " -=")


def _may_store(text: str, name: str) -> bool:
    """`name` followed by one of _STORE_TAILS somewhere in the text, or `del name`:
    one scan for the name's occurrences instead of one per tail."""
    if f"del {name}" in text:
        return True
    n = len(name)
    i = text.find(name)
    while i >= 0:
        if text.startswith(_STORE_TAILS, i + n):
            return True
        i = text.find(name, i + 1)
    return False


class SourceReader:
    """Reads function bodies of one indexed tree (paths relative to `root`)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._lines: dict[str, list[str] | None] = {}
        self._bodies: dict[str, BodyFacts] = {}
        self._loops: dict[str, dict[str, list[LoopBinding]]] = {}
        self._unpacks: dict[tuple[str, str], list[LoopBinding]] = {}
        self._segments: dict[str, str | None] = {}
        self._segment_lines: dict[str, list[str]] = {}  # function -> its segment's lines
        self.parsed = 0  # functions parsed, for the benchmark

    def _file_lines(self, facts: ModuleFacts) -> list[str] | None:
        if facts.path in self._lines:
            return self._lines[facts.path]
        lines: list[str] | None = None
        if self.root is not None:
            try:
                data = (self.root / facts.path).read_bytes()
            except OSError:
                data = None
            if data is not None and hashlib.sha256(data).hexdigest() == facts.sha256:
                lines = data.decode("utf-8", "replace").splitlines()
        self._lines[facts.path] = lines
        return lines

    def segment(self, facts: ModuleFacts, fd: FuncDef) -> str | None:
        name = fd.name
        if name in self._segments:
            return self._segments[name]
        lines = self._file_lines(facts)
        text = None if lines is None else "\n".join(lines[fd.fact.line - 1 : fd.fact.end_line])
        self._segments[name] = text
        return text

    def module_text(self, facts: ModuleFacts) -> str | None:
        lines = self._file_lines(facts)
        return None if lines is None else "\n".join(lines)

    def store_value(self, facts: ModuleFacts, line: int, target: str) -> str | None:
        """The right-hand side of `target = value` (or `target: T = value`) on that line,
        when the statement fits on it."""
        lines = self._file_lines(facts)
        if lines is None or not 0 < line <= len(lines):
            return None
        text = lines[line - 1].strip()
        if not text.startswith(target):
            return None
        rest = text[len(target):].lstrip()
        if rest.startswith(":"):
            _, eq, rest = rest.partition("=")
            if not eq:
                return None
        elif rest.startswith("=") and not rest.startswith("=="):
            rest = rest[1:]
        else:
            return None
        value = rest.split("#", 1)[0].strip()
        try:
            ast.parse(value, mode="eval")
        except SyntaxError:
            return None  # continued on the next lines
        return value or None

    def _split(self, fd: FuncDef, text: str) -> list[str]:
        """`text` (fd's segment) split into lines, once per function."""
        found = self._segment_lines.get(fd.name)
        if found is None:
            found = self._segment_lines[fd.name] = text.splitlines()
        return found

    def stores(self, facts: ModuleFacts, fd: FuncDef, name: str) -> list[NameStore]:
        text = self.segment(facts, fd)
        if text is None or not _may_store(text, name):
            return []
        return name_stores(text, name, fd.fact.line, self._split(fd, text))

    def loops(self, facts: ModuleFacts, fd: FuncDef, name: str) -> list[LoopBinding]:
        """Where `name` is a loop target in the function (`for name in xs`, `for i, name in
        enumerate(xs)`, comprehensions alike), read from the `for` headers' text."""
        found = self._loops.get(fd.name)
        if found is None:
            found = self._loops[fd.name] = {}
            text = self.segment(facts, fd)
            if text is not None and "for" in text:
                for b in _loop_headers(text, fd.fact.line):
                    found.setdefault(b.name, []).append(b)
        return found.get(name, [])

    def mentions(self, facts: ModuleFacts, fd: FuncDef, pattern: re.Pattern[str]) -> bool:
        text = self.segment(facts, fd)
        return text is not None and pattern.search(text) is not None

    def unpacks(self, facts: ModuleFacts, fd: FuncDef, name: str) -> list[LoopBinding]:
        """Where `name` is bound by a tuple assignment in the function (`idx, blk = hit`),
        with the unpacked value and the name's position."""
        key = (fd.name, name)
        found = self._unpacks.get(key)
        if found is None:
            out = BodyFacts()
            text = self.segment(facts, fd)
            if text is not None:
                _unpack_statements(self._split(fd, text), fd.fact.line, out, name)
            found = self._unpacks[key] = out.unpacks.get(name, [])
        return found

    def body(self, facts: ModuleFacts, fd: FuncDef) -> BodyFacts:
        found = self._bodies.get(fd.name)
        if found is not None:
            return found
        out = _EMPTY
        text = self.segment(facts, fd)
        if text is not None:
            offset = fd.fact.line - 1
            indented = text[:1].isspace()
            try:
                tree = ast.parse("if 1:\n" + text if indented else text)
            except (SyntaxError, ValueError, RecursionError):
                tree = None
            func = _first_function(tree) if tree is not None else None
            if func is not None:
                out = BodyFacts()
                self.parsed += 1
                _walk(func, out, offset - 1 if indented else offset)
        self._bodies[fd.name] = out
        return out


def _first_function(tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    node: ast.AST = tree
    for _ in range(3):  # the module, then `if 1:` for an indented segment
        body = getattr(node, "body", [])
        if not body:
            return None
        node = body[0]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None
