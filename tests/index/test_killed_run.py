"""A run killed with SIGKILL leaves a usable database holding what it finished."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from analyzer.index import index_tree
from analyzer.index.extract import extract_file

from .fixtures import SCHED

REPO = Path(__file__).resolve().parents[2]
FILES = 24


def _rows(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=1)
        try:
            return con.execute("SELECT count(*) FROM facts").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:  # table not created yet
        return 0


def test_sigkill_midway_keeps_finished_work(tmp_path: Path) -> None:
    root = tmp_path / "src"
    (root / "pkg").mkdir(parents=True)
    for i in range(FILES):  # distinct contents, big enough that the run takes a while
        (root / "pkg" / f"m{i}.py").write_text(f"# file {i}\n" + SCHED * 3)
    db = tmp_path / "db.sqlite"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        import analyzer.index.runner as runner
        runner._COMMIT_EVERY = 0.0  # commit after every result so a kill lands between commits
        runner._BATCH_BYTES = 1  # one file per task
        runner.index_tree(Path({str(root)!r}), db=Path({str(db)!r}), jobs=1)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    deadline = time.monotonic() + 120
    try:
        while _rows(db) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    done = _rows(db)
    assert 3 <= done < FILES, f"the run should have been killed midway, had {done} rows"

    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()
    index = index_tree(root, db=db, jobs=1)
    assert index.stats.cache_hits >= done and index.stats.extracted == FILES - index.stats.cache_hits
    assert len(index.modules) == FILES and not index.errors
    for name in ("pkg/m0.py", f"pkg/m{FILES - 1}.py"):  # finished before and after the kill
        assert index.modules[name] == extract_file((root / name).read_bytes(), name)
