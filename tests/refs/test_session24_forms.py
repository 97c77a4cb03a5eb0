"""Forms from held-out parts read this session: names and paths written with Markdown's backslash
escapes outside code font (`eplb\\_manager.py`), which the document renders as underscores."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.fix import plan_fixes
from analyzer.refs.models import BROKEN, OK

from .fakes import findings_by_place, source_view

_EPLB = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/eplb/__init__.py": "",
    "sglang/srt/eplb/expert_location.py": (
        "class ExpertLocationMetadata:\n"
        "    @staticmethod\n"
        "    def init_by_eplb(server_args, model_config, logical_count):\n"
        "        return None\n"
    ),
}

_DOC = (
    "# SGLang 源码笔记\n\n"
    "### python/sglang/srt/managers/expert\\_location.py\n\n"
    "接下来看一下 ExpertLocationMetadata.init\\_by\\_eplb 这段代码。\n"
)


def test_escaped_underscores_are_found_where_the_document_writes_them(tmp_path: Path) -> None:
    view = source_view(tmp_path, _EPLB, "sglang@0.5.23")
    view = replace(view, layout_prefix="python/")  # the wheel's files sit under python/ in the repository
    view.words_path = str(tmp_path / "sglang@0.5.23.words.json")
    found = findings_by_place(_DOC, view)
    (path,) = found[(3, "python/sglang/srt/managers/expert_location.py")]
    assert path.status == BROKEN
    assert path.ref.escaped == "python/sglang/srt/managers/expert\\_location.py"
    assert path.ref.col == len("### ")
    assert path.best is not None and path.best.replacement == "python/sglang/srt/eplb/expert_location.py"
    (member,) = found[(5, "ExpertLocationMetadata.init_by_eplb")]
    assert member.status == OK and member.ref.escaped == "ExpertLocationMetadata.init\\_by\\_eplb"
    # `--fix` finds the escaped spelling at its column and writes the new path there.
    doc = tmp_path / "ch.md"
    doc.write_text(_DOC, encoding="utf-8")
    (fix,) = plan_fixes([path], {"ch.md": doc})
    assert fix.applied == 1
    assert "### python/sglang/srt/eplb/expert_location.py\n" in fix.new


_VLLM = {
    "vllm/__init__.py": "",
    "vllm/engine/__init__.py": "",
    "vllm/engine/llm_engine.py": (
        "class LLMEngine:\n"
        "    def __init__(self, vllm_config, executor_class, log_stats):\n"
        "        self.vllm_config = vllm_config\n"
        "        self.model_config = vllm_config.model_config\n"
        "        self.log_stats = log_stats\n"
    ),
}


def test_a_method_alone_under_a_heading_that_is_its_class(tmp_path: Path) -> None:
    doc = (
        "# 图解 vllm\n\n"
        "## 3. LLMEngine\n\n"
        "* 引擎是从from_engine_args方法入口创建的。我们这次以LLM中如何使用LLMEngine为例，首先来看__init__定义\n\n"
        "```python\n"
        "def __init__(self, ...) -> None:\n"
        "    self.model_config = model_config\n"
        "    self.cache_config = cache_config\n"
        "    self.log_stats = log_stats\n"
        "```\n"
    )
    found = findings_by_place(doc, source_view(tmp_path, _VLLM, "vllm@0.33.0"))
    assert [f.status for f in found[(9, "self.model_config")]] == [OK]
    assert [f.status for f in found[(10, "self.cache_config")]] == [BROKEN]
    assert [f.status for f in found[(11, "self.log_stats")]] == [OK]
    # A heading with words of its own says less: the same copy under "## 3. Preemption" is no class's.
    other = findings_by_place(doc.replace("## 3. LLMEngine", "## 3. 引擎的初始化"), source_view(tmp_path / "b", _VLLM, "vllm@0.33.0"))
    assert BROKEN not in [f.status for f in other.get((10, "self.cache_config"), [])]


def test_a_plural_in_parentheses_is_no_call(tmp_path: Path) -> None:
    doc = (
        "# Tour\n\n"
        "```\n"
        "Feature                    → Primary File(s)\n"
        "Scheduling                 → vllm/engine/llm_engine.py, LLMEngine.step_once()\n"
        "```\n"
    )
    found = findings_by_place(doc, source_view(tmp_path, _VLLM, "vllm@0.33.0"))
    assert not any(text.startswith("File") for _, text in found)
    assert [f.status for f in found[(5, "LLMEngine.step_once")]] == [BROKEN]  # (a call beside it still is one)


def test_a_table_of_the_fields_the_sentence_before_it_gives_a_class(tmp_path: Path) -> None:
    sources = {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/model_executor/__init__.py": "",
        "sglang/srt/model_executor/model_runner.py": (
            "class ModelRunner:\n"
            "    def __init__(self, model_config):\n"
            "        self.model_config = model_config\n"
            "        self.decode_cuda_graph_runner = None\n\n\n"
            "class DraftRunner:\n"
            "    def __init__(self):\n"
            "        self.graph_runner = None\n"
        ),
    }
    doc = (
        "# ModelRunner 概览\n\n"
        "## 关键成员一览\n\n"
        "下面这张表把 `ModelRunner` 的字段按作用层分组。\n\n"
        "| 字段 | 类型 | 作用 |\n"
        "|---|---|---|\n"
        "| `self.model_config` | `ModelConfig` | 模型配置 |\n"
        "| `self.graph_runner` | 可选 | CUDA Graph 缓存 |\n"
    )
    found = findings_by_place(doc, source_view(tmp_path, sources, "sglang@0.5.23"))
    assert [f.status for f in found[(9, "self.model_config")]] == [OK]
    # Spelled elsewhere (`DraftRunner.graph_runner`), but not a field of the class the table lists.
    assert [f.status for f in found[(10, "self.graph_runner")]] == [BROKEN]
    # The same table after a sentence that names no class's fields: `self.graph_runner` is spelled, so unjudged.
    other = findings_by_place(doc.replace("的字段按作用层分组", "按作用层分组"), source_view(tmp_path / "b", sources, "sglang@0.5.23"))
    assert BROKEN not in [f.status for f in other.get((10, "self.graph_runner"), [])]


def test_the_items_of_a_sequence_declared_of_a_class() -> None:
    import ast

    from analyzer.refs.receivers import receivers

    tree = ast.parse(
        "def alloc(self, reqs: List[Req], batch):\n"
        "    for req in reqs:\n"
        "        req.req_pool_idx = self.pool.alloc(1)[0]\n"
        "    for other in batch:\n"
        "        other.rid\n"
        "    for req in batch.reqs:\n"
        "        req.extend_input_len\n"
    )
    got = [(r.lineno, r.var, r.member, r.cls) for r in receivers(tree)]
    # (`req` is bound again by a loop over something else at line 6: no single class then.)
    assert got == []
    tree = ast.parse("def alloc(self, reqs: list['Req']):\n    for req in reqs:\n        req.req_pool_idx = 1\n")
    assert [(r.lineno, r.var, r.member, r.cls) for r in receivers(tree)] == [(3, "req", "req_pool_idx", "Req")]


def test_a_member_of_the_class_an_object_is_named_after_with_its_words_reordered(tmp_path: Path) -> None:
    sources = {
        "vllm/__init__.py": "",
        "vllm/config/__init__.py": "",
        "vllm/config/scheduler.py": (
            "class SchedulerConfig:\n"
            "    enable_chunked_prefill: bool = False\n"
            "    long_prefill_token_threshold: int = 0\n"
        ),
    }
    doc = (
        "# V1 scheduler\n\n"
        "```python\n"
        "def schedule(self):\n"
        "    if not self.scheduler_config.chunked_prefill_enabled:\n"
        "        return None\n"
        "```\n"
    )
    found = findings_by_place(doc, source_view(tmp_path, sources, "vllm@0.33.0"))
    (f,) = found[(5, "self.scheduler_config.chunked_prefill_enabled")]
    assert f.status == BROKEN
    assert f.best is not None and f.best.replacement == "SchedulerConfig.enable_chunked_prefill"


def test_the_keys_of_a_config_flag_s_json_are_its_config_class_s_fields(tmp_path: Path) -> None:
    from analyzer.refs.pinview import FlagEntry

    sources = {
        "vllm/__init__.py": "",
        "vllm/config/__init__.py": "",
        "vllm/config/speculative.py": (
            "from dataclasses import dataclass\n\n\n"
            "@dataclass\n"
            "class SpeculativeConfig:\n"
            "    method: str = 'eagle'\n"
            "    num_speculative_tokens: int = 1\n"
        ),
        "vllm/model_executor/__init__.py": "",
        "vllm/model_executor/base_config.py": "class QuantizationConfig:\n    def get_name(self):\n        return ''\n",
    }
    view = source_view(tmp_path, sources, "vllm@0.33.0")
    flags = [
        FlagEntry("--speculative-config", dest="speculative_config", defined_at="vllm/engine/arg_utils.py:1"),
        FlagEntry("--quantization-config", dest="quantization_config", defined_at="vllm/engine/arg_utils.py:2"),
    ]
    view = replace(view, flags=flags)
    view.words_path = str(tmp_path / "vllm@0.33.0.words.json")
    doc = (
        "# Speculative decoding\n\n"
        "```bash\n"
        "vllm serve m --speculative-config '{\n"
        '    "method": "eagle",\n'
        '    "num_speculative_tokens": 3,\n'
        '    "enable_adaptive_k": true\n'
        "}'\n"
        "vllm serve m --quantization-config '{\"linear\": {\"weights\": \"fp8\"}}'\n"
        "```\n"
    )
    found = findings_by_place(doc, view)
    assert [f.status for f in found[(5, "method")]] == [OK]
    assert [f.status for f in found[(6, "num_speculative_tokens")]] == [OK]
    assert [f.status for f in found[(7, "enable_adaptive_k")]] == [BROKEN]
    # A class named like the flag outside the configuration modules is not what the flag fills.
    assert BROKEN not in [f.status for f in found.get((9, "linear"), [])]
