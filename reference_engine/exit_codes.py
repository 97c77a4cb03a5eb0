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
folder from `cache_dir.py`. Typer's own usage errors (an unknown flag, `--max-tokens abc`,
a value under a flag's minimum) exit 2 as well: click's convention, which this one follows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import typer
from rich.console import Console

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
