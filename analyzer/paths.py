"""Where the toolkit's own files are: the one place that reads `__file__`.

From a source checkout the data folders (`snapshots/`, `mappings/`,
`examples/`) sit beside `analyzer/`; a wheel ships copies under
`analyzer/_bundled/` (see setup.py). `reference_engine/` is a package beside
`analyzer/` either way, read as files and never imported by the analyzer.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent  # analyzer/
REPO_ROOT = PACKAGE_DIR.parent  # the source checkout (or site-packages in a wheel install)


def reference_root() -> Path:
    """The `reference_engine/` package beside `analyzer/`."""
    return REPO_ROOT / "reference_engine"


def bundled_dir(name: str) -> Path:
    """A data folder of the toolkit (`snapshots`, `mappings`, `examples`): the
    copy a wheel ships under `analyzer/_bundled/`, else the source checkout's."""
    shipped = PACKAGE_DIR / "_bundled" / name
    return shipped if shipped.is_dir() else REPO_ROOT / name


def sample_book() -> Path:
    """The sample book project (`examples/book`: its manuscript and atlas.toml), which
    `atlas demo` checks and whose pins are the walkthrough's default columns."""
    return bundled_dir("examples") / "book"


def is_source_checkout() -> bool:
    """True when running from a clone (not an installed wheel)."""
    return (REPO_ROOT / "pyproject.toml").is_file()
