"""Plain-text renderings of facts shared by the CLI and JSON output."""

from __future__ import annotations

from analyzer.index.models import Class, Function, Param


def _param(p: Param) -> str:
    star = {"var_positional": "*", "var_keyword": "**"}.get(p.kind, "")
    text = star + p.name
    if p.annotation is not None:
        text += f": {p.annotation}"
    if p.default is not None:
        text += f" = {p.default}" if p.annotation is not None else f"={p.default}"
    return text


def signature(fn: Function) -> str:
    """`async def schedule(self, budget: int = 8, /, *args, flag: bool = False, **kw) -> list`"""
    parts: list[str] = []
    params = fn.params
    for i, p in enumerate(params):
        bare_star_needed = p.kind == "keyword_only" and "*" not in parts
        if bare_star_needed and not any(q.kind == "var_positional" for q in params[:i]):
            parts.append("*")
        parts.append(_param(p))
        nxt = params[i + 1].kind if i + 1 < len(params) else None
        if p.kind == "positional_only" and nxt != "positional_only":
            parts.append("/")
    text = f"{'async ' if fn.is_async else ''}def {fn.name}({', '.join(parts)})"
    if fn.returns is not None:
        text += f" -> {fn.returns}"
    return " ".join(text.split())  # multi-line annotations on one line


def class_header(cls: Class) -> str:
    args = [*cls.bases, *cls.keywords]
    return f"class {cls.name}({', '.join(args)})" if args else f"class {cls.name}"


def summary_line(docstring: str | None) -> str | None:
    """The first paragraph of a docstring, joined onto one line."""
    if not docstring:
        return None
    paragraph = docstring.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def function_kind(fn: Function) -> str:
    if fn.is_property:
        return "property"
    if fn.is_classmethod:
        return "classmethod"
    if fn.is_staticmethod:
        return "staticmethod"
    return "method" if fn.is_method else "function"
