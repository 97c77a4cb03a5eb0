"""A member gone from its class whose new name changed one end word (`ModelRunner.init_memory_pool`
-> `ModelRunner.alloc_memory_pool`): the one member of the class named so, of the same kind (a
method for a name the text calls, an attribute otherwise). Several such members, or a member of
another kind, are no lead."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView, SymbolEntry

_RUNNER = "sglang/srt/model_executor/model_runner.py"


def _view() -> PinView:
    cls = "sglang.srt.model_executor.model_runner.ModelRunner"
    symbols = [
        SymbolEntry(cls, _RUNNER, 10, 400, "class"),
        SymbolEntry(f"{cls}.alloc_memory_pool", _RUNNER, 50, 80, "function"),
        SymbolEntry(f"{cls}._unified_memory_pool", _RUNNER, 60, 60, "attribute"),  # another kind
        SymbolEntry(f"{cls}.init_cuda_graphs", _RUNNER, 90, 120, "function"),
        SymbolEntry(f"{cls}.capture_cuda_graphs", _RUNNER, 130, 150, "function"),
        SymbolEntry(f"{cls}.load_model_weights", _RUNNER, 160, 170, "function"),
        SymbolEntry(f"{cls}.load_model_config", _RUNNER, 180, 190, "function"),
    ]
    return PinView(
        pin="sglang@0.5.20", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset([_RUNNER]), symbols=symbols, flags=[], envs=[],
    )


def _best(doc: str) -> dict[str, tuple[str, float] | None]:
    out: dict[str, tuple[str, float] | None] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [_view()]):
        best = f.best
        out[f.ref.text] = (best.replacement, best.confidence) if best is not None else None
    return out


def test_the_one_member_with_one_end_word_changed_is_the_home() -> None:
    best = _best("In SGLang, `ModelRunner.init_memory_pool()` sizes the KV pool.\n")
    assert best["ModelRunner.init_memory_pool()"] == ("ModelRunner.alloc_memory_pool", 0.6)


def test_several_such_members_or_another_kind_are_no_lead() -> None:
    best = _best(
        "In SGLang, `ModelRunner.setup_cuda_graphs()` records graphs, `ModelRunner.load_model_files()` reads\n"
        "weights and `ModelRunner.init_memory_pool` holds the pool.\n"
    )
    # `init_cuda_graphs` and `capture_cuda_graphs` both differ from `setup_cuda_graphs` in one word.
    got = best["ModelRunner.setup_cuda_graphs()"]
    assert got is None or got[1] < 0.5
    # `load_model_weights`, `load_model_config`: two candidates again.
    assert best["ModelRunner.load_model_files()"] is None or best["ModelRunner.load_model_files()"][1] < 0.5
    # Not called: an attribute is meant, so the attribute with one end word changed is the lead,
    # not the method `alloc_memory_pool`.
    got = best["ModelRunner.init_memory_pool"]
    assert got is not None and got[0] == "ModelRunner._unified_memory_pool"
