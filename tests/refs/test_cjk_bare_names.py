"""Single code-shaped words in CJK prose outside code font (`prose_code.bare_names`): a class
name or a `snake_case` name the document vouches for (in code font, in its code blocks, called a
class) is judged as in code font; one nothing vouches for only where a pin defines it."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.prose_code import bare_names

from .fakes import vllm_view


def _check(doc: str, tmp_path: Path) -> dict[tuple[int, str], list[str]]:
    out: dict[tuple[int, str], list[str]] = {}
    view = vllm_view(tmp_path)
    view.words_path = str(tmp_path / "words" / f"{view.pin}.json")  # what the sources spell: nothing here
    for f in check_references(extract_all([("ch.md", doc)]), [view]):
        out.setdefault((f.ref.line, f.ref.text), []).append(f.status)
    return out


def test_shapes_of_bare_names() -> None:
    got = [n.text for n in bare_names("LLMEngine —> ExecutorBase，通过 _validate_token_prompt 验证，调用 step() 方法")]
    assert got == ["LLMEngine", "ExecutorBase", "_validate_token_prompt", "step()"]
    # Paths, dotted names, acronyms and words in capitals are someone else's (or not names).
    assert bare_names("见 vllm/x_y.py 和 a.b_c，GPU、CUDA、vLLM 都是") == []
    # Held-out 23's "动态添加的MoE算子": an acronym has no word of two lower-case letters.
    assert [n.text for n in bare_names("动态添加的MoE算子，LoRA 与 QwQ；KVCache 和 TpModelWorker")] == ["KVCache", "TpModelWorker"]


def test_a_class_the_text_places_is_judged_in_prose_too(tmp_path: Path) -> None:
    doc = (
        "# vLLM 推理流程\n\n"
        "### ExecutorBase 类\n\n"
        "`ExecutorBase` 类: vllm/executor/executor_base.py\n\n"
        "_create_worker() 函数由 ExecutorBase 类的初始化函数调用，并交给 KVCacheManager 管理。\n\n"
        "```python\n"
        "def __init__(self):\n"
        "    self.driver_worker = self._create_worker()\n"
        "```\n"
    )
    found = _check(doc, tmp_path)
    assert found[(3, "ExecutorBase")] == [BROKEN]  # a heading
    assert found[(5, "ExecutorBase")] == [BROKEN]  # code font, also written as a word: the text calls it a class
    assert found[(7, "ExecutorBase")] == [BROKEN]
    assert found[(7, "_create_worker()")] == [BROKEN]  # vouched by the code block's call
    assert found[(7, "KVCacheManager")] == [OK]  # nothing vouches for it, but the pin defines it


def test_words_nothing_vouches_for_are_not_judged(tmp_path: Path) -> None:
    doc = "# vLLM\n\n我们增加 user_id 字段，再用 DeepSeek、MyRouter 和 MyRequestRouter 处理请求。\n"
    assert _check(doc, tmp_path) == {}


def test_a_table_column_s_type_is_not_called_a_class(tmp_path: Path) -> None:
    # `ModelRunner 类型` heads a column ("ModelRunner type"): not a claim that a class exists.
    doc = "# vLLM\n\n| 硬件 | ModelRunner 类型 |\n|---|---|\n| GPU | GPUModelRunner |\n\n`ModelRunner` 的说明。\n"
    found = _check(doc, tmp_path)
    assert found[(7, "ModelRunner")] == [NOT_CHECKABLE]


def test_a_paragraph_that_is_a_chain_of_names_is_read_in_any_language(tmp_path: Path) -> None:
    doc = (
        "# vLLM\n\n"
        "LLMEngine -> ExecutorBase -> KVCacheManager -> RunnerBase -> ModelRunnerBase\n\n"
        "The ExecutorBase class: `vllm/executor/executor_base.py`.\n\n"
        "In English, KVCacheManager and OtherThing are prose.\n"
    )
    found = _check(doc, tmp_path)
    assert found[(3, "ExecutorBase")] == [BROKEN]  # the text calls it a class
    assert found[(3, "KVCacheManager")] == [OK]
    assert (3, "RunnerBase") not in found  # nothing vouches for it and no pin defines it
    assert found[(3, "ModelRunnerBase")] == [BROKEN]  # a class by its shape (three words) on a line of names
    assert not any(line == 7 for line, _ in found)


def test_a_class_name_of_three_words_or_more_is_nobody_s_term(tmp_path: Path) -> None:
    # Written only in CJK prose, never in code font: the long name is a class by its shape; a
    # two-word one (`DeepSeek`, `FlashInfer`) may be a product's name and stays quiet.
    doc = "# vLLM\n\n`_model_input_cls`：定义模型输入的类型，ModelInputForGPUWithSamplingMetadata。由 FlashInfer 提供。\n"
    found = _check(doc, tmp_path)
    assert found[(3, "ModelInputForGPUWithSamplingMetadata")] == [BROKEN]
    assert (3, "FlashInfer") not in found


def test_a_module_of_the_projects_is_a_name_without_an_underscore_too(tmp_path: Path) -> None:
    doc = (
        "# vLLM\n\n"
        "```python\n"
        'if multi_step:\n    worker_module_name = "vllm.worker.worker"\n'
        'else:\n    worker_module_name = "vllm.v1.core.sched.scheduler"\n'
        'print("vllm.ai is the site")\n'
        "```\n\n"
        "默认配置：模块路径：\"vllm.worker.worker\"，见 docs.vllm.ai。\n"
    )
    found = _check(doc, tmp_path)
    assert found[(5, "vllm.worker.worker")] == [BROKEN]  # a module imported by its name
    assert found[(7, "vllm.v1.core.sched.scheduler")] == [OK]
    assert found[(11, "vllm.worker.worker")] == [BROKEN]
    assert not any("vllm.ai" in text for _, text in found)


def test_a_snake_case_name_of_three_words_is_code_unless_in_a_formula(tmp_path: Path) -> None:
    doc = (
        "# vLLM\n\n"
        "4. Profiling 可用内存（determine_num_available_blocks）\n\n"
        "每层 kv_cache_block大小 = n_hidden_layer * block_size * 数据类型\n"
    )
    found = _check(doc, tmp_path)
    assert found[(3, "determine_num_available_blocks")] == [BROKEN]
    assert (5, "n_hidden_layer") not in found  # an operand of the author's arithmetic


def test_a_line_of_names_alone_is_read_in_any_language(tmp_path: Path) -> None:
    doc = (
        "# vLLM\n\n"
        "KVCacheManager/BlockPool\n\n"
        "RayDistributedExecutor\n\n"
        "| name | role |\n|---|---|\n| SchedulerOutputQueue | holds outputs |\n\n"
        "KVCacheManager and Hierarchical stay prose here.\n"
    )
    found = _check(doc, tmp_path)
    assert found[(3, "KVCacheManager")] == [OK] and found[(3, "BlockPool")] == [OK]
    assert found[(5, "RayDistributedExecutor")] == [BROKEN]  # a class of three words, named alone
    assert (9, "SchedulerOutputQueue") in found  # a cell of names alone (the long name is a class too)
    assert not any(line == 11 for line, _ in found)


def test_which_lines_hold_names_alone() -> None:
    from analyzer.refs.prose_code import names_only

    assert names_only("RadixCache/HiRadixCache") and names_only("LLMEngine —> ExecutorBase") and names_only("model_runner.forward()")
    assert not names_only("RadixCache / HiRadixCache(Hierarchical)")  # a word makes it prose
    assert not names_only("Hello World") and not names_only("GPU") and not names_only("e.g.")


def test_a_cited_classs_last_words_in_the_prose_are_the_authors_shorthand(tmp_path: Path) -> None:
    # Held-out 20: `MultiModalProcessorSenderCache` in code font, then "P0のSenderCacheと": the class,
    # shortened; a class name that is no cited class's ending is still judged.
    doc = (
        "# vLLM のキャッシュ\n\n"
        "`MultiModalProcessorSenderCache` は P0 側、`AsyncKVCacheManager` は別。\n\n"
        "P1 は P0 の SenderCache と同じ順序を保つ。GoneReceiverCache も同じ。KVCacheManager が割り当てる。\n"
    )
    got = _check(doc, tmp_path)
    assert (5, "SenderCache") not in got
    assert got[(5, "GoneReceiverCache")] == [BROKEN]
    # a cited class's ending that is a class of its own at the pin is still that class
    assert got[(5, "KVCacheManager")] == [OK]
