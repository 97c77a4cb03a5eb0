"""A span in code font that is a formula, not a name.

`kv_cache_blocks = (total_vram - model_size) × gpu_memory_utilization / block_size`: the author
writes a computation in code font. The name it assigns is the author's name for the result (the
other names in it may be the project's, and are judged where they are written on their own), so
a left-hand name the project's sources never spell is no stale reference: the reader was never
told the project has it. Told apart by parsing, not by words: the span is one assignment (or one
expression) whose value is arithmetic over at least one name.
"""

from __future__ import annotations

import ast

# Operators authors type outside ASCII (multiplication sign, division sign, minus, middle dot).
_OPERATORS = str.maketrans({"×": "*", "÷": "/", "−": "-", "·": "*", "⋅": "*"})
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def _arithmetic_over_names(node: ast.expr) -> bool:
    binops = [n for n in ast.walk(node) if isinstance(n, ast.BinOp) and isinstance(n.op, _ARITHMETIC)]
    return bool(binops) and any(isinstance(n, ast.Name) for n in ast.walk(node))


def formula(text: str) -> str | None:
    """The reason `text` is a formula (see the module's docstring), or None."""
    try:
        tree = ast.parse(text.strip().translate(_OPERATORS), mode="exec")
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and _arithmetic_over_names(stmt.value):
        return f"`{stmt.targets[0].id}` is what a formula in code font computes, the author's name for it"
    return None
