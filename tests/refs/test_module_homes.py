"""A module of two words or more that moved out of its package (`suggest._symbols`), in vLLM's
shape: `vllm.entrypoints.openai.reasoning_parsers.abs_reasoning_parsers` is now
`vllm.reasoning.abs_reasoning_parsers`."""

from __future__ import annotations

from analyzer.refs.pinview import PinView
from analyzer.refs.suggest import suggest

from .test_resolve import ref


def test_a_moved_module_is_found_in_a_folder_named_with_the_old_words(vllm30: PinView) -> None:
    got = suggest(ref("vllm.engine.core_parts.kv_cache_manager", "symbol"), vllm30)
    assert got and got[0].replacement == "vllm.v1.core.kv_cache_manager" and got[0].confidence < 0.8
    # No folder word in common: not this rule's to say.
    assert all(s.reason.startswith("the one module") is False for s in suggest(ref("vllm.entrypoints.kv_cache_manager", "symbol"), vllm30))
