"""What every `atlas` command shares: exit codes, the error format, the settings.

Exit codes, the same for every command (the engine's too):
  0  success (and, for checks, nothing broken)
  1  the command ran and found problems: broken references, a failed verify,
     no path between two symbols
  2  the command could not run: bad input, a missing pin, an unreadable file

The codes and the error line are defined once, in `reference_engine/exit_codes.py`: the
engine must not import `analyzer/`, so it owns the rule and the analyzer's commands take it
from there (as `settings.py` takes the cache folder).
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from analyzer.settings import Settings
from reference_engine.exit_codes import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, fail, print_error

__all__ = [
    "EXIT_ERROR",
    "EXIT_FINDINGS",
    "EXIT_OK",
    "fail",
    "print_error",
    "settings_of",
    "stdout_console",
]


def settings_of(ctx: typer.Context) -> Settings:
    """The run's settings, set by the root callback in `analyzer.cli`."""
    settings = ctx.find_root().obj
    if isinstance(settings, Settings):
        return settings
    from analyzer.settings import default_cache_dir  # invoked without the root callback (tests)

    return Settings(cache_dir=default_cache_dir())


def stdout_console() -> Console:
    """Where a command prints its result. Piped or captured output (`| grep`, `> file`, a
    test's runner) is not wrapped at rich's 80-column default: a flag's other spellings or a
    long dotted name cut over three lines is what a reader then greps for in vain."""
    return Console() if sys.stdout.isatty() else Console(width=200)
