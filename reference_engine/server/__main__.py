"""`python -m reference_engine.server [options]`: the same as `atlas engine serve [options]`."""

from __future__ import annotations

import sys

from reference_engine.commands import engine_app


def main() -> None:
    engine_app(["serve", *sys.argv[1:]], prog_name="python -m reference_engine.server")


if __name__ == "__main__":
    main()
