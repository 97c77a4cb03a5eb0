"""`python -m reference_engine.server [options]`: the same as `atlas engine serve [options]`."""

from __future__ import annotations

import sys

from analyzer.cli import app


def main() -> None:
    app(["engine", "serve", *sys.argv[1:]], prog_name="atlas")


if __name__ == "__main__":
    main()
