"""A `snake_case` name the sources never spell, one letter off a name they do spell
(`atten_tp_size` for the layers' `attn_tp_size`): broken, with that name as what the author meant.
A name that differs in a number is another version (`paged_attention_v3` is not `_v1`), and two
names a letter off say nothing."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN

from .fakes import vllm_view
from .test_undefined_names import _with_words

_SOURCE = '''
class DecoderLayer:
    def __init__(self, config):
        self.attn_tp_size = config.tp
        self.moe_ep_rank = 0
        self.moe_ep_rang = 1


def paged_attention_v1(query, cache):
    return query
'''


def _suggested(doc: str, tmp_path: Path) -> dict[str, list[tuple[str, float]]]:
    pin = _with_words(vllm_view(tmp_path), tmp_path, _SOURCE)
    out = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin]):
        assert f.status == BROKEN, (f.ref.text, f.note)
        out[f.ref.target] = [(s.replacement, s.confidence) for s in f.suggestions]
    return out


def test_the_one_spelled_name_a_letter_off(tmp_path: Path) -> None:
    doc = "In vLLM, `atten_tp_size` splits the heads; `paged_attention_v3` runs them; `moe_ep_rant` picks one.\n"
    found = _suggested(doc, tmp_path)
    assert found["atten_tp_size"] == [("attn_tp_size", 0.6)]
    assert found["paged_attention_v3"] == []  # another version, not a typo
    assert found["moe_ep_rant"] == []  # `moe_ep_rank` and `moe_ep_rang`: which one?
