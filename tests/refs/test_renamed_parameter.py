"""A keyword a callable no longer takes, renamed by words added (`loc` -> `loc_info`): the one
parameter of the pin's callable that is the old name with words at one end is its home. None
when no parameter is, or several are."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

_KV = "vllm/kv/pool.py"
_SOURCE = (
    "def set_buffer(layer, loc_info, value):\n    return layer\n\n\n"
    "def get_buffer(layer, loc_info, loc_ids):\n    return layer\n"
)


def _view(tmp_path: Path) -> PinView:
    (tmp_path / _KV).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / _KV).write_text(_SOURCE, encoding="utf-8")
    symbols = [
        SymbolEntry("vllm.kv.pool", _KV, 1, 6, "module"),
        SymbolEntry("vllm.kv.pool.set_buffer", _KV, 1, 2, "function"),
        SymbolEntry("vllm.kv.pool.get_buffer", _KV, 5, 6, "function"),
    ]
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset({_KV}), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def test_a_parameter_renamed_by_words_added(tmp_path: Path) -> None:
    doc = (
        "vLLM's pool:\n\n```python\nfrom vllm.kv.pool import set_buffer, get_buffer\n\n"
        "set_buffer(layer=0, loc=idx, value=v)\nset_buffer(layer=0, pos=idx, value=v)\nget_buffer(layer=0, loc=idx)\n```\n"
    )
    found = {}
    for f in check_references(extract_all([("ch.md", doc)]), [_view(tmp_path)]):
        if f.status == BROKEN:
            found[(f.ref.line, f.ref.target)] = [s.replacement for s in f.suggestions if s.confidence >= 0.5]
    assert found[(6, "loc")] == ["loc_info"]
    assert found[(7, "pos")] == []  # no parameter named like it
    assert found[(8, "loc")] == []  # `loc_info` or `loc_ids`: the text does not say
