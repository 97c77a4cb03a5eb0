"""Which bindings of a local name reach each call of it: reaching definitions
over one function body, for the call graph's per-site precision.

`x = f1; x(); x = f2; x()` calls f1, then f2: the flow stage alone (one set per
name) answers both at both sites. Here the function's own source is walked once
per name in program order, with the usual joins: both arms of an `if` reach
what follows it, a loop body sees what its previous iteration bound, a handler
sees what the `try` body may have bound before raising, and `return`, `break`,
`raise` fall through (an over-approximation: more bindings, never fewer).

A binding is the line of a plain `name = value` (the facts hold its value), an
import's code (`import_binding(line)`: the import on that line binds it), or
`OTHER` for anything else that binds the name (a parameter, a loop target,
unpacking, `+=`, `with ... as`, a nested def); a call reached by an `OTHER`
binding falls back to the flow-insensitive answer. A name declared
`global` / `nonlocal`, or bound by `:=`, is not analysed at all.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import Protocol, TypeVar

from analyzer.resolve.exprs import parse_function

OTHER = -1  # a binding that is not a plain assignment with a value (a parameter's included)


def import_binding(line: int) -> int:
    """The code of an `import` / `from m import name` binding on `line` (below OTHER)."""
    return -2 - line


def import_line(code: int) -> int | None:
    """The line of an import binding's code; None for an assignment's line or OTHER."""
    return -2 - code if code < OTHER else None

State = frozenset[int]
T = TypeVar("T")


class _GiveUp(Exception):
    pass


class _Flow(Protocol[T]):
    def block(self, body: list[ast.stmt], state: frozenset[T]) -> frozenset[T]: ...
    def expr(self, node: ast.AST | None, state: frozenset[T]) -> frozenset[T]: ...


def _loop(walker: _Flow[T], s: ast.For | ast.AsyncFor | ast.While, entry: frozenset[T], bound: frozenset[T]) -> frozenset[T]:
    """A loop's exit state, `entry` holding what its header left: the body sees its own previous
    iteration (joined to a fixed point, at most four rounds), each pass starting with `bound`
    (what the loop target binds); the `else` runs after the last test, and is skipped only by a
    `break` (a walker that keeps `break_states` gets exactly the states at its `break`s)."""
    stack: list[set[T]] | None = getattr(walker, "break_states", None)
    if stack is not None:
        stack.append(set())
    out = entry
    for _ in range(4):
        out = walker.block(s.body, entry | bound)
        if isinstance(s, ast.While):
            out = walker.expr(s.test, out)
        grown = entry | out
        if grown == entry:
            break
        entry = grown
    after = entry | out
    broke = frozenset(stack.pop()) if stack is not None else None
    if s.orelse and not _breaks(s.body):
        return walker.block(s.orelse, after)  # no `break`: the `else` always runs
    if broke is not None:
        return walker.block(s.orelse, after) | broke
    return walker.block(s.orelse, after) | after


def _breaks(body: list[ast.stmt]) -> bool:
    """Whether a loop body can `break` out of its own loop (not an inner loop's)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            todo.extend(node.orelse)  # an inner loop's `else` breaks the outer one
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda | ast.expr):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


class _Walker:
    def __init__(self, name: str, offset: int, indent: int = 0) -> None:
        self.name = name
        self.offset = offset  # added to the parsed line numbers: the body's first line in its file
        self.indent = indent  # added to the parsed columns: what dedenting a method's text took off
        self.sites: dict[tuple[int, int], set[int]] = {}
        self.break_states: list[set[int]] = []  # per enclosing loop, innermost last: the states at its `break`s

    # -- expressions ---------------------------------------------------------

    def expr(self, node: ast.AST | None, state: State) -> State:
        """Record the calls of the name in `node`; return the state after it."""
        if node is None:
            return state
        for sub in ast.walk(node):
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name) and sub.target.id == self.name:
                raise _GiveUp
            if isinstance(sub, ast.Call) and (
                (isinstance(sub.func, ast.Name) and sub.func.id == self.name)
                or (  # `name.method(...)`: the receiver's bindings at the call
                    isinstance(sub.func, ast.Attribute)
                    and isinstance(sub.func.value, ast.Name)
                    and sub.func.value.id == self.name
                )
            ):
                key = (sub.lineno + self.offset, sub.col_offset + self.indent)
                self.sites.setdefault(key, set()).update(state)
        return state

    def _binds(self, target: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id == self.name for n in ast.walk(target))

    # -- statements ----------------------------------------------------------

    def block(self, body: list[ast.stmt], state: State) -> State:
        for stmt in body:
            state = self.stmt(stmt, state)
        return state

    def stmt(self, s: ast.stmt, state: State) -> State:
        name = self.name
        if isinstance(s, ast.Assign):
            pairs = _element_pairs(s)
            values = [v for _, v in pairs] if pairs is not None else [s.value]
            if any(isinstance(v, ast.Name) and v.id == name for v in values):
                # `alias = name` (or `a, b = b, a`): what reaches the name here, read before any binding
                self.sites.setdefault(alias_site(s.lineno + self.offset), set()).update(state)
            state = self.expr(s.value, state)
            for t in s.targets:
                state = self.expr(t, state) if not isinstance(t, ast.Name) else state
            if any(isinstance(t, ast.Name) and t.id == name for t in s.targets):
                return frozenset({s.lineno + self.offset})
            if pairs is not None and any(isinstance(t, ast.Name) and t.id == name for t, _ in pairs):
                return frozenset({s.lineno + self.offset})  # `a, b = x, y`: a plain binding of each (the facts hold it)
            if any(self._binds(t) for t in s.targets):
                return frozenset({OTHER})
            return state
        if isinstance(s, ast.AnnAssign):
            state = self.expr(s.value, state)
            if isinstance(s.target, ast.Name) and s.target.id == name:
                return frozenset({s.lineno + self.offset}) if s.value is not None else state
            return state
        if isinstance(s, ast.AugAssign):
            state = self.expr(s.value, state)
            return frozenset({OTHER}) if self._binds(s.target) else state
        if isinstance(s, ast.If):
            state = self.expr(s.test, state)
            return self.block(s.body, state) | self.block(s.orelse, state)
        if isinstance(s, ast.For | ast.AsyncFor | ast.While):
            head = s.iter if isinstance(s, ast.For | ast.AsyncFor) else s.test
            state = self.expr(head, state)
            bind = isinstance(s, ast.For | ast.AsyncFor) and self._binds(s.target)
            return _loop(self, s, state, frozenset({OTHER}) if bind else frozenset())
        if isinstance(s, ast.Try | getattr(ast, "TryStar", ast.Try)):
            body = self.block(s.body, state)
            seen = state | body
            handlers = frozenset().union(
                *(self.block(h.body, seen | (frozenset({OTHER}) if h.name == name else frozenset())) for h in s.handlers)
            )
            out = self.block(s.orelse, body) | handlers | body
            return self.block(s.finalbody, out | seen) if s.finalbody else out
        if isinstance(s, ast.With | ast.AsyncWith):
            for item in s.items:
                state = self.expr(item.context_expr, state)
                if item.optional_vars is not None and self._binds(item.optional_vars):
                    state = frozenset({OTHER})
            return self.block(s.body, state)
        if isinstance(s, ast.Match):
            state = self.expr(s.subject, state)
            out = state
            for case in s.cases:
                start = frozenset({OTHER}) if self._binds(case.pattern) else state
                out = out | self.block(case.body, start)
            return out
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for i, d in enumerate(s.decorator_list):
                if isinstance(d, ast.Name) and d.id == name:  # `@name` calls it too
                    self.sites.setdefault(decorator_site(s.lineno + self.offset, i), set()).update(state)
                state = self.expr(d, state)
            return frozenset({OTHER}) if s.name == name else state  # its body is another scope
        if isinstance(s, ast.Import | ast.ImportFrom):
            bound = {(a.asname or a.name).split(".")[0] for a in s.names}
            return frozenset({import_binding(s.lineno + self.offset)}) if name in bound else state
        if isinstance(s, ast.Break):
            if self.break_states:
                self.break_states[-1].update(state)
            return state
        if isinstance(s, ast.Global | ast.Nonlocal):
            if name in s.names:
                raise _GiveUp
            return state
        if isinstance(s, ast.Delete):
            return state
        # Expression statements, return, raise, assert, ...: their calls; control falls through.
        for child in ast.iter_child_nodes(s):
            if isinstance(child, ast.expr):
                state = self.expr(child, state)
        return state


def decorator_site(def_line: int, index: int) -> tuple[int, int]:
    """The key of the `index`-th decorator `@name` of the `def` / `class` on `def_line`
    (a call site's key is its (line, column); a decorator's column is negative)."""
    return def_line, -1 - index


def _element_pairs(s: ast.Assign) -> list[tuple[ast.expr, ast.expr]] | None:
    """`a, b = x, y` (one target, both sides literal tuples or lists of one length,
    nothing starred): each target element with its value; else None."""
    if len(s.targets) != 1:
        return None
    target, value = s.targets[0], s.value
    if not isinstance(target, ast.Tuple | ast.List) or not isinstance(value, ast.Tuple | ast.List):
        return None
    if len(target.elts) != len(value.elts) or any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return None
    return list(zip(target.elts, value.elts, strict=True))


def alias_site(line: int) -> tuple[int, int]:
    """The key of `alias = name` on `line`, the name read as a whole value (not a call)."""
    return line, -10_000


def module_reaching_bindings(source: str, name: str) -> dict[tuple[int, int], set[int]] | None:
    """`reaching_bindings` for the top level of a module (`source`: the whole file):
    not analysed where a function declares the name `global` (it may rebind it
    between two top-level statements)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if any(isinstance(n, ast.Global) and name in n.names for n in ast.walk(tree)):
        return None
    walker = _Walker(name, 0)
    try:
        walker.block(tree.body, frozenset())
    except (_GiveUp, RecursionError):
        return None
    return walker.sites


def reaching_bindings(source: str, first_line: int, name: str, params: set[str]) -> dict[tuple[int, int], set[int]] | None:
    """For the function whose source (from its first line, decorators included)
    is `source`: (line, col) of each call `name(...)` -> the lines of the plain
    assignments of `name` that may reach it, or OTHER. None: not analysed."""
    func = parse_function(source)
    if func is None:
        return None
    # Call sites are keyed by the file's columns; a method's text was parsed dedented.
    first = source.split("\n", 1)[0]
    walker = _Walker(name, first_line - 1, len(first) - len(first.lstrip()))
    try:
        # A local not yet bound on entry has no value (calling it raises); a parameter has the caller's.
        walker.block(func.body, frozenset({OTHER}) if name in params else frozenset())
    except (_GiveUp, RecursionError):
        return None
    return walker.sites


# -- container slots --------------------------------------------------------------

Key = tuple[str, object]  # a constant key with its type: `1` and `"1"` differ
_READS = frozenset({"get", "keys", "values", "items", "copy", "append", "__getitem__", "count", "index"})
# Reads whose result may be an element itself (or share the elements, `copy`): where an
# element is a container on the looked-up key path, it is handed out under another name.
_INNER_READS = frozenset({"get", "values", "items", "copy", "__getitem__"})


def slot_path(node: ast.expr) -> tuple[str, tuple[Key, ...]] | None:
    """`d["a"][0]` -> ("d", (("str", "a"), ("int", 0))); None unless a plain name
    subscripted with constants only."""
    keys: list[Key] = []
    while isinstance(node, ast.Subscript):
        k = node.slice
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str | int) and not isinstance(k.value, bool)):
            return None
        keys.append((type(k.value).__name__, k.value))
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return node.id, tuple(reversed(keys))


def _update_call(s: ast.stmt) -> ast.Call | None:
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute):
        return s.value if s.value.func.attr == "update" else None
    return None


@dataclass(frozen=True, slots=True)
class SlotDef:
    """What a slot holds after a store: `value` (an expression of the scope),
    followed down `rest` (the keys still to look up inside it)."""

    value: ast.expr
    rest: tuple[Key, ...]


class _SlotWalker:
    """Which stores reach each call `name[k1]...[kn](...)` of one constant key path:
    a store to that path (or to a prefix of it) replaces what was there (a strong
    update: the name is a local container nothing else can reach, see `slot_reaching`)."""

    def __init__(self, name: str, path: tuple[Key, ...], offset: int, indent: int) -> None:
        self.name = name
        self.path = path
        self.offset = offset
        self.indent = indent
        self.sites: dict[tuple[int, int], set[SlotDef]] = {}

    def _store(self, target_path: tuple[Key, ...], value: ast.expr, state: frozenset[SlotDef]) -> frozenset[SlotDef]:
        n = len(target_path)
        if target_path == self.path[:n]:
            return frozenset({SlotDef(value, self.path[n:])})  # this slot, or a container holding it, replaced
        return state  # another slot, or inside the one looked up (its identity stays)

    def _holds_slot(self, base: tuple[Key, ...]) -> bool:
        """Whether a container read at `base` holds the slot looked up (directly or below)."""
        return len(base) < len(self.path) and base == self.path[: len(base)]

    def _holds_container(self, base: tuple[Key, ...]) -> bool:
        """Whether a container read at `base` holds, below its own elements, the slot looked up."""
        return len(base) + 1 < len(self.path) and base == self.path[: len(base)]

    def expr(self, node: ast.AST | None, state: frozenset[SlotDef]) -> frozenset[SlotDef]:
        if node is None:
            return state
        allowed: set[int] = set()  # Name nodes read in a way that cannot change or leak the container
        inner = {id(sub.value) for sub in ast.walk(node) if isinstance(sub, ast.Subscript | ast.Attribute)}
        for sub in ast.walk(node):
            if isinstance(sub, ast.NamedExpr | ast.Lambda | ast.comprehension) and any(
                isinstance(n, ast.Name) and n.id == self.name for n in ast.walk(sub)
            ):
                raise _GiveUp
            if isinstance(sub, ast.Call):
                found = slot_path(sub.func) if isinstance(sub.func, ast.Subscript) else None
                if found is not None and found[0] == self.name:
                    allowed.update(id(n) for n in ast.walk(sub.func) if isinstance(n, ast.Name))
                    if found[1] == self.path:
                        key = (sub.lineno + self.offset, sub.col_offset + self.indent)
                        self.sites.setdefault(key, set()).update(state)
                elif (
                    isinstance(sub.func, ast.Attribute)
                    and sub.func.attr not in _READS
                    and isinstance(sub.func.value, ast.Subscript)
                    and (base := slot_path(sub.func.value)) is not None
                    and base[0] == self.name
                    and self._holds_slot(base[1])
                ):
                    raise _GiveUp  # `d["g"].setdefault("k", f)`: a container the slot is in, changed in place
                elif isinstance(sub.func, ast.Attribute) and sub.func.attr in _READS:
                    base = slot_path(sub.func.value) if isinstance(sub.func.value, ast.Subscript | ast.Name) else None
                    if base is not None and base[0] == self.name:
                        if sub.func.attr in _INNER_READS and self._holds_container(base[1]):
                            raise _GiveUp  # `d.get("g")`, `d.values()`: hands out a container the slot is in
                        allowed.update(id(n) for n in ast.walk(sub.func.value) if isinstance(n, ast.Name))
            elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load):
                found = slot_path(sub)
                if found is not None and found[0] == self.name:
                    if id(sub) not in inner and self._holds_slot(found[1]):
                        raise _GiveUp  # `g = d["g"]`: the container the slot is in, handed out under another name
                    allowed.update(id(n) for n in ast.walk(sub) if isinstance(n, ast.Name))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id == self.name and id(sub) not in allowed:
                raise _GiveUp  # passed on, aliased or mutated some other way
        return state

    def block(self, body: list[ast.stmt], state: frozenset[SlotDef]) -> frozenset[SlotDef]:
        for stmt in body:
            state = self.stmt(stmt, state)
        return state

    def stmt(self, s: ast.stmt, state: frozenset[SlotDef]) -> frozenset[SlotDef]:
        name = self.name
        if isinstance(s, ast.Assign):
            if isinstance(s.value, ast.Name) and s.value.id == name:  # `alias = name`: what reaches it here
                self.sites.setdefault(alias_site(s.lineno + self.offset), set()).update(state)
            state = self.expr(s.value, state)
            for t in s.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    state = frozenset({SlotDef(s.value, self.path)})
                elif isinstance(t, ast.Subscript) and (found := slot_path(t)) is not None and found[0] == name:
                    state = self._store(found[1], s.value, state)
                else:
                    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(t)):
                        raise _GiveUp  # `a, d = ...`, `d[k] = ...` with a key not constant
                    state = self.expr(t, state)
            return state
        update = _update_call(s)
        if update is not None:
            base = slot_path(update.func.value) if isinstance(update.func, ast.Attribute) else None
            if base is not None and base[0] == name:
                # `d.update({"k": f}, k2=g)`: a store to each constant key
                for a in (*update.args, *(k.value for k in update.keywords)):
                    state = self.expr(a, state)
                arg = update.args[0] if update.args else None
                if len(update.args) > 1 or (arg is not None and not isinstance(arg, ast.Dict)):
                    raise _GiveUp
                pairs = list(zip(arg.keys, arg.values, strict=True)) if isinstance(arg, ast.Dict) else []
                pairs += [(ast.Constant(k.arg) if k.arg else None, k.value) for k in update.keywords]
                for k, v in pairs:
                    found = slot_path(ast.Subscript(value=ast.Name(id=name), slice=k)) if k is not None else None
                    if found is None:
                        raise _GiveUp  # `**more` or a key not constant
                    state = self._store(base[1] + found[1], v, state)
                return state
        if isinstance(s, ast.AnnAssign | ast.AugAssign | ast.Delete | ast.Global | ast.Nonlocal | ast.Import | ast.ImportFrom):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s)) or (
                isinstance(s, ast.Global | ast.Nonlocal | ast.Import | ast.ImportFrom)
                and name in {getattr(a, "asname", None) or getattr(a, "name", a) for a in getattr(s, "names", [])}
            ):
                raise _GiveUp
            return state
        if isinstance(s, ast.If | ast.While):
            state = self.expr(s.test, state)
            if isinstance(s, ast.If):
                return self.block(s.body, state) | self.block(s.orelse, state)
        if isinstance(s, ast.For | ast.AsyncFor | ast.While):
            if isinstance(s, ast.For | ast.AsyncFor):
                state = self.expr(s.iter, state)
                if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s.target)):
                    raise _GiveUp
            return _loop(self, s, state, frozenset())
        if isinstance(s, ast.Try | getattr(ast, "TryStar", ast.Try)):
            body = self.block(s.body, state)
            seen = state | body
            handlers = frozenset().union(*(self.block(h.body, seen) for h in s.handlers))
            out = self.block(s.orelse, body) | handlers | body
            return self.block(s.finalbody, out | seen) if s.finalbody else out
        if isinstance(s, ast.With | ast.AsyncWith):
            for item in s.items:
                state = self.expr(item.context_expr, state)
                if item.optional_vars is not None and any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(item.optional_vars)
                ):
                    raise _GiveUp
            return self.block(s.body, state)
        if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if s.name == name or any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s)):
                raise _GiveUp  # a nested scope that sees the container may change it whenever it runs
            return state
        if isinstance(s, ast.Match):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s)):
                raise _GiveUp
            return state.union(*(self.block(case.body, state) for case in s.cases))
        for child in ast.iter_child_nodes(s):
            if isinstance(child, ast.expr):
                state = self.expr(child, state)
        return state


def slot_reaching(
    source: str, first_line: int, name: str, path: tuple[Key, ...], *, module: bool = False
) -> dict[tuple[int, int], set[SlotDef]] | None:
    """For a function (`source` from its first line) or a whole module (`module=True`):
    (line, col) of each call `name[k1]...[kn](...)` with this key path -> the stores
    that may reach it. Only where `name` is a container nothing else can touch: read
    only by subscripts and read-only methods, stored into with constant keys, never
    passed on, aliased, deleted from or seen by a nested function; else None."""
    indent = 0
    if not module:
        first = source.split("\n", 1)[0]
        indent = len(first) - len(first.lstrip())
        source = textwrap.dedent(source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if module:
        body: list[ast.stmt] = tree.body
        if any(isinstance(n, ast.Global) and name in n.names for n in ast.walk(tree)):
            return None
    else:
        func = next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
        if func is None or any(a.arg == name for a in ast.walk(func.args) if isinstance(a, ast.arg)):
            return None
        body = func.body
    walker = _SlotWalker(name, path, 0 if module else first_line - 1, indent)
    try:
        walker.block(body, frozenset())
    except (_GiveUp, RecursionError):
        return None
    return walker.sites


# -- a rebound local handed on ------------------------------------------------------


def return_site(line: int) -> tuple[int, int]:
    """The key of `return name` on `line` (a call site's key is its (line, column))."""
    return line, -20_000


_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _PassedWalker(_Walker):
    """`_Walker`'s states, recorded where the name is handed on whole: each call that
    passes it as an argument (`g(name)`, `g(k=name)`), keyed by the call's (line, column),
    and each `return name` (`return_site`). Calls inside a lambda or a comprehension
    (their own scopes, which may bind the name) are not recorded."""

    def expr(self, node: ast.AST | None, state: State) -> State:
        if node is None:
            return state
        todo: list[ast.AST] = [node]
        while todo:
            sub = todo.pop()
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name) and sub.target.id == self.name:
                raise _GiveUp
            if isinstance(sub, _OWN_SCOPES):
                continue
            if isinstance(sub, ast.Call) and any(
                isinstance(a, ast.Name) and a.id == self.name
                for a in (*sub.args, *(k.value for k in sub.keywords if k.arg is not None))
            ):
                key = (sub.lineno + self.offset, sub.col_offset + self.indent)
                self.sites.setdefault(key, set()).update(state)
            todo.extend(ast.iter_child_nodes(sub))
        return state

    def stmt(self, s: ast.stmt, state: State) -> State:
        if isinstance(s, ast.Return) and isinstance(s.value, ast.Name) and s.value.id == self.name:
            self.sites.setdefault(return_site(s.lineno + self.offset), set()).update(state)
            return state
        return super().stmt(s, state)


def passed_reaching_bindings(
    source: str, first_line: int, name: str, params: set[str]
) -> dict[tuple[int, int], set[int]] | None:
    """`reaching_bindings` at the places a function hands its local `name` on whole:
    the calls passing it as an argument and its `return name` statements. None: not
    analysed (also where a function nested in it declares the name `nonlocal`: calling
    that one may rebind it between two of these places)."""
    func = parse_function(source)
    if func is None:
        return None
    for sub in ast.walk(func):
        if isinstance(sub, ast.Nonlocal | ast.Global) and name in sub.names:
            return None
    first = source.split("\n", 1)[0]
    walker = _PassedWalker(name, first_line - 1, len(first) - len(first.lstrip()))
    try:
        walker.block(func.body, frozenset({OTHER}) if name in params else frozenset())
    except (_GiveUp, RecursionError):
        return None
    return walker.sites
