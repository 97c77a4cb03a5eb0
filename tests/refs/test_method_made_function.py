"""A method gone from its class that became a module-level function (issue 12 §3, the same name in
the nearest surviving package): `Batch.alloc_slots` is no longer `Batch`'s, and the one function
`alloc_slots` lives in a module that `Batch`'s own file imports from: that function is its home.
A same-named function in a module the class's file never uses is no lead."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

_BATCH = "vllm/v1/core/batch.py"
_ALLOC = "vllm/v1/core/allocation.py"
_OTHER = "vllm/tools/slots.py"


def _view(tmp_path: Path) -> PinView:
    sources = {
        _BATCH: "from vllm.v1.core.allocation import alloc_for_decode\n\n\nclass Batch:\n    def prepare(self): ...\n",
        _ALLOC: "def alloc_slots(batch, n): ...\n\n\ndef alloc_for_decode(batch): return alloc_slots(batch, 1)\n",
        _OTHER: "def free_slots(pool): ...\n",
    }
    for rel, text in sources.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    symbols = [
        SymbolEntry("vllm.v1.core.batch", _BATCH, 1, 5, "module"),
        SymbolEntry("vllm.v1.core.batch.Batch", _BATCH, 4, 5, "class"),
        SymbolEntry("vllm.v1.core.batch.Batch.prepare", _BATCH, 5, 5, "function"),
        SymbolEntry("vllm.v1.core.allocation", _ALLOC, 1, 4, "module"),
        SymbolEntry("vllm.v1.core.allocation.alloc_slots", _ALLOC, 1, 1, "function"),
        SymbolEntry("vllm.v1.core.allocation.alloc_for_decode", _ALLOC, 4, 4, "function"),
        SymbolEntry("vllm.tools.slots.free_slots", _OTHER, 1, 1, "function"),
    ]
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(sources), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def test_a_method_that_became_a_function_of_a_module_its_class_uses(tmp_path: Path) -> None:
    doc = "In vLLM, `Batch.alloc_slots()` takes the slots and `Batch.free_slots()` gives them back.\n"
    best = {}
    for f in check_references(extract_all([("ch.md", doc)]), [_view(tmp_path)]):
        assert f.status == BROKEN
        best[f.ref.target] = f.best.replacement if f.best and f.best.confidence >= 0.5 else None
    assert best["Batch.alloc_slots"] == "vllm.v1.core.allocation.alloc_slots"
    assert best["Batch.free_slots"] is None  # `Batch`'s file never uses vllm.tools.slots
