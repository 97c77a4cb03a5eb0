"""Plain data for extracted command-line flags and environment variables."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(slots=True)
class Flag:
    """One argparse action of a server's parser (options only; positionals are separate).

    `defined_at` is where the option *name* comes from: the `add_argument` call
    when the name is spelled there, the config field when the name is derived
    from a field name (a loop over dataclass fields, SGLang's annotated fields).
    `registered_at` is always the `add_argument` call (or the generator call);
    `field_at` the config field whose metadata fed the kwargs, when there is one.
    """

    flag: str  # primary option string: the first long option, else the first given
    aliases: list[str]  # every option string the parser shows, negative forms included
    dest: str
    defined_at: str  # package-relative path:line
    default: str | None = None  # source text, or the literal it statically resolves to
    help: str | None = None  # the string when literal, else source text
    type: str | None = None
    action: str | None = None
    choices: list[Any] | str | None = None  # literal list, or source text when dynamic
    group: str | None = None
    nargs: str | int | None = None
    const: str | None = None
    metavar: str | None = None
    required: bool = False
    deprecated: bool = False
    negative_aliases: list[str] = field(default_factory=list)  # `--no-x` from BooleanOptionalAction
    # Accepted but hidden from help (a parser that drops them from the action after
    # registering it, as vLLM 0.33.0 does with `--no-enable-x` / `--no-disable-x`).
    hidden_aliases: list[str] = field(default_factory=list)
    negates: str | None = None  # the flag this `store_false` twin switches off (same dest)
    condition: str | None = None  # source text of an `if` the registration sits under
    registered_at: str | None = None
    field_at: str | None = None
    # Values a type checker's `Literal` lists where argparse takes any string (vLLM's
    # `QuantizationMethods`, bound to `str` at run time): the config checks the value against them.
    typed_values: list[Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Positional:
    name: str
    defined_at: str
    nargs: str | int | None = None
    help: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class EnvVar:
    name: str
    defined_at: str
    default: str | None = None  # source text (the literal default where one is given)
    kind: str | None = None  # EnvBool / EnvInt / ... for SGLang; None for vLLM
    deprecated_names: list[str] = field(default_factory=list)
    source: str = "registry"  # "registry" (the dict / Envs class) or "read" (a bare os.environ read)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class FlagReport:
    project: str
    flags: list[Flag]
    positionals: list[Positional]
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "flags": [f.to_dict() for f in self.flags],
            "positionals": [p.to_dict() for p in self.positionals],
            "warnings": list(self.warnings),
        }


@dataclass(slots=True)
class EnvReport:
    project: str
    envs: list[EnvVar]
    retired: list[EnvVar]  # read only to warn that they no longer do anything
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "envs": [e.to_dict() for e in self.envs],
            "retired": [e.to_dict() for e in self.retired],
            "warnings": list(self.warnings),
        }


class FlagsError(Exception):
    """Bad input (no such tree, unknown project); the message is shown to the user."""
