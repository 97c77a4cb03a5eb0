"""Where a moved reference went, with a confidence a reader can act on: a file named after a
class that gained a qualifier, a folder moved under a version namespace, a flag whose words
were rearranged."""

from __future__ import annotations

from dataclasses import replace

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import FlagEntry, PinView, SymbolEntry
from analyzer.refs.suggest import suggest

from .test_resolve import ref


def _view(files: list[str], symbols: list[SymbolEntry], flags: list[FlagEntry] | None = None) -> PinView:
    return PinView(
        pin="sglang@0.5.23", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset(files), symbols=symbols, flags=flags or [], envs=[],
    )


_RUNNERS = "sglang/srt/model_executor/runner"


def _runners() -> PinView:
    files = [f"{_RUNNERS}/decode_cuda_graph_runner.py", f"{_RUNNERS}/prefill_cuda_graph_runner.py", "sglang/srt/model_executor/cpu_graph_runner.py"]
    symbols = [
        SymbolEntry("sglang.srt.model_executor.runner.decode_cuda_graph_runner.DecodeCudaGraphRunner", files[0], 10, 90, "class"),
        SymbolEntry("sglang.srt.model_executor.runner.prefill_cuda_graph_runner.PrefillCudaGraphRunner", files[1], 10, 90, "class"),
        SymbolEntry("sglang.srt.model_executor.cpu_graph_runner.CPUGraphRunner", files[2], 10, 90, "class"),
    ]
    return _view(files, symbols)


def test_a_file_named_after_a_class_that_gained_a_qualifier() -> None:
    words = frozenset({"decode", "cuda", "graph", "batch", "the"})
    old = ref("python/sglang/srt/model_executor/cuda_graph_runner.py", "path", framework="sglang", repo_layout=True, context=words)
    best = suggest(old, _runners())[0]
    assert best.replacement == f"python/{_RUNNERS}/decode_cuda_graph_runner.py"
    assert 0.6 <= best.confidence < 0.8 and "DecodeCudaGraphRunner" in best.reason
    # A text that uses neither qualifier's words picks none of them with confidence.
    plain = ref("python/sglang/srt/model_executor/cuda_graph_runner.py", "path", framework="sglang", repo_layout=True, context=frozenset({"the"}))
    assert all(s.confidence < 0.5 for s in suggest(plain, _runners()))


def test_a_folder_under_a_version_namespace_is_the_confident_pick() -> None:
    files = ["vllm/v1/worker/gpu_worker.py", "vllm/distributed/kv/worker.py", "vllm/v1/offload/worker.py", "vllm/entrypoints/http_server.py", "vllm/rust_server/server.py", "vllm/grpc/server.py"]
    view = PinView(pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",), files=frozenset(files), symbols=[], flags=[], envs=[])
    best = suggest(ref("vllm/worker/", "path", "vllm/worker"), view)[0]
    assert (best.replacement, best.confidence) == ("vllm/v1/worker/", 0.75)
    # A file that went into another subsystem's folder is only a guess.
    guess = suggest(ref("vllm/server.py", "path"), view)
    assert guess and all(s.confidence < 0.7 for s in guess)


def test_a_flag_whose_words_were_rearranged() -> None:
    flags = [FlagEntry("--max-cudagraph-capture-size"), FlagEntry("--cudagraph-capture-sizes"), FlagEntry("--max-num-seqs")]
    view = _view([], [], flags)
    best = suggest(ref("--cuda-graph-max-batch-size", "flag", framework="sglang"), view)[0]
    assert best.replacement == "--max-cudagraph-capture-size" and best.confidence == 0.5
    # Two words in common out of three is a different option, not a rearranged one.
    assert all("another order" not in s.reason for s in suggest(ref("--cpu-offload-kvcache", "flag", framework="sglang"), _view([], [], [FlagEntry("--cpu-offload-gb")])))


def test_a_dotted_name_whose_module_is_gone_goes_to_the_nearest_surviving_package() -> None:
    files = ["vllm/v1/attention/backends/abstract.py", "vllm/model_executor/layers/attention.py", "vllm/lora/abstract.py"]
    symbols = [
        SymbolEntry("vllm.v1.attention.backends.abstract.AttentionBackend", files[0], 5, 50, "class"),
        SymbolEntry("vllm.model_executor.layers.attention.AttentionBackend", files[1], 5, 50, "class"),
        SymbolEntry("vllm.lora.abstract.AttentionBackend", files[2], 5, 50, "class"),
    ]
    view = PinView(pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",), files=frozenset(files), symbols=symbols, flags=[], envs=[])
    found = suggest(ref("vllm.attention.backends.abstract.AttentionBackend", "symbol"), view)
    assert found[0].replacement == "vllm.v1.attention.backends.abstract.AttentionBackend"
    assert found[0].confidence == 0.7 and "nearest" in found[0].reason
    assert all(s.confidence < 0.5 for s in found[1:])
    # Unrelated modules that merely define the same last name are never offered.
    lone = PinView(pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
                   files=frozenset({"vllm/misc/other.py"}), symbols=[SymbolEntry("vllm.misc.other.AttentionBackend", "vllm/misc/other.py", 1, 9, "class")], flags=[], envs=[])
    assert all(s.replacement != "vllm.misc.other.AttentionBackend" for s in suggest(ref("vllm.attention.backends.abstract.AttentionBackend", "symbol"), lone))


_LAYERS = "vllm/model_executor/layers"


def _rope_view() -> PinView:
    """`rotary_embedding.py` became a package; its class now lives in `base.py` inside it, and
    another `RotaryEmbedding` lives in an unrelated module."""
    files = [f"{_LAYERS}/rotary_embedding/__init__.py", f"{_LAYERS}/rotary_embedding/base.py", f"{_LAYERS}/rotary_embedding/mrope.py", "vllm/vision/rotary.py"]
    symbols = [
        SymbolEntry("vllm.model_executor.layers.rotary_embedding.base.RotaryEmbedding", files[1], 10, 90, "class"),
        SymbolEntry("vllm.model_executor.layers.rotary_embedding.mrope.MRotaryEmbedding", files[2], 10, 90, "class"),
        SymbolEntry("vllm.vision.rotary.RotaryEmbedding", files[3], 10, 90, "class"),
    ]
    return PinView(pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",), files=frozenset(files), symbols=symbols, flags=[], envs=[])


def test_a_module_that_became_a_package_goes_to_the_file_holding_the_quoted_class() -> None:
    # `# vllm/model_executor/layers/rotary_embedding.py` above a quoted `class RotaryEmbedding`.
    old = ref(f"{_LAYERS}/rotary_embedding.py", "path", origin="fence", writes="RotaryEmbedding")
    best = suggest(old, _rope_view())[0]
    assert (best.replacement, best.confidence) == (f"{_LAYERS}/rotary_embedding/base.py", 0.9)
    # Without the quoted class, the package itself is all there is to offer.
    assert suggest(ref(f"{_LAYERS}/rotary_embedding.py", "path"), _rope_view())[0].replacement == f"{_LAYERS}/rotary_embedding"


def test_a_name_on_the_paths_line_is_a_lead_not_a_verdict() -> None:
    view = _rope_view()
    # Inside the package the module became: that file.
    inside = suggest(ref(f"{_LAYERS}/rotary_embedding.py", "path", origin="fence"), view, line_symbol="RotaryEmbedding")[0]
    assert inside.replacement == f"{_LAYERS}/rotary_embedding/base.py" and inside.confidence >= 0.9
    # Elsewhere, alone: the file may have moved one way and the name another.
    alone = suggest(ref("vllm/layers/vision_rope.py", "path", origin="fence"), view, line_symbol="MRotaryEmbedding")
    assert [(s.replacement, s.confidence) for s in alone if "defined there" in s.reason] == [(f"{_LAYERS}/rotary_embedding/mrope.py", 0.6)]


def test_a_line_naming_a_class_after_a_gone_file_suggests_where_the_class_lives() -> None:
    doc = "In vLLM:\n\n```text\nvllm/model_executor/layers/rotary_embedding.py: RotaryEmbedding.forward()\n```\n"
    view = replace(_rope_view(), symbols=[*_rope_view().table, SymbolEntry("vllm.model_executor.layers.rotary_embedding.base.RotaryEmbedding.forward", f"{_LAYERS}/rotary_embedding/base.py", 40, 60, "function")])
    (path,) = [f for f in check_references(extract_all([("ch.md", doc)]), [view]) if f.ref.kind == "path"]
    assert path.best is not None and path.best.replacement == f"{_LAYERS}/rotary_embedding/base.py"


def test_a_gone_mixin_goes_to_the_part_named_for_its_role_beside_its_owner() -> None:
    managers = "sglang/srt/managers"
    files = [f"{managers}/scheduler.py", f"{managers}/components/weight_updater.py", f"{managers}/components/metrics_reporter.py", "sglang/srt/observability/collector.py", f"{managers}/scheduler_pp_mixin.py"]
    symbols = [
        SymbolEntry("sglang.srt.managers.scheduler.Scheduler", files[0], 10, 900, "class"),
        SymbolEntry("sglang.srt.managers.components.weight_updater.SchedulerWeightUpdaterManager", files[1], 10, 90, "class"),
        SymbolEntry("sglang.srt.managers.components.metrics_reporter.SchedulerMetricsReporter", files[2], 10, 90, "class"),
        SymbolEntry("sglang.srt.observability.collector.SchedulerMetricsCollector", files[3], 10, 90, "class"),
        SymbolEntry("sglang.srt.managers.scheduler_pp_mixin.SchedulerPPMixin", files[4], 10, 90, "class"),
    ]
    view = _view(files, symbols)

    def best(name: str) -> tuple[str, float] | None:
        found = suggest(ref(name, "symbol", framework="sglang"), view)
        return (found[0].replacement, found[0].confidence) if found else None

    # The words of the role in any order and form (`UpdateWeights` / `WeightUpdater`).
    assert best("SchedulerUpdateWeightsMixin") == ("SchedulerWeightUpdaterManager", 0.7)
    # A class of that role far from the owner (the observability package) does not compete.
    assert best("SchedulerMetricsMixin") == ("SchedulerMetricsReporter", 0.7)
    # No part named for the role: at most a spelling guess.
    guess = best("SchedulerOutputProcessorMixin")
    assert guess is None or guess[1] < 0.3


def test_the_same_method_on_an_unrelated_class_is_only_a_guess() -> None:
    files = ["vllm/compilation/backends.py"]
    symbols = [
        SymbolEntry("vllm.compilation.backends.CompilerManager", files[0], 10, 300, "class"),
        SymbolEntry("vllm.compilation.backends.CompilerManager.initialize_cache", files[0], 40, 60, "function"),
    ]
    view = PinView(pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",), files=frozenset(files), symbols=symbols, flags=[], envs=[])
    found = suggest(ref("WorkerBase.initialize_cache", "symbol"), view)
    assert found and all(s.confidence < 0.3 and "likely gone" in s.reason for s in found)
