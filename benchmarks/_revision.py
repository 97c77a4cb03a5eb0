"""The analyzer as of another git revision, for a benchmark's same-run baseline
(`--baseline REV`, `--against REV`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def unpack_analyzer(rev: str, into: Path | str) -> None:
    """Write `analyzer/` as of git revision `rev` (a commit or branch of this
    repository) under `into`: a child process run with PYTHONPATH=into imports
    that analyzer instead of this tree's."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "analyzer"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
