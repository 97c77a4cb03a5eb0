"""A regular install works with a book project: `pip install .` (not editable: the wheel
built from a copy of the source, then installed) into a fresh venv (no network: dependencies come from this venv's
site-packages through a .pth line), then the book workflow there against a local
synthetic release, from a folder outside the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from snapshot_builders import build_wheel

REPO = Path(__file__).resolve().parents[2]


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def _source_copy(dest: Path) -> Path:
    """The files git would ship (tracked and new, not ignored), without build leftovers."""
    listed = _run(["git", "ls-files", "-co", "--exclude-standard", "-z"], REPO)
    assert listed.returncode == 0, listed.stderr
    for rel in filter(None, listed.stdout.split("\0")):
        source = REPO / rel
        if source.is_file() and not source.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


@pytest.mark.slow
def test_a_regular_install_runs_the_book_workflow_in_a_fresh_venv(tmp_path: Path) -> None:
    source = _source_copy(tmp_path / "src")
    # What `pip install .` does, in its two steps: build the wheel from the source folder
    # (with this venv's setuptools: no build isolation, so no network), then install it.
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), "."],
        source,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("serving_atlas-*.whl")

    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path).returncode == 0
    python = venv / "bin" / "python"
    installed = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        tmp_path,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path)
    # Dependencies (typer, libcst, ...) from this venv; its editable finder is not loaded
    # from a plain path line, so `analyzer` can only come from the installed wheel.
    Path(purelib.stdout.strip(), "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    index = tmp_path / "index"
    index.mkdir()
    for version, module in (("1.0", "core"), ("1.1", "engine")):
        files = {"demo/__init__.py": "", f"demo/{module}.py": "def run() -> int:\n    return 1\n"}
        build_wheel(index / f"demo-{version}-py3-none-any.whl", files, version=version)
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    (book / "chapters" / "ch1.md").write_text("The loop: `demo/core.py` and `demo.core.run`.\n")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ATLAS_LOCK_DIR", "ATLAS_MAPPINGS_DIR")}
    env["ATLAS_CACHE_DIR"] = str(tmp_path / "cache")
    atlas = str(venv / "bin" / "atlas")

    where = _run([str(python), "-c", "import analyzer; print(analyzer.__file__)"], book, env)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr

    def atlas_ok(*args: str, code: int = 0) -> str:
        """stdout (where --json goes) of a run that must end with `code`."""
        done = _run([atlas, *args], book, env)
        assert done.returncode == code, f"atlas {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    # The toolkit's own locks, mappings (the book's contents in mappings/book/ too) and
    # sample book travel inside the package.
    listed = json.loads(atlas_ok("snapshot", "list", "--json"))
    assert {"vllm@0.30.0", "sglang@0.5.20"} <= {row["name"] for row in listed}
    assert "scheduler" in atlas_ok("map", "list")
    assert "request-lifecycle" in atlas_ok("map", "list", "--chapters", "--json")
    # Outside any book, the walkthrough's columns are the sample book's pins, read from the
    # copy of examples/book/atlas.toml that was installed.
    code = "from analyzer.report.run import default_columns; print(default_columns()[0])"
    columns = _run([str(python), "-c", code], tmp_path, env)
    assert columns.stdout.strip() == "['vllm@0.30.0', 'sglang@0.5.20']", columns.stdout + columns.stderr

    atlas_ok("init", "--pin", "demo@1.0")
    assert (book / "atlas.toml").is_file()
    atlas_ok("snapshot", "lock", "demo@1.0", "demo@1.1", "--find-links", str(index), "--no-index")
    assert "1.1" in (book / "locks" / "demo.toml").read_text()
    findings = json.loads(atlas_ok("check", "--json"))  # the manuscript and pins atlas.toml names
    assert findings
    atlas_ok("check", "--pin", "demo@1.1", "--json", code=1)  # demo/core.py went away
