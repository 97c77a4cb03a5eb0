"""Compact builders for hand-written index facts (what the indexer would emit)."""

from __future__ import annotations

from analyzer.index.models import (
    Assignment,
    AttributeAccess,
    CallSite,
    Class,
    Function,
    Import,
    ModuleFacts,
    Param,
)

M = "<module>"


def param(text: str) -> Param:
    """`name: Ann = default` (annotation and default optional)."""
    text, _, default = text.partition(" = ")
    name, _, ann = text.partition(":")
    return Param(name.strip(), "positional", ann.strip() or None, default.strip() or None)


def fn(qualname: str, *params: str, returns: str | None = None, line: int = 1, **flags: object) -> Function:
    return Function(
        qualname=qualname,
        name=qualname.rpartition(".")[2],
        line=line,
        end_line=line + 5,
        is_method=bool(flags.pop("method", False)),
        params=[param(p) for p in params],
        returns=returns,
        decorators=list(flags.pop("decorators", [])),  # type: ignore[call-overload]
        is_property=bool(flags.pop("prop", False)),
        is_classmethod=bool(flags.pop("classmethod", False)),
        is_staticmethod=bool(flags.pop("staticmethod", False)),
    )


def meth(qualname: str, *params: str, **kw: object) -> Function:
    first = () if kw.get("staticmethod") else ("cls",) if kw.get("classmethod") else ("self",)
    return fn(qualname, *first, *params, method=True, **kw)  # type: ignore[arg-type]


def asg(target: str, scope: str, value: str | None = None, annotation: str | None = None, line: int = 1) -> Assignment:
    return Assignment(target=target, line=line, scope=scope, value=value, annotation=annotation)


def cls(
    qualname: str,
    *bases: str,
    fields: list[Assignment] | None = None,
    class_attrs: list[Assignment] | None = None,
    inst: list[Assignment] | None = None,
    line: int = 1,
) -> Class:
    return Class(
        qualname=qualname,
        name=qualname.rpartition(".")[2],
        line=line,
        end_line=line + 50,
        bases=list(bases),
        fields=fields or [],
        class_attributes=class_attrs or [],
        instance_attributes=inst or [],
    )


def call(callee: str, scope: str, line: int = 1, *args: str) -> CallSite:
    return CallSite(callee=callee, line=line, col=0, scope=scope, args=list(args))


def imp(
    module: str,
    name: str | None = None,
    asname: str | None = None,
    level: int = 0,
    scope: str = M,
    type_checking: bool = False,
) -> Import:
    return Import(module, name, asname, level, 1, scope, type_checking)


def acc(base: str, attr: str, kind: str, scope: str, line: int = 1, method: str | None = None) -> AttributeAccess:
    return AttributeAccess(base=base, attr=attr, kind=kind, line=line, scope=scope, method=method)


def module(path: str, **kw: object) -> ModuleFacts:
    name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return ModuleFacts(path=path, module=name, sha256="0" * 64, lines=100, **kw)  # type: ignore[arg-type]
