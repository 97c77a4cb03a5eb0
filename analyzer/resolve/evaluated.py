"""Calls written in a constant string handed to `eval` / `exec`.

`eval("func()")` runs code the program spells out in full: read statically, the
string is source like any other, and its calls are calls of the scope that
evaluates it (with no namespace argument, names resolve there). The string is
parsed, never run. A string that is not a literal, or an `eval` given its own
globals or locals (names then resolve in that mapping), is not followed.
"""

from __future__ import annotations

import ast

from analyzer.index.models import CallSite

EVALUATING = frozenset({"builtins.eval", "builtins.exec"})


def literal_calls(site: CallSite, builtin: str) -> list[CallSite]:
    """The call sites inside `site`'s constant source argument, stamped with its
    scope and position; none where the argument is not a constant string."""
    if len(site.args) != 1 or site.keywords:
        return []
    try:
        arg = ast.parse(site.args[0], mode="eval").body
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            return []
        tree = ast.parse(arg.value, mode="eval" if builtin == "builtins.eval" else "exec")
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[CallSite] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out.append(CallSite(
                callee=ast.unparse(node.func), line=site.line, col=site.col, scope=site.scope,
                args=[ast.unparse(a) for a in node.args],
                keywords=[k.arg or "**" for k in node.keywords],
                keyword_values=[ast.unparse(k.value) for k in node.keywords],
            ))
    return out
