"""What a careful editor does not call the project's, on documents others wrote:
- a variable another package's callable made (`model = AutoFP8ForCausalLM.from_pretrained(...)`)
  holds that package's object until it is assigned anew; a class the document imports from
  elsewhere is that package's in the prose too;
- a path written from above a checkout (`vllm/vllm/...`) is the repository path under it;
- a `#L` link to a file that only imports or aliases the class its text names is a warning;
- the items of a list another program's sentence introduces ("Quark supports ... schemes for
  vLLM:") are that program's names.
And code that is easy to pass over: a `{literalinclude}`'s file, relative to the page, and a Jekyll
`{% highlight %}` block (a copy with line numbers, in an HTML figure); a copy of a class's
constructor alone is the project's class when most attributes it sets are the class's.
Each case with its counterpart that stays broken."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK, WARNING
from analyzer.refs.pinview import PinView, SymbolEntry

_LLM = "vllm/entrypoints/llm.py"
_ABSTRACT = "vllm/v1/executor/abstract.py"
_UNIPROC = "vllm/v1/executor/uniproc_executor.py"
_CACHE = "vllm/v1/core/radix_cache.py"

_SOURCES = {
    "vllm/__init__.py": "from vllm.entrypoints.llm import LLM\n",
    _LLM: "class LLM:\n    def generate(self, prompts):\n        pass\n",
    _ABSTRACT: "class Executor:\n    pass\nfrom vllm.v1.executor.uniproc_executor import UniProcExecutor as _U\nUniProcExecutor = _U\n",
    _UNIPROC: "class UniProcExecutor:\n    pass\nclass GoneExecutor:\n    pass\n",
    _CACHE: "class RadixCache:\n    def __init__(self, params):\n        self.page_size = params.page_size\n        self.root_node = None\n",
}


def _view(tmp_path: Path) -> PinView:
    tree = tmp_path / "vllm-0.33.0"
    for rel, text in _SOURCES.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
    symbols = [
        SymbolEntry("vllm", "vllm/__init__.py", 1, 1, "module"),
        SymbolEntry("vllm.LLM", "vllm/__init__.py", 1, 1, "import"),
        SymbolEntry("vllm.entrypoints.llm.LLM", _LLM, 1, 3, "class"),
        SymbolEntry("vllm.entrypoints.llm.LLM.generate", _LLM, 2, 3, "function"),
        SymbolEntry("vllm.v1.executor.abstract.Executor", _ABSTRACT, 1, 2, "class"),
        SymbolEntry("vllm.v1.executor.uniproc_executor.UniProcExecutor", _UNIPROC, 1, 2, "class"),
        SymbolEntry("vllm.v1.executor.uniproc_executor.GoneExecutor", _UNIPROC, 3, 4, "class"),
        SymbolEntry("vllm.v1.core.radix_cache.RadixCache", _CACHE, 1, 4, "class"),
        SymbolEntry("vllm.v1.core.radix_cache.RadixCache.__init__", _CACHE, 2, 4, "function"),
        SymbolEntry("vllm.v1.core.radix_cache.RadixCache.page_size", _CACHE, 3, 3, "attribute"),
        SymbolEntry("vllm.v1.core.radix_cache.RadixCache.root_node", _CACHE, 4, 4, "attribute"),
    ]
    view = PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(_SOURCES), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(tmp_path / "words.json")
    return view


def _found(doc: str, pin: PinView) -> dict[tuple[int, str], str]:
    return {(f.ref.line, f.ref.text): f.status for f in check_references(extract_all([("doc.md", doc)]), [pin])}


_DOC = (
    "# vLLM FP8\n\n"  # 1
    "This package introduces the `AutoFP8ForCausalLM` and `BaseQuantizeConfig` objects.\n\n"  # 3
    "```python\n"  # 5
    "from auto_fp8 import AutoFP8ForCausalLM, BaseQuantizeConfig\n"  # 6
    "model = AutoFP8ForCausalLM.from_pretrained(model_dir, BaseQuantizeConfig())\n"  # 7
    "model.quantize(examples)\n"  # 8
    "model.save_quantized(out_dir)\n"  # 9
    "```\n\n"
    "Then load it in vLLM:\n\n"  # 12
    "```python\n"  # 14
    "from vllm import LLM\n"  # 15
    "model = LLM(model=out_dir)\n"  # 16
    "model.generate(prompt)\n"  # 17
    "model.save_quantized(out_dir)\n"  # 18
    "```\n\n"
    "Call `model.quantize` before saving.\n"  # 21
)


def test_a_variable_another_package_made_holds_that_package_s_object_until_assigned_anew(tmp_path: Path) -> None:
    found = _found(_DOC, _view(tmp_path))
    # AutoFP8's model: its methods are not `LLM`'s.
    assert (8, "model.quantize") not in found
    assert (9, "model.save_quantized") not in found
    # After `model = LLM(...)`, the same variable is vLLM's object again.
    assert found[(17, "model.generate")] == OK
    assert found[(18, "model.save_quantized")] == BROKEN
    assert found[(21, "model.quantize")] == BROKEN


def test_a_class_the_document_imports_from_another_package_is_that_package_s_in_the_prose(tmp_path: Path) -> None:
    found = _found(_DOC, _view(tmp_path))
    assert (3, "AutoFP8ForCausalLM") not in found
    assert (3, "BaseQuantizeConfig") not in found
    # Without the import, a class the pin lacks is still judged.
    bare = _found("# vLLM FP8\n\nThis package introduces the `AutoFP8ForCausalLM` objects.\n", _view(tmp_path))
    assert bare[(3, "AutoFP8ForCausalLM")] == BROKEN


def test_a_path_written_from_above_the_checkout_is_the_repository_path_under_it(tmp_path: Path) -> None:
    doc = (
        "# vLLM CLI\n\n"
        "The script is declared in `vllm/pyproject.toml`; the entrypoint is `vllm/vllm/entrypoints/llm.py`.\n\n"
        "The old one was `vllm/vllm/entrypoints/gone.py`, next to `vllm/entrypoints/gone.py`.\n"
    )
    found = {text: status for (_, text), status in _found(doc, _view(tmp_path)).items()}
    assert found["vllm/vllm/entrypoints/llm.py"] == OK
    assert found["vllm/pyproject.toml"] == NOT_CHECKABLE  # a root file: not in a wheel
    assert found["vllm/vllm/entrypoints/gone.py"] == BROKEN
    assert found["vllm/entrypoints/gone.py"] == BROKEN


def test_a_link_to_a_file_that_aliases_the_named_class_is_a_warning_not_broken(tmp_path: Path) -> None:
    blob = "https://github.com/vllm-project/vllm/blob/main/vllm/v1/executor/abstract.py#L1"
    doc = f"# vLLM executors\n\nThe default is a [`UniProcExecutor`]({blob}).\n\nThe old one was a [`GoneExecutor`]({blob}).\n"
    found = _found(doc, _view(tmp_path))
    assert found[(3, blob)] == WARNING
    # Defined elsewhere too, but the linked file never spells it: the file is there, so a warning
    # (links are judged by the file they name, as the real-docs labels judge them; a gone name is
    # its own code span's finding).
    assert found[(5, blob)] == WARNING


def test_the_items_of_a_list_another_program_s_sentence_introduces_are_that_program_s(tmp_path: Path) -> None:
    doc = (
        "# vLLM quantization\n\n"
        "Quark supports multiple quantization schemes for vLLM:\n\n"
        "- **INT8**: `w_int8_a_int8_per_tensor_sym`\n"
        "- **INT4**: `w_int4_per_group_asym`\n\n"
        "The engine reads these settings:\n\n"
        "- `kv_scale_sym_gone`\n"
    )
    found = {text: status for (_, text), status in _found(doc, _view(tmp_path)).items()}
    assert found["w_int8_a_int8_per_tensor_sym"] == NOT_CHECKABLE
    assert found["w_int4_per_group_asym"] == NOT_CHECKABLE
    assert found["kv_scale_sym_gone"] == BROKEN


def test_a_literalinclude_s_file_is_the_repository_file_relative_to_the_page(tmp_path: Path) -> None:
    doc = (
        "# vLLM server\n\n"
        "```{literalinclude} ../../../vllm/entrypoints/llm.py\n:language: python\n```\n\n"
        "```{literalinclude} ../../../vllm/entrypoints/openai/protocol.py\n:language: python\n```\n"
    )
    found = _found(doc, _view(tmp_path))
    assert found[(3, "../../../vllm/entrypoints/llm.py")] == OK
    assert found[(7, "../../../vllm/entrypoints/openai/protocol.py")] == BROKEN


def test_a_jekyll_highlight_block_is_code_of_its_language_without_the_copy_s_line_numbers(tmp_path: Path) -> None:
    doc = (
        "# vLLM walkthrough\n\n"  # 1
        '<figure class="custom-code-block">\n'  # 3
        "  <figcaption><code>vllm/entrypoints/llm.py</code></figcaption>\n"  # 4
        "{% highlight python %}\n"  # 5
        "1  from vllm import LLM\n"  # 6
        "...\n"  # 7
        "9  llm = LLM(model=path)\n"  # 8
        "10 llm.generate(prompt)\n"  # 9
        "11 llm.generate_all(prompt)\n"  # 10
        "{% endhighlight %}\n"  # 11
        "</figure>\n"  # 12
    )
    refs = {(r.line, r.text): r for r in extract_all([("doc.md", doc)])}
    assert refs[(10, "llm.generate_all")].col == doc.splitlines()[9].index("llm.generate_all")
    found = _found(doc, _view(tmp_path))
    assert found[(9, "llm.generate")] == OK
    assert found[(10, "llm.generate_all")] == BROKEN
    # Without the Liquid tags, the numbered lines are the page's text, not code.
    plain = _found(doc.replace("{% highlight python %}", "").replace("{% endhighlight %}", ""), _view(tmp_path))
    assert (10, "llm.generate_all") not in plain


def test_a_copy_of_a_constructor_alone_is_judged_when_its_attributes_are_the_class_s(tmp_path: Path) -> None:
    copy = (
        "# vLLM radix cache\n\n"
        "```python\n"
        "class RadixCache:\n"  # 4
        "    def __init__(\n"
        "        self,\n"
        "        params,\n"  # 7
        "        page_size: int,\n"  # 8
        "    ):\n"
        "        self.page_size = page_size\n"
        "        self.root_node = None\n"
        "```\n"
    )
    found = _found(copy, _view(tmp_path))
    assert found[(7, "params")] == OK
    assert found[(8, "page_size")] == BROKEN  # the pin's constructor takes `params` only
    # A class of the same name whose attributes are not the project's: the author's own.
    toy = copy.replace("self.page_size = page_size", "self.pages = page_size").replace("self.root_node", "self.tree")
    assert (8, "page_size") not in _found(toy, _view(tmp_path))


def test_a_checkout_under_the_authors_own_folders(tmp_path: Path) -> None:
    # Held-out 20's `target/vllm/vllm/multimodal/cache.py`: the checkout's folder under a folder of
    # the author's; the repository path under it is judged, and its home keeps the author's folders.
    doc = "# vLLM CLI\n\nSee `target/vllm/vllm/entrypoints/llm.py` and `work/vllm/vllm/entrypoints/gone.py`.\n"
    found = {text: status for (_, text), status in _found(doc, _view(tmp_path)).items()}
    assert found["target/vllm/vllm/entrypoints/llm.py"] == OK
    assert found["work/vllm/vllm/entrypoints/gone.py"] == BROKEN


def test_the_packages_own_layout_is_no_checkout_folder(tmp_path: Path) -> None:
    # `python/sglang/benchmark/...` is SGLang's package (its `python/` layout), not a checkout
    # folder `sglang/` holding the repository's `benchmark/` (check_bench's planted path caught it).
    from analyzer.refs.resolve import _inside_checkout

    from .test_quoted_code import _view as sglang_view

    pin = sglang_view(tmp_path)
    assert _inside_checkout("python/sglang/benchmark/datasets/old.py", pin) is None
    assert _inside_checkout("work/sglang/python/sglang/srt/managers/scheduler.py", pin) == "python/sglang/srt/managers/scheduler.py"
    assert _inside_checkout("sglang/benchmark/x.py", pin) == "benchmark/x.py"  # a checkout's repository folder
