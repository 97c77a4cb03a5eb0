"""What every `atlas` command shares, the engine's and the analyzer's: exit codes and
the error format.

Exit codes:
  0  success (and, for checks, nothing broken)
  1  the command ran and found problems: a failed verify, broken references, a module
     where the engine and transformers diverge, a load test where no request completed
  2  the command could not run: bad input (a malformed flag, a bad setting, a missing or
     unreadable model folder or file), a server that cannot be reached

The engine stands alone (it never imports `analyzer/`), so it owns the rule and
`analyzer/commandline.py` takes it from here, as `analyzer/settings.py` takes the cache
folder from `cache_dir.py`. Usage errors that click finds before a command runs (an
unknown flag, `--max-tokens abc`, a value under a flag's minimum, a missing argument) exit 2
with the same one line, through `OneLineErrors`, the group class of both command trees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer
from rich.console import Console
from typer.core import TyperGroup

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2

T = TypeVar("T")


def print_error(message: str) -> None:
    """`error: <message>` on stderr; the message is printed as is (paths and settings may
    hold [brackets] that rich would read as markup)."""
    console = Console(stderr=True, soft_wrap=True)
    console.print("[bold red]error:[/]", end=" ")
    console.print(message, markup=False, highlight=False)


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    """Print `message` as an error and return the exit to raise:
    `raise fail("...") from None`."""
    print_error(message)
    return typer.Exit(code)


def guard(action: Callable[[], T]) -> T:
    """Run an engine command's body; a user's mistake (bad folder, bad setting, a prompt
    longer than the model, an unreadable file) becomes one `error:` line and exit 2
    instead of a traceback. Anything else is a bug and keeps its traceback."""
    from reference_engine.config import ConfigError
    from reference_engine.engine import RequestError

    try:
        return action()
    except (ConfigError, RequestError, ValueError, OSError) as exc:
        raise fail(str(exc)) from None


def _is_usage_error(exc: Exception) -> bool:
    """click's errors about the command line (bad value, unknown flag, missing argument),
    told by class name: typer ships its own copy of click in some versions, plain click in
    others. `NoArgsIsHelpError` is the help a bare group prints, not an error."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return "ClickException" in names and "NoArgsIsHelpError" not in names


@contextmanager
def _usage_errors_as_one_line() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        if not _is_usage_error(exc):
            raise
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        raise fail(f"{exc.format_message()}{hint}") from None  # type: ignore[attr-defined]


class OneLineErrors(TyperGroup):
    """A command group whose usage errors print as the one `error:` line every command
    uses, exit 2, instead of click's boxed panel. Subcommands' errors pass through here."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        with _usage_errors_as_one_line():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        with _usage_errors_as_one_line():
            return super().invoke(ctx)
