"""`--fix`: apply high-confidence replacements to the Markdown, diff first, atomic writes."""

from __future__ import annotations

import difflib
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from analyzer.refs.models import Finding


@dataclass(frozen=True, slots=True)
class FileFix:
    path: Path
    display: str
    old: str
    new: str
    applied: int  # replacements made
    skipped: list[str]  # why some could not be applied (the line changed, ...)
    done: frozenset[tuple[int, int]] = frozenset()  # (line, col) of each applied replacement

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{self.display}",
                tofile=f"b/{self.display}",
            )
        )


def new_text(finding: Finding) -> str | None:
    """The replacement for `finding.ref.text`, keeping what surrounds the target
    (`()` after a symbol, `:12` after a path)."""
    best = finding.best
    if best is None:
        return None
    ref = finding.ref
    if best.replacement.startswith(("http://", "https://")) or ref.text == ref.target:
        return best.replacement
    if ref.target in ref.text:
        return ref.text.replace(ref.target, best.replacement, 1)
    return None  # `LLM` imported from a module that moved: the import line needs a human


def plan_fixes(findings: list[Finding], files: dict[str, Path]) -> list[FileFix]:
    """Edits per file; `files` maps a finding's display name to its path on disk."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_file[f.ref.file].append(f)
    fixes: list[FileFix] = []
    for display, items in sorted(by_file.items()):
        path = files[display]
        if path.suffix.lower() == ".ipynb":
            # Findings point into the notebook's Markdown rendering, not its JSON: edit by hand.
            fixes.append(FileFix(path, display, "", "", 0, [f"{display}: notebooks are not rewritten ({len(items)} suggestion(s))"]))
            continue
        old = path.read_bytes().decode("utf-8")  # keep CRLF line endings as they are
        lines = old.splitlines(keepends=True)
        skipped: list[str] = []
        done: set[tuple[int, int]] = set()
        # Right to left within a line, so earlier columns stay valid.
        for f in sorted(items, key=lambda x: (x.ref.line, -x.ref.col)):
            ref = f.ref
            replacement = new_text(f)
            idx = ref.line - 1
            if replacement is None or not 0 <= idx < len(lines):
                skipped.append(f"{display}:{ref.line}: {ref.text} (no textual replacement)")
                continue
            line = lines[idx]
            written = ref.escaped or ref.text  # (a replacement is written plain: it renders the same)
            if line[ref.col : ref.col + len(written)] != written:
                skipped.append(f"{display}:{ref.line}: {ref.text} (text not found at column {ref.col})")
                continue
            lines[idx] = line[: ref.col] + replacement + line[ref.col + len(written) :]
            done.add((ref.line, ref.col))
        fixes.append(FileFix(path, display, old, "".join(lines), len(done), skipped, frozenset(done)))
    return fixes


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and `os.replace`, so a killed
    process leaves either the old chapter or the new one, never half of either."""
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
