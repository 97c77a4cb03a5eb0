"""Snippet variables whose class the snippet declares: `def cache_finished_req(self, req: Req)`,
`batch: "ScheduleBatch"`, `Optional[Req]`, `x: Req = ...`, `for req in reqs` over `reqs: List[Req]`.
Their attributes (`req.fill_ids`, read, stored or called) are that class's members, judged against
it at each pin (`check.py`).

Plain AST in, plain data out: which class a name is declared with is for the caller to vouch
for (the document's own classes, another library's, a variable holding a class are not the
project's)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Nested scopes a variable's declaration does not reach into (they get their own pass).
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_OPTIONAL = frozenset({"Optional", "typing.Optional"})


@dataclass(frozen=True, slots=True)
class Receiver:
    """`req.fill_ids` at (lineno, col) of the snippet, where `req` is declared a `Req`."""

    lineno: int
    col: int
    var: str
    member: str
    cls: str


def declared_class(annotation: ast.expr | None) -> str | None:
    """The one class an annotation declares (`Req`, `"ScheduleBatch"`, `Optional[Req]`,
    `Req | None`), else None (a container, a union of classes, a dotted or generic type)."""
    if isinstance(annotation, ast.Name):
        return annotation.id
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            parsed = ast.parse(annotation.value.strip(), mode="eval").body
        except SyntaxError:
            return None
        return declared_class(parsed) if not isinstance(parsed, ast.Constant) else None
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in _OPTIONAL:
        return declared_class(annotation.slice)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [s for s in (annotation.left, annotation.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return declared_class(sides[0]) if len(sides) == 1 else None
    return None


_SEQUENCES = frozenset({"List", "list", "Sequence", "Iterable", "Set", "set", "typing.List", "typing.Sequence", "typing.Iterable"})


def element_class(annotation: ast.expr | None) -> str | None:
    """The one class of a sequence's items an annotation declares (`List[Req]`, `list["Req"]`):
    what a `for req in reqs` over it binds."""
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in _SEQUENCES:
        return declared_class(annotation.slice)
    return None


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a function (or a module's top level) outside its nested functions and classes."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, _NESTED):
            stack.extend(ast.iter_child_nodes(node))
    return out


def _scope_receivers(scope: ast.AST) -> list[Receiver]:
    nodes = _own_nodes(scope)
    declared: dict[str, str | None] = {}

    def declare(name: str, cls: str | None) -> None:
        # Declared twice with different classes, or without one: no single class.
        declared[name] = cls if declared.get(name, cls) == cls else None

    items: dict[str, str | None] = {}  # `reqs: List[Req]`: the class of each sequence's items
    if isinstance(scope, _FUNCTIONS):
        a = scope.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            if arg.annotation is not None:
                declare(arg.arg, declared_class(arg.annotation))
                items[arg.arg] = element_class(arg.annotation)
    annotated: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declare(node.target.id, declared_class(node.annotation))
            annotated.add(id(node.target))
    for node in nodes:
        # `for req in reqs` over `reqs: List[Req]`: each `req` is a `Req`.
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Name) and items.get(node.iter.id):
            declare(node.target.id, items[node.iter.id])
            annotated.add(id(node.target))
    # Bound again without a type (`req = other`, `for req in reqs`): the class no longer holds.
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del) and id(node) not in annotated:
            declared[node.id] = None
    out: list[Receiver] = []
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and not node.attr.startswith("__"):
            cls = declared.get(node.value.id)
            if cls:
                out.append(Receiver(node.lineno, node.col_offset, node.value.id, node.attr, cls))
    return out


def receivers(tree: ast.Module) -> list[Receiver]:
    """Every attribute of a declared variable in a parsed snippet: in each function (a
    parameter's annotation, a local `x: C = ...`) and at the snippet's top level (`x: C = ...`);
    a class body's `x: C` is a field, not a variable."""
    out = _scope_receivers(tree)
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS):
            out.extend(_scope_receivers(node))
    return sorted(out, key=lambda r: (r.lineno, r.col))
