"""Forms from held-out 99 to 117 (112-117 measured blind at this session's start, the rest in earlier
sessions): homes for a member moved into a part its class holds (`Scheduler.sessions` ->
`SessionController.sessions`), for a member of a gone enumeration (`SequenceStatus.RUNNING` ->
`RequestStatus.RUNNING`) and for a member renamed with its words reordered; folders nested in a
list under folders; loose `self.x` lines of a reader's class that keeps the engine on `self`, and
of the class that defines most of them; names beside scripts outside the package and the author's
own scripts; snippets the paragraph before them places in a project file; file names linked to
the repository's files."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import PinView

from .fakes import findings_by_place, past_lineage, source_view

_SGLANG = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/session_controller.py": (
        "class SessionController:\n"
        "    def __init__(self, tree_cache):\n"
        "        self.sessions = {}\n\n"
        "    def open(self, req):\n"
        "        return self.sessions\n"
    ),
    "sglang/srt/managers/grammar_manager.py": (
        "class GrammarManager:\n"
        "    def __init__(self, scheduler):\n"
        "        self.grammar_queue: list = []\n"
    ),
    "sglang/srt/managers/metrics.py": (
        "class SchedulerMetrics:\n"
        "    def __init__(self):\n"
        "        self.stats = {}\n\n\n"
        "class ProfilerState:\n"
        "    def __init__(self):\n"
        "        self.stats = []\n"
    ),
    "sglang/srt/managers/scheduler.py": (
        "from typing import Optional\n\n"
        "from sglang.srt.managers.grammar_manager import GrammarManager\n"
        "from sglang.srt.managers.metrics import ProfilerState, SchedulerMetrics\n"
        "from sglang.srt.managers.session_controller import SessionController\n\n\n"
        "class Scheduler:\n"
        "    def __init__(self, tree_cache):\n"
        "        self.session_controller = SessionController(tree_cache)\n"
        "        self.grammar_manager: Optional[GrammarManager] = None\n"
        "        self.metrics = SchedulerMetrics()\n"
        "        self.profiler = ProfilerState()\n"
        "        self.waiting_queue = []\n\n"
        "    def open_session(self, recv_req):\n"
        "        return self.session_controller.open(recv_req)\n\n"
        "    def abort_request(self, recv_req):\n"
        "        self.waiting_queue.clear()\n\n"
        "    def log_stats(self):\n"
        "        return self.metrics\n"
    ),
}


def _sglang(tmp_path: Path) -> PinView:
    return source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")


def _best(found: dict, line: int, text: str) -> str | None:
    (f,) = found[(line, text)]
    assert f.status == BROKEN
    return f.best.replacement if f.best is not None else None


def test_a_member_moved_into_a_part_the_class_holds(tmp_path: Path) -> None:
    doc = (
        "# SGLang scheduler notes\n\n"
        "```python\n"
        "def open_session(self, recv_req):\n"
        "    if recv_req.session_id in self.sessions:\n"
        "        return None\n\n"
        "def abort_request(self, recv_req):\n"
        "    for req in self.grammar_queue:\n"
        "        req.abort()\n\n"
        "def log_stats(self):\n"
        "    return self.stats\n"
        "```\n\n"
        "The scheduler keeps `Scheduler.grammar_queue` and `Scheduler.no_such_queue_at_all`.\n"
    )
    found = findings_by_place(doc, _sglang(tmp_path))
    # `self.session_controller = SessionController(...)`: a constructed part.
    assert _best(found, 5, "self.sessions") == "SessionController.sessions"
    # `self.grammar_manager: Optional[GrammarManager] = None`: an annotated part; and written dotted.
    assert _best(found, 9, "self.grammar_queue") == "GrammarManager.grammar_queue"
    assert _best(found, 16, "Scheduler.grammar_queue") == "GrammarManager.grammar_queue"
    # Two parts set `stats`: no single home.
    assert _best(found, 13, "self.stats") is None
    # No part has it.
    assert _best(found, 16, "Scheduler.no_such_queue_at_all") is None


_VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/request.py": (
        "import enum\n\n\n"
        "class RequestStatus(enum.IntEnum):\n"
        "    WAITING = enum.auto()\n"
        "    RUNNING = enum.auto()\n"
        "    FINISHED_STOPPED = enum.auto()\n"
    ),
    "vllm/v1/transfer.py": "import enum\n\n\nclass TransferJobStatus(enum.Enum):\n    RUNNING = 1\n    DONE = 2\n",
    "vllm/v1/engine.py": "class EngineShutdownState:\n    RUNNING = 1\n",
}


def test_a_member_of_a_gone_enumeration_on_the_class_named_like_it(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _VLLM)
    doc = (
        "# vLLM V0 scheduler: how a request is swapped\n\n"
        "Each request is checked with `SequenceStatus.RUNNING`, then `SequenceStatus.FINISHED_STOPPED`;\n"
        "swapped ones get `SequenceStatus.SWAPPED`.\n"
    )
    found = findings_by_place(doc, pin)
    # Two `...Status` classes have `RUNNING`: the document speaks of requests, not transfer jobs.
    assert _best(found, 3, "SequenceStatus.RUNNING") == "RequestStatus.RUNNING"
    assert _best(found, 3, "SequenceStatus.FINISHED_STOPPED") == "RequestStatus.FINISHED_STOPPED"
    # No class named like it has `SWAPPED`.
    assert _best(found, 4, "SequenceStatus.SWAPPED") is None
    # Nothing in the text picks one of the two.
    other = findings_by_place("# Notes\n\nThe state is `SequenceStatus.RUNNING`.\n", pin)
    assert _best(other, 3, "SequenceStatus.RUNNING") is None


def test_a_member_renamed_with_its_words_in_another_order(tmp_path: Path) -> None:
    files = {
        **_SGLANG,
        "sglang/srt/managers/policy.py": (
            "class SchedulePolicy:\n"
            "    def get_new_batch_prefill(self):\n"
            "        return None\n\n"
            "    def get_new_prebuilt_batch(self):\n"
            "        return None\n\n"
            "    def get_next_prefill_batch_size(self):\n"
            "        return None\n\n"
            "    def calc_priority_fast(self):\n"
            "        return 0\n\n"
            "    def fast_priority_calc(self):\n"
            "        return 1\n"
        ),
    }
    pin = source_view(tmp_path / "pin", files, pin="sglang@0.5.20")
    doc = "# Notes\n\nThe policy runs `SchedulePolicy.get_new_prefill_batch()` after `SchedulePolicy.priority_calc_fast()`.\n"
    found = findings_by_place(doc, pin)
    assert _best(found, 3, "SchedulePolicy.get_new_prefill_batch()") == "SchedulePolicy.get_new_batch_prefill"
    # Two members hold the same three words: no single home from the order.
    assert _best(found, 3, "SchedulePolicy.priority_calc_fast()") != "SchedulePolicy.fast_priority_calc"


def test_a_folder_nested_in_a_list_under_a_folder(tmp_path: Path) -> None:
    files = {**_VLLM, "vllm/v1/core/__init__.py": "", "vllm/v1/core/block_pool.py": "X = 1\n", "vllm/entrypoints/__init__.py": ""}
    pin = source_view(tmp_path / "pin", files)
    doc = (
        "# Layout\n\n"
        "## Package layout (`vllm/`)\n"
        "- `entrypoints/`: servers.\n"
        "- `v1/`: the engine.\n"
        "  - `core/`: KV cache managers.\n"
        "    - `block_pool.py`: the pool.\n"
        "  - `gone_folder/`: nothing.\n\n"
        "## Topics\n"
        "- **Memory**\n"
        "  - `core/`: a topic, not a tree.\n"
    )
    found = findings_by_place(doc, pin)
    assert [f.status for f in found[(6, "core/")]] == [OK]
    assert [f.status for f in found[(7, "block_pool.py")]] == [OK]
    assert [f.status for f in found[(8, "gone_folder/")]] == [BROKEN]
    assert [f.ref.target for f in found[(6, "core/")]] == ["vllm/v1/core/"]
    # Under an item that is no folder, the name is not placed in one.
    assert [f.ref.target for f in found[(12, "core/")]] != ["vllm/v1/core/"]


def test_loose_self_lines_of_a_class_that_embeds_the_engine_are_the_readers(tmp_path: Path) -> None:
    files = {**_VLLM, "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model, seed=0):\n        self.llm_engine = None\n"}
    pin = source_view(tmp_path / "pin", files)
    trainer = (
        "# Co-locating the vLLM engine in a trainer\n\nvLLM runs inside the trainer:\n\n"
        "```python\n"
        "self.llm = LLM(model=model.name_or_path, seed=self.accelerator.process_index)\n"
        "```\n\n"
        "```python\n"
        "if self.vllm_tensor_parallel_size > 1:\n"
        "    pass\n"
        "```\n"
    )
    found = findings_by_place(trainer, pin)
    assert (10, "self.vllm_tensor_parallel_size") not in found
    assert (6, "self.accelerator.process_index") not in found
    # Lines lifted out of the project's own class still say when a member is gone.
    lifted = "# The vLLM engine\n\nvLLM keeps its settings on the engine:\n\n```python\nif self.vllm_tensor_parallel_size > 1:\n    pass\n```\n"
    assert [f.status for f in findings_by_place(lifted, pin)[(6, "self.vllm_tensor_parallel_size")]] == [BROKEN]


def test_loose_self_lines_of_the_class_that_holds_most_of_them(tmp_path: Path) -> None:
    files = {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/sched.py": (
            "class Scheduler:\n"
            "    def __init__(self, server_args):\n"
            "        self.forward_ct = 0\n"
            "        self.server_args = server_args\n"
            "        self.tree_cache = None\n"
            "        self.token_pool = None\n"
            "        self.new_token_ratio_tracker = None\n\n\n"
            "class PrefillAdder:\n"
            "    def __init__(self, server_args):\n"
            "        self.server_args = server_args\n"
            "        self.tree_cache = None\n"
            "        self.new_token_ratio = 0.5\n\n\n"
            "class Runner:\n"
            "    def __init__(self, server_args):\n"
            "        self.server_args = server_args\n"
            "        self.token_pool = None\n"
            "        self.forward_ct = 0\n\n\n"
            "class Stats:\n"
            "    def __init__(self):\n"
            "        self.new_token_ratio = 0.0\n"
        ),
    }
    pin = source_view(tmp_path / "pin", files, pin="sglang@0.5.20")
    doc = (
        "# SGLang scheduler notes\n\n"
        "The SGLang scheduler retracts requests:\n\n"
        "```python\n"
        "if self.forward_ct % 10 == 0:\n"
        "    old = self.new_token_ratio\n"
        "    self.tree_cache.reset()\n"
        "    self.token_pool.clear(self.server_args)\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    # `Scheduler` has four of the five names, more than any other class: the lines are its.
    assert [f.status for f in found[(7, "self.new_token_ratio")]] == [BROKEN]
    tie = doc.replace("    self.token_pool.clear(self.server_args)\n", "    self.server_args.clear()\n")
    # Three of four, as many as `PrefillAdder` and `Runner`'s share: no class is the snippet's.
    assert (7, "self.new_token_ratio") not in findings_by_place(tie, pin)


def test_names_of_the_authors_own_scripts(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", {**_VLLM, "vllm/v1/engine.py": "class EngineShutdownState:\n    RUNNING = 1\n\n\ndef run_engine_loop():\n    pass\n"})
    doc = (
        "# vLLM lab notes\n\n"
        "`run_vllm.py` times a whole vLLM batch; `scripts/bench_http.py` times requests.\n\n"
        "`scripts/common.py` 的 `environment_metadata()` 只记了 python/torch 版本。\n\n"
        "在 `environment_metadata()` 里补上环境变量；`run_vllm.py` 也要改。\n\n"
        "`gone_helper_fn()` 和 `scripts/common.py` 无关。\n\n"
        "`block_manager_v9.py` is gone.\n\n"
        "```\n"
        "csrc/attention/paged_v9.cu: paged_v9()\n"
        "```\n\n"
        "- `.../parser/harmony_utils.py`: `gone_parse_fn()` is missing.\n"
    )
    past = past_lineage(
        tmp_path / "past",
        {"vllm/__init__.py": "", "vllm/core/__init__.py": "", "vllm/core/block_manager_v9.py": "X = 1\n", "vllm/_custom_ops.py": "def paged_v9():\n    pass\n"},
        "vllm@0.6.6-src",
    )
    found = findings_by_place(doc, pin, lineages={"vllm": past})
    # A native source's name is its own, whatever a past release's Python wrapper was called.
    assert [f.status for f in found[(14, "paged_v9")]] == [NOT_CHECKABLE]
    # An elided path (`.../parser/x.py`) is the package's file with its folders cut, not a script.
    assert [f.status for f in found[(17, "gone_parse_fn()")]] == [BROKEN]
    # A module of a past release: the project's file, gone.
    assert [f.status for f in found[(11, "block_manager_v9.py")]] == [BROKEN]
    for line, text in ((3, "run_vllm.py"), (5, "environment_metadata()"), (7, "environment_metadata()"), (7, "run_vllm.py")):
        assert [f.status for f in found[(line, text)]] == [NOT_CHECKABLE], (line, text)
    # Written before the script, not named as its own; a file the author's folder does not explain.
    assert [f.status for f in found[(9, "gone_helper_fn()")]] == [BROKEN]
    lone = doc.replace("`scripts/bench_http.py`", "a client")
    assert [f.status for f in findings_by_place(lone, pin)[(3, "run_vllm.py")]] == [BROKEN]


def test_a_snippet_the_paragraph_before_it_places_in_the_project_defines_its_names(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", {**_VLLM, "vllm/platforms/__init__.py": "", "vllm/platforms/interface.py": "class Platform:\n    pass\n"})
    placed = (
        "# vLLM 注意力后端\n\n"
        "环境变量的值必须是 `_OldBackend` 枚举的成员名称（定义在 `vllm/platforms/interface.py:41-61`）：\n\n"
        "```python\n"
        "class _OldBackend(enum.Enum):\n"
        "    FLASH_ATTN = enum.auto()\n"
        "```\n"
    )
    assert [f.status for f in findings_by_place(placed, pin)[(6, "_OldBackend")]] == [BROKEN]
    # "我们定义一个新的枚举" (we define a new enum): the reader's own class.
    own = placed.replace("环境变量的值必须是 `_OldBackend` 枚举的成员名称（定义在 `vllm/platforms/interface.py:41-61`）：", "我们定义一个新的枚举，放在 `vllm/platforms/interface.py`：")
    assert (6, "_OldBackend") not in findings_by_place(own, pin)


def test_a_member_renamed_in_place_is_not_sent_to_a_part(tmp_path: Path) -> None:
    files = {
        **_VLLM,
        "vllm/v1/engine/__init__.py": "",
        "vllm/v1/engine/core.py": (
            "class StructuredOutputManager:\n"
            "    def __init__(self):\n"
            "        self.executor = None\n\n\n"
            "class EngineCore:\n"
            "    def __init__(self):\n"
            "        self.model_executor = None\n"
            "        self.structured_output_manager = StructuredOutputManager()\n\n"
            "    def step(self):\n"
            "        return self.model_executor\n"
        ),
    }
    pin = source_view(tmp_path / "pin", files)
    doc = "# vLLM engine core\n\nvLLM's core runs `EngineCore.executor` and `EngineCore.structured_output_manager`.\n"
    found = findings_by_place(doc, pin)
    assert _best(found, 3, "EngineCore.executor") != "StructuredOutputManager.executor"


def test_a_file_name_that_links_to_the_repositorys_file(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _VLLM)
    doc = (
        "# vLLM weight transfer\n\n"
        "[`rlhf_sparse_nccl.py`](../../../examples/rl/rlhf_sparse_nccl.py) shows vLLM's sparse updates.\n\n"
        "[`gone_module.py`](../../vllm/v1/gone_module.py) was vLLM's.\n"
    )
    found = findings_by_place(doc, pin)
    assert [f.status for f in found[(3, "rlhf_sparse_nccl.py")]] == [NOT_CHECKABLE]
    assert [f.ref.target for f in found[(3, "rlhf_sparse_nccl.py")]] == ["examples/rl/rlhf_sparse_nccl.py"]
    # A link into the package is no repository-only file.
    assert [f.status for f in found[(5, "gone_module.py")]] == [BROKEN]


def test_a_rename_within_the_class_outranks_a_held_parts_member(tmp_path: Path) -> None:
    files = {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/runner.py": (
            "class LoRAManager:\n"
            "    def init_memory_pool(self):\n"
            "        pass\n\n\n"
            "class ModelRunner:\n"
            "    def __init__(self):\n"
            "        self.lora_manager = LoRAManager()\n\n"
            "    def alloc_memory_pool(self):\n"
            "        pass\n"
        ),
    }
    pin = source_view(tmp_path / "pin", files, pin="sglang@0.5.20")
    found = findings_by_place("# SGLang model runner\n\nSGLang calls `ModelRunner.init_memory_pool()` first.\n", pin)
    assert _best(found, 3, "ModelRunner.init_memory_pool()") == "ModelRunner.alloc_memory_pool"
