"""What every `atlas` command shares: exit codes, the error format, the settings.

Exit codes, the same for every command:
  0  success (and, for checks, nothing broken)
  1  the command ran and found problems: broken references, a failed verify,
     no path between two symbols
  2  the command could not run: bad input, a missing pin, an unreadable file
"""

from __future__ import annotations

import typer
from rich.console import Console

from analyzer.settings import Settings

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


def print_error(message: str) -> None:
    """`error: <message>` on stderr; the message is printed as is (paths and refs
    may hold [brackets] that rich would read as markup)."""
    console = Console(stderr=True, soft_wrap=True)
    console.print("[bold red]error:[/]", end=" ")
    console.print(message, markup=False, highlight=False)


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    """Print `message` as an error and return the exit to raise:
    `raise fail("...") from None`."""
    print_error(message)
    return typer.Exit(code)


def settings_of(ctx: typer.Context) -> Settings:
    """The run's settings, set by the root callback in `analyzer.cli`."""
    settings = ctx.find_root().obj
    if isinstance(settings, Settings):
        return settings
    from analyzer.settings import default_cache_dir  # invoked without the root callback (tests)

    return Settings(cache_dir=default_cache_dir())
