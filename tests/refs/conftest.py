from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.pinview import PinView

from .fakes import sglang_view, vllm_view


@pytest.fixture
def vllm30(tmp_path: Path) -> PinView:
    return vllm_view(tmp_path, "0.30.0")


@pytest.fixture
def vllm33(tmp_path: Path) -> PinView:
    return vllm_view(tmp_path, "0.33.0")


@pytest.fixture
def sglang20(tmp_path: Path) -> PinView:
    return sglang_view(tmp_path, "0.5.20")


@pytest.fixture
def sglang23(tmp_path: Path) -> PinView:
    return sglang_view(tmp_path, "0.5.23")
