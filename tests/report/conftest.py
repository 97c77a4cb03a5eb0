from __future__ import annotations

from pathlib import Path

import pytest
from fixture_site import fixture_mappings, fixture_sides

from analyzer.mappings import ConceptMapping, load_mappings
from analyzer.pinned import PinnedTree
from analyzer.settings import Settings


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[ConceptMapping], dict[str, PinnedTree | None], Path]:
    """Concepts and sides of the fixture world (indexed and graphed once per module)."""
    root = tmp_path_factory.mktemp("report-world")
    settings = Settings(cache_dir=root / "cache")
    return load_mappings(fixture_mappings(root)), fixture_sides(root, settings), root
