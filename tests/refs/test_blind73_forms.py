"""Forms from held-out 73-75: a file's path alone on a snippet's line (under `# 文件位置`); a link
whose code-font text names a module-level alias of the linked file, or a name the file no longer
holds; a string handed to another library's call; a page titled after the library it imports; a
class name alone on a sketch's line; the names of a parenthesised import from a gone module; a
code block whose title names its file; a class whose module moved to a folder that shares a word
with the old one."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.lineage import Lineage
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK, WARNING
from analyzer.refs.pinview import PinView

from .fakes import findings_by_place, past_lineage, source_view, statuses_at

_VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/kv_cache_manager.py": "class KVCacheManager:\n    def allocate_slots(self):\n        pass\n",
    "vllm/v1/engine/__init__.py": "",
    "vllm/v1/engine/llm_engine.py": "class LLMEngine:\n    pass\n",
    "vllm/v1/engine/detokenizer.py": "class IncrementalDetokenizer:\n    pass\n",
    "vllm/engine/__init__.py": "",
    "vllm/engine/llm_engine.py": (
        "from vllm.v1.engine.llm_engine import LLMEngine as V1LLMEngine\n\n"
        "LLMEngine = V1LLMEngine\n"
        '"""The `LLMEngine` class is an alias of the V1 engine."""\n'
    ),
    "vllm/transformers_utils/__init__.py": "",
    "vllm/transformers_utils/config.py": "def get_config():\n    pass\n",
    "vllm/distributed/__init__.py": "",
    "vllm/distributed/parallel_state.py": "def get_tensor_model_parallel_world_size():\n    return 1\n",
    "vllm/platforms/__init__.py": "",
    "vllm/platforms/cpu.py": "class CpuPlatform:\n    pass\n",
    "vllm/attention/selector.py": "def pick(layer):\n    return layer.use_flashinfer\n",
    "vllm/model_executor/layers/quantization/__init__.py": "METHODS = [\"fp8\"]\n",
}

_PAST_VLLM = {
    "vllm/__init__.py": "",
    "vllm/platforms/__init__.py": "",
    "vllm/platforms/hpu.py": "class HpuPlatform:\n    pass\n",
    "vllm/model_executor/layers/quantization/auto_round.py": "class AutoRoundConfig:\n    pass\n",
}


def _view(tmp_path: Path) -> PinView:
    return source_view(tmp_path / "pin", _VLLM, pin="vllm@0.30.0")


def _lineage(tmp_path: Path) -> dict[str, Lineage]:
    return {"vllm": past_lineage(tmp_path / "past", _PAST_VLLM, "vllm@0.10.2-src")}




def test_a_files_path_alone_on_a_snippets_line_is_no_code(tmp_path: Path) -> None:
    doc = "# vLLM 的 KV cache\n\n```python\n# 文件位置\nvllm/v1/core/kv_cache_manager.py\n\nclass KVCacheManager:\n    pass\n```\n"
    found = findings_by_place(doc, _view(tmp_path))
    # Not `vllm / v1 / core / kv_cache_manager.py`, whose `py` no class has.
    assert not [f for fs in found.values() for f in fs if f.status == BROKEN]


def test_a_links_text_is_judged_on_its_own_and_the_link_by_its_file(tmp_path: Path) -> None:
    blob = "https://github.com/vllm-project/vllm/blob/main/vllm/engine/llm_engine.py"
    doc = (
        "# vLLM engine\n\n"
        f'- <a href="{blob}#L3">`vllm.engine.llm_engine.LLMEngine`:3</a>\n'
        f'- <a href="{blob}#L116-L400">`vllm.engine.llm_engine.RequestTracker`:116-400</a>\n'
    )
    found = findings_by_place(doc, _view(tmp_path))
    # A module-level alias is a name the file defines.
    assert statuses_at(found, 3, f"{blob}#L3") == [OK]
    assert statuses_at(found, 3, "vllm.engine.llm_engine.LLMEngine") == [OK]
    # The file is there: the link is a warning; the gone name is its own code span's breakage.
    assert statuses_at(found, 4, f"{blob}#L116-L400") == [WARNING]
    assert statuses_at(found, 4, "vllm.engine.llm_engine.RequestTracker") == [BROKEN]


_AUTO_ROUND = """# AutoRound

AutoRound is a quantization algorithm. For VLMs, use `auto-round-mllm` in CLI usage and `AutoRoundMLLM` in API usage.

```python
from transformers import AutoModelForCausalLM
from auto_round import AutoRound

autoround = AutoRound(model, bits=4)
autoround.quantize_and_save(output_dir, format="auto_round")
```

Then serve it with vLLM, whose `GoneQuantConfig` is `auto_round`'s.
"""


def test_a_page_titled_after_the_library_it_imports_is_about_it(tmp_path: Path) -> None:
    found = findings_by_place(_AUTO_ROUND, _view(tmp_path), _lineage(tmp_path))
    mllm = found[(3, "AutoRoundMLLM")]
    assert [f.status for f in mllm] == [NOT_CHECKABLE] and "about AutoRound" in mllm[0].note
    # A string handed to the library's own call is the library's word, though a past vLLM had
    # a module `auto_round`.
    assert statuses_at(found, 10, "auto_round") == []
    # Untitled, the same page's class is judged as vLLM's.
    untitled = findings_by_place(_AUTO_ROUND.replace("# AutoRound\n", "# Serving\n"), _view(tmp_path), _lineage(tmp_path))
    assert statuses_at(untitled, 3, "AutoRoundMLLM") == [BROKEN]


def test_a_class_name_alone_on_a_sketchs_line_is_that_class(tmp_path: Path) -> None:
    doc = "# vLLM platforms\n\n```python\nPlatform\n    CpuPlatform\n    HpuPlatform\n    MyOwnPlatform\n```\n"
    found = findings_by_place(doc, _view(tmp_path), _lineage(tmp_path))
    assert BROKEN not in statuses_at(found, 5, "CpuPlatform")
    hpu = found[(6, "HpuPlatform")]
    assert [f.status for f in hpu] == [BROKEN] and "vllm.platforms.hpu.HpuPlatform" in hpu[0].note
    assert statuses_at(found, 7, "MyOwnPlatform") == []  # no release had it: the author's


def test_names_of_a_parenthesised_import_from_a_gone_module(tmp_path: Path) -> None:
    doc = (
        "# SGLang borrowed from vLLM\n\n```python\n"
        "from vllm.model_executor.parallel_utils.parallel_state import (\n"  # 4
        "    get_tensor_model_parallel_world_size,\n"  # 5
        "    get_gone_size,\n"  # 6
        ")\n```\n"
    )
    found = findings_by_place(doc, _view(tmp_path))
    module = found[(4, "vllm.model_executor.parallel_utils.parallel_state")]
    assert [f.status for f in module] == [BROKEN]
    assert module[0].best is not None and module[0].best.replacement == "vllm.distributed.parallel_state"
    assert statuses_at(found, 5, "get_tensor_model_parallel_world_size") == [OK]
    assert statuses_at(found, 6, "get_gone_size") == [BROKEN]


def test_a_code_blocks_title_names_the_file_its_lines_are_from(tmp_path: Path) -> None:
    doc = (
        "# KV cache in vLLM\n\n"
        '```python title="vllm/v1/core/kv_cache_manager.py @ 22085081bb L32-43"\n'
        "        self.use_flashinfer = True\n"  # 4
        "        if self.use_flashinfer:\n"  # 5
        "            self.allocate_slots()\n"  # 6
        "```\n"
    )
    found = findings_by_place(doc, _view(tmp_path))
    flag = found[(5, "self.use_flashinfer")]
    assert [f.status for f in flag] == [BROKEN] and "the class of `vllm/v1/core/kv_cache_manager.py`" in flag[0].note
    assert BROKEN not in statuses_at(found, 6, "self.allocate_slots")
    untitled = findings_by_place(doc.replace(' title="vllm/v1/core/kv_cache_manager.py @ 22085081bb L32-43"', ""), _view(tmp_path))
    assert BROKEN not in statuses_at(untitled, 5, "self.use_flashinfer")


def test_a_class_whose_module_moved_where_a_folder_word_is_shared(tmp_path: Path) -> None:
    doc = "# vLLM detokenizing\n\nSee `vllm.transformers_utils.detokenizer_utils.IncrementalDetokenizer`.\n"
    found = findings_by_place(doc, _view(tmp_path))
    gone = found[(3, "vllm.transformers_utils.detokenizer_utils.IncrementalDetokenizer")]
    assert [f.status for f in gone] == [BROKEN]
    assert gone[0].best is not None and gone[0].best.replacement == "vllm.v1.engine.detokenizer.IncrementalDetokenizer"
    assert gone[0].best.confidence < 0.7  # a shared word, not a shared folder


_MOE = {
    "vllm/__init__.py": "",
    "vllm/model_executor/layers/fused_moe/__init__.py": "",
    "vllm/model_executor/layers/fused_moe/fused_moe.py": "def fused_experts():\n    pass\n",
    "vllm/model_executor/layers/fused_moe/experts/__init__.py": "",
    "vllm/model_executor/layers/fused_moe/experts/cutlass_moe.py": "def run_cutlass_moe():\n    pass\n",
    "vllm/model_executor/layers/fused_moe/layer.py": "class FusedMoE:\n    pass\n",
    "vllm/lora/layer.py": "class LoRALayer:\n    pass\n",
}
_PAST_MOE = {
    "vllm/__init__.py": "",
    "vllm/model_executor/layers/fused_moe/__init__.py": "",
    "vllm/model_executor/layers/fused_moe/cutlass_moe.py": "def run_cutlass_moe():\n    pass\n",
    "vllm/model_executor/layers/fused_moe/layer.py": "class FusedMoE:\n    pass\n",
}


def test_a_bare_file_that_moved_deeper_in_the_documents_folder(tmp_path: Path) -> None:
    doc = (
        "# Fused MoE in vLLM\n\n"
        "This page explains `vllm/model_executor/layers/fused_moe/fused_moe.py`.\n\n"
        "- Backends: `cutlass_moe.py`.\n"  # 5: moved to fused_moe/experts/
        "- The layer: `layer.py`.\n"  # 6: still beside fused_moe.py (and elsewhere)
    )
    pin = source_view(tmp_path / "pin", _MOE, pin="vllm@0.30.0")
    lineages = {"vllm": past_lineage(tmp_path / "past", _PAST_MOE, "vllm@0.13.0-src")}
    found = findings_by_place(doc, pin, lineages)
    moved = found[(5, "cutlass_moe.py")]
    assert [f.status for f in moved] == [BROKEN]
    assert moved[0].best is not None and moved[0].best.replacement == "vllm/model_executor/layers/fused_moe/experts/cutlass_moe.py"
    assert statuses_at(found, 6, "layer.py") == [OK]
    # Without the past release's evidence that it was beside fused_moe.py, the name alone resolves.
    assert statuses_at(findings_by_place(doc, pin), 5, "cutlass_moe.py") == [OK]
    # A folder the document cites that holds the file now (`experts/`, as a heading's folder) is
    # where it means.
    cited = doc.replace("- Backends:", "### Experts (`vllm/model_executor/layers/fused_moe/experts/`)\n\n- Backends:")
    assert statuses_at(findings_by_place(cited, pin, lineages), 7, "cutlass_moe.py") == [OK]


def test_typings_factories_are_pythons(tmp_path: Path) -> None:
    doc = "# vLLM prefix caching\n\n| `BlockHash` | `NewType(\"BlockHash\", bytes)` |\n|---|---|\n"
    found = findings_by_place(doc, _view(tmp_path))
    assert statuses_at(found, 3, 'NewType("BlockHash", bytes)') == []
    assert statuses_at(found, 3, "BlockHash") == [BROKEN]  # the project's name is judged as ever



def test_a_program_named_after_the_project_is_another_program(tmp_path: Path) -> None:
    doc = "# Runners\n\n`gpu_ar.py` 定义了 `GPUARModelRunner`，这是 vLLM-Omni 中用于自回归生成的模型运行器。\n"
    found = findings_by_place(doc, _view(tmp_path))
    runner = found[(3, "GPUARModelRunner")]
    assert [f.status for f in runner] == [NOT_CHECKABLE] and "vLLM-Omni" in runner[0].note
