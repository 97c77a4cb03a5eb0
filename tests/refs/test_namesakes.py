"""A class and the module named after it (`namesakes.py`), in vLLM 0.33.0's shapes: `GPUWorker`
is gpu_worker.py's `Worker`, `DraftModel` draft_model.py's `DraftModelProposer`, the split
`openai/serving_chat.py` lives where `OpenAIServingChat` is now."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.namesakes import (
    class_in_its_module,
    file_with_words_dropped,
    module_of_its_class,
    related,
    snake,
)
from analyzer.refs.pinview import PinView, SymbolEntry

_CLASSES = {
    "vllm/v1/worker/gpu_worker.py": [("AsyncIntermediateTensors", ()), ("Worker", ("WorkerBase",))],
    "vllm/v1/kv_offload/cpu/gpu_worker.py": [("Transfer", ()), ("CPUOffloadingWorker", ("OffloadingWorker",))],
    "vllm/v1/spec_decode/draft_model.py": [("DraftModelProposer", ("SpecDecodeBaseProposer",))],
    "vllm/v1/engine/detokenizer.py": [
        ("IncrementalDetokenizer", ()),
        ("BaseIncrementalDetokenizer", ("IncrementalDetokenizer", "ABC")),
        ("FastIncrementalDetokenizer", ("BaseIncrementalDetokenizer",)),
    ],
    "vllm/v1/attention/backend.py": [("AttentionBackend", ())],
    "vllm/entrypoints/openai/chat_completion/serving.py": [("OpenAIServingChat", ("GenerateBaseServing",))],
    "vllm/entrypoints/openai/chat_completion/batch_serving.py": [("OpenAIServingChatBatch", ("OpenAIServingChat",))],
    "vllm/entrypoints/anthropic/serving.py": [("AnthropicServingChat", ("OpenAIServingChat",))],
    "vllm/v1/kv_offload/cpu/policies/lru.py": [("LRUCachePolicy", ())],
    "vllm/v1/kv_offload/cpu/manager.py": [("CPUOffloadingManager", ())],
    "vllm/v1/engine/async_llm.py": [("AsyncLLM", ())],
    "vllm/v1/engine/llm_engine.py": [("LLMEngine", ())],
}


@pytest.fixture
def pin(tmp_path: Path) -> PinView:
    symbols = []
    for path, classes in _CLASSES.items():
        module = path.removesuffix(".py").replace("/", ".")
        symbols.append(SymbolEntry(module, path, 1, 100, "module"))
        for i, (name, bases) in enumerate(classes):
            symbols.append(SymbolEntry(f"{module}.{name}", path, 10 + 10 * i, 15 + 10 * i, "class", bases))
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset([*_CLASSES, "vllm/__init__.py"]), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def test_names() -> None:
    assert snake("GPUWorker") == "gpu_worker" and snake("OpenAIServingChat") == "open_ai_serving_chat"
    assert related("gpu_worker", "worker") and related("draft_model", "draft_model_proposer")
    assert not related("gpu_worker", "cpu_offloading_worker")


def test_a_gone_class_is_found_in_the_module_named_after_it(pin: PinView) -> None:
    hit = class_in_its_module("GPUWorker", pin)
    assert hit is not None and hit[0].full == "vllm.v1.worker.gpu_worker.Worker"  # not kv_offload's worker
    hit = class_in_its_module("DraftModel", pin)
    assert hit is not None and hit[0].last == "DraftModelProposer"
    hit = class_in_its_module("FooDetokenizer", pin)
    assert hit is None  # no foo_detokenizer.py
    # One word says too little: `_Backend` is not backend.py's `AttentionBackend`.
    assert class_in_its_module("_Backend", pin) is None and class_in_its_module("Detokenizer", pin) is None


def test_a_gone_file_is_found_where_the_class_named_after_it_lives(pin: PinView) -> None:
    hit = module_of_its_class("vllm/entrypoints/openai/serving_chat.py", ["vllm/entrypoints/openai"], pin)
    assert hit is not None and hit[0].path == "vllm/entrypoints/openai/chat_completion/serving.py"
    # Two classes named after it under the folder the file was in (OpenAI's and Anthropic's):
    # no pick; a one-word file names no class.
    assert module_of_its_class("vllm/entrypoints/serving_chat.py", ["vllm/entrypoints"], pin) is None
    assert module_of_its_class("vllm/entrypoints/openai/serving.py", ["vllm/entrypoints/openai"], pin) is None


def test_through_the_checker(pin: PinView) -> None:
    doc = (
        "# vLLM\n\n`GPUWorker` runs the model.\n\n"
        "```\nentrypoints/\n└── openai/\n    └── serving_chat.py   # chat\n```\n"
    )
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [pin])}
    assert got["GPUWorker"].status == "broken" and got["GPUWorker"].best is not None
    assert got["GPUWorker"].best.replacement == "vllm.v1.worker.gpu_worker.Worker"
    chat = got["serving_chat.py"]
    assert chat.status == "broken" and chat.best is not None
    assert chat.best.replacement == "vllm/entrypoints/openai/chat_completion/serving.py" and chat.best.confidence < 0.8



def test_a_gone_file_renamed_without_its_last_words(pin: PinView) -> None:
    # `manager.py` keeps the role, not the name; `llm_engine.py` drops the head, not the tail.
    assert file_with_words_dropped("vllm/v1/kv_offload/lru_manager.py", ["vllm/v1/kv_offload"], pin) == "vllm/v1/kv_offload/cpu/policies/lru.py"
    assert file_with_words_dropped("vllm/v1/engine/async_llm_engine.py", ["vllm/v1/engine"], pin) == "vllm/v1/engine/async_llm.py"
    assert file_with_words_dropped("vllm/v1/kv_offload/abstract.py", ["vllm/v1/kv_offload"], pin) is None  # one word
    assert file_with_words_dropped("vllm/v1/kv_offload/fifo_manager.py", ["vllm/v1/kv_offload"], pin) is None
