"""A method written on an object whose name says what it is (`model_executor.initialize_cache()`):
judged on the classes named like the object, not on any class that has a method of that name."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, OK, Finding
from analyzer.refs.pinview import PinView, SymbolEntry
from tests.refs.fakes import source_view

_EXE = "vllm/v1/executor/abstract.py"
_UNI = "vllm/v1/executor/uniproc_executor.py"
_COMP = "vllm/compilation/backends.py"
_ENG = "vllm/v1/engine/llm_engine.py"


def _view() -> PinView:
    symbols = [
        SymbolEntry("vllm.v1.executor.abstract.Executor", _EXE, 10, 200, "class"),
        SymbolEntry("vllm.v1.executor.abstract.Executor.initialize_from_config", _EXE, 40, 60, "function"),
        SymbolEntry("vllm.v1.executor.uniproc_executor.UniProcExecutor", _UNI, 10, 90, "class", ("Executor",)),
        SymbolEntry("vllm.v1.engine.llm_engine.LLMEngine", _ENG, 10, 300, "class"),
        SymbolEntry("vllm.v1.engine.llm_engine.LLMEngine.model_executor", _ENG, 30, 30, "attribute"),
        SymbolEntry("vllm.v1.engine.llm_engine.LLMEngine.batch", _ENG, 31, 31, "attribute"),
        SymbolEntry("vllm.v1.engine.llm_engine.LLMEngine.step", _ENG, 50, 80, "function"),
        # torch.compile's cache hook: a method of the same name on an unrelated class.
        SymbolEntry("vllm.compilation.backends.CompilerManager", _COMP, 10, 200, "class"),
        SymbolEntry("vllm.compilation.backends.CompilerManager.initialize_cache", _COMP, 40, 60, "function"),
        SymbolEntry("vllm.compilation.backends.CompilerManager.compile", _COMP, 70, 90, "function"),
        SymbolEntry("vllm.v1.core.sched.output.SchedulerBatch", "vllm/v1/core/sched/output.py", 5, 50, "class"),
    ]
    files = [_EXE, _UNI, _COMP, _ENG, "vllm/v1/core/sched/output.py"]
    return PinView(pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",), files=frozenset(files), symbols=symbols, flags=[], envs=[])


def _status(text: str) -> tuple[str, str]:
    doc = f"In vLLM the engine calls `{text}` once at start-up.\n"
    found = [f for f in check_references(extract_all([("ch.md", doc)]), [_view()]) if f.ref.text.strip("`") == text]
    assert found, text
    return found[0].status, found[0].note


def test_a_method_found_only_on_unrelated_classes_is_broken() -> None:
    status, note = _status("model_executor.initialize_cache()")
    assert status == BROKEN and "model_executor" in note and "CompilerManager.initialize_cache" in note


def test_a_method_a_class_named_like_the_object_has_or_inherits_is_ok() -> None:
    assert _status("model_executor.initialize_from_config()")[0] == OK  # Executor's own, UniProcExecutor's inherited


def test_objects_whose_name_says_little_are_left_as_before() -> None:
    # One word (`batch`: a request in one subsystem, a batch in another), or a name the project
    # never gives an attribute (`compile_manager`): the method found anywhere stands, as before.
    assert _status("batch.compile()")[0] == OK
    assert _status("compiler_backend.compile()")[0] == OK


def test_classes_named_by_all_the_object_s_words_that_lack_it_leave_its_last_word_to_try() -> None:
    # `tree_cache`: a `TreeCacheBuildContext` (a builder) is named by both words but lacks the
    # method; the object is one of the caches its last word names (`RadixCache`), which has it.
    mem = "sglang/srt/mem_cache/radix_cache.py"
    symbols = [
        SymbolEntry("sglang.srt.mem_cache.builder.TreeCacheBuildContext", "sglang/srt/mem_cache/builder.py", 5, 40, "class"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache", mem, 10, 400, "class"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache.cache_unfinished_req", mem, 100, 140, "function"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache.evict", mem, 150, 170, "function"),
        SymbolEntry("sglang.srt.managers.scheduler.Scheduler.tree_cache", "sglang/srt/managers/scheduler.py", 30, 30, "attribute"),
    ]
    files = frozenset([mem, "sglang/srt/mem_cache/builder.py", "sglang/srt/managers/scheduler.py"])
    view = PinView(pin="sglang@0.5.20", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",), files=files, symbols=symbols, flags=[], envs=[])
    doc = "In SGLang the scheduler calls `tree_cache.cache_unfinished_req(req)` and `tree_cache.evict_all()`.\n"
    got = {f.ref.text: f.status for f in check_references(extract_all([("ch.md", doc)]), [view])}
    assert got["tree_cache.cache_unfinished_req(req)"] == OK


def _found(tmp_path: Path, sources: dict[str, str], doc: str, pin: str = "vllm@0.33.0") -> dict[str, Finding]:
    """The findings of `doc` against a pin made of `sources`, by the text they quote."""
    view = source_view(tmp_path / "p", sources, pin)
    return {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [view])}


def test_the_class_the_pin_makes_the_object_with_outweighs_its_name(tmp_path: Path) -> None:
    # `all_token_ids.gpu`: `TokenIdsState` is named like the object but lacks `gpu`; the pin makes
    # its `all_token_ids` a `StagedWriteTensor`, which has it. A member that class lacks stays broken.
    sources = {
        "vllm/v1/worker/gpu/buffer_utils.py": "class StagedWriteTensor:\n    def __init__(self, n):\n        self.gpu = n\n\n\nclass CpuGpuBuffer:\n    def __init__(self):\n        self.gpu = None\n        self.cpu_copy = None\n",
        "vllm/v1/worker/gpu/states.py": "class TokenIdsState:\n    def __init__(self):\n        self.ids = []\n\n\nclass RequestState:\n    def __init__(self):\n        self.all_token_ids = StagedWriteTensor(\n            4,\n        )\n",
    }
    got = _found(tmp_path, sources, "In vLLM the runner reads `all_token_ids.gpu` and `all_token_ids.cpu_copy`.\n")
    assert got["all_token_ids.gpu"].status == OK and "StagedWriteTensor" in got["all_token_ids.gpu"].note
    assert got["all_token_ids.cpu_copy"].status == BROKEN


def test_an_object_named_after_a_class_the_pin_only_imports_is_that_librarys(tmp_path: Path) -> None:
    # `nixl_wrapper.transfer()`: the pin binds NIXL's agent to `NixlWrapper` and defines no class
    # of that name, so `transfer` is NIXL's; `graph_wrapper` names nothing the pin spells, and the
    # wrappers it does define lack `transfer`.
    sources = {
        "vllm/distributed/nixl_utils.py": "from nixl import nixl_agent as NixlWrapper\n",
        "vllm/compilation/wrapper.py": "class CUDAGraphWrapper:\n    def __call__(self):\n        pass\n",
        "vllm/distributed/kv.py": "class KVTransfer:\n    def transfer(self):\n        pass\n\n\nclass Worker:\n    def __init__(self):\n        self.nixl_wrapper = None\n        self.graph_wrapper = None\n",
    }
    got = _found(tmp_path, sources, "In vLLM the worker calls `nixl_wrapper.transfer(handle)` and `graph_wrapper.transfer()`.\n")
    assert got["nixl_wrapper.transfer(handle)"].status == "not-checkable" and "NixlWrapper" in got["nixl_wrapper.transfer(handle)"].note
    assert got["graph_wrapper.transfer()"].status == BROKEN


def test_a_chain_holds_only_if_its_first_hop_does(tmp_path: Path) -> None:
    # `forward_batch.token_to_kv_pool.set_kv_buffer()`: the KV pools have `set_kv_buffer`, but
    # `ForwardBatch` has no `token_to_kv_pool` (the model runner holds it).
    sources = {
        "sglang/srt/mem_cache/pool.py": "class MHATokenToKVPool:\n    def set_kv_buffer(self, layer, loc, k, v):\n        pass\n",
        "sglang/srt/model_executor/batch.py": "class ForwardBatch:\n    def __init__(self):\n        self.out_cache_loc = None\n",
        "sglang/srt/model_executor/runner.py": "class ModelRunner:\n    def __init__(self):\n        self.token_to_kv_pool = None\n        self.forward_batch = None\n",
    }
    got = _found(tmp_path, sources, "In SGLang the backend calls `forward_batch.token_to_kv_pool.set_kv_buffer()` and `model_runner.token_to_kv_pool.set_kv_buffer()`.\n", "sglang@0.5.20")
    broken = got["forward_batch.token_to_kv_pool.set_kv_buffer()"]
    assert broken.status == BROKEN and "ForwardBatch" in broken.note and "token_to_kv_pool" in broken.note
    assert got["model_runner.token_to_kv_pool.set_kv_buffer()"].status == OK
