"""Which method names a computed `getattr` can produce: `getattr(obj, f"parse_{x}")`.

A string-prefix dispatch reaches the methods named with that prefix; which of
them depends on the strings the f-string's variable part `x` can be there. A
name set is given only where a fact of the code bounds it (else None: the
prefix alone decides, as before):

- a membership guard: the getattr's statement is the first under `if x in C:`
  (or `x == "k"`, or either as one operand of an `and`), C a literal or a module
  constant of strings. `x` may be spelt through a local alias bound once to an
  attribute chain (`token = self.stream.current` ... `if token.value in C:` ...
  `getattr(self, f"parse_{self.stream.current.value}")`) when nothing between
  the binding and the guard can move the chain (see `_may_move`);
- an exit guard: the statement right before the getattr's, in the same block,
  is `if x not in C: raise ...` (or `x != "k"`, or either as one operand of an
  `or`; a body ending in raise, return, continue or break), so past it x is in C;
- `type(x).__name__` / `x.__class__.__name__`: the names of the classes x may
  be (the caller supplies them: `type_suffix` says which expression it is).
"""

from __future__ import annotations

import ast
import string
from collections.abc import Callable, Iterator

from analyzer.resolve.exprs import dotted_name, parse_function

# Methods of builtin containers and strings: calling one on an object that is
# not the chain (`self._tag_stack.append(v)`) cannot rebind the chain.
_INERT_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "add", "discard", "update", "get", "setdefault",
    "items", "keys", "values", "copy", "index", "count", "join", "split", "strip", "startswith", "endswith",
    "lower", "upper", "format",
})


def as_fstring(node: ast.expr) -> ast.expr:
    """`"visit_{}".format(x)`, `"visit_{kind}".format(kind=x)` or `"visit_%s" % x` -> the
    f-string it spells (`f"visit_{x}"`), so the rules below read all three spellings of a
    dispatch name alike; any other expression (a conversion, a format spec, a field that
    is no plain argument, several `%` directives) comes back as it is."""
    if (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)
    ):
        return _formatted(node.func.value.value, node) or node
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
        head, sep, tail = node.left.value.partition("%s")
        right = node.right.elts[0] if isinstance(node.right, ast.Tuple) and len(node.right.elts) == 1 else node.right
        if not sep or "%" in head + tail or isinstance(right, ast.Tuple | ast.Dict | ast.Starred):
            return node
        values: list[ast.expr] = [ast.Constant(head)] if head else []
        values.append(ast.FormattedValue(value=right, conversion=-1, format_spec=None))
        return ast.JoinedStr(values=[*values, ast.Constant(tail)] if tail else values)
    return node


def _formatted(template: str, call: ast.Call) -> ast.JoinedStr | None:
    """The f-string `template.format(*call.args, **call.keywords)` spells, or None."""
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError:
        return None
    values: list[ast.expr] = []
    auto = 0
    for literal, field, spec, conversion in pieces:
        if literal:
            values.append(ast.Constant(literal))
        if field is None:
            continue
        if spec or conversion:
            return None
        if field == "":
            field, auto = str(auto), auto + 1
        if field.isdigit():
            arg = call.args[int(field)] if int(field) < len(call.args) else None
        else:
            arg = next((k.value for k in call.keywords if k.arg == field), None)
        if arg is None or isinstance(arg, ast.Starred):
            return None
        values.append(ast.FormattedValue(value=arg, conversion=-1, format_spec=None))
    return ast.JoinedStr(values=values)


def split_fstring(node: ast.expr) -> tuple[str, ast.expr, str] | None:
    """`f"visit_{x}"` / `f"visit_{x}_end"` / `"visit_" + x` -> (prefix, x, tail);
    None unless one plain formatted value between constant parts."""
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        formatted = [p for p in parts if isinstance(p, ast.FormattedValue)]
        if len(formatted) != 1 or formatted[0].conversion != -1 or formatted[0].format_spec is not None:
            return None
        at = parts.index(formatted[0])
        head, tail = parts[:at], parts[at + 1 :]
        if len(head) != 1 or len(tail) > 1:
            return None
        texts = [p.value for p in (*head, *tail) if isinstance(p, ast.Constant) and isinstance(p.value, str)]
        if len(texts) != len(head) + len(tail):
            return None
        return texts[0], formatted[0].value, texts[1] if tail else ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant) and isinstance(
        node.left.value, str
    ):
        return node.left.value, node.right, ""
    return None


def type_suffix(node: ast.expr) -> ast.expr | None:
    """`type(x).__name__` or `x.__class__.__name__` -> x."""
    if not (isinstance(node, ast.Attribute) and node.attr == "__name__"):
        return None
    inner = node.value
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "type" and len(inner.args) == 1:
        return inner.args[0]
    if isinstance(inner, ast.Attribute) and inner.attr == "__class__":
        return inner.value
    return None


def strings_of(node: ast.expr) -> frozenset[str] | None:
    """The strings a literal (or `frozenset([...])`, `set(...)`, `tuple(...)` of
    one) holds; None if any element is not a string constant."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set", "tuple", "list"):
        if len(node.args) != 1 or node.keywords:
            return None
        node = node.args[0]
    if isinstance(node, ast.Set | ast.List | ast.Tuple):
        out = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return frozenset(out) if len(out) == len(node.elts) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return frozenset({node.value})
    return None


def guarded_values(
    source: str,
    first_line: int,
    line: int,
    suffix: ast.expr,
    constant: Callable[[str], frozenset[str] | None],
    no_return: Callable[[str], bool],
) -> frozenset[str] | None:
    """The strings `suffix` (an expression of the getattr at `line`) can be,
    from a membership guard right above it, in the function whose source (from
    its first line) is `source`; None: no such guard. `constant(name)`: the
    strings a module constant holds; `no_return(callee)`: whether a call of that
    dotted callee never returns (`-> NoReturn`)."""
    func = parse_function(source)
    if func is None:
        return None
    rel = line - first_line + 1
    found = _guard_of(func.body, rel)
    positive = True
    if found is None:
        guard = _exit_guard_of(func.body, rel)
        if guard is None:
            return None
        positive = False
    else:
        guard = found[0]
    want = ast.unparse(suffix)
    aliases = _single_aliases(func)
    # `if x in C and ...:` above the getattr, or `if x not in C or ...: raise` before it.
    joint = ast.And if positive else ast.Or
    conjuncts = guard.test.values if isinstance(guard.test, ast.BoolOp) and isinstance(guard.test.op, joint) else [guard.test]
    member, equal = (ast.In, ast.Eq) if positive else (ast.NotIn, ast.NotEq)
    for test in conjuncts:
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            continue
        left, right = test.left, test.comparators[0]
        if isinstance(test.ops[0], member):
            values = strings_of(right)
            if values is None and isinstance(right, ast.Name):
                values = constant(right.id)
        elif isinstance(test.ops[0], equal):
            values = strings_of(right) if isinstance(right, ast.Constant) else None
            if values is None and isinstance(left, ast.Constant):
                left, values = right, strings_of(left)
        else:
            continue
        if values is None:
            continue
        if ast.unparse(left) == want:
            return values
        root = _root_name(left)
        alias = aliases.get(root) if root is not None else None
        if alias is None:
            continue
        binding, chain = alias
        spelt = chain + ast.unparse(left)[len(root):]  # type: ignore[arg-type]
        if spelt == want and not _may_move(func, binding, guard, chain, root, no_return):  # type: ignore[arg-type]
            return values
    return None


def _guard_of(body: list[ast.stmt], rel: int, parent: ast.If | None = None) -> tuple[ast.If, ast.stmt] | None:
    """The `if` whose body starts with the (innermost) statement on line `rel`, if any."""
    for i, s in enumerate(body):
        if not (s.lineno <= rel <= (s.end_lineno or s.lineno)):
            continue
        blocks: list[tuple[list[ast.stmt], ast.If | None]] = []
        if isinstance(s, ast.If):
            blocks = [(s.body, s), (s.orelse, None)]
        elif not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if isinstance(sub, list):
                    blocks.append((sub, None))
            blocks.extend((h.body, None) for h in getattr(s, "handlers", ()))
        for stmts, owner in blocks:
            if any(x.lineno <= rel <= (x.end_lineno or x.lineno) for x in stmts):
                return _guard_of(stmts, rel, owner)
        # `s` is the innermost statement on the line
        return (parent, s) if parent is not None and i == 0 else None
    return None


_EXITS = (ast.Raise, ast.Return, ast.Continue, ast.Break)


def _exit_guard_of(body: list[ast.stmt], rel: int) -> ast.If | None:
    """The `if` right before the (innermost) statement on line `rel`, in the same
    block, with no `else` and a body that always leaves (ends in raise, return,
    continue or break): past it, its test was false."""
    for i, s in enumerate(body):
        if not (s.lineno <= rel <= (s.end_lineno or s.lineno)):
            continue
        if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            blocks = [getattr(s, f, None) for f in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(s, "handlers", ())]
            for stmts in blocks:
                if isinstance(stmts, list) and any(x.lineno <= rel <= (x.end_lineno or x.lineno) for x in stmts):
                    return _exit_guard_of(stmts, rel)
        before = body[i - 1] if i > 0 else None
        if isinstance(before, ast.If) and not before.orelse and before.body and isinstance(before.body[-1], _EXITS):
            return before
        return None
    return None


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _single_aliases(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[ast.stmt, str]]:
    """Locals bound exactly once, by a plain `name = a.b.c`: name -> (that statement, "a.b.c")."""
    counts: dict[str, int] = {}
    first: dict[str, tuple[ast.stmt, str]] = {}
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    for node in _walk_own(func):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor | ast.NamedExpr):
            targets = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            counts[node.name] = counts.get(node.name, 0) + 2
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    counts[n.id] = counts.get(n.id, 0) + 1
                    if isinstance(node, ast.Assign) and len(node.targets) == 1 and t is n:
                        chain = dotted_name(node.value)
                        if chain is not None and "." in chain:
                            first[n.id] = (node, chain)
    return {n: v for n, v in first.items() if counts.get(n) == 1 and n not in params}


def _walk_own(node: ast.AST) -> Iterator[ast.AST]:
    """Every node of a function's own body (nested functions, classes and lambdas not entered)."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(n))


def _inside(node: ast.stmt, outer: ast.stmt) -> bool:
    return outer.lineno <= node.lineno and (node.end_lineno or node.lineno) <= (outer.end_lineno or outer.lineno) and node is not outer


def _may_move(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    binding: ast.stmt,
    guard: ast.If,
    chain: str,
    alias: str,
    no_return: Callable[[str], bool],
) -> bool:
    """Whether code run between the alias's binding and the guard's test may make
    the alias and the chain differ: a store to the chain or a prefix of it; a
    call on (or given) the chain, a prefix of it or the alias; a call on the root
    (`self.m()`) unless it never returns; a call on anything else unless a
    builtin container method; a yield or await (other code runs)."""
    if (binding.end_lineno or binding.lineno) >= guard.lineno:
        return True  # bound after the guard (a loop's previous turn): not this reading
    for loop in _walk_own(func):
        # A loop around the guard but not the binding runs its tail between turns.
        if isinstance(loop, ast.For | ast.AsyncFor | ast.While) and _inside(guard, loop) and not _inside(binding, loop):
            return True
    parts = chain.split(".")
    prefixes = {".".join(parts[: i + 1]) for i in range(1, len(parts))}  # self.stream, self.stream.current
    root = parts[0]
    start, end = binding.end_lineno or binding.lineno, guard.test.end_lineno or guard.lineno
    for node in _walk_own(func):
        line = getattr(node, "lineno", None)
        if line is None or not (start < line <= end) or node is binding:
            continue
        if isinstance(node, ast.Yield | ast.YieldFrom | ast.Await):
            return True
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                text = dotted_name(t) if isinstance(t, ast.Attribute | ast.Name) else None
                if text is not None and (text in (root, alias) or text in prefixes):
                    return True
        if isinstance(node, ast.Call):
            callee = dotted_name(node.func)
            if any(dotted_name(a) in (*prefixes, root, alias) for a in (*node.args, *(k.value for k in node.keywords))):
                return True
            if callee is None:
                return True
            receiver, _, method = callee.rpartition(".")
            if not receiver:
                continue  # a plain function not handed the chain
            if receiver in prefixes or receiver == alias or receiver.startswith(alias + "."):
                return True
            if receiver == root:
                if not no_return(method):
                    return True
            elif method not in _INERT_METHODS:
                return True
    return False


def lowered(node: ast.expr) -> ast.expr | None:
    """`name.lower()` -> name (a dispatch name folded to lower case); else None."""
    if (
        isinstance(node, ast.Call) and not node.args and not node.keywords
        and isinstance(node.func, ast.Attribute) and node.func.attr == "lower"
    ):
        return node.func.value
    return None


def bound_once(source: str, name: str) -> ast.expr | None:
    """The value a function binds the local `name` to, when that is its one
    binding (a plain `name = <expr>`; no other assignment, loop target, `with`,
    augmented or walrus binding, nor a parameter of that name); else None.
    `func_name = f"_process_{type(t).__name__}"` ... `getattr(self, func_name.lower())`."""
    func = parse_function(source)
    if func is None:
        return None
    args = func.args
    if any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a):
        return None
    found: list[ast.expr] = []
    for node in ast.walk(func):
        # (inner scopes are walked too: one binding the name there only makes this stricter)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store | ast.Del):
            found.append(node)
    if len(found) != 1:
        return None
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is found[0]:
            return node.value
    return None
