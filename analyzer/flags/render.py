"""Render interpreter values back to Python-like source text for reports."""

from __future__ import annotations

import json
from typing import Any

from analyzer.flags.values import Builtin, ClassV, FuncV, InstanceV, ModuleV, Opaque, ParserV


def render(value: Any) -> str:
    if isinstance(value, Opaque):
        return value.src
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool | int | float) or value is None:
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(render(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(render(v) for v in value)) + "}" if value else "set()"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render(k)}: {render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, ClassV | FuncV | ModuleV):
        return value.sym.name
    if isinstance(value, Builtin):
        return value.name
    if isinstance(value, InstanceV):
        return f"{value.cls.sym.name}()"
    if isinstance(value, ParserV):
        return "<parser>"
    return type(value).__name__
