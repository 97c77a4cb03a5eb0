"""Ships the toolkit's data folders inside the wheel.

`snapshots/` (lock files, the past releases' evidence `atlas check` ships), `mappings/` (concept catalogue, with the book's contents in
`mappings/book/`) and `examples/` (the sample book `atlas demo` checks, whose pins are
the walkthrough's default columns) sit at the repository root, outside any package;
`build_py` copies them, subfolders included, to `analyzer/_bundled/`, where
`analyzer.paths.bundled_dir` looks first. Editable installs and source checkouts read
the root folders directly. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_FOLDERS = {
    "snapshots": ("*.toml", "*.md", "*.json.gz"),
    "mappings": ("*.toml", "*.md"),
    "examples": ("*.toml", "*.md", "*.yml"),
}


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        for folder, patterns in DATA_FOLDERS.items():
            dest = Path(self.build_lib) / "analyzer" / "_bundled" / folder
            for pattern in patterns:
                for path in sorted((root / folder).rglob(pattern)):
                    target = dest / path.relative_to(root / folder)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target)


setup(cmdclass={"build_py": BuildPyWithData})
