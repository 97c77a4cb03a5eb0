"""Reduce an annotation to the class expressions a value of that type may be.

`Optional[X]`, `X | None`, `Union[X, None]`, `"X"`, `Annotated[X, ...]`,
`ClassVar[X]`, `Final[X]`, `AbstractContextManager[X]` (what `with` binds) all
mean "an X" for call resolution; `type[X]` means
the class X itself. Containers (`list[X]`) are not unwrapped: calling a method
on a list is not calling a method on X.
"""

from __future__ import annotations

import ast

from analyzer.resolve.exprs import ExprParser, dotted_name
from analyzer.resolve.models import immutable

_TRANSPARENT = {"Optional", "Annotated", "ClassVar", "Final", "Required", "NotRequired", "ReadOnly"}
# A context manager of X is only ever entered (`with cm as x`: an X); its own
# methods are `__enter__`/`__exit__`, so reading it as an X loses no call.
CONTEXT_MANAGER_TYPES = frozenset(
    {"AbstractContextManager", "ContextManager", "AbstractAsyncContextManager", "AsyncContextManager"}
)
_TRANSPARENT |= CONTEXT_MANAGER_TYPES
_UNION = {"Union"}
_TYPE_OF = {"type", "Type"}
_NONE_NAMES = {"None", "NoneType"}


@immutable
class TypeRef:
    """A dotted class expression as written (`KVCacheManager`, `mod.Pool`);
    `is_class` when the annotation denotes the class object (`type[X]`)."""

    name: str
    is_class: bool = False


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def annotation_types(text: str | None, parser: ExprParser) -> list[TypeRef]:
    """Memoised per text on the parser (the same annotations recur all over a
    tree); callers only read the list."""
    if not text:
        return []
    found = parser.type_refs.get(text)
    if found is None:
        found = parser.type_refs[text] = _annotation_types(text, parser)
    return found


def _annotation_types(text: str, parser: ExprParser) -> list[TypeRef]:
    node = parser.parse(text)
    if node is None:
        return []
    out: list[TypeRef] = []
    _collect(node, parser, out, is_class=False, depth=0)
    return out


def _collect(node: ast.expr, parser: ExprParser, out: list[TypeRef], *, is_class: bool, depth: int) -> None:
    if depth > 8:
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):  # forward reference: "KVCacheManager"
            inner = parser.parse(node.value)
            if inner is not None:
                _collect(inner, parser, out, is_class=is_class, depth=depth + 1)
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        _collect(node.left, parser, out, is_class=is_class, depth=depth + 1)
        _collect(node.right, parser, out, is_class=is_class, depth=depth + 1)
        return
    if isinstance(node, ast.Subscript):
        head = dotted_name(node.value)
        if head is None:
            return
        base = _last(head)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base in _UNION:
            for arg in args:
                _collect(arg, parser, out, is_class=is_class, depth=depth + 1)
        elif base in _TRANSPARENT and args:
            _collect(args[0], parser, out, is_class=is_class, depth=depth + 1)
        elif base in _TYPE_OF and args:
            _collect(args[0], parser, out, is_class=True, depth=depth + 1)
        else:
            # Generic class `Pool[T]` is still a Pool; containers are filtered later
            # because they resolve to builtins, not project classes.
            out.append(TypeRef(head, is_class))
        return
    name = dotted_name(node)
    if name is not None and _last(name) not in _NONE_NAMES:
        out.append(TypeRef(name, is_class))
