"""A class and the module named after it (`namesakes.py`), in vLLM 0.33.0's shapes: `GPUWorker`
is gpu_worker.py's `Worker`, `DraftModel` draft_model.py's `DraftModelProposer`, the split
`openai/serving_chat.py` lives where `OpenAIServingChat` is now."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.index import SnapshotIndex
from analyzer.index.extract import extract_text
from analyzer.refs.build import symbols_and_open_classes
from analyzer.refs.check import check_references, extract_all
from analyzer.refs.lineage import Lineage, build_lineage
from analyzer.refs.namesakes import (
    class_in_its_module,
    file_with_words_dropped,
    module_of_its_class,
    related,
    snake,
    versioned_file,
    versioned_successor,
)
from analyzer.refs.pinview import PinView, SymbolEntry

from .fakes import vllm_view

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


def _versioned_pin(tmp_path: Path, extra: dict[str, list[tuple[str, tuple[str, ...]]]]) -> PinView:
    classes = {
        "vllm/v1/executor/abstract.py": [("Executor", ("ABC",))],
        "vllm/v1/executor/ray_executor_v2.py": [("RayWorkerHandle", ()), ("RayExecutorV2", ("MultiprocExecutor",))],
        "vllm/v1/spec/eagle_worker_v2.py": [("EagleDraftWorker", ()), ("EAGLEWorkerV2", ("BaseSpecWorker",))],
        **extra,
    }
    symbols = []
    for path, found in classes.items():
        module = path.removesuffix(".py").replace("/", ".")
        symbols.append(SymbolEntry(module, path, 1, 100, "module"))
        symbols += [SymbolEntry(f"{module}.{name}", path, 10 + 10 * i, 15 + 10 * i, "class", bases) for i, (name, bases) in enumerate(found)]
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset([*classes, "vllm/__init__.py"]), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def test_a_file_replaced_by_its_versioned_file_and_that_file_s_class(tmp_path: Path) -> None:
    pin = _versioned_pin(tmp_path, {})
    assert versioned_file("vllm/v1/executor/ray_executor.py", pin) == "vllm/v1/executor/ray_executor_v2.py"
    assert versioned_file("ray_executor.py", pin) == "vllm/v1/executor/ray_executor_v2.py"  # a bare name: the one such file
    cls = versioned_successor("vllm/v1/executor/ray_executor.py", pin)
    assert cls is not None and cls.last == "RayExecutorV2"  # named after the file, not its helper class
    cls = versioned_successor("vllm/v1/spec/eagle_worker.py", pin)
    assert cls is not None and cls.last == "EAGLEWorkerV2"  # compared without case
    # Still there, no versioned file beside it (another folder's does not count), not a module.
    assert versioned_file("vllm/v1/executor/abstract.py", pin) is None
    assert versioned_file("vllm/v1/worker/eagle_worker.py", pin) is None
    assert versioned_successor("vllm/v1/executor/ray_utils.py", pin) is None


def test_no_versioned_home_when_two_versions_or_the_old_name_is_left(tmp_path: Path) -> None:
    pin = _versioned_pin(tmp_path, {"vllm/v1/executor/ray_executor_v3.py": [("RayExecutorV3", ())], "vllm/v2/eagle_worker.py": [("W", ())]})
    assert versioned_file("vllm/v1/executor/ray_executor.py", pin) is None  # v2 and v3: which one?
    assert versioned_file("eagle_worker.py", pin) is None  # a file of the written name is still there
    # No class named after the versioned file: the file, but no class.
    pin = _versioned_pin(tmp_path, {"vllm/v1/worker/runner_v2.py": [("GPURunner", ())]})
    assert versioned_file("vllm/v1/worker/runner.py", pin) == "vllm/v1/worker/runner_v2.py"
    assert versioned_successor("vllm/v1/worker/runner.py", pin) is None


def test_a_gone_dotted_class_goes_to_the_versioned_module_s_class(tmp_path: Path) -> None:
    doc = "# Workers\n\n```python\nfrom vllm.v1.spec.eagle_worker import EAGLEWorker\n```\n"
    pin = _versioned_pin(tmp_path, {})
    got = {f.ref.text: f for f in check_references(extract_all([("doc.md", doc)]), [pin])}
    f = next(f for text, f in got.items() if text.endswith("EAGLEWorker"))
    assert f.status == "broken" and f.best is not None
    assert f.best.replacement == "vllm.v1.spec.eagle_worker_v2.EAGLEWorkerV2" and f.best.confidence < 0.8


def _ray_executor_v2(tmp_path: Path) -> tuple[Lineage, PinView]:
    """0.10.2 had `ray_executor.py`'s `RayDistributedExecutor`; today's pin has only `ray_executor_v2.py`."""
    past = {
        "vllm/__init__.py": "",
        "vllm/v1/executor/ray_executor.py": "class RayDistributedExecutor:\n    def execute_model(self):\n        return 0\n",
    }
    index = SnapshotIndex("t", {p: extract_text(t, p, "0" * 64) for p, t in past.items()})
    lineage = build_lineage("vllm", [("vllm@0.10.2-src", symbols_and_open_classes(index.modules.values())[0])])
    pin = vllm_view(tmp_path, "0.33.0")
    new = "vllm/v1/executor/ray_executor_v2.py"
    pin = replace(pin, files=pin.files | {new}, symbols=[
        *pin.symbols,
        SymbolEntry("vllm.v1.executor.ray_executor_v2", new, 1, 40, "module"),
        SymbolEntry("vllm.v1.executor.ray_executor_v2.RayWorkerHandle", new, 2, 10, "class"),
        SymbolEntry("vllm.v1.executor.ray_executor_v2.RayExecutorV2", new, 12, 40, "class"),
    ])
    pin.words_path = str(tmp_path / "words.json")
    return lineage, pin


def test_a_class_a_past_release_defined_goes_to_the_versioned_file_s_class(tmp_path: Path) -> None:
    lineage, pin = _ray_executor_v2(tmp_path)
    doc = "# Executors\n\nWith Ray, `RayDistributedExecutor` drives the workers.\n"
    [f] = [f for f in check_references(extract_all([("ch.md", doc)]), [pin], lineages={"vllm": lineage}) if f.ref.text == "RayDistributedExecutor"]
    assert f.status == "broken" and f.best is not None
    assert f.best.replacement == "RayExecutorV2" and "versioned file" in f.best.reason


def test_a_class_a_past_release_defined_in_another_case_gets_that_class_s_home(tmp_path: Path) -> None:
    """`RayDistributedexecutor` (the author's casing) is broken by itself; the one past class it
    matches but for case, `RayDistributedExecutor`, says where it went (the versioned file's
    class). A name matching no past class in any case keeps its own guesses."""
    lineage, pin = _ray_executor_v2(tmp_path)
    doc = "# vLLM executors\n\nIn vLLM, `RayDistributedexecutor` drives the workers; `RayClusterWorkerPool` too.\n"
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [pin], lineages={"vllm": lineage})}
    f = got["RayDistributedexecutor"]
    assert f.status == "broken" and f.best is not None and f.best.replacement == "RayExecutorV2"
    assert f.past is None  # the verdict is its own: the past class only gave the home
    other = got["RayClusterWorkerPool"]
    assert other.best is None or other.best.replacement != "RayExecutorV2"
