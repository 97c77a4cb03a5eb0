"""A gone base class found by the class a copy derives from it (`copied_bases.py`): the note's
`class OpenAIServingChat(OpenAIServing):`, where the pin's `OpenAIServingChat` now derives from
`GenerateBaseServing` (held-out 20). Every broken citation of the old base gets that home, and its
members the class of the new base's lineage that defines them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

from .fakes import vllm_view
from .test_undefined_names import _with_words

_CHAT = "vllm/entrypoints/openai/chat_serving.py"
_BASE = "vllm/entrypoints/serve/base.py"


def _pin(tmp_path: Path, bases: tuple[str, ...] = ("GenerateBaseServing", "BeamSearchMixin")) -> PinView:
    pin = _with_words(vllm_view(tmp_path), tmp_path)
    return replace(pin, symbols=[
        *pin.symbols,
        SymbolEntry("vllm.entrypoints.openai.chat_serving.OpenAIServingChat", _CHAT, 10, 90, "class", bases),
        SymbolEntry("vllm.entrypoints.openai.chat_serving.OpenAIServingChat.create_chat_completion", _CHAT, 20, 60, "function"),
        SymbolEntry("vllm.entrypoints.serve.base.BaseServing", _BASE, 5, 40, "class"),
        SymbolEntry("vllm.entrypoints.serve.base.BaseServing._check_model", _BASE, 10, 20, "function"),
        SymbolEntry("vllm.entrypoints.serve.base.GenerateBaseServing", _BASE, 50, 90, "class", ("BaseServing",)),
        SymbolEntry("vllm.entrypoints.serve.base.BeamSearchMixin", _BASE, 95, 99, "class"),
    ])


_DOC = (
    "# vLLM's chat serving\n\n"
    "`OpenAIServingChat` extends `OpenAIServing`:\n\n"
    "```python\n"
    "class OpenAIServingChat(OpenAIServing):\n"
    "    async def create_chat_completion(self, request):\n"
    "        ...\n"
    "```\n\n"
    "It first calls `OpenAIServing._check_model()`.\n"
)


def _homes(doc: str, pin: PinView) -> dict[tuple[int, str], list[str]]:
    return {
        (f.ref.line, f.ref.text): [s.replacement for s in f.suggestions]
        for f in check_references(extract_all([("ch.md", doc)]), [pin])
        if f.status == BROKEN
    }


def test_the_copys_base_gets_the_base_the_pins_class_has_now(tmp_path: Path) -> None:
    homes = _homes(_DOC, _pin(tmp_path))
    assert homes[(6, "OpenAIServing")][0] == "vllm.entrypoints.serve.base.GenerateBaseServing"
    assert homes[(3, "OpenAIServing")][0] == "vllm.entrypoints.serve.base.GenerateBaseServing"  # the prose's, by the copy's word
    # a member of the old base: where the new base's lineage defines it
    assert homes[(11, "OpenAIServing._check_model()")][0] == "BaseServing._check_model"


def test_no_home_where_the_pins_class_has_no_one_base(tmp_path: Path) -> None:
    homes = _homes(_DOC, _pin(tmp_path, bases=("GenerateBaseServing", "BaseServing")))
    assert not [h for h in homes[(6, "OpenAIServing")][:1] if h.endswith("BaseServing")]


def test_a_copy_deriving_from_its_own_old_version_gets_no_such_home(tmp_path: Path) -> None:
    # Held-out 7's `class RayDistributedExecutor(RayDistributedExecutorV0)`: the V0 class is gone
    # with no successor; the pin's base of the V1 class is not it.
    doc = "# vLLM\n\n```python\nclass OpenAIServingChat(OpenAIServingChatV0):\n    pass\n```\n"
    homes = _homes(doc, _pin(tmp_path))
    assert not [h for h in homes.get((4, "OpenAIServingChatV0"), [])[:1] if h.endswith("BaseServing")]
