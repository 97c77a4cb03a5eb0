"""The few builtins and str/list/dict/set methods the parser interpreter evaluates on literals.

Each takes the `Opaque` to return when the operation can't be done statically.
"""

from __future__ import annotations

from typing import Any

from analyzer.flags.values import FieldKwargs, Opaque, is_known


def is_known_text(value: Any) -> bool:
    return isinstance(value, list | tuple | set | str) and all(is_known(v) for v in value)


def builtin_call(name: str, args: list[Any], opaque: Opaque) -> Any:
    if not args:
        return {"list": [], "dict": {}, "set": set(), "tuple": ()}.get(name, opaque)
    value = args[0]
    if not isinstance(value, list | tuple | set | dict | str):
        return opaque
    try:
        if name == "list":
            return list(value)
        if name == "tuple":
            return tuple(value)
        if name == "set" and all(is_known(v) for v in value):
            return set(value)
        if name == "sorted" and all(is_known(v) for v in value):
            return sorted(value)
        if name == "len":
            return len(value)
        if name == "dict" and isinstance(value, dict):
            return dict(value)
    except TypeError:
        return opaque
    return opaque


def dict_method(obj: dict[Any, Any], name: str, args: list[Any], opaque: Opaque) -> Any:
    if name == "items":
        return [(k, v) for k, v in obj.items()]
    if name == "keys":
        return list(obj)
    if name == "values":
        return list(obj.values())
    if name in {"pop", "get"} and args and is_known(args[0]):
        default = args[1] if len(args) > 1 else None
        return obj.pop(args[0], default) if name == "pop" else obj.get(args[0], default)
    if name == "setdefault" and args and is_known(args[0]):
        return obj.setdefault(args[0], args[1] if len(args) > 1 else None)
    if name == "update" and args and isinstance(args[0], dict):
        obj.update(args[0])
        return None
    if name == "copy":
        return FieldKwargs(obj, field_info=obj.field_info) if isinstance(obj, FieldKwargs) else dict(obj)
    return opaque


def list_method(obj: list[Any], name: str, args: list[Any], opaque: Opaque) -> Any:
    if name == "append" and len(args) == 1:
        obj.append(args[0])
        return None
    if name == "extend" and args and isinstance(args[0], list | tuple | set):
        obj.extend(args[0])
        return None
    if name == "copy":
        return list(obj)
    return opaque


def set_method(obj: set[Any], name: str, args: list[Any], opaque: Opaque) -> Any:
    if name == "add" and len(args) == 1 and is_known(args[0]):
        obj.add(args[0])
        return None
    if name == "update" and args and isinstance(args[0], list | tuple | set):
        obj.update(args[0])
        return None
    return opaque


_STR_METHODS = {"lower", "upper", "strip", "lstrip", "rstrip", "title", "replace", "removeprefix",
                "removesuffix", "startswith", "endswith", "split"}


def str_method(obj: str, name: str, args: list[Any], opaque: Opaque) -> Any:
    if name == "join" and args and isinstance(args[0], list | tuple) and all(isinstance(a, str) for a in args[0]):
        return obj.join(args[0])
    if name in _STR_METHODS and all(isinstance(a, str | int) for a in args):
        return getattr(obj, name)(*args)
    return opaque
