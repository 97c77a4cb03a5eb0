"""Forms from held-out 96 and 97, and earlier parts' misses of the same kinds: the parameters of a
method quoted without its class (`def evict(self, num_tokens, evict_callback):`; held-out 15, 68
and 78 quote the same old `RadixCache.evict`, whose parameters went into an `EvictParams`); a
`file://` link into the author's checkout; a method quoted alone after a snippet wrote its class;
a string that names a gone function but is still the key the pin registers something under; a
quoted file named with its folders (`# vllm/config/scheduler.py`)."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, OK

from .fakes import findings_by_place, past_lineage, source_view, statuses_at

_SGLANG = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/mem_cache/__init__.py": "",
    "sglang/srt/mem_cache/base_prefix_cache.py": (
        "from dataclasses import dataclass\n\n\n"
        "@dataclass\n"
        "class EvictParams:\n"
        "    num_tokens: int\n"
        "    swa_num_tokens: int = 0\n"
    ),
    "sglang/srt/mem_cache/radix_cache.py": (
        "from sglang.srt.mem_cache.base_prefix_cache import EvictParams\n\n\n"
        "class RadixCache:\n"
        "    def evict(self, params: EvictParams):\n"
        "        leaves = self._collect_leaves()\n\n"
        "    def _collect_leaves(self):\n"
        "        return []\n\n"
        "    def match_prefix(self, key, page_size=1):\n"
        "        return self._collect_leaves()\n"
    ),
}


def _doc(signature: str) -> str:
    return (
        "# SGLang radix cache, first version\n\n"
        "```python\n"
        f"    def {signature}:\n"
        "        leaves = self._collect_leaves()\n"
        "        return leaves\n"
        "```\n"
    )


def test_a_quoted_methods_parameters_are_its_class_methods(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    found = findings_by_place(_doc("evict(self, num_tokens, evict_callback)"), pin)
    assert statuses_at(found, 4, "evict") == [OK]
    gathered = found[(4, "num_tokens")]
    assert [f.status for f in gathered] == [BROKEN]
    # Gone into the parameters object the method now takes.
    assert gathered[0].suggestions and gathered[0].suggestions[0].replacement == "EvictParams.num_tokens"
    assert statuses_at(found, 4, "evict_callback") == [BROKEN]


def test_a_parameter_the_method_still_takes_is_ok(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    found = findings_by_place(_doc("match_prefix(self, key, page_size=1)"), pin)
    assert statuses_at(found, 4, "key") == [OK]
    assert statuses_at(found, 4, "page_size") == [OK]


def test_the_authors_own_method_has_no_parameters_to_judge(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _SGLANG, pin="sglang@0.5.20")
    # No class of the project defines `shrink`: the author's code, nothing judged.
    found = findings_by_place(_doc("shrink(self, num_tokens, evict_callback)"), pin)
    assert not [f for fs in found.values() for f in fs if f.ref.text in {"num_tokens", "evict_callback"}]


_VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/attention/__init__.py": "",
    "vllm/v1/attention/ops/__init__.py": "",
    "vllm/v1/attention/ops/prefix_prefill.py": "def context_attention_fwd(q, k, v):\n    pass\n",
    "vllm/config/__init__.py": "",
    "vllm/config/scheduler.py": (
        "class SchedulerConfig:\n"
        "    long_prefill_token_threshold: int = 0\n\n\n"
        "class SchedulerPolicy:\n"
        "    name: str = 'fcfs'\n"
    ),
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/sched/__init__.py": "",
    "vllm/v1/core/sched/scheduler.py": (
        "class Scheduler:\n"
        "    def __init__(self, vllm_config, kv_cache_config):\n"
        "        self.waiting = []\n"
        "        self.running = []\n"
    ),
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/runner.py": (
        "def _moe_forward(x):\n    return x\n\n\n"
        "direct_register_custom_op(op_name=\"moe_forward\", op_func=_moe_forward)\n"
    ),
}


def test_a_file_link_into_a_local_checkout_is_the_projects_path(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _VLLM, pin="vllm@0.30.0")
    doc = (
        "# vLLM chunked prefill\n\n"
        "- [prefix_prefill.py](file:///Users/me/code/vllm/vllm/attention/ops/prefix_prefill.py#L10-L20)\n"
        "- [scheduler.py](file:///Users/me/code/vllm/vllm/v1/core/sched/scheduler.py)\n"
        "- [notes](file:///Users/me/notes/todo.md)\n"
    )
    found = findings_by_place(doc, pin)
    gone = found[(3, "file:///Users/me/code/vllm/vllm/attention/ops/prefix_prefill.py#L10-L20")]
    assert [f.status for f in gone] == [BROKEN]
    assert gone[0].suggestions and gone[0].suggestions[0].replacement.endswith("vllm/v1/attention/ops/prefix_prefill.py")
    assert statuses_at(found, 4, "file:///Users/me/code/vllm/vllm/v1/core/sched/scheduler.py") == [OK]
    assert not [k for k in found if k[0] == 5]


def test_a_method_quoted_alone_after_its_class_is_that_classs(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _VLLM, pin="vllm@0.30.0")
    doc = (
        "# vLLM scheduler\n\n"
        "## Overview\n\n"
        "```python\n"
        "class Scheduler:\n"
        "    def __init__(self, vllm_config, kv_cache_config):\n"
        "        self.waiting = []\n"
        "        self.running = []\n"
        "```\n\n"
        "## Queues\n\n"
        "```python\n"
        "def __init__(self, vllm_config, kv_cache_config):\n"
        "    self.waiting = []\n"
        "    self.running = []\n"
        "    self.swapped = []\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    assert statuses_at(found, 18, "self.swapped") == [BROKEN]
    assert statuses_at(found, 16, "self.waiting") == [OK]


def test_a_string_the_pin_still_registers_is_not_the_gone_function(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _VLLM, pin="vllm@0.30.0")
    past = past_lineage(tmp_path / "past", {"vllm/__init__.py": "", "vllm/layer.py": "def moe_forward(x):\n    return x\n\n\ndef moe_fake(x):\n    return x\n"}, "vllm@0.10.2-src")
    doc = (
        "# vLLM custom ops\n\n"
        "```python\n"
        "direct_register_custom_op(\n"
        "    op_name=\"moe_forward\",\n"
        "    fake_impl=moe_fake,\n"
        ")\n"
        "```\n"
    )
    found = findings_by_place(doc, pin, {"vllm": past})
    assert not statuses_at(found, 5, "moe_forward")
    # A gone function handed over by name, bound nowhere in the document: judged as a bare call is.
    assert statuses_at(found, 6, "moe_fake") == [BROKEN]


def test_a_quoted_file_named_with_its_folders_is_that_file(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _VLLM, pin="vllm@0.30.0")
    doc = (
        "# vLLM chunked prefill\n\n"
        "```python\n"
        "# vllm/config/scheduler.py\n"
        "if self.long_prefill_token_threshold == 0:\n"
        "    self.long_prefill_token_threshold = 4\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    # Not the `Scheduler` of another `scheduler.py`, which has no such member.
    assert BROKEN not in statuses_at(found, 5, "self.long_prefill_token_threshold")


_DISPATCH = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler.py": (
        "class Scheduler:\n"
        "    def __init__(self):\n"
        "        self._request_dispatcher = None\n"
        "        self.weight_updater = None\n\n"
        "    def handle_generate_request(self, req):\n        pass\n\n"
        "    def abort_request(self, req):\n        pass\n\n"
        "    def open_session(self, req):\n        pass\n"
    ),
    "sglang/srt/managers/weight_updater.py": (
        "class SchedulerWeightUpdaterManager:\n"
        "    def update_weights_from_disk(self, req):\n        pass\n"
    ),
    "sglang/srt/managers/tokenizer_manager.py": (
        "class TokenizerManager:\n"
        "    def update_weights_from_disk(self, req):\n        pass\n\n"
        "    def abort_request(self, rid):\n        pass\n"
    ),
}


def test_loose_self_lines_are_the_one_class_that_alone_has_one_of_them(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _DISPATCH, pin="sglang@0.5.20")
    doc = (
        "# SGLang request dispatch\n\n"
        "```python\n"
        "self._request_dispatcher = TypeBasedDispatcher([\n"
        "    (TokenizedGenerateReqInput, self.handle_generate_request),\n"
        "    (AbortReq, self.abort_request),\n"
        "    (OpenSessionReqInput, self.open_session),\n"
        "    (UpdateWeightFromDiskReqInput, self.update_weights_from_disk),\n"
        "])\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    # `_request_dispatcher` is `Scheduler`'s alone, and it has most of the names: the lines are its.
    assert statuses_at(found, 8, "self.update_weights_from_disk") == [BROKEN]
    assert BROKEN not in statuses_at(found, 5, "self.handle_generate_request")


def test_loose_self_lines_no_class_alone_has_are_not_judged(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _DISPATCH, pin="sglang@0.5.20")
    # `abort_request` and `update_weights_from_disk` are two classes' each: whose `self` is moot.
    doc = "# SGLang\n\n```python\nx = self.abort_request\ny = self.update_weights_from_disk\nz = self.open_session\n```\n"
    found = findings_by_place(doc, pin)
    assert not [f for fs in found.values() for f in fs if f.status == BROKEN]


_PROCESSOR = {
    "vllm/__init__.py": "",
    "vllm/multimodal/__init__.py": "",
    "vllm/multimodal/processing.py": (
        "class BaseMultiModalProcessor:\n"
        "    def apply(self, inputs, timing_ctx):\n"
        "        return self._cached_apply_hf_processor(inputs, timing_ctx)\n\n"
        "    def _cached_apply_hf_processor(self, inputs, timing_ctx):\n"
        "        return self._maybe_apply_prompt_updates(mm_items=inputs, prompt_ids=[])\n\n"
        "    def _maybe_apply_prompt_updates(self, mm_items, prompt_ids):\n"
        "        return prompt_ids\n"
    ),
}


def test_a_copied_methods_keywords_to_its_own_methods_are_judged_on_their_signatures(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _PROCESSOR, pin="vllm@0.30.0")
    doc = (
        "# vLLM multimodal processor\n\n"
        "```python\n"
        "class BaseMultiModalProcessor:\n"
        "    def apply(self, prompt, mm_items):\n"
        "        out = self._cached_apply_hf_processor(prompt, mm_items, return_mm_hashes=True)\n"
        "        return self._maybe_apply_prompt_updates(mm_items=mm_items, prompt_ids=out, is_update_applied=False)\n\n"
        "    def _cached_apply_hf_processor(self, inputs, timing_ctx):\n"
        "        pass\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    assert statuses_at(found, 6, "return_mm_hashes") == [BROKEN]
    assert statuses_at(found, 7, "mm_items") == [OK]
    assert statuses_at(found, 7, "prompt_ids") == [OK]
    assert statuses_at(found, 7, "is_update_applied") == [BROKEN]


def test_an_env_var_read_as_a_bare_name_is_the_env_var(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", {**_VLLM, "vllm/envs.py": "environment_variables = {\n    'VLLM_CACHE_ROOT': lambda: '~',\n}\n"}, pin="vllm@0.30.0")
    doc = "# vLLM multimodal\n\n```python\nself._cache = ProcessingCache(VLLM_MM_INPUT_CACHE_GIB)\n```\n"
    found = findings_by_place(doc, pin)
    assert found[(4, "VLLM_MM_INPUT_CACHE_GIB")][0].ref.kind == "env"


_RUNNER = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/encoder_cache.py": "class EncoderCache:\n    def reset(self):\n        pass\n",
    "vllm/v1/worker/gpu_model_runner.py": (
        "class GPUModelRunner:\n"
        "    def __init__(self):\n"
        "        self.encoder_cache: dict[str, int] = {}\n"
        "        self.input_batch = None\n"
    ),
}


def test_a_member_named_like_a_class_that_the_pin_declares_a_dict_has_its_methods(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _RUNNER, pin="vllm@0.30.0")
    doc = "# vLLM encoder cache\n\n```python\nfor h in freed:\n    self.encoder_cache.pop(h, None)\nself.encoder_cache.resize()\n```\n"
    found = findings_by_place(doc, pin)
    # `pop` is a dict's: the pin declares `GPUModelRunner.encoder_cache` a dict.
    assert BROKEN not in statuses_at(found, 5, "self.encoder_cache.pop")
    # No dict has `resize`, nor `EncoderCache`: still broken.
    assert statuses_at(found, 6, "self.encoder_cache.resize") == [BROKEN]


def test_a_keyword_a_quoted_method_passes_on_is_the_callees_not_the_methods(tmp_path: Path) -> None:
    sources = {
        **_SGLANG,
        "sglang/srt/managers/schedule_batch.py": "class ScheduleBatch:\n    def __init__(self, reqs, forward_mode):\n        self.reqs = reqs\n",
    }
    pin = source_view(tmp_path / "pin", sources, pin="sglang@0.5.20")
    doc = (
        "# SGLang radix cache\n\n"
        "```python\n"
        "    def match_prefix(self, key, page_size=1):\n"
        "        leaves = self._collect_leaves()\n"
        "        return ScheduleBatch(reqs=leaves, forward_mode=1)\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    # Taken by `ScheduleBatch`, whatever `RadixCache.match_prefix` takes.
    assert BROKEN not in statuses_at(found, 6, "reqs")
    assert BROKEN not in statuses_at(found, 6, "forward_mode")


def test_typing_s_generic_forms_are_pythons_in_a_snippet_that_leaves_out_its_imports(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "pin", _DISPATCH, pin="sglang@0.5.20")
    doc = (
        "# SGLang dispatch\n\n"
        "```python\n"
        "class TypeBasedDispatcher:\n"
        "    def __init__(self, mapping: List[Tuple[Type, Callable]]):\n"
        "        self._mapping = mapping\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    assert BROKEN not in statuses_at(found, 5, "Type")


def test_a_method_of_the_same_name_with_other_parameters_is_not_the_copied_classs(tmp_path: Path) -> None:
    sources = {
        **_VLLM,
        "vllm/v1/worker/__init__.py": "",
        "vllm/v1/worker/gpu_worker.py": "class Worker:\n    def execute_model(self, scheduler_output):\n        pass\n",
        "vllm/v1/worker/gpu_model_runner.py": (
            "class GPUModelRunner:\n"
            "    def execute_model(self, scheduler_output, intermediate_tensors=None):\n"
            "        return self._prepare_inputs(scheduler_output)\n\n"
            "    def _prepare_inputs(self, scheduler_output):\n"
            "        pass\n"
        ),
    }
    pin = source_view(tmp_path / "pin", sources, pin="vllm@0.30.0")
    doc = (
        "# vLLM worker\n\n"
        "```python\n"
        "class Worker:\n"
        "    def execute_model(self, scheduler_output):\n"
        "        return self.model_runner.execute_model(scheduler_output)\n"
        "```\n\n"
        "```python\n"
        "def execute_model(self, scheduler_output, kv_cache):\n"
        "    batch = self._prepare_inputs(scheduler_output)\n"
        "```\n"
    )
    found = findings_by_place(doc, pin)
    # Other parameters than the copied `Worker.execute_model`'s: judged on the classes that define
    # the method, `GPUModelRunner` among them, which has `_prepare_inputs`.
    assert statuses_at(found, 11, "_prepare_inputs") == [OK]


def test_a_parameter_another_class_takes_is_not_judged_on_a_file_not_named_after_the_class(tmp_path: Path) -> None:
    sources = {
        **_SGLANG,
        "sglang/srt/disaggregation/__init__.py": "",
        "sglang/srt/disaggregation/allocator.py": "class BuddyAllocator:\n    def free(self, block):\n        pass\n",
        "sglang/srt/mem_cache/token_pool.py": "class TokenToKVPoolAllocator:\n    def free(self, free_index):\n        pass\n",
    }
    pin = source_view(tmp_path / "pin", sources, pin="sglang@0.5.20")
    doc = "# SGLang memory pools\n\n```python\n# allocator.py\ndef free(self, free_index: torch.Tensor):\n    self.release(free_index)\n```\n"
    found = findings_by_place(doc, pin)
    # `allocator.py` is now another module's: `TokenToKVPoolAllocator.free` takes `free_index`.
    assert BROKEN not in statuses_at(found, 5, "free_index")
