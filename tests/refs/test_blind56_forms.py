"""Forms from the leftovers and held-out 57: a class a past release defined, named in an old
copy's annotation though the pin's sources still spell it; a principal class of old code named in
prose (`ModelRunner`, kept in `model_runner.py`) against a mere term (`MetaData`); a section whose
location line (`**文件位置**: `x.py``) places the copies under its subheadings; Prometheus names
written `vllm_x` in a list of metrics; a Python-typed block that only lists options; a pasted
snippet read twice names a gone class once."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.lineage import Lineage
from analyzer.refs.models import BROKEN, METRIC, OK, Finding
from analyzer.refs.pinview import PinView

from .fakes import past_lineage, sglang_view, source_view, statuses

# A past vLLM: V0's request and runner, and a kernel's small helper class.
_PAST_FILES = {
    "vllm/__init__.py": "",
    "vllm/sequence.py": "class ExecuteModelRequest:\n    pass\n",
    "vllm/worker/__init__.py": "",
    "vllm/worker/model_runner.py": "class ModelRunner:\n    def execute_model(self):\n        pass\n",
    "vllm/attention/__init__.py": "",
    "vllm/attention/triton_flash_attention.py": "class MetaData:\n    pass\n",
    "vllm/distributed/__init__.py": "",
    "vllm/distributed/shared_storage_connector.py": "class SharedStorageConnector:\n    pass\n",
}

# Today's vLLM: several runners and metadata classes, a comment that still spells the old request,
# a KV cache manager, and the metrics the server exports.
_SOURCES = {
    "vllm/v1/worker/gpu_model_runner.py": "class GPUModelRunner:\n    def execute_model(self):\n        pass\n",
    "vllm/v1/worker/cpu_model_runner.py": "class CPUModelRunner:\n    pass\n",
    "vllm/v1/attention/meta.py": "class FlashMetaData:\n    pass\n\n\nclass TritonMetaData:\n    pass\n",
    "vllm/v1/worker/worker_base.py": "# Replaces V0's ExecuteModelRequest.\nclass WorkerBase:\n    def execute_model(self):\n        pass\n",
    "vllm/v1/core/kv_cache_manager.py": (
        "class KVCacheManager:\n"
        "    def __init__(self, kv_cache_config):\n"
        "        self.block_pool = None\n\n"
        "    def allocate_slots(self, request, num_tokens):\n"
        "        return self.block_pool\n"
    ),
    "vllm/v1/metrics/loggers.py": (
        "from prometheus_client import Gauge\n\n"
        "RUNNING = Gauge(name=\"vllm:num_requests_running\", documentation=\"running\")\n\n\n"
        "def make(vllm_config):\n"
        "    return vllm_config\n"
    ),
}


@pytest.fixture
def lineage(tmp_path: Path) -> Lineage:
    return past_lineage(tmp_path / "past", _PAST_FILES, "vllm@0.10.2-src")


def _view(tmp_path: Path) -> PinView:
    return source_view(tmp_path, _SOURCES, pin="vllm@0.30.0")


def _findings(doc: str, pin: PinView, lineage: Lineage | None = None) -> dict[tuple[int, str], list[Finding]]:
    out: dict[tuple[int, str], list[Finding]] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin], lineages={"vllm": lineage} if lineage else None):
        out.setdefault((f.ref.line, f.ref.text), []).append(f)
    return out


def test_an_old_copys_annotation_names_a_past_class_the_sources_still_spell(tmp_path: Path, lineage: Lineage) -> None:
    doc = (
        "# vLLM 的 Worker\n\n"
        "```\n"
        "class LocalWorker(WorkerBase):\n"  # 4
        "    def execute_model(\n"
        "        self,\n"
        "        execute_model_req: Optional[ExecuteModelRequest] = None,\n"  # 7
        "    ) -> None:\n"
        "        pass\n"
        "```\n"
    )
    found = _findings(doc, _view(tmp_path), lineage)
    request = found[(7, "ExecuteModelRequest")]
    assert [f.status for f in request] == [BROKEN]
    assert "was `vllm.sequence.ExecuteModelRequest` at vllm 0.10.2" in request[0].note
    # Without the past release, a name the sources spell in a diagram says nothing.
    assert (7, "ExecuteModelRequest") not in _findings(doc, _view(tmp_path))


def test_a_principal_class_of_old_code_in_prose_is_broken_a_term_is_not(tmp_path: Path, lineage: Lineage) -> None:
    doc = "# vLLM's execution\n\nThe executor calls the ModelRunner, which builds the MetaData for attention.\n"
    found = _findings(doc, _view(tmp_path), lineage)
    runner = found[(3, "ModelRunner")]
    assert [f.status for f in runner] == [BROKEN]
    assert "vllm.worker.model_runner.ModelRunner" in runner[0].note
    # `MetaData` was a kernel's helper, not a class its module was named after: a word here.
    assert (3, "MetaData") not in found


_SECTION = """# vLLM 核心模块

### 2.2 KV缓存管理器

**文件位置**: `vllm/v1/core/kv_cache_manager.py`

#### 2.2.1 实现

```python
class KVCacheManager:
    def __init__(self, kv_cache_config):
        self.page_size = kv_cache_config.block_size
        self.block_pool = None

    def allocate_blocks(self, num_tokens):
        return self.page_size
```
"""


def test_a_sections_location_line_places_the_copy_under_its_subheadings(tmp_path: Path) -> None:
    found = _findings(_SECTION, _view(tmp_path))
    assert [f.status for f in found[(12, "self.page_size")]] == [BROKEN]
    assert [f.status for f in found[(13, "self.block_pool")]] == [OK]
    assert [f.status for f in found[(15, "allocate_blocks")]] == [BROKEN]
    # Without it, the copy's own methods vote, and most are not the pin's: the author's class.
    unplaced = _findings(_SECTION.replace("**文件位置**: `vllm/v1/core/kv_cache_manager.py`\n\n", ""), _view(tmp_path))
    assert not [f for fs in unplaced.values() for f in fs if f.status == BROKEN]


def test_a_new_heading_of_the_same_level_ends_the_sections_place(tmp_path: Path) -> None:
    doc = _SECTION.replace("#### 2.2.1 实现", "### 2.3 另一个模块")
    assert not [f for fs in _findings(doc, _view(tmp_path)).values() for f in fs if f.status == BROKEN]


def test_metric_names_written_with_an_underscore_are_broken_in_a_list_of_metrics(tmp_path: Path) -> None:
    doc = (
        "# vLLM\n\n"
        "**Prometheus metrics** (scrape `/metrics`):\n\n"
        "```\n"
        "vllm_num_requests_running: requests running\n"  # 6
        "vllm_kv_cache_blocks: blocks\n"  # 7
        "vllm:num_requests_running: the right name\n"  # 8
        "```\n\n"
        "## Config\n\n"
        "Pass `vllm_config` to the logger.\n"  # 12
    )
    found = _findings(doc, _view(tmp_path))
    running = found[(6, "vllm_num_requests_running")][0]
    assert (running.ref.kind, running.status) == (METRIC, BROKEN)
    assert running.suggestions[0].replacement == "vllm:num_requests_running"
    assert found[(7, "vllm_kv_cache_blocks")][0].status == BROKEN
    assert found[(8, "vllm:num_requests_running")][0].status == OK
    # Out of a metrics passage, a name the sources spell is the code's own.
    assert not [f for f in found.get((12, "vllm_config"), []) if f.ref.kind == METRIC or f.status == BROKEN]


def test_a_python_typed_block_that_lists_options_cites_the_servers_flags(tmp_path: Path) -> None:
    doc = (
        "# SGLang server arguments\n\n"
        "```python\n"
        "--model-path: Path to the weights (default: none)\n"
        "--chunked-prefill-size: Max tokens of a chunk\n"
        "--no-such-option: Something the author remembers\n"
        "```\n"
    )
    found = statuses(doc, sglang_view(tmp_path))
    assert found["--model-path"] == [OK]
    assert found["--chunked-prefill-size"] == [OK]
    assert found["--no-such-option"] == [BROKEN]
    assert not any(text.endswith(":") for text in found)


def test_a_pasted_snippet_read_as_prose_and_code_names_a_gone_class_once(tmp_path: Path, lineage: Lineage) -> None:
    doc = (
        "# vLLM disaggregation notes\n\n"
        "def run_prefill(done):\n"
        "  os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\"\n"
        "  ktc=KVTransferConfig(\n"
        "      kv_connector=\"SharedStorageConnector\",\n"  # 6
        "      kv_role=\"kv_both\",\n"
        "  )\n"
    )
    found = _findings(doc, _view(tmp_path), lineage)
    assert [f.status for f in found[(6, "SharedStorageConnector")]] == [BROKEN]


def test_a_class_member_out_of_code_font_is_code_in_any_sentence(tmp_path: Path, lineage: Lineage) -> None:
    doc = (
        "# vLLM call flow\n\n"
        "#### T1: GPUModelRunner.execute_model()\n\n"  # 3: the pin's
        "#### T2: ModelRunner.execute_model()\n\n"  # 5: a gone class's
        "#### T3: GPUModelRunner.prepare_inputs()\n\n"  # 7: a gone member
        "然后调用 GPUModelRunner.load_weights() 加载权重。\n\n"  # 9: CJK prose, a gone member
        "Node.js and ASP.NET are not code; neither is AutoTokenizer.from_pretrained() here.\n"  # 11
    )
    found = _findings(doc, _view(tmp_path), lineage)
    assert [f.status for f in found[(3, "GPUModelRunner.execute_model()")]] == [OK]
    assert [f.status for f in found[(5, "ModelRunner.execute_model()")]] == [BROKEN]
    assert [f.status for f in found[(7, "GPUModelRunner.prepare_inputs()")]] == [BROKEN]
    assert [f.status for f in found[(9, "GPUModelRunner.load_weights()")]] == [BROKEN]
    assert not [key for key in found if key[0] == 11]


def test_a_self_member_waits_for_the_documents_project(tmp_path: Path) -> None:
    # The excerpt never names its project; the names that resolve are all SGLang's, so its quoted
    # `self.x` is judged there, by spelling.
    doc = (
        "## 5. Edge cases\n\n"
        "The `Scheduler` runs `get_next_batch_to_run()` and `event_loop_overlap()`, and the `RadixCache` "
        "answers `match_prefix()`.\n\n"
        "```python\n"
        "# scheduler.py:100-120\n"
        "budget = len(input_ids) + self.no_such_reserved_budget\n"  # 7
        "```\n"
    )
    sources = {
        "sglang/srt/managers/scheduler.py": (
            "class Scheduler:\n"
            "    def get_next_batch_to_run(self):\n"
            "        return self.reserved_budget\n\n"
            "    def event_loop_overlap(self):\n"
            "        pass\n"
        ),
        "sglang/srt/mem_cache/radix_cache.py": "class RadixCache:\n    def match_prefix(self, key):\n        return key\n",
    }
    found = statuses(doc, source_view(tmp_path, sources, pin="sglang@0.5.20"))
    assert found["self.no_such_reserved_budget"] == [BROKEN]


def test_a_gone_attribute_is_reported_once_per_line_in_its_longest_chain(tmp_path: Path) -> None:
    doc = (
        "# SGLang model runner\n\n"
        "In SGLang, check the runner:\n\n"
        "```python\n"
        "# In model_runner.py, check:\n"
        "print(self.gone_graph_runner is not None)\n"  # 7
        "print(self.gone_graph_runner.capture_sizes)\n"  # 8
        "```\n"
    )
    found = statuses(doc, source_view(tmp_path, {"sglang/srt/model_runner.py": "class ModelRunner:\n    capture_sizes = ()\n"}, pin="sglang@0.5.20"))
    assert found["self.gone_graph_runner"] == [BROKEN]  # line 7 only
    assert found["self.gone_graph_runner.capture_sizes"] == [BROKEN]


def test_a_quoted_error_message_runs_no_program_whose_flags_are_foreign(tmp_path: Path) -> None:
    # Held-out 54's MoE page quotes `ValueError: --moe-expert-cache-size=N requires ...`: not a
    # command line of another program, so the page's own option stays the project's.
    doc = (
        "# SGLang chunked prefill\n\n"
        "Set `--chunked-prefill-budget` to the chunk size.\n\n"
        "```\n"
        "ValueError: --chunked-prefill-budget=N requires a paged cache,\n"
        "```\n"
    )
    assert statuses(doc, sglang_view(tmp_path))["--chunked-prefill-budget"] == [BROKEN]


def test_a_class_written_without_its_first_words_is_broken_when_one_class_has_them(tmp_path: Path) -> None:
    # Held-out 60's function map: `BatchResultProcessor`, which both pins call
    # `SchedulerBatchResultProcessor`; two words (`ResultProcessor`) or two candidates say nothing.
    sources = {
        "sglang/srt/managers/batch_result_processor.py": "class SchedulerBatchResultProcessor:\n    pass\n",
        "sglang/srt/managers/output.py": "class TextOutputWriter:\n    pass\n\n\nclass JsonOutputWriter:\n    pass\n",
    }
    # (Each is written out of code font too: a term of the text unless the pin says otherwise.)
    doc = (
        "# SGLang scheduler\n\n"
        "Results go to `BatchResultProcessor`, then an `OutputWriter` writes them; see also `ResultProcessor`.\n\n"
        "The BatchResultProcessor, the OutputWriter and the ResultProcessor are described below.\n"
    )
    found = _findings(doc, source_view(tmp_path, sources, pin="sglang@0.5.20"))
    (processor,) = found[(3, "BatchResultProcessor")]
    assert processor.status == BROKEN and processor.suggestions[0].replacement.endswith("SchedulerBatchResultProcessor")
    assert not [f for key in ((3, "OutputWriter"), (3, "ResultProcessor")) for f in found.get(key, []) if f.status == BROKEN]


def test_a_class_an_old_copys_comment_names_is_judged_by_its_past(tmp_path: Path, lineage: Lineage) -> None:
    # Held-out 61's V0 scheduler copy: `# 根据版本及配置选用不同的 BlockSpaceManager`. A class a past
    # release had is cited; any other capitalised word of a comment is the author's.
    doc = (
        "# vLLM 调度器\n\n"
        "```python\n"
        "# 选用 ExecuteModelRequest 和 GPUModelRunner，而不是 MyOwnHelper\n"  # 4
        "result = run()\n"
        "```\n"
    )
    found = _findings(doc, _view(tmp_path), lineage)
    assert [f.status for f in found[(4, "ExecuteModelRequest")]] == [BROKEN]
    assert [f.status for f in found.get((4, "GPUModelRunner"), [])] in ([], [OK])
    assert (4, "MyOwnHelper") not in found


_OLD_SCHEDULER_COPY = """# vLLM 调度器

```python
class KVCacheManager:
    def __init__(self, kv_cache_config, block_pool, page_size, enable_caching, log_stats, watermark):
        self.kv_cache_config = kv_cache_config
        self.block_pool = block_pool
        self.page_size = page_size
        self.enable_caching = enable_caching
        self.log_stats = log_stats
        self.watermark = watermark
        self.seq_to_blocks = {}
        self.prefix_cache = {}
        self.swapped = []
        self.cache_id = 0
        self.async_stopped = []
        self.lookahead = 0
```
"""


def test_a_copy_setting_five_of_the_pins_class_members_is_of_that_class(tmp_path: Path) -> None:
    # An older version of the pin's class (V0's `Scheduler.__init__` beside V1's): most of its
    # attributes are gone, but five the pin's class still sets say whose copy it is.
    sources = {
        "vllm/v1/core/kv_cache_manager.py": (
            "class KVCacheManager:\n"
            "    def __init__(self, kv_cache_config):\n"
            "        self.kv_cache_config = kv_cache_config\n"
            "        self.block_pool = None\n"
            "        self.page_size = 16\n"
            "        self.enable_caching = True\n"
            "        self.log_stats = False\n"
        ),
    }
    found = statuses(_OLD_SCHEDULER_COPY, source_view(tmp_path, sources))
    assert found["self.seq_to_blocks"] == [BROKEN] and found["self.cache_id"] == [BROKEN]
    # Four shared members of twelve: a toy class of the same name, the author's own.
    toy = _OLD_SCHEDULER_COPY.replace("        self.log_stats = log_stats\n", "")
    assert "self.seq_to_blocks" not in statuses(toy, source_view(tmp_path / "toy", sources))


_DIFFUSION_API = '''from typing import List, Union

from fastapi import APIRouter, Body

router = APIRouter(prefix="/v1")


@router.post("/set_lora")
async def set_lora(
    lora_nickname: Union[str, List[str]] = Body(..., embed=True),
    target: Union[str, List[str]] = Body("all", embed=True),
):
    return {}
'''


def test_a_routers_prefix_and_its_handlers_body_parameters_make_the_routes_body() -> None:
    from analyzer.refs.routes import module_routes

    assert module_routes(_DIFFUSION_API, ["sglang"]) == {"/v1/set_lora": ("=lora_nickname", "=target")}


def test_keys_sent_to_a_handler_that_reads_body_parameters_are_judged_against_them(tmp_path: Path) -> None:
    # Held-out 62's diffusion LoRA page: `curl -X POST .../v1/set_lora -d '{"lora_nickname": ...}'`.
    from dataclasses import replace as with_routes

    pin = source_view(tmp_path, {"sglang/multimodal_gen/runtime/entrypoints/openai/common_api.py": _DIFFUSION_API}, pin="sglang@0.5.20")
    pin = with_routes(pin, routes={"/v1/set_lora": ("=lora_nickname", "=target")})
    doc = (
        "# SGLang Diffusion LoRA\n\n"
        "```bash\n"
        "curl -X POST http://localhost:30010/v1/set_lora \\\\\n"
        "  -H \"Content-Type: application/json\" \\\\\n"
        "  -d '{\"lora_nickname\": \"a\", \"target\": \"all\", \"nickname\": \"b\"}'\n"
        "```\n"
    )
    found = statuses(doc, pin)
    assert found["lora_nickname"] == [OK] and found["target"] == [OK]
    assert found["nickname"] == [BROKEN]
