"""Jupyter notebooks as Markdown: SGLang writes much of its documentation as `.ipynb`.

Markdown cells are kept as they are; code cells become fenced blocks (`python`, or `bash`
for `%%bash` cells and `!command` lines), so the checker reads a notebook the way it reads
a chapter. Line numbers in findings count lines of this Markdown rendering (cells in order,
one blank line between them), not of the JSON file; `--fix` leaves notebooks alone.
"""

from __future__ import annotations

import json

from analyzer.refs.config import RefsError


def _source(cell: dict[str, object]) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        return "".join(str(part) for part in src)
    return str(src)


def notebook_markdown(text: str, name: str) -> str:
    """The notebook's cells as one Markdown document; RefsError when it is not a notebook."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RefsError(f"{name}: not a Jupyter notebook ({exc.msg} at line {exc.lineno})") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise RefsError(f"{name}: not a Jupyter notebook (no cells)")
    parts: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = _source(cell).rstrip("\n")
        if cell.get("cell_type") == "markdown":
            parts.append(source)
        elif cell.get("cell_type") == "code" and source.strip():
            lines = source.splitlines()
            if lines[0].startswith("%%bash") or lines[0].startswith("%%sh"):
                parts.append("```bash\n" + "\n".join(lines[1:]) + "\n```")
            elif all(line.startswith("!") or not line.strip() for line in lines):
                parts.append("```bash\n" + "\n".join(line[1:] for line in lines) + "\n```")
            else:
                parts.append("```python\n" + source + "\n```")
    return "\n\n".join(parts) + "\n"
