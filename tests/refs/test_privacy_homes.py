"""A helper made public or private between releases (V0's `_initialize_model`, now
`initialize_model`): a name the sources never spell whose other spelling is defined exactly once
is broken, with that definition as its home."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN

from .fakes import vllm_view
from .test_undefined_names import _with_words


def _homes(doc: str, tmp_path: Path) -> dict[str, list[tuple[str, str | None]]]:
    pin = _with_words(vllm_view(tmp_path), tmp_path)
    out = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin]):
        if f.status == BROKEN:
            out[f.ref.target] = [(s.replacement, s.location) for s in f.suggestions]
    return out


def test_a_function_made_public_and_a_method_made_private(tmp_path: Path) -> None:
    doc = "In vLLM, `_hash_block_tokens` hashes a block, and `preempt_request` frees a request's blocks.\n"
    homes = _homes(doc, tmp_path)
    assert homes["_hash_block_tokens"] == [("hash_block_tokens", "vllm/v1/core/kv_cache_utils.py:5")]
    # a method is named with its class
    assert homes["preempt_request"] == [("Scheduler._preempt_request", "vllm/v1/core/sched/scheduler.py:130")]


def test_one_word_names_get_no_such_home(tmp_path: Path) -> None:
    # `_schedule` -> `schedule` says little: one word names many things.
    homes = _homes("In vLLM, `_schedulex` and `_schedule_all` run a step.\n", tmp_path)
    assert homes.get("_schedule_all") == []


def test_a_function_made_a_class_of_the_same_words(tmp_path: Path) -> None:
    # Held-out 19: `_compute_slot_mapping_kernel` became the kernel class `ComputeSlotMappingKernel`
    # in the same file; a closer spelling elsewhere (`_compute_slot_mappings_kernel`) is a guess.
    from dataclasses import replace

    from analyzer.refs.pinview import SymbolEntry
    from analyzer.refs.suggest import style_changed

    pin = vllm_view(tmp_path)
    table = "vllm/v1/worker/block_table.py"
    pin = replace(pin, symbols=[
        *pin.symbols,
        SymbolEntry("vllm.v1.worker.block_table.ComputeSlotMappingKernel", table, 397, 450, "class"),
        SymbolEntry("vllm.v1.worker.gpu.block_table._compute_slot_mappings_kernel", "vllm/v1/worker/gpu/block_table.py", 277, 300, "function"),
        SymbolEntry("vllm.v1.worker.block_table.make_block_rows", table, 20, 30, "function"),
    ])
    (found,) = style_changed("_compute_slot_mapping_kernel", pin)
    assert found.replacement == "ComputeSlotMappingKernel" and found.location == f"{table}:397"
    # and back: a class gone, the one function of its words there
    assert [s.replacement for s in style_changed("MakeBlockRows", pin)] == ["make_block_rows"]
    # two words say too little; a name with no such counterpart gets none
    assert style_changed("block_rows", pin) == [] and style_changed("_compute_slot_kernel", pin) == []
