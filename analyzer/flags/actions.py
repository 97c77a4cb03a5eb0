"""Custom `argparse.Action` subclasses, constructed statically.

argparse turns `add_argument(*names, action=X, **kw)` into
`cls(option_strings=names, dest=dest, **kw)` where `cls` is the parser's
registry entry for `X` (`parser.register("action", X, Custom)` redirects it),
else `X` itself. When `cls` is a class of the tree, its `__init__` is run by the
interpreter with an `ActionV` as `self`; its `super().__init__` reaches
argparse's own constructors, modelled here on the standard library's
semantics. What the constructor leaves in `self.option_strings`, `self.default`,
`self.nargs`, ... is what the parser registers. A base the model does not know
is reported, not guessed.
"""

from __future__ import annotations

from typing import Any

from analyzer.flags.values import ActionV, ClassV, Opaque

# argparse's action classes, by the string names `add_argument(action=...)` accepts too.
STDLIB_ACTIONS = {
    "Action": "store", "_StoreAction": "store", "_StoreConstAction": "store_const",
    "_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false", "_AppendAction": "append",
    "_AppendConstAction": "append_const", "_CountAction": "count", "_ExtendAction": "extend",
    "BooleanOptionalAction": "BooleanOptionalAction",
}
# Positional parameters of each constructor after (option_strings, dest), as in CPython 3.12.
_SIGNATURES = {
    "store": ("nargs", "const", "default", "type", "choices", "required", "help", "metavar"),
    "store_const": ("const", "default", "required", "help", "metavar"),
    "store_true": ("default", "required", "help"),
    "store_false": ("default", "required", "help"),
    "append": ("nargs", "const", "default", "type", "choices", "required", "help", "metavar"),
    "append_const": ("const", "default", "required", "help", "metavar"),
    "count": ("default", "required", "help"),
    "extend": ("nargs", "const", "default", "type", "choices", "required", "help", "metavar"),
    "BooleanOptionalAction": ("default", "type", "choices", "required", "help", "metavar"),
}
_FIELDS = ("nargs", "const", "default", "type", "choices", "required", "help", "metavar", "deprecated")


def registry_key(value: Any) -> str | None:
    """How `register("action", key, ...)` and `action=` name the same thing: a string as is,
    a class by its last name (`argparse.BooleanOptionalAction` and an imported
    `BooleanOptionalAction` are the same object)."""
    if isinstance(value, str):
        return value
    if isinstance(value, ClassV):
        return value.key
    if isinstance(value, Opaque):
        return value.src.rsplit(".", 1)[-1]
    return None


def stdlib_base(value: Any) -> str | None:
    """The argparse action an opaque base class expression names, if any."""
    if isinstance(value, Opaque):
        return STDLIB_ACTIONS.get(value.src.rsplit(".", 1)[-1])
    return None


def stdlib_init(action: ActionV, args: list[Any], kwargs: dict[str, Any]) -> None:
    """argparse's constructor for `action.base`: store what it stores, derive what it derives."""
    names = ("option_strings", "dest", *_SIGNATURES.get(action.base, _SIGNATURES["store"]))
    bound = dict(zip(names, args, strict=False))
    bound.update(kwargs)
    option_strings = bound.get("option_strings")
    strings = list(option_strings) if isinstance(option_strings, list | tuple) else option_strings
    if action.base == "BooleanOptionalAction" and isinstance(strings, list):
        # `--no-X` right after each `--X`; short options get no negative form.
        expanded: list[Any] = []
        for opt in strings:
            expanded.append(opt)
            if isinstance(opt, str) and opt.startswith("--"):
                expanded.append("--no-" + opt[2:])
        strings = expanded
        bound["nargs"] = 0
    if action.base in ("store_true", "store_false"):
        bound.setdefault("default", action.base == "store_false")
        bound["const"], bound["nargs"] = action.base == "store_true", 0
    elif action.base in ("store_const", "append_const", "count"):
        bound["nargs"] = 0
    action.attrs["option_strings"] = strings
    action.attrs["dest"] = bound.get("dest")
    for name in _FIELDS:
        action.attrs.setdefault(name, bound.get(name, False if name in ("required", "deprecated") else None))
        if name in bound:
            action.attrs[name] = bound[name]


def as_kwargs(action: ActionV) -> dict[str, Any]:
    """The constructed action as `add_argument` keyword arguments for `build_flag`."""
    out = {name: action.attrs[name] for name in _FIELDS if action.attrs.get(name) is not None}
    out["action"] = action.cls
    if isinstance(action.attrs.get("dest"), str):
        out["dest"] = action.attrs["dest"]
    return out
