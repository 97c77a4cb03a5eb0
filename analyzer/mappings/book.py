"""The book's table of contents and which concepts cover each chapter.

`mappings/book/contents.toml` lists the parts and their chapters in order; each concept's
`chapters = [...]` names the chapters it serves. `chapter_table` joins the two so an author
sees at a glance which chapters have a walkthrough, on which sides, and which have none;
a concept naming a chapter the contents do not have is reported (a typo or a renamed
chapter), never silently dropped.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.mappings.models import ConceptMapping, MappingError

CONTENTS = Path("book") / "contents.toml"


@dataclass(frozen=True, slots=True)
class Part:
    title: str
    chapters: tuple[str, ...]


@dataclass(slots=True)
class ChapterTable:
    """Built by `chapter_table`, owned by the caller."""

    parts: list[Part]
    concepts: dict[str, list[ConceptMapping]] = field(default_factory=dict)  # chapter -> concepts
    unknown: dict[str, list[str]] = field(default_factory=dict)  # chapter not in contents -> ids

    @property
    def uncovered(self) -> list[str]:
        return [ch for p in self.parts for ch in p.chapters if not self.concepts.get(ch)]


def load_contents(mappings_dir: Path) -> list[Part]:
    path = mappings_dir / CONTENTS
    if not path.is_file():
        raise MappingError([f"{path}: no table of contents (book/contents.toml in the mappings folder)"])
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MappingError([f"{path}: {exc}"]) from None
    parts: list[Part] = []
    problems: list[str] = []
    for i, raw in enumerate(data.get("parts", [])):
        title, chapters = raw.get("title"), raw.get("chapters")
        if not isinstance(title, str) or not isinstance(chapters, list) or not all(
            isinstance(c, str) for c in chapters
        ):
            problems.append(f"{path.name}: parts[{i}] needs a title and a list of chapter titles")
            continue
        parts.append(Part(title, tuple(chapters)))
    if not parts and not problems:
        problems.append(f"{path.name}: no [[parts]]")
    if problems:
        raise MappingError(problems)
    return parts


def chapter_table(parts: list[Part], concepts: list[ConceptMapping]) -> ChapterTable:
    table = ChapterTable(parts)
    known = {ch for p in parts for ch in p.chapters}
    for c in concepts:
        for ch in c.chapters:
            if ch in known:
                table.concepts.setdefault(ch, []).append(c)
            else:
                table.unknown.setdefault(ch, []).append(c.id)
    return table
