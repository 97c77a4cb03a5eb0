"""Forms from held-out 84-87 and the earlier parts' `req.x` misses: an object named by one word
(`req`) whose class has exactly that name (`Req`), a loop's variable included; a heading naming a
method as `Class method` (`AsyncLLMEngine __init__`); a `self.x()` in a method whose `self` is
typed, said once; a name the text gives to a file that does not define it, though another does;
a class tree drawn with `├─` and `→` in a fence typed as Python."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.copies import method_owner
from analyzer.refs.models import BROKEN, OK

from .fakes import findings_by_place, past_lineage, source_view, statuses_at

_SGLANG = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/schedule_batch.py": (
        "class ReqKvInfo:\n"
        "    def __init__(self):\n"
        "        self.req_pool_idx = None\n"
        "        self.cache_protected_len = 0\n\n\n"
        "class Req:\n"
        "    def __init__(self, rid):\n"
        "        self.rid = rid\n"
        "        self.origin_input_ids = []\n"
        "        self.kv = ReqKvInfo()\n\n"
        "    def get_fill_ids(self):\n"
        "        return self.origin_input_ids\n"
    ),
    "sglang/srt/managers/scheduler.py": (
        "class Scheduler:\n"
        "    def __init__(self):\n"
        "        self.waiting_queue = []\n\n"
        "    def process_input_requests(self, reqs):\n"
        "        pass\n\n"
        "    def on_idle(self):\n"
        "        pass\n\n\n"
        "def run_scheduler_process(server_args, pipe_writer):\n"
        "    Scheduler().on_idle()\n"
    ),
    "sglang/srt/disaggregation/__init__.py": "",
    "sglang/srt/disaggregation/prefill.py": (
        "class SchedulerDisaggregationPrefillMixin:\n"
        "    def event_loop_normal_disagg_prefill(self):\n"
        "        self.process_input_requests([])\n"
    ),
    "sglang/srt/managers/io_struct.py": "class State:\n    def __init__(self):\n        self.phase = 0\n",
    "sglang/srt/mem_cache/__init__.py": "",
    "sglang/srt/mem_cache/common.py": "def evict_from_tree_cache(tree_cache, num_tokens):\n    pass\n",
    "sglang/srt/mem_cache/allocation.py": "def alloc_token_slots(tree_cache, num_tokens):\n    return evict_from_tree_cache(tree_cache, num_tokens)\n",
    "sglang/srt/managers/schedule_policy.py": (
        "class SchedulePolicy:\n    def calc_priority(self, waiting_queue):\n        pass\n\n\n"
        "class PriorityQueue:\n    def get_priority(self, req):\n        return 0\n"
    ),
}

_VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/engine/__init__.py": "",
    "vllm/v1/engine/async_llm.py": (
        "class AsyncLLM:\n"
        "    def __init__(self, vllm_config, executor_class, log_stats=True, usage_context=None, log_requests=True):\n"
        "        self.engine_core = None\n\n"
        "    async def generate(self, prompt, sampling_params, request_id):\n"
        "        pass\n"
    ),
    "vllm/engine/__init__.py": "",
    "vllm/engine/async_llm_engine.py": "from vllm.v1.engine.async_llm import AsyncLLM\n\nAsyncLLMEngine = AsyncLLM\n",
}




def test_an_object_named_by_one_word_is_a_member_of_the_class_of_that_name(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    doc = (
        "# SGLang radix cache\n\n"
        "```python\n"
        "self.token_to_kv_pool_allocator.free(kv_indices[req.cache_protected_len :])\n"
        "x = req.origin_input_ids\n"
        "```\n\n"
        "Then `req.fill_ids` is inserted, and `req.rid` names the request.\n"
    )
    found = findings_by_place(doc, pin)
    broken = found[(4, "req.cache_protected_len")]
    assert [f.status for f in broken] == [BROKEN]
    # The member moved into `Req.kv`, a `ReqKvInfo`: the one class that has it.
    assert broken[0].suggestions and broken[0].suggestions[0].replacement == "ReqKvInfo.cache_protected_len"
    assert statuses_at(found, 5, "req.origin_input_ids") == [OK]
    assert statuses_at(found, 8, "req.fill_ids") == [BROKEN]
    assert statuses_at(found, 8, "req.rid") == [OK]


def test_a_loops_variable_is_named_like_its_class_too(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    doc = "# SGLang scheduler\n\n```python\nfor req in self.waiting_queue:\n    n = len(req.input_ids)\n    m = req.origin_input_ids\n```\n"
    found = findings_by_place(doc, pin)
    assert statuses_at(found, 5, "req.input_ids") == [BROKEN]
    assert statuses_at(found, 6, "req.origin_input_ids") == [OK]


def test_a_word_no_class_is_named_after_says_nothing(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    # No class `Batch`, `Obj`: their members are the author's, not judged; a class `State` whose
    # members no `state.x` of the document holds is another class than the one the author means.
    doc = "# SGLang scheduler\n\n```python\nbatch.output_ids.append(1)\nobj.whatever()\nstate.event.wait()\nrid = state.obj.rid\n```\n"
    found = findings_by_place(doc, pin)
    assert not [f for fs in found.values() for f in fs if f.status == BROKEN]


def test_a_heading_names_a_methods_class_as_two_words() -> None:
    assert method_owner("AsyncLLMEngine __init__", "__init__") == "AsyncLLMEngine"
    assert method_owner("`Scheduler::get_next_batch_to_run`", "get_next_batch_to_run") == "Scheduler"
    # A sentence's capitalised word before a plain word is no owner.
    assert method_owner("How Scheduler step works", "step") is None
    assert method_owner("The Background __init__", "__init__") is None


def test_a_copied_constructor_under_such_a_heading_is_that_classs(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _VLLM, pin="vllm@0.30.0")
    doc = (
        "# vLLM v0.6.0 code flow\n\n"
        "### AsyncLLMEngine __init__\n"
        "```python\n"
        "def __init__(\n"
        "    self,\n"
        "    model_config: ModelConfig,\n"
        "    log_stats: bool = True,\n"
        "):\n"
        "    self._background_loop = None\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    assert statuses_at(found, 7, "model_config") == [BROKEN]
    assert statuses_at(found, 8, "log_stats") == [OK]
    assert statuses_at(found, 10, "self._background_loop") == [BROKEN]


def test_a_typed_selfs_call_is_said_once(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    doc = (
        "# SGLang PD prefill\n\n"
        "```python\n"
        "def event_loop_normal_disagg_prefill(self: Scheduler):\n"
        "    recv_reqs = self.recv_requests()\n"
        "    self.process_input_requests(recv_reqs)\n"
        "```\n"
    )
    # A past release's scheduler had `recv_requests`: what makes the quoted method's reading of
    # the call a finding of its own on the mixin that defines the method now.
    past = {"sglang/__init__.py": "", "sglang/srt/__init__.py": "", "sglang/srt/managers/__init__.py": "",
            "sglang/srt/managers/scheduler.py": "class Scheduler:\n    def recv_requests(self):\n        return []\n"}
    found = findings_by_place(doc, pin, {"sglang": past_lineage(tmp_path / "past", past, "sglang@0.5.10-src")})
    assert statuses_at(found, 5, "self.recv_requests") == [BROKEN]
    assert (5, "recv_requests") not in found


def test_a_name_the_text_gives_to_the_wrong_file_points_at_the_file_that_defines_it(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    doc = "# SGLang radix cache\n\n分配器显存不够时，`common.py` 的 `alloc_token_slots` → `evict_from_tree_cache` 调到这里。\n"
    found = findings_by_place(doc, pin)
    [f] = found[(3, "alloc_token_slots")]
    assert f.status == BROKEN
    assert "defined nowhere" not in f.note
    assert [s.replacement for s in f.suggestions] == ["sglang/srt/mem_cache/allocation.py"]
    assert statuses_at(found, 3, "evict_from_tree_cache") == [OK]


def test_a_class_tree_drawn_in_a_python_fence_is_read_as_a_drawing(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    doc = (
        "# SGLang scheduling policies\n\n"
        "```python\n"
        "[SchedulePolicy] base\n"
        "    │\n"
        "    ├─ FCFSPolicy: by arrival\n"
        "    │   get_priority(req) → req.arrival_time\n"
        "    └─ SJFPolicy: by length\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    assert statuses_at(found, 4, "SchedulePolicy") == [OK]
    assert statuses_at(found, 6, "FCFSPolicy") == [BROKEN]
    assert statuses_at(found, 8, "SJFPolicy") == [BROKEN]


def test_an_arrow_in_a_note_under_real_code_is_no_drawing(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    doc = (
        "# SGLang scheduler process\n\n"
        "```python\n"
        "def run_scheduler_process(server_args, pipe_writer):\n"
        "    scheduler = Scheduler(server_args,\n"
        "                          dp_balance_meta=None)\n"
        "    scheduler.on_idle()\n"
        "\n"
        "💡 note: pipeline → overlap → normal\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    # Read as Python still: the keyword of the project's call is judged against its signature.
    assert statuses_at(found, 6, "dp_balance_meta") == [BROKEN]


def test_a_functions_own_parameter_is_not_typed_by_its_one_word_name(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    doc = (
        "# SGLang tokenizer worker\n\n"
        "```python\n"
        "def attach(self, req):\n"
        "    req.http_worker_ipcs = []\n"
        "x = req.origin_input_ids\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    assert (5, "req.http_worker_ipcs") not in found


def test_a_dotted_string_the_sources_write_whole_is_no_member(tmp_path: Path) -> None:
    files = {**_SGLANG, "sglang/srt/utils/__init__.py": "", "sglang/srt/utils/nvtx.py": '_COLORS = {"scheduler.recv_requests": 1}\n'}
    pin = source_view(tmp_path / "pin", files, pin="sglang@0.5.20")
    doc = (
        "# SGLang NVTX ranges\n\n"
        "| Marker | Phase |\n| --- | --- |\n"
        "| `scheduler.recv_requests` | Input |\n"
        "| `scheduler.on_idle` | Idle |\n"
    )
    found = findings_by_place(doc, pin)
    # An NVTX range's name, not `Scheduler.recv_requests` (which the pin's scheduler lacks).
    assert BROKEN not in statuses_at(found, 5, "scheduler.recv_requests")
    assert statuses_at(found, 6, "scheduler.on_idle") == [OK]
