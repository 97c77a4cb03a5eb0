from __future__ import annotations

import pytest
from resolve.conftest import engine_facts

from analyzer.graphs.store import Graphs, build_graphs
from analyzer.index.models import ModuleFacts


@pytest.fixture
def facts() -> list[ModuleFacts]:
    return engine_facts()


@pytest.fixture
def graphs(facts: list[ModuleFacts]) -> Graphs:
    return build_graphs(facts, "eng")[0]
