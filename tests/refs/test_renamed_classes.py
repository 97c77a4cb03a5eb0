"""A gone class found by the members the document lists for it (`renamed_classes.py`), in
SGLang 0.5.23's shape: `HiRadixCache` (a `RadixCache` subclass) became `UnifiedRadixCache`."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.renamed_classes import _successor

RADIX = "sglang/srt/mem_cache/radix_cache.py"
UNIFIED = "sglang/srt/mem_cache/unified_radix_cache.py"
BASE = "sglang/srt/mem_cache/base_prefix_cache.py"
_CLASSES = {
    f"{RADIX}:RadixCache": ("reset", "evict", "match_prefix", "_insert_helper", "_split_node"),
    f"{UNIFIED}:UnifiedRadixCache": ("reset", "evict", "match_prefix", "writing_check", "load_back", "evict_host"),
    f"{BASE}:BasePrefixCache": ("reset", "evict", "match_prefix"),
}


def _pin(tmp_path: Path) -> PinView:
    symbols = []
    for key, members in _CLASSES.items():
        path, name = key.split(":")
        cls = path.removesuffix(".py").replace("/", ".") + "." + name
        symbols.append(SymbolEntry(cls, path, 10, 500, "class"))
        symbols += [SymbolEntry(f"{cls}.{m}", path, 20 + i, 25 + i, "function") for i, m in enumerate(members)]
    return PinView(
        pin="sglang@0.5.23", project="sglang", kind="release", layout_prefix="", packages=("sglang",),
        files=frozenset([RADIX, UNIFIED, BASE]), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def test_the_class_defining_the_listed_members_others_lack(tmp_path: Path) -> None:
    pin = _pin(tmp_path)
    listed = {"reset", "evict", "match_prefix", "writing_check", "load_back", "evict_host", "_insert_helper", "_split_node", "get_height"}
    new = _successor("HiRadixCache", listed, pin)
    assert new is not None and new.last == "UnifiedRadixCache"  # not RadixCache, the class it extended
    # Only members every cache defines: nothing says which one it became.
    assert _successor("HiRadixCache", {"reset", "evict", "match_prefix"}, pin) is None
    # Fewer than three listed: too little to go on.
    assert _successor("HiRadixCache", {"writing_check", "load_back"}, pin) is None
