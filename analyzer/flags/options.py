"""Turn one evaluated `add_argument(...)` into a `Flag`, applying argparse's own rules."""

from __future__ import annotations

from typing import Any

from analyzer.flags.models import Flag, Positional
from analyzer.flags.render import render
from analyzer.flags.values import Builtin, ClassV, FuncV, is_known


def build_flag(names: list[str], kwargs: dict[str, Any], *, group: str | None, defined_at: str,
               registered_at: str, field_at: str | None, condition: str | None,
               negatives: list[str] | None = None) -> Flag:
    """`negatives`: given when a custom action's constructor already derived the option
    strings (`names` then holds all of them) and which of them switch the flag off."""
    action = action_name(kwargs.get("action"))
    aliases = list(names)
    if negatives is not None:
        negatives = list(negatives)
    elif action == "BooleanOptionalAction":
        negatives = []
        # argparse adds `--no-X` right after each `--X` (short options get no negative form).
        aliases = []
        for opt in names:
            aliases.append(opt)
            if opt.startswith("--"):
                negatives.append("--no-" + opt[2:])
                aliases.append(negatives[-1])
    else:
        negatives = []
    # argparse's dest: explicit, else the first long option, else the first one; dashes -> underscores.
    primary = next((n for n in names if n.startswith("--")), names[0])
    dest = kwargs.get("dest")
    if not isinstance(dest, str):
        dest = primary.lstrip("-").replace("-", "_")
    return Flag(
        flag=primary, aliases=aliases, dest=dest, defined_at=defined_at,
        default=render(kwargs["default"]) if "default" in kwargs else implicit_default(action),
        help=text(kwargs.get("help")), type=callable_name(kwargs.get("type")), action=action,
        choices=choices(kwargs.get("choices")), group=group, nargs=plain(kwargs.get("nargs")),
        const=render(kwargs["const"]) if "const" in kwargs else None,
        metavar=text(kwargs.get("metavar")),
        required=kwargs.get("required") is True, deprecated=kwargs.get("deprecated") is True,
        negative_aliases=negatives, condition=condition, registered_at=registered_at, field_at=field_at,
    )


def build_positional(name: str, kwargs: dict[str, Any], defined_at: str) -> Positional:
    return Positional(name, defined_at, plain(kwargs.get("nargs")), text(kwargs.get("help")))


def action_name(action: Any) -> str | None:
    if action is None:
        return None
    if isinstance(action, str):
        return action
    if isinstance(action, ClassV | FuncV):
        return action.sym.name
    rendered = render(action)
    return rendered.rsplit(".", 1)[-1] if "BooleanOptionalAction" in rendered else rendered


def implicit_default(action: str | None) -> str | None:
    # argparse's own defaults for these actions when none is passed.
    if action == "store_true":
        return "False"
    if action == "store_false":
        return "True"
    return "None"


def callable_name(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Builtin):
        return value.name
    if isinstance(value, FuncV | ClassV):
        return value.sym.name
    return render(value)


def text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else render(value)


def plain(value: Any) -> Any:
    if value is None or isinstance(value, str | int):
        return value
    return render(value)


def choices(value: Any) -> list[Any] | str | None:
    if value is None:
        return None
    if isinstance(value, set | frozenset):
        return sorted(value, key=str) if all(is_known(v) for v in value) else render(value)
    if isinstance(value, list | tuple) and all(is_known(v) for v in value):
        return list(value)
    return render(value)
