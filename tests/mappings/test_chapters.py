"""The book's contents joined with the concepts' `chapters`: `atlas map list --chapters`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.mappings import MappingError, load_mappings
from analyzer.mappings.book import CONTENTS, chapter_table, load_contents
from analyzer.mappings.load import default_mappings_dir


def test_committed_concepts_name_only_chapters_of_the_book() -> None:
    root = default_mappings_dir()
    parts = load_contents(root)
    assert parts[0].title == "The big picture" and parts[-1].title == "Production and ecosystem"
    table = chapter_table(parts, load_mappings(root))
    assert table.unknown == {}, f"chapters not in the contents: {table.unknown}"
    covered = {ch: [c.id for c in cs] for ch, cs in table.concepts.items()}
    # The chapters this catalogue's tools were built for each have their concept.
    assert "profiling" in covered["Profiling"]
    assert "custom-all-reduce" in covered["NCCL and custom all-reduce"]
    assert "model-bringup" in covered["Bringing up new models and matching accuracy"]
    assert "ep-communication" in covered["NVSHMEM and DeepEP"]
    assert "paged-kv" in covered["Paged KV"]
    assert "capacity-planning" in covered["Load testing and capacity planning"]
    assert "ep-elasticity" in covered["EP fault tolerance and elasticity"]
    assert "two-batch-overlap" in covered["Large-scale EP deployment"]
    # The catalogue is complete: every chapter of the book has at least one concept.
    every = [ch for part in parts for ch in part.chapters]
    assert [ch for ch in every if not covered.get(ch)] == []


def test_list_chapters_shows_gaps_and_unknown_names(tmp_path: Path) -> None:
    root = default_mappings_dir()
    folder = tmp_path / "mappings"
    folder.mkdir()
    for name in ("paged-kv.toml", "prefix-cache.toml", "scheduler.toml"):
        shutil.copy(root / name, folder / name)
    text = (folder / "scheduler.toml").read_text()
    (folder / "scheduler.toml").write_text(
        text.replace('chapters = ["Scheduler"', 'chapters = ["Schedulerr"', 1)
    )
    (folder / "book").mkdir()
    (folder / CONTENTS).write_text(
        '[[parts]]\ntitle = "Engine"\nchapters = ["Paged KV", "Scheduler", "Prefix caching"]\n'
    )
    cli = CliRunner()
    result = cli.invoke(app, ["map", "list", "--chapters", "--mappings", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    chapters = {c["title"]: c["concepts"] for c in data["parts"][0]["chapters"]}
    assert [c["id"] for c in chapters["Paged KV"]] == ["paged-kv"]
    assert chapters["Paged KV"][0]["reference"] == "implemented"
    assert data["uncovered"] == ["Scheduler"]  # its only concept misspelled it
    assert data["unknown_chapters"]["Schedulerr"] == ["scheduler"]

    shown = cli.invoke(app, ["map", "list", "--chapters", "--mappings", str(folder)])
    assert shown.exit_code == 0 and "not in the book's contents" in shown.output

    (folder / CONTENTS).unlink()
    missing = cli.invoke(app, ["map", "list", "--chapters", "--mappings", str(folder)])
    assert missing.exit_code == 2 and "contents" in missing.output
    (folder / CONTENTS).write_text("[[parts]]\ntitle = 3\n")
    with pytest.raises(MappingError, match="needs a title"):
        load_contents(folder)
