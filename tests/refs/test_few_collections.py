"""`few_collections`: the cycle collector's thresholds raised for a check, restored after it."""

from __future__ import annotations

import gc

import pytest

from analyzer.refs.pinview import _last_word
from analyzer.refs.run import few_collections


def test_the_thresholds_are_raised_inside_and_restored_after_even_on_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), few_collections():
        inside = gc.get_threshold()
        raise RuntimeError("a check that fails half-way")
    assert inside[0] > before[0]
    assert gc.get_threshold() == before
    assert gc.isenabled()


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("DecodeCudaGraphRunner", "runner"),
        ("CudaGraphRunner2", "runner2"),
        ("LLMEngine", "engine"),
        ("ABC", "c"),
        ("get_tp_group", "group"),
        ("TP_GROUP", "p"),  # an upper-case word ends in its last capital (as the regex this replaced)
        ("get_tp_", "get_tp_"),  # no word at the end: the whole name
        ("", ""),
    ],
)
def test_the_last_camel_case_word(name: str, word: str) -> None:
    assert _last_word(name) == word
