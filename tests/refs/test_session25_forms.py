"""Forms from held-out parts read this session (130-135): a V0 method quoted on its own, a gone
module's path over the code it held, metric names in code comments, and objects a snippet reads
out of `self` (`request = self.waiting.peek_request()`)."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK

from .fakes import findings_by_place, past_lineage, source_view, statuses_at

_V1 = {
    "vllm/v1/__init__.py": "",
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/sched/__init__.py": "",
    "vllm/v1/core/sched/scheduler.py": (
        "class Scheduler:\n"
        "    def __init__(self, cache_config):\n"
        "        self.cache_config = cache_config\n"
        "        self.running = []\n\n"
        "    def schedule(self):\n"
        "        return self.running\n"
    ),
    # Another class of the pin with a `_schedule`: the bare name resolves somewhere.
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/ubatching.py": "class UBatchContext:\n    def _schedule(self):\n        return None\n",
    "vllm/v1/request.py": (
        "class Request:\n"
        "    def __init__(self, request_id):\n"
        "        self.request_id = request_id\n"
        "        self.num_computed_tokens = 0\n"
        "        self.prefill_stats = None\n"
    ),
    "vllm/v1/worker/gpu_input_batch.py": "class InputBatch:\n    def __init__(self):\n        self.req_ids = []\n",
    "vllm/v1/metrics/__init__.py": "",
    "vllm/v1/metrics/prefill.py": "class PrefillStats:\n    def __init__(self):\n        self.num_cached_tokens = 0\n",
}

_V0_PAST = {
    "vllm/__init__.py": "",
    "vllm/core/__init__.py": "",
    "vllm/core/scheduler.py": (
        "class Scheduler:\n"
        "    def schedule(self):\n        return self._schedule()\n\n"
        "    def _schedule(self):\n        return None\n\n"
        "    def _allow_async_output_proc(self, seq_group):\n        return True\n\n"
        "    @property\n    def next_cache_id(self):\n        return 0\n"
    ),
}

_V0_COPY = (
    "# 图解vllm-调度器\n\n"
    "```python\n"
    "    def schedule(self):\n"  # 4
    "        scheduler_outputs = self._schedule()\n"  # 5
    "        allow_async_output_proc: bool = self.use_async_output_proc\n"  # 6
    "        seq_group_metadata = self._seq_group_metadata_cache[self.cache_id].get_object()\n"  # 7
    "        allow_async_output_proc = self._allow_async_output_proc(seq_group)\n"  # 8
    "        self.cache_id = self.next_cache_id\n"  # 9
    "        return self.running\n"  # 10
    "```\n"
)


def test_a_method_of_a_class_only_past_releases_had_keeps_its_gone_members(tmp_path: Path) -> None:
    view = source_view(tmp_path, _V1, "vllm@0.30.0")
    lineage = past_lineage(tmp_path / "past", _V0_PAST, "vllm@0.10.2-src")
    found = findings_by_place(_V0_COPY, view, lineages={"vllm": lineage})
    # V0's `Scheduler.schedule`, calling that class's `_schedule` and `_allow_async_output_proc`:
    # its `self` members the pin's classes lack are gone with it.
    assert statuses_at(found, 5, "_schedule") == [BROKEN]
    assert statuses_at(found, 6, "self.use_async_output_proc") == [BROKEN]
    assert statuses_at(found, 7, "self.cache_id") == [BROKEN]
    (gone,) = found[(8, "_allow_async_output_proc")]
    assert gone.status == BROKEN and gone.past is not None and "vllm.core.scheduler.Scheduler.schedule" in gone.past
    assert statuses_at(found, 10, "self.running") in ([], [OK])  # the pin's Scheduler has it
    # Without the past releases nothing says whose the snippet is: the author's own code.
    bare = findings_by_place(_V0_COPY, view)
    assert statuses_at(bare, 6, "self.use_async_output_proc") == []
    assert statuses_at(bare, 7, "self.cache_id") == []


def test_a_past_class_that_does_not_stand_out_says_nothing(tmp_path: Path) -> None:
    view = source_view(tmp_path, _V1, "vllm@0.30.0")
    lineage = past_lineage(tmp_path / "past", _V0_PAST, "vllm@0.10.2-src")
    # Only the quoted method itself and one other name of the past class: not enough to say so.
    doc = "```python\ndef schedule(self):\n    out = self._schedule()\n    return self.use_async_output_proc\n```\n"
    found = findings_by_place(doc, view, lineages={"vllm": lineage})
    assert statuses_at(found, 4, "self.use_async_output_proc") == []


_SGLANG = {
    "sglang/srt/__init__.py": "",
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler.py": "class Scheduler:\n    def run_batch(self, batch):\n        return batch\n",
}

_SGLANG_PAST = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler_metrics_mixin.py": "class SchedulerMetricsMixin:\n    def log_decode_stats(self, running_bs):\n        return None\n",
}


def test_a_gone_modules_path_over_its_code_is_not_a_new_file(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SGLANG, "sglang@0.5.20")
    lineage = past_lineage(tmp_path / "past", _SGLANG_PAST, "sglang@0.5.8-src")
    doc = (
        "# SGLang Metrics\n\n"
        "**代码实现逻辑**:\n"  # ("implementation": the words a guide to new code uses too)
        "```python\n"
        "# sglang/srt/managers/scheduler_metrics_mixin.py\n"  # 5
        "\n"
        "# Decode 阶段\n"
        "def log_decode_stats(self, ...):\n"
        "    # ...\n"
        "    if self.enable_metrics:\n"
        "        self.stats.num_running_reqs = num_running_reqs\n"
        "```\n\n"
        "```python\n"
        "# sglang/srt/managers/my_metrics_mixin.py\n"  # 15
        "\n"
        "def log_my_stats(self, ...):\n"
        "    # ...\n"
        "```\n"
    )
    found = findings_by_place(doc, view, lineages={"sglang": lineage})
    # A past release had that module: the snippet's file is gone, not the reader's to write.
    assert statuses_at(found, 5, "sglang/srt/managers/scheduler_metrics_mixin.py") == [BROKEN]
    # A file no release had, in a folder the pin has, over code the pin lacks: the reader's new file.
    assert statuses_at(found, 15, "sglang/srt/managers/my_metrics_mixin.py") == []


_METRICS = {
    "vllm/v1/__init__.py": "",
    "vllm/v1/metrics/__init__.py": "",
    "vllm/v1/metrics/loggers.py": (
        "from prometheus_client import Counter, Gauge\n\n"
        'GENERATION = Counter(name="vllm:generation_tokens", documentation="tokens")\n'
        'USAGE = Gauge(name="vllm:kv_cache_usage_perc", documentation="usage")\n'
    ),
    # One file builds names at run time from another library's constants.
    "vllm/v1/kv_offload/__init__.py": "",
    "vllm/v1/kv_offload/tiering/__init__.py": "",
    "vllm/v1/kv_offload/tiering/manager.py": 'def _vllm_metric_name(name):\n    return f"vllm:{name}"\n',
}


def test_metric_names_in_code_comments_are_judged(tmp_path: Path) -> None:
    view = source_view(tmp_path, _METRICS, "vllm@0.30.0")
    doc = (
        "# vLLM Metrics\n\n"
        "```python\n"
        "# 更新 Batch 级别的总生成 Token 数 (用于 Prometheus Counter: vllm:num_generation_tokens_total)\n"  # 4
        "self.num_generation_tokens += n\n"
        "# vllm:generation_tokens_total\n"  # 6
        "# vllm:gpu_cache_usage_perc\n"  # 7
        "# vllm:offload_transfer_bytes\n"  # 8
        "# docker pull sglang:latest\n"  # 9
        "```\n"
    )
    found = findings_by_place(doc, view)
    (counter,) = found[(4, "vllm:num_generation_tokens_total")]
    assert counter.status == BROKEN
    # The counter without `num_`, with the `_total` the reader scrapes.
    assert counter.best is not None and counter.best.replacement == "vllm:generation_tokens_total"
    assert statuses_at(found, 6, "vllm:generation_tokens_total") == [OK]
    # Named nowhere, and sharing no word with the file that builds names: simply not exported.
    assert statuses_at(found, 7, "vllm:gpu_cache_usage_perc") == [BROKEN]
    # Sharing `offload` with that file's path: it may be one of the names built there.
    assert statuses_at(found, 8, "vllm:offload_transfer_bytes") == [NOT_CHECKABLE]
    assert not [key for key in found if key[0] == 9]


def test_an_object_read_out_of_self_is_named_like_its_class(tmp_path: Path) -> None:
    view = source_view(tmp_path, _V1, "vllm@0.30.0")
    doc = (
        "# Scheduler.schedule\n\n"
        "```python\n"
        "request = self.waiting.peek_request()\n"  # 4
        "request.num_computed_tokens = num_computed_tokens\n"  # 5
        "if request.num_cached_tokens < 0:\n"  # 6
        "    request.num_cached_tokens = num_computed_tokens\n"  # 7
        "```\n\n"
        "```python\n"
        "req = make_request(prompt)\n"  # 11
        "print(req.num_cached_tokens)\n"  # 12
        "input_batch = self._prepare_inputs(scheduler_output)\n"  # 13
        "print(input_batch.token_ids)\n"  # 14
        "```\n"
    )
    found = findings_by_place(doc, view)
    assert statuses_at(found, 5, "request.num_computed_tokens") == [OK]
    assert statuses_at(found, 6, "request.num_cached_tokens") == [BROKEN]
    # A name the snippet binds to what another call returns says nothing of its class.
    assert statuses_at(found, 12, "req.num_cached_tokens") == []
    # Nor does what a method of the quoted class returns: its helper may return anything.
    assert statuses_at(found, 14, "input_batch.token_ids") == []


_MOE = {
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/layers/fused_moe/__init__.py": "",
    "vllm/model_executor/layers/fused_moe/layer.py": "class FusedMoE:\n    pass\n",
    "vllm/model_executor/layers/fused_moe/unquantized_fused_moe_method.py": "class UnquantizedFusedMoEMethod:\n    pass\n",
}


def test_an_autoref_whose_text_is_code_font_is_a_link(tmp_path: Path) -> None:
    view = source_view(tmp_path, _MOE, "vllm@0.30.0")
    doc = (
        "# Fused MoE kernel features\n\n"
        "- [`FusedMoE`][vllm.model_executor.layers.fused_moe.layer.FusedMoE]\n"  # 3
        "- [`UnquantizedFusedMoEMethod`][vllm.model_executor.layers.fused_moe.layer.UnquantizedFusedMoEMethod]\n"  # 4
    )
    found = findings_by_place(doc, view)
    assert statuses_at(found, 3, "vllm.model_executor.layers.fused_moe.layer.FusedMoE") == [OK]
    (moved,) = found[(4, "vllm.model_executor.layers.fused_moe.layer.UnquantizedFusedMoEMethod")]
    assert moved.status == BROKEN and moved.ref.origin == "link"
    assert moved.best is not None and moved.best.replacement.endswith("unquantized_fused_moe_method.UnquantizedFusedMoEMethod")


def test_a_prometheus_query_cites_only_its_metrics(tmp_path: Path) -> None:
    view = source_view(tmp_path, _METRICS, "vllm@0.30.0")
    doc = (
        "# vLLM Metrics 快速开始\n\n"
        "通常配合 `rate()` 函数使用（例如：`rate(vllm:generation_tokens_total[1m])`）。\n"  # 3
        "应使用 `histogram_quantile(0.99, ...)` 函数来计算 P99 延迟。\n"  # 4
        "`rate(vllm:num_generation_tokens_total[5m])`\n"  # 5
    )
    found = findings_by_place(doc, view)
    assert statuses_at(found, 3, "vllm:generation_tokens_total") == [OK]
    assert not [key for key in found if key[0] == 3 and key[1].startswith("rate")]
    assert not [key for key in found if key[0] == 4]
    assert statuses_at(found, 5, "vllm:num_generation_tokens_total") == [BROKEN]


def test_a_function_called_in_a_code_spans_arguments_is_cited(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SGLANG, "sglang@0.5.20")
    past = {**_SGLANG_PAST, "sglang/srt/layers/__init__.py": "", "sglang/srt/layers/dp_attention.py": "def get_attention_tp_size():\n    return 1\n"}
    lineage = past_lineage(tmp_path / "past", past, "sglang@0.5.8-src")
    doc = "# DP attention\n\n- Head count per GPU: `model_config.get_num_kv_heads(get_attention_tp_size())`, `len(str(x))`\n"
    found = findings_by_place(doc, view, lineages={"sglang": lineage})
    (gone,) = found[(3, "get_attention_tp_size")]
    assert gone.status == BROKEN and gone.past is not None
    assert not [key for key in found if key[1] in {"len", "str"}]


def test_a_shell_listing_of_a_checkouts_files_cites_them(tmp_path: Path) -> None:
    view = source_view(tmp_path, {**_V1, "vllm/engine/__init__.py": "", "vllm/engine/llm_engine.py": "class LLMEngine:\n    pass\n"}, "vllm@0.30.0")
    doc = (
        "## Quick Reference: File Locations\n\n"
        "```bash\n"
        "# Main engine\n"
        "/home/user/vllm-learn/vllm/engine/llm_engine.py\n"  # 5
        "# Scheduler\n"
        "/home/user/vllm-learn/vllm/core/scheduler.py\n"  # 7
        "/usr/local/bin/python3 -m pip list\n"  # 8
        "```\n"
    )
    found = findings_by_place(doc, view)
    # The checkout is named after the project (`vllm-learn`), the package inside it.
    assert statuses_at(found, 5, "/home/user/vllm-learn/vllm/engine/llm_engine.py") == [OK]
    assert statuses_at(found, 7, "/home/user/vllm-learn/vllm/core/scheduler.py") == [BROKEN]
    assert not [key for key in found if key[0] == 8]


def test_the_prometheus_clients_own_metrics_are_not_the_projects(tmp_path: Path) -> None:
    view = source_view(tmp_path, _METRICS, "vllm@0.30.0")
    doc = (
        "# vLLM Metrics\n\n"
        "##### HTTP Metrics (API Server)\n\n"
        "| 指标名称 (Metric Name) | 类型 (Type) |\n"
        "| :--- | :--- |\n"
        "| `http_requests_total` | Counter |\n"  # 7
        "| `process_resident_memory_bytes` | Gauge |\n"  # 8
        "| `vllm:generation_tokens_total` | Counter |\n"  # 9
    )
    found = findings_by_place(doc, view)
    assert not [key for key in found if key[0] in (7, 8)]
    assert statuses_at(found, 9, "vllm:generation_tokens_total") == [OK]


def test_a_one_letter_option_with_its_value_attached(tmp_path: Path) -> None:
    from dataclasses import replace as with_flags

    from analyzer.refs.pinview import FlagEntry

    view = source_view(tmp_path, _V1, "vllm@0.30.0")
    view = with_flags(view, flags=[FlagEntry("--optimization-level", ("--optimization-level",)), FlagEntry("--quantization", ("--quantization", "-q"))])
    doc = "# Optimization levels\n\n```bash\nvllm serve meta-llama/Llama-3.2-1B -O1\nvllm serve meta-llama/Llama-3.2-1B -qfp8\nvllm serve meta-llama/Llama-3.2-1B -X3\n```\n"
    found = findings_by_place(doc, view)
    # vLLM's parser rewrites `-O<n>` to `--optimization-level <n>`; argparse takes `-qfp8` as `-q fp8`.
    assert statuses_at(found, 4, "-O1") == [OK]
    assert statuses_at(found, 5, "-qfp8") == [OK]
    assert statuses_at(found, 6, "-X3") == [BROKEN]


def test_a_lettered_series_of_names_no_pin_spells_is_the_authors(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SGLANG, "sglang@0.5.20")
    tree = "# SGLang 的 RadixCache：请求生命周期\n\n```\nroot (lock_ref=1)\n  ├── node_X\n  └── node_Y\n```\n"
    found = findings_by_place(tree, view)
    assert statuses_at(found, 5, "node_X") == [NOT_CHECKABLE]
    assert statuses_at(found, 6, "node_Y") == [NOT_CHECKABLE]
    # One such name alone is judged as any other.
    alone = findings_by_place(tree.replace("  └── node_Y\n", ""), view)
    assert statuses_at(alone, 5, "node_X") == [BROKEN]
    # Letters that do not follow each other are the words' own (`top_k`, `top_p`): real names, judged.
    words = findings_by_place(tree.replace("node_X", "apply_top_k()").replace("node_Y", "apply_top_p()"), view)
    assert statuses_at(words, 5, "apply_top_k") == [BROKEN]
    assert statuses_at(words, 6, "apply_top_p") == [BROKEN]


def test_an_entry_point_group_and_posix_calls(tmp_path: Path) -> None:
    sources = {**_V1, "vllm/plugins/__init__.py": 'DEFAULT_PLUGINS_GROUP = "vllm.general_plugins"\n\ndef load_plugins_by_group(group):\n    return group\n'}
    view = source_view(tmp_path, sources, "vllm@0.30.0")
    doc = (
        "# vLLM plugin system\n\n"
        "```python\n"
        "setup(name='vllm_add_dummy_model',\n"
        "      entry_points={\n"
        "          'vllm.general_plugins':\n"  # 6
        "          ['register_dummy_model = vllm_add_dummy_model:register']\n"
        "      })\n"
        "```\n\n"
        "The module `vllm.plugins.gone_loader` is where they were loaded.\n"  # 11
        "源 rank 可能在其他 rank 还没 `shm_open` 之前就 `shm_unlink`。\n"  # 12
    )
    found = findings_by_place(doc, view)
    # Spelled whole as a string by the sources: an entry-point group, not a module.
    assert statuses_at(found, 6, "vllm.general_plugins") == [OK]
    assert statuses_at(found, 11, "vllm.plugins.gone_loader") == [BROKEN]
    assert not [key for key in found if key[0] == 12]
