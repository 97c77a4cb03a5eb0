"""Links into a project's repository in documents that do not say where they live (`links.py`):
what is extracted, how docs pages and `#L` anchors are judged."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.extract import extract_references
from analyzer.refs.links import relative_link, repository_of, sentence_names
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK, PATH, WARNING
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import resolve
from analyzer.refs.suggest import suggest

ENGINE = "sglang/srt/entrypoints/engine.py"


def _links(source: str) -> list:
    return [r for r in extract_references("doc.md", source) if r.origin == "link"]


def _sglang(tmp_path: Path) -> PinView:
    """A wheel whose engine.py moved `Engine.generate` down the file and builds `ReqInput` once."""
    lines = ["import os"] * 60 + ["class Engine:"] + ["    pass"] * 20 + ["    def generate(self, prompt):", "        obj = ReqInput(prompt)", "        return obj"]
    tree = tmp_path / "sglang"
    (tree / "sglang/srt/entrypoints").mkdir(parents=True)
    (tree / ENGINE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    symbols = [
        SymbolEntry("sglang.srt.entrypoints.engine.Engine", ENGINE, 61, 84, "class", ()),
        SymbolEntry("sglang.srt.entrypoints.engine.Engine.generate", ENGINE, 82, 84, "function", ()),
    ]
    return PinView("sglang@0.5.20", "sglang", "release", "python/", ("sglang",), frozenset({ENGINE}), symbols, [], [], tree=str(tree))


def _vllm_git(tmp_path: Path, kind: str = "git") -> PinView:
    files = {"vllm/__init__.py", "docs/serving/data_parallel.md", "examples/offline/basic.py", "tests/test_x.py"}
    if kind == "release":
        files = {"vllm/__init__.py"}
    return PinView(f"vllm@0.30.0{'-src' if kind == 'git' else ''}", "vllm", kind, "", ("vllm",), frozenset(files), [], [], [], tree=str(tmp_path))


# ----- extraction ------------------------------------------------------------------------------
def test_gh_file_links_need_no_atlas_comment_and_take_the_paths_project() -> None:
    refs = _links("See [the script](gh-file:examples/offline/basic.py) and [kernel](gh-file:sgl-kernel/csrc/x.cu).\n")
    assert [(r.target, r.framework, r.kind) for r in refs] == [("examples/offline/basic.py", "vllm", PATH), ("sgl-kernel/csrc/x.cu", "sglang", PATH)]


def test_a_relative_link_into_a_package_is_that_projects_file_with_its_anchor() -> None:
    (ref,) = _links("Entry: [engine](python/sglang/srt/entrypoints/engine.py#L93-L120)\n")
    assert (ref.target, ref.framework, ref.line_range, ref.repo_layout) == ("python/sglang/srt/entrypoints/engine.py", "sglang", (93, 120), True)
    (climbed,) = _links("Model: [llama](../../../vllm/model_executor/models/llama.py)\n")
    assert (climbed.target, climbed.framework) == ("vllm/model_executor/models/llama.py", "vllm")


def test_a_third_party_documents_own_files_and_pages_are_not_extracted() -> None:
    assert _links("Next: [analysis](engine-step-analysis.md), [demo](examples/my_demo.py), [notes](vllm/notes.md)\n") == []


def test_a_document_in_the_repository_links_its_folders_and_pages() -> None:
    source = "Uses [LLM][vllm.LLM].\n\nRun [it](../../examples/offline/basic.py), read [DP](../serving/data_parallel.md), see [x](faq).\n"
    refs = _links(source)
    assert [(r.target, r.docs_page) for r in refs if r.kind == PATH] == [("examples/offline/basic.py", False), ("serving/data_parallel.md", True)]


def test_what_shows_a_document_sits_in_a_repository() -> None:
    assert repository_of("[x](gh-file:vllm/a.py)", None) == "vllm"
    assert repository_of("[m](../../../vllm/model_executor/models)", None) == "vllm"
    assert repository_of("[m](python/sglang/srt/x.py)", None) is None  # written from anywhere: says nothing of where
    assert repository_of("plain text", "sglang") == "sglang"
    assert relative_link("../../tests/test_x.py", None) is None
    assert relative_link("../../tests/test_x.py", "vllm") is not None


def test_sentence_names_take_the_last_code_of_the_links_sentence_callee_first() -> None:
    assert sentence_names("Done. Calls `TM.generate_request(obj, stream)` to get a generator (", ["x", "TM.generate_request(obj, stream)"]) == (
        "generate_request",
        "obj",
        "stream",
    )
    assert sentence_names("`Old` said. Then nothing (", ["Old"]) == ()


# ----- resolution ------------------------------------------------------------------------------
def test_docs_pages_are_found_under_docs_by_their_trailing_path(tmp_path: Path) -> None:
    source = "[LLM][vllm.LLM]\n\n[DP](data_parallel.md) [gone](../serving/removed.md) [ex](examples/offline/basic.py)\n"
    refs = [r for r in _links(source) if r.kind == PATH]
    git = _vllm_git(tmp_path)
    assert [resolve(r, git).status for r in refs] == [OK, BROKEN, OK]
    wheel = _vllm_git(tmp_path, "release")
    assert {resolve(r, wheel).status for r in refs} == {NOT_CHECKABLE}


def test_a_missing_page_is_not_checkable_when_the_docs_build_generates_pages(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yaml").write_text("plugins:\n  - gen-files:\n      scripts:\n        - docs/gen.py\n", encoding="utf-8")
    files = {"vllm/__init__.py", "docs/serving/data_parallel.md", "mkdocs.yaml"}
    pin = PinView("vllm@0.30.0-src", "vllm", "git", "", ("vllm",), frozenset(files), [], [], [], tree=str(tmp_path))
    (ref,) = [r for r in _links("[LLM][vllm.LLM]\n\n[cli](../cli/bench/serve.md)\n") if r.kind == PATH]
    finding = resolve(ref, pin)
    assert finding.status == NOT_CHECKABLE and "gen-files" in finding.note


def test_an_anchor_whose_lines_no_longer_spell_the_cited_name_is_a_warning_with_the_new_lines(tmp_path: Path) -> None:
    pin = _sglang(tmp_path)
    (ref,) = _links("1) `Engine.generate(...)` → [engine.py#L10-L20](python/sglang/srt/entrypoints/engine.py#L10-L20)\n")
    assert ref.anchor_names[:2] == ("generate", "Engine")
    finding = resolve(ref, pin)
    assert finding.status == WARNING and "L82-L84" in finding.note
    (best,) = suggest(ref, pin)
    assert best.replacement == "python/sglang/srt/entrypoints/engine.py#L82-L84"


def test_an_anchor_that_still_spells_the_name_is_ok_and_a_name_the_file_never_spells_is_no_warning(tmp_path: Path) -> None:
    pin = _sglang(tmp_path)
    (held,) = _links("Builds `ReqInput` ([engine.py#L82](python/sglang/srt/entrypoints/engine.py#L82)).\n")
    assert resolve(held, pin).status == OK
    (other,) = _links("Proxies to `LoRAManager` ([engine.py#L5](python/sglang/srt/entrypoints/engine.py#L5)).\n")
    finding = resolve(other, pin)
    assert finding.status == OK and "does not spell `LoRAManager`" in finding.note


def test_a_link_into_a_gone_file_of_the_package_is_broken(tmp_path: Path) -> None:
    (ref,) = _links("Sends it ([mixin](python/sglang/srt/entrypoints/gone_mixin.py#L899)).\n")
    assert resolve(ref, _sglang(tmp_path)).status == BROKEN


# ----- a gone linked file ----------------------------------------------------------------------
def _moved(tmp_path: Path) -> PinView:
    """A wheel whose `managers/sender_mixin.py` is gone: its code now lives in `managers/parts/streamer.py`,
    which spells both names the sentence cites; `io_struct.py` defines one of them only."""
    files = {
        "sglang/srt/managers/parts/streamer.py": "from x import OutBatch\n\nclass Streamer:\n    to_detok = None\n    def send(self):\n        self.to_detok.put(OutBatch())\n",
        "sglang/srt/managers/io_struct.py": "class OutBatch:\n    pass\n",
        "sglang/srt/managers/scheduler.py": "class Scheduler:\n    pass\n",
        "sglang/srt/managers/queue.py": "class Req:\n    pass\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    symbols = [
        SymbolEntry("sglang.srt.managers.parts.streamer.Streamer", "sglang/srt/managers/parts/streamer.py", 3, 6, "class", ()),
        SymbolEntry("sglang.srt.managers.parts.streamer.Streamer.to_detok", "sglang/srt/managers/parts/streamer.py", 4, 4, "attribute", ()),
        SymbolEntry("sglang.srt.managers.io_struct.OutBatch", "sglang/srt/managers/io_struct.py", 1, 2, "class", ()),
        SymbolEntry("sglang.srt.managers.queue.Req", "sglang/srt/managers/queue.py", 1, 2, "class", ()),
    ]
    return PinView("sglang@0.5.20", "sglang", "release", "python/", ("sglang",), frozenset(files), symbols, [], [], tree=str(tmp_path))


def test_a_gone_linked_file_is_sent_where_the_code_its_sentence_cites_lives(tmp_path: Path) -> None:
    pin = _moved(tmp_path)
    (ref,) = _links("6) Sends `to_detok.put(OutBatch(...))` [mixin](python/sglang/srt/managers/sender_mixin.py#L899).\n")
    assert resolve(ref, pin).status == BROKEN
    best = suggest(ref, pin)[0]
    assert best.replacement == "python/sglang/srt/managers/parts/streamer.py" and best.confidence >= 0.7


def test_a_gone_linked_file_whose_text_names_a_symbol_goes_where_the_symbol_is_defined(tmp_path: Path) -> None:
    pin = _moved(tmp_path)
    (ref,) = _links("The [`Req`](python/sglang/srt/managers/schedule_batch.py#L40) class.\n")
    assert resolve(ref, pin).status == BROKEN
    assert suggest(ref, pin)[0].replacement == "python/sglang/srt/managers/queue.py"


def test_a_gone_example_is_sent_to_the_one_example_named_as_it_plus_a_word(tmp_path: Path) -> None:
    files = frozenset({"vllm/__init__.py", "examples/features/sharded/save_state_offline.py", "examples/features/other/run.py", "docs/index.md"})
    pin = PinView("vllm@0.30.0-src", "vllm", "git", "", ("vllm",), files, [], [], [], tree=str(tmp_path))
    (ref,) = _links("Run [the script](gh-file:examples/offline_inference/save_state.py).\n")
    assert resolve(ref, pin).status == BROKEN
    best = suggest(ref, pin)[0]
    assert (best.replacement, best.confidence) == ("gh-file:examples/features/sharded/save_state_offline.py", 0.7)


# ----- autorefs through a re-exported owner --------------------------------------------------------
def test_an_autoref_member_of_a_reexported_class_resolves_through_the_real_class(tmp_path: Path) -> None:
    (tmp_path / "vllm").mkdir()
    init = 'MODULE_ATTRS = {"LLM": ".entrypoints.llm:LLM"}\n\ndef __getattr__(name):\n    return MODULE_ATTRS[name]\n'
    (tmp_path / "vllm/__init__.py").write_text(init, encoding="utf-8")
    symbols = [
        SymbolEntry("vllm", "vllm/__init__.py", 1, 4, "module", ()),
        SymbolEntry("vllm.entrypoints.llm", "vllm/entrypoints/llm.py", 1, 30, "module", ()),
        SymbolEntry("vllm.entrypoints.llm.LLM", "vllm/entrypoints/llm.py", 5, 30, "class", ()),
        SymbolEntry("vllm.entrypoints.llm.LLM.generate", "vllm/entrypoints/llm.py", 10, 20, "function", ()),
    ]
    files = frozenset({"vllm/__init__.py", "vllm/entrypoints/llm.py"})
    pin = PinView("vllm@0.30.0", "vllm", "release", "", ("vllm",), files, symbols, [], [], tree=str(tmp_path))
    refs = [r for r in extract_references("d.md", "Call [generate][vllm.LLM.generate] or [gone][vllm.LLM.gone].\n") if r.origin == "link"]
    generate, gone = (resolve(r, pin) for r in refs)
    assert generate.status == OK and generate.resolved_at == "vllm/entrypoints/llm.py:10"
    assert gone.status == BROKEN
