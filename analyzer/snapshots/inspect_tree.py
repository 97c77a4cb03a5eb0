"""Facts read statically from an extracted tree (never imported or executed)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from analyzer.snapshots.models import REPO_ONLY_TOP_DIRS

_SCM_COMMIT_RE = re.compile(r"g?([0-9a-f]{7,40})")


def detect_packages(package_root: Path) -> tuple[str, ...]:
    """Top-level import packages: `top_level.txt` of a wheel's dist-info when
    present, else folders holding an `__init__.py` (minus repository-only ones)."""
    for top_level in sorted(package_root.glob("*.dist-info/top_level.txt")):
        names = [n.strip() for n in top_level.read_text(encoding="utf-8", errors="replace").split()]
        found = tuple(sorted(n for n in names if n and (package_root / n).is_dir()))
        if found:
            return found
    skip = set(REPO_ONLY_TOP_DIRS)
    return tuple(
        sorted(
            d.name
            for d in package_root.iterdir()
            if d.is_dir()
            and d.name.isidentifier()
            and d.name not in skip
            and (d / "__init__.py").is_file()
        )
    )


def recorded_commit(package_root: Path, packages: tuple[str, ...]) -> str | None:
    """The commit setuptools-scm wrote into `<pkg>/_version.py` (`__commit_id__ =
    'g<hex>'`), read with `ast` only. None when absent or None in the file."""
    for package in packages:
        path = package_root / package / "_version.py"
        if not path.is_file():
            continue
        try:
            module = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for node in module.body:
            if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
                continue
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            value = node.value.value
            if names & {"__commit_id__", "commit_id"} and isinstance(value, str):
                match = _SCM_COMMIT_RE.fullmatch(value.strip())
                if match:
                    return match.group(1)
    return None
