"""Forms of held-out 28 to 33: a comparison table's columns (a Chinese note comparing SGLang's
LoRA serving with vLLM's), a name a pin defines today that an old release of the other project
defined, a past module's name the pin's sources still spell as a registry key (a table of
reasoning parsers), an object's member that a subclass of the class the object is named after
defines, a copied signature or mostly matching `self.x` that say a class copy is the project's,
a flag split over a table cell's `<br/>`, typing's `Self`, the standard library's `deque` and
transformers' tokenizer classes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.extract import extract_references
from analyzer.refs.lineage import build_lineage
from analyzer.refs.pinview import SymbolEntry

from .fakes import sglang_view, source_view, statuses, vllm_view
from .test_undefined_names import _with_words


def test_a_comparison_table_s_columns_belong_to_the_projects_their_headers_name() -> None:
    doc = (
        "# LoRA 与适配器总览\n\n"
        "| 维度 | SGLang(17-lora) | vLLM(13-lora) |\n|---|---|---|\n"
        "| 缓存组织 | `LoRAMemoryPool` 单级 GPU 池 | 注册缓存(`max_cpu_loras`) |\n"
        "| 内核 | `BaseLoRABackend`,与 vLLM 的 `PunicaWrapper` 不同 | `PunicaWrapper` |\n"
    )
    found = {(r.line, r.text): r.framework for r in extract_references("ch.md", doc)}
    assert found[(5, "LoRAMemoryPool")] == "sglang" and found[(5, "max_cpu_loras")] == "vllm"
    assert found[(6, "PunicaWrapper")] == "vllm"  # the cell's own words say so first
    assert found[(6, "BaseLoRABackend")] in {"sglang", "vllm"}


def test_a_name_a_pin_defines_now_is_not_given_to_the_project_that_once_did(tmp_path: Path) -> None:
    vllm, sglang = vllm_view(tmp_path), sglang_view(tmp_path)
    past = [SymbolEntry("vllm.core.scheduler.Scheduler.get_next_batch_to_run", "vllm/core/scheduler.py", 5, 9, "function")]
    lineages = {"vllm": build_lineage("vllm", [("vllm@0.6.6-src", past)])}
    doc = "# Notes\n\nEach step the loop calls `get_next_batch_to_run` first.\n"
    found = check_references(extract_all([("ch.md", doc)]), [vllm, sglang], lineages=lineages)
    assert [(f.pin, f.status) for f in found if f.ref.text == "get_next_batch_to_run"] == [("sglang@0.5.20", "ok")]


def test_a_past_module_s_name_the_sources_still_spell_is_not_broken(tmp_path: Path) -> None:
    pin = _with_words(vllm_view(tmp_path), tmp_path, source='ReasoningParserManager.register_module("deepseek_v3")\n')
    past = [SymbolEntry("vllm.model_executor.models.deepseek_v3", "vllm/model_executor/models/deepseek_v3.py", 1, 900, "module")]
    lineages = {"vllm": build_lineage("vllm", [("vllm@0.6.6-src", past)])}
    doc = "# vLLM reasoning parsers\n\n| Model | Parser |\n|---|---|\n| DeepSeek V3.1 | `deepseek_v3` |\n"
    [found] = [f for f in check_references(extract_all([("ch.md", doc)]), [pin], lineages=lineages) if f.ref.text == "deepseek_v3"]
    assert found.status == "not-checkable"  # spelled as a parser's key; the old model module is not what the table names


def test_an_object_s_member_that_a_subclass_of_its_class_defines(tmp_path: Path) -> None:
    pin = vllm_view(tmp_path)
    mod = "vllm/v1/engine/finish.py"
    pin = replace(
        pin,
        symbols=[
            *pin.table,
            SymbolEntry("vllm.v1.engine.finish.BaseFinishReason", mod, 1, 5, "class"),
            SymbolEntry("vllm.v1.engine.finish.FinishMatchedStr", mod, 6, 12, "class", ("BaseFinishReason",)),
            SymbolEntry("vllm.v1.engine.finish.FinishMatchedStr.matched", mod, 8, 8, "attribute"),
            SymbolEntry("vllm.v1.engine.request.Request.finished_reason", "vllm/v1/engine/request.py", 3, 3, "attribute"),
            SymbolEntry("vllm.v1.engine.output.Output.to_json_dict", "vllm/v1/engine/output.py", 3, 9, "function"),
        ],
    )
    found = statuses("# vLLM\n\nIt trims by `finished_reason.matched`, then sends `finished_reason.to_json_dict()`.\n", pin)
    assert found["finished_reason.matched"] == ["ok"]  # `FinishMatchedStr`'s, a `BaseFinishReason`
    assert found["finished_reason.to_json_dict()"] == ["broken"]  # only an unrelated class has it


_DIFFUSION_SCHEDULER = '''
class Scheduler:
    def __init__(self, server_args, task_pipes_to_slaves, result_pipes_from_slaves):
        self.worker = None
        self.task_pipes_to_slaves = task_pipes_to_slaves

    def event_loop(self):
        pass
'''


def test_a_copied_signature_the_pin_s_method_takes_says_the_copy_is_the_project_s_class(tmp_path: Path) -> None:
    # Held-out 29's Chinese note on SGLang Diffusion copies its `Scheduler` with two methods: the
    # constructor (every class has one) and `event_loop`; the constructor's three parameters are
    # the pin's, so the copy's `self.x` the class lacks are stale, not the author's own toy's.
    pin = source_view(tmp_path, {"sglang/multimodal_gen/runtime/managers/scheduler.py": _DIFFUSION_SCHEDULER}, "sglang@0.5.20")
    doc = (
        "# SGLang Diffusion\n\n```python\nclass Scheduler:\n"
        "    def __init__(self, server_args, task_pipes_to_slaves, result_pipes_from_slaves):\n"
        "        self.gpu_worker = GPUWorker()\n"
        "        self.task_pipes = task_pipes_to_slaves\n\n"
        "    def event_loop(self):\n"
        "        req = self.zmq_socket.recv_pyobj()\n```\n"
    )
    found = statuses(doc, pin)
    assert found["self.task_pipes"] == ["broken"]
    # (`self.zmq_socket.recv_pyobj()`: the stale socket is reported once, on the chain the line writes.)
    assert found["self.zmq_socket.recv_pyobj"] == ["broken"] and "self.zmq_socket" not in found
    toy = doc.replace("task_pipes_to_slaves, result_pipes_from_slaves", "config, pipes")
    assert "self.task_pipes" not in statuses(toy, pin)  # one method alike: the author's own class


def test_a_flag_split_over_a_table_cell_s_break_is_judged_whole(tmp_path: Path) -> None:
    # Held-out 30's SGLang Ascend page breaks long flags for the column's width.
    pin = sglang_view(tmp_path)
    doc = (
        "# SGLang on Ascend\n\n| Argument | Default |\n|---|---|\n"
        "| `--chunked-prefill-`<br/>`size` | `8192` |\n| `--chunked-prefill-`<br/>`budget` | `None` |\n"
    )
    found = check_references(extract_all([("ch.md", doc)]), [pin])
    got = [(f.ref.line, f.ref.text, f.ref.target, f.status) for f in found if f.ref.kind == "flag"]
    assert got == [
        (5, "--chunked-prefill-", "--chunked-prefill-size", "ok"),
        (6, "--chunked-prefill-", "--chunked-prefill-budget", "broken"),
    ]
    assert not any(f.ref.text in {"size", "budget"} for f in found)


def test_typing_s_special_forms_in_an_annotation_are_typing_s(tmp_path: Path) -> None:
    doc = "# vLLM\n\n```python\n@model_validator(mode=\"after\")\ndef _validate(self) -> Self:\n    return self\n```\n"
    assert "Self" not in statuses(doc, vllm_view(tmp_path))


_BUDGET = '''
class DPBudget:
    def __init__(self, num_dp_ranks):
        self.num_dp_ranks = num_dp_ranks
        self.total_requests = [0] * num_dp_ranks
        self.total_tokens = [0] * num_dp_ranks
        self.last_timestamp = [0.0] * num_dp_ranks

    def dispatch(self, method):
        return 0
'''


def test_a_copy_whose_self_members_are_mostly_the_class_s_is_the_project_s(tmp_path: Path) -> None:
    # Held-out 30's note copies SGLang's `DPBudget` from before `dp_size` became `num_dp_ranks`:
    # one method beside the constructor, and three of its four `self.x` still the class's.
    pin = source_view(tmp_path, {"sglang/srt/managers/data_parallel_controller.py": _BUDGET}, "sglang@0.5.23")
    copy = (
        "# SGLang DP\n\n```python\nclass DPBudget:\n    def __init__(self, dp_size: int):\n"
        "        self.dp_size = dp_size\n        self.total_requests = [0] * dp_size\n"
        "        self.total_tokens = [0] * dp_size\n        self.last_timestamp = [0.0] * dp_size\n\n"
        "    def dispatch(self, method):\n        return self.dp_size\n```\n"
    )
    found = statuses(copy, pin)
    assert found["self.dp_size"] == ["broken", "broken"] and found["dp_size"] == ["broken"]
    toy = copy.replace("self.total_tokens", "self.my_tokens").replace("self.last_timestamp", "self.my_time")
    assert "self.dp_size" not in statuses(toy, pin)  # one member alike: the author's own class


def test_the_standard_library_s_containers_called_in_prose_are_python_s(tmp_path: Path) -> None:
    # Held-out 32's Japanese note: "最近 4 件を `deque(maxlen=4)` に保持".
    found = statuses("# vLLM\n\nIt keeps the last four in a `deque(maxlen=4)`, made by `partial(make, 4)`.\n", vllm_view(tmp_path))
    assert not {"deque(maxlen=4)", "partial(make, 4)"} & set(found)


def test_transformers_tokenizer_classes_are_transformers(tmp_path: Path) -> None:
    # Held-out 33's note on Qwen3-VL chat templates: "tokenizer 是 `PreTrainedTokenizerFast`".
    found = statuses("# vLLM\n\nThe tokenizer is a `PreTrainedTokenizerFast`, its base `PreTrainedTokenizerBase`.\n", vllm_view(tmp_path))
    assert not {"PreTrainedTokenizerFast", "PreTrainedTokenizerBase"} & set(found)
