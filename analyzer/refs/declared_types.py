"""A gone type a snippet's signature declares (`def __init__(self, tokenizer: AnyTokenizer)` in a
class `ExampleParser(ToolParser)`, `def get_tokenizer(self) -> AnyTokenizer` in a copy of `LLM`):
the type the project's same method declares in the same place now (`ToolParser.__init__`'s
`tokenizer: TokenizerLike`) is where the reader should look. Read statically from the method's
source lines; plain values in and out."""

from __future__ import annotations

import ast
import textwrap

from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import find_symbol

# Wrappers of a type, not types a text names (`Optional[X]`, `list[X]`, `X | None`).
_WRAPPERS = frozenset({"Optional", "Union", "None", "list", "dict", "tuple", "set", "type", "List", "Dict", "Tuple", "Set", "Type", "Any", "Sequence", "Iterable", "Iterator", "Callable", "Awaitable"})


def _function(entry: SymbolEntry, pin: PinView) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    lines = pin.read_lines(entry.path)
    if lines is None or not 0 < entry.line <= entry.end_line <= len(lines):
        return None
    try:
        tree = ast.parse(textwrap.dedent("\n".join(lines[entry.line - 1 : entry.end_line])))
    except SyntaxError:
        return None
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)


def _type_names(annotation: ast.expr) -> list[str]:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body  # `"TokenizerLike"`, a forward reference
        except SyntaxError:
            return []
    names = []
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.Attribute):
            names.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.extend(_type_names(node))
    return [n for n in dict.fromkeys(names) if n not in _WRAPPERS]


def _declared(place: str, pin: PinView) -> list[str]:
    """The type names the pin's `Class.method` declares at `param` (or `return`)."""
    method, _, param = place.partition(":")
    hits, _ = find_symbol(method, pin)
    for entry in hits:
        if entry.kind != "function":
            continue
        fn = _function(entry, pin)
        if fn is None:
            continue
        if param == "return":
            return _type_names(fn.returns) if fn.returns is not None else []
        args = fn.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None and a.arg == param:
                return _type_names(a.annotation) if a.annotation is not None else []
        return []
    return []


def declared_now(gone: str, places: tuple[str, ...], pin: PinView) -> tuple[SymbolEntry, str] | None:
    """The one class the project's method declares where the snippet wrote the gone type `gone`,
    at the first of `places` the pin has (the snippet's class, else its bases), with the reason."""
    for place in places:
        names = [n for n in _declared(place, pin) if n != gone]
        classes = [e for n in names for e in pin.find_symbol(n) if e.kind == "class"]
        if len({e.full for e in classes}) == 1:
            method, _, param = place.partition(":")
            where = "returns" if param == "return" else f"takes `{param}` as"
            return classes[0], f"`{method}` {where} `{classes[0].last}` now, where the snippet wrote `{gone}`"
        if names:
            return None  # the place is there and says something else, or several things
    return None
