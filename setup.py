"""Ships the toolkit's data folders inside the wheel.

`snapshots/` (lock files) and `mappings/` (concept catalogue) sit at the repository
root, outside any package; `build_py` copies them to `analyzer/_bundled/`, where
`analyzer.paths.bundled_dir` looks first. Editable installs and source
checkouts read the root folders directly. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_FOLDERS = {"snapshots": ("*.toml", "*.md"), "mappings": ("*.toml", "*.md")}


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).resolve().parent
        for folder, patterns in DATA_FOLDERS.items():
            dest = Path(self.build_lib) / "analyzer" / "_bundled" / folder
            dest.mkdir(parents=True, exist_ok=True)
            for pattern in patterns:
                for path in sorted((root / folder).glob(pattern)):
                    shutil.copy2(path, dest / path.name)


setup(cmdclass={"build_py": BuildPyWithData})
