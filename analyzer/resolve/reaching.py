"""Which bindings of a local name reach each call of it: reaching definitions
over one function body, for the call graph's per-site precision.

`x = f1; x(); x = f2; x()` calls f1, then f2: the flow stage alone (one set per
name) answers both at both sites. Here the function's own source is walked once
per name in program order, with the usual joins: both arms of an `if` reach
what follows it, a loop body sees what its previous iteration bound, a handler
sees what the `try` body may have bound before raising, and `return`, `break`,
`raise` fall through (an over-approximation: more bindings, never fewer).

A binding is the line of a plain `name = value` (the facts hold its value), or
`OTHER` for anything else that binds the name (a parameter, a loop target,
unpacking, `+=`, `with ... as`, an import, a nested def); a call reached by an
`OTHER` binding falls back to the flow-insensitive answer. A name declared
`global` / `nonlocal`, or bound by `:=`, is not analysed at all.
"""

from __future__ import annotations

import ast
import textwrap

OTHER = -1  # a binding that is not a plain assignment with a value (a parameter's included)

State = frozenset[int]


class _GiveUp(Exception):
    pass


class _Walker:
    def __init__(self, name: str, offset: int) -> None:
        self.name = name
        self.offset = offset  # added to the parsed line numbers: the body's first line in its file
        self.sites: dict[tuple[int, int], set[int]] = {}

    # -- expressions ---------------------------------------------------------

    def expr(self, node: ast.AST | None, state: State) -> State:
        """Record the calls of the name in `node`; return the state after it."""
        if node is None:
            return state
        for sub in ast.walk(node):
            if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name) and sub.target.id == self.name:
                raise _GiveUp
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == self.name:
                key = (sub.lineno + self.offset, sub.col_offset)
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
            state = self.expr(s.value, state)
            for t in s.targets:
                state = self.expr(t, state) if not isinstance(t, ast.Name) else state
            if any(isinstance(t, ast.Name) and t.id == name for t in s.targets):
                return frozenset({s.lineno + self.offset})
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
            entry = state
            out = state
            for _ in range(4):  # the loop's body sees its own previous iteration
                start = entry | (frozenset({OTHER}) if bind else frozenset())
                out = self.block(s.body, start)
                if isinstance(s, ast.While):
                    out = self.expr(s.test, out)
                grown = entry | out
                if grown == entry:
                    break
                entry = grown
            after = entry | out
            return self.block(s.orelse, after) | after
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
            for d in s.decorator_list:
                state = self.expr(d, state)
            return frozenset({OTHER}) if s.name == name else state  # its body is another scope
        if isinstance(s, ast.Import | ast.ImportFrom):
            bound = {(a.asname or a.name).split(".")[0] for a in s.names}
            return frozenset({OTHER}) if name in bound else state
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


def reaching_bindings(source: str, first_line: int, name: str, params: set[str]) -> dict[tuple[int, int], set[int]] | None:
    """For the function whose source (from its first line, decorators included)
    is `source`: (line, col) of each call `name(...)` -> the lines of the plain
    assignments of `name` that may reach it, or OTHER. None: not analysed."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError, RecursionError):
        return None
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
    if func is None:
        return None
    walker = _Walker(name, first_line - 1)
    try:
        # A local not yet bound on entry has no value (calling it raises); a parameter has the caller's.
        walker.block(func.body, frozenset({OTHER}) if name in params else frozenset())
    except (_GiveUp, RecursionError):
        return None
    return walker.sites
