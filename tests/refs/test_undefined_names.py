"""Names in code font that no pin defines: broken when the project's sources never spell them,
unjudged (with the reason) when the sources use them or the pin cannot hold them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import PinView
from analyzer.refs.words import load_or_collect

from .fakes import sglang_view, vllm_view

_SOURCE = '''
from flash_attn import flash_attn_with_kvcache


def build(config):
    window = getattr(config, "per_layer_sliding_window", None)
    if os.getenv("VLLM_OLD_SWITCH") is not None:
        raise ValueError("VLLM_OLD_SWITCH has been removed: use --new-switch")
    return flash_attn_with_kvcache, window, os.getenv("VLLM_LIVE_SWITCH")
'''


def _with_words(view: PinView, tmp_path: Path, source: str = _SOURCE, kind: str = "release") -> PinView:
    assert view.tree is not None
    (Path(view.tree) / "vllm" / "layer.py").write_text(source, encoding="utf-8")
    view = replace(view, kind=kind, env_literals=frozenset({"VLLM_OLD_SWITCH", "VLLM_LIVE_SWITCH"}))
    view.words_path = str(tmp_path / "words" / f"{view.pin}.json")
    return view


def _check(doc: str, *pins: PinView) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in check_references(extract_all([("ch.md", doc)]), list(pins)):
        out.setdefault(f.ref.text, []).append(f)
    return out


@pytest.fixture
def vllm(tmp_path: Path) -> PinView:
    return _with_words(vllm_view(tmp_path), tmp_path)


def test_a_name_the_sources_never_spell_is_broken(vllm: PinView) -> None:
    found = _check("In vLLM, `forward_decode` picks v1 or v2, and `hash_block_tokens` hashes.\n", vllm)
    assert found["hash_block_tokens"][0].status == OK
    (gone,) = found["forward_decode"]
    assert gone.status == BROKEN and "neither defined nor used" in gone.note


def test_a_name_the_sources_use_without_defining_is_not_judged(vllm: PinView) -> None:
    doc = "In vLLM, pass it to the layer's `per_layer_sliding_window` argument; decode uses `flash_attn_with_kvcache`.\n"
    found = _check(doc, vllm)
    for text in ("per_layer_sliding_window", "flash_attn_with_kvcache"):
        (f,) = found[text]
        assert f.status == NOT_CHECKABLE and "used in the sources" in f.note, f.to_dict()


def test_a_formula_variable_is_not_a_reference(vllm: PinView) -> None:
    assert "x_t" not in _check("In vLLM, the state update reads `x_t` and `h_t`.\n", vllm)


def test_kernels_and_build_helpers_are_not_judged_in_a_wheel(vllm: PinView, tmp_path: Path) -> None:
    doc = (
        "In vLLM, `reshape_and_cache_flash_kernel` writes the cache.\n\n"
        "The kernels are built by `cmake_build_ext` from `csrc/cache_kernels.cu`.\n"
    )
    found = _check(doc, vllm)
    for text in ("reshape_and_cache_flash_kernel", "cmake_build_ext"):
        (f,) = found[text]
        assert f.status == NOT_CHECKABLE and "wheel" in f.note, f.to_dict()
    # A git pin holds the repository: there the same names are judged.
    git = replace(vllm, kind="git", pin="vllm@0.30.0-src")
    git.words_path = str(tmp_path / "words" / "git.json")
    found = _check(doc, git)
    assert found["reshape_and_cache_flash_kernel"][0].status == BROKEN


def test_tree_diagram_items_are_references(vllm: PinView) -> None:
    doc = (
        "## How vLLM lays out its attention file\n\n"
        "```\n"
        "layer.py\n"
        "├── build(config)\n"
        "│   ├── paged_attention_v2_reduce_kernel\n"
        "│   └── hash_block_tokens\n"
        "└── flash_attn_with_kvcache\n"
        "```\n"
    )
    git = replace(vllm, kind="git")
    git.words_path = vllm.words_path
    found = _check(doc, git)
    assert found["paged_attention_v2_reduce_kernel"][0].status == BROKEN
    assert found["hash_block_tokens"][0].status == OK
    assert "flash_attn_with_kvcache" not in found  # the sources use it: nothing to say in a diagram
    assert "build" not in found or found["build"][0].status != BROKEN


def test_a_class_named_in_an_error_message_is_checked(vllm: PinView) -> None:
    doc = (
        "With vLLM it fails with `AttributeError: 'MLPSpeculatorConfig' object has no attribute 'x'`, "
        "and then `TypeError: 'KVCacheManager' object is not callable`.\n"
    )
    found = _check(doc, vllm)
    assert found["MLPSpeculatorConfig"][0].status == BROKEN
    assert found["KVCacheManager"][0].status == OK


def test_an_env_var_the_sources_read_only_to_say_it_is_gone_is_broken(vllm: PinView) -> None:
    found = _check("In vLLM, set `VLLM_OLD_SWITCH=1` or `VLLM_LIVE_SWITCH=1`.\n", vllm)
    assert found["VLLM_OLD_SWITCH"][0].status == BROKEN and "removed" in found["VLLM_OLD_SWITCH"][0].note
    assert found["VLLM_LIVE_SWITCH"][0].status == OK


def test_a_document_naming_no_project_is_judged_by_every_project(vllm: PinView, tmp_path: Path) -> None:
    sglang = sglang_view(tmp_path)
    assert sglang.tree is not None
    (Path(sglang.tree) / "sglang" / "mamba.py").write_text("mamba_scheduler_strategy = 'auto'\n", encoding="utf-8")
    sglang.words_path = str(tmp_path / "words" / "sglang.json")
    found = _check("The engine's `mamba_scheduler_strategy` and `made_up_knob_name` decide.\n", vllm, sglang)
    assert all(f.status != BROKEN for f in found["mamba_scheduler_strategy"])
    assert [f.status for f in found["made_up_knob_name"]] == [BROKEN]  # reported once


def test_words_are_collected_once_and_cached(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("def alpha_beta(): pass\n", encoding="utf-8")
    cache = tmp_path / "words.json"
    first = load_or_collect(cache, [root])
    assert first is not None and "alpha_beta" in first.words and cache.is_file()
    (root / "a.py").unlink()
    again = load_or_collect(cache, [root])  # from the cache, not the (now empty) tree
    assert again is not None and "alpha_beta" in again.words
    cache.write_text("{not json", encoding="utf-8")
    assert load_or_collect(cache, [root]) is not None  # damaged: collected again
    assert load_or_collect(tmp_path / "none.json", [tmp_path / "missing"]) is None


def test_a_name_in_a_sentence_about_another_system_is_not_judged(vllm: PinView) -> None:
    doc = (
        "In nano-vllm the scheduler keeps `seqs_waiting_queue` for new requests. "
        "vLLM removed `legacy_swap_space_knob` long ago.\n"
    )
    found = _check(doc, vllm)
    (theirs,) = found["seqs_waiting_queue"]
    assert theirs.status == NOT_CHECKABLE and "nano-vllm" in theirs.note
    assert found["legacy_swap_space_knob"][0].status == BROKEN


def test_a_bare_file_name_found_only_in_another_platforms_folder_is_broken() -> None:
    from analyzer.refs.resolve import resolve

    from .test_resolve import ref

    view = PinView(
        pin="vllm@0.33.0-src", project="vllm", kind="git", layout_prefix="", packages=("vllm",),
        files=frozenset({"csrc/rocm/attention_kernels.cuh", "csrc/attention/merge_attn_states.cu"}), symbols=[], flags=[], envs=[],
    )
    cuda_text = frozenset({"paged", "attention", "kernel", "cuda"})
    gone = resolve(ref("attention_kernels.cuh", "path", bare_file=True, context=cuda_text), view)
    assert gone.status == BROKEN and "rocm" in gone.note
    amd_text = cuda_text | {"rocm"}
    assert resolve(ref("attention_kernels.cuh", "path", bare_file=True, context=amd_text), view).status == OK


def test_other_programs_names_and_a_flags_values_are_not_judged(vllm: PinView) -> None:
    doc = (
        "# vLLM with other tools\n\n"
        "To enable vLLM in TRL, set the `use_vllm_knob` flag in the trainer configuration.\n\n"
        "Start `mooncake_master_daemon` before vLLM.\n\n"
        "`--bench-categories` takes `simple`, `live_parallel_multi`, and `rest_api_calls`.\n\n"
        "A ModelServingThing resource, in vLLM `ModelServingThing`, and vLLM's `gone_helper_fn` function.\n"
    )
    found = _check(doc, vllm)
    assert "TRL" in found["use_vllm_knob"][0].note and found["use_vllm_knob"][0].status == NOT_CHECKABLE
    assert "named after mooncake" in found["mooncake_master_daemon"][0].note
    assert "values" in found["live_parallel_multi"][0].note and found["rest_api_calls"][0].status == NOT_CHECKABLE
    assert found["ModelServingThing"][0].status == NOT_CHECKABLE  # a capitalised term: unjudged as before
    assert found["gone_helper_fn"][0].status == BROKEN


def test_a_document_about_another_program_does_not_judge_its_names(vllm: PinView) -> None:
    doc = "# Using LiteLLM\n\nRoute to the provider's `image_generation_route` endpoint.\n"
    (f,) = _check(doc, vllm)["image_generation_route"]
    assert f.status == NOT_CHECKABLE and "about LiteLLM" in f.note


def test_entry_point_names_count_as_spelled(tmp_path: Path) -> None:
    view = vllm_view(tmp_path)
    assert view.tree is not None
    info = Path(view.tree) / "vllm-0.30.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[vllm.general_plugins]\nlora_filesystem_resolver = vllm.plugins:register\n", encoding="utf-8")
    view.words_path = str(tmp_path / "words.json")
    (f,) = _check("In vLLM, set `VLLM_PLUGINS` to include `lora_filesystem_resolver`.\n", view)["lora_filesystem_resolver"]
    assert f.status == NOT_CHECKABLE


def test_methods_of_a_snippet_class_that_mirrors_the_projects_are_checked(vllm: PinView) -> None:
    quoted = (
        "vLLM's scheduler, abridged:\n\n```python\nclass Scheduler:\n"
        "    def __init__(self):\n        pass\n\n"
        "    def schedule(self):\n        pass\n\n"
        "    def _preempt_request(self, request):\n        pass\n\n"
        "    def _legacy_swap_out(self):\n        pass\n```\n"
    )
    found = _check(quoted, vllm)
    assert found["schedule"][0].status == OK and found["_preempt_request"][0].status == OK
    assert found["_legacy_swap_out"][0].status == BROKEN
    assert "__init__" not in found
    # A toy engine's own `Scheduler`: one method in common is no quotation.
    toy = "Our own vLLM-like scheduler:\n\n```python\nclass Scheduler:\n    def schedule(self):\n        pass\n\n    def pick_next(self):\n        pass\n\n    def admit(self):\n        pass\n```\n"
    assert all(f.status != BROKEN for fs in _check(toy, vllm).values() for f in fs)


def test_a_name_linked_to_another_programs_pages_is_theirs(vllm: PinView) -> None:
    doc = (
        "In vLLM, prefill calls [`varlen_attention_gone`](https://github.com/Dao-AILab/flash-attention/blob/main/a.py) "
        "and [`gone_prefill_step`](https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py).\n"
    )
    found = _check(doc, vllm)
    (theirs,) = found["varlen_attention_gone"]
    assert theirs.status == NOT_CHECKABLE and "Dao-AILab/flash-attention" in theirs.note
    assert found["gone_prefill_step"][0].status == BROKEN


def test_a_method_quoted_without_its_class_is_checked_on_the_class_that_has_it(vllm: PinView) -> None:
    quoted = (
        "vLLM's step:\n\n```python\ndef schedule(self):\n"
        "    self._preempt_request(req)\n    if self.has_requests():\n        self._gone_helper()\n```\n"
    )
    found = _check(quoted, vllm)
    assert [f.status for f in found["schedule"]] == [OK]
    assert found["has_requests"][0].status == OK  # inherited from `SchedulerInterface`
    gone = found["_gone_helper"][0]
    assert gone.status == BROKEN and "`Scheduler`" in gone.note
    toy = "A toy vLLM-like loop:\n\n```python\ndef schedule(self):\n    self.pick_next()\n    self.admit()\n```\n"
    assert all(f.status != BROKEN for fs in _check(toy, vllm).values() for f in fs)
    own = "```python\ndef my_step(self):\n    self.nothing_here()\n```\n"
    assert not _check(own, vllm)


def test_metric_names_are_checked_against_the_names_the_sources_export(tmp_path: Path) -> None:
    source = 'g = Gauge(name="vllm:num_requests_running")\nc = Counter(name="vllm:prompt_tokens")\n'
    view = _with_words(vllm_view(tmp_path), tmp_path, source)
    doc = "vLLM exports `vllm:num_requests_running`, `vllm:prompt_tokens_total` and `vllm:num_requests_runing`.\n"
    found = _check(doc, view)
    assert found["vllm:num_requests_running"][0].status == OK
    assert found["vllm:prompt_tokens_total"][0].status == OK  # Prometheus adds `_total` to a counter
    typo = found["vllm:num_requests_runing"][0]
    assert typo.status == BROKEN and typo.best is not None and typo.best.replacement == "vllm:num_requests_running"
    built = _with_words(vllm_view(tmp_path / "b"), tmp_path / "b", source + 'h = Gauge(name=f"vllm:{name}")\n')
    # Names built at run time (in vllm/layer.py) may be any name sharing a word with that file's path; a
    # typo of an exported metric shares none, so it is still judged.
    both = _check(doc + "And `vllm:layer_hits`.\n", built)
    assert both["vllm:layer_hits"][0].status == NOT_CHECKABLE
    assert both["vllm:num_requests_runing"][0].status == BROKEN


def test_a_gone_method_of_a_quoted_method_gets_the_closest_member_of_its_class(vllm: PinView) -> None:
    quoted = "vLLM:\n\n```python\ndef schedule(self):\n    self._preempt_request(r)\n    self.has_requests()\n    self._preempt_requests(r)\n```\n"
    gone = _check(quoted, vllm)["_preempt_requests"][0]
    assert gone.status == BROKEN and gone.best is not None
    assert gone.best.replacement == "_preempt_request" and gone.best.confidence < 0.8 and "`Scheduler`" in gone.best.reason


def test_an_upgrade_reports_a_quoted_methods_calls_only_when_the_old_pin_had_them(tmp_path: Path) -> None:
    from analyzer.refs.check import check_upgrade
    from analyzer.refs.suggest import History

    old, new = vllm_view(tmp_path, "0.30.0"), vllm_view(tmp_path, "0.33.0")
    doc = (
        "vLLM:\n\n```python\ndef schedule(self):\n    self._preempt_request(r)\n    self.has_requests()\n    self.toy_helper()\n```\n"
        "\n```python\nclass KVCacheManager:\n    def allocate_slots(self):\n        pass\n\n    def get_computed_blocks(self):\n        pass\n\n    def my_extra(self):\n        pass\n```\n"
    )
    findings = check_upgrade(extract_all([("ch.md", doc)]), old, new, History(old))
    texts = {f.ref.text: f for f in findings}
    assert "toy_helper" not in texts and "my_extra" not in texts  # broken at the old pin too: not an upgrade's doing
    assert texts["schedule"].status == OK and texts["allocate_slots"].status == OK


def test_a_name_compared_with_another_programs_is_still_the_projects(vllm: PinView) -> None:
    doc = (
        "In this design, implement your own pipe and support the `send_kv_tensor` API, just like `torch.distributed`. "
        "PyTorch's own `only_helper_fn` does the rest.\n"
    )
    found = _check(doc, vllm)
    assert found["send_kv_tensor"][0].status == BROKEN  # compared with torch's API, not torch's
    (theirs,) = found["only_helper_fn"]
    assert theirs.status == NOT_CHECKABLE and "PyTorch" in theirs.note


def test_a_table_of_another_programs_settings_is_not_judged(vllm: PinView) -> None:
    doc = (
        "# The vLLM memory-pool backend\n\nvLLM talks to the pool service; vLLM reads its file.\n\n"
        "| key | type | meaning |\n| --- | --- | --- |\n"
        "| `pool_dram_bytes` | int | DRAM pool size |\n"
        "| `pool_hbm_bytes` | int | HBM pool size |\n"
        "| `pool_meta_addr` | str | meta service |\n\n"
        "| name | meaning |\n| --- | --- |\n"
        "| `hash_block_tokens` | hashes a block |\n"
        "| `gone_block_hasher` | removed |\n"
        "| `old_block_splitter` | removed |\n"
    )
    found = _check(doc, vllm)
    for theirs in ("pool_dram_bytes", "pool_hbm_bytes", "pool_meta_addr"):
        (f,) = found[theirs]
        assert f.status == NOT_CHECKABLE and "table column" in f.note, f.to_dict()
    # A column that also lists the project's own names still says which are gone.
    assert found["gone_block_hasher"][0].status == BROKEN and found["old_block_splitter"][0].status == BROKEN


def test_pythons_own_names_and_repository_files_are_not_the_projects(vllm: PinView) -> None:
    doc = (
        "In vLLM, `len(key)` is the block count; a closed pipe raises `EOFError` or `ModuleNotFoundError`; "
        "`vllm.__file__` says where it is installed; `Makefile` builds the kernels.\n"
    )
    found = _check(doc, vllm)
    for python in ("len(key)", "EOFError", "ModuleNotFoundError"):
        assert python not in found, found.get(python)
    assert found["vllm.__file__"][0].status == OK
    assert "Makefile" not in found  # a file of the repository's root, like `CMakeLists.txt`


def test_a_class_the_text_gives_to_another_program_is_not_judged(vllm: PinView) -> None:
    doc = "With vLLM, the LMCache server keeps blocks in `RemoteKvBackend`. vLLM itself dropped `GoneKvBackend`.\n"
    found = _check(doc, vllm)
    (theirs,) = found["RemoteKvBackend"]
    assert theirs.status == NOT_CHECKABLE and "LMCache" in theirs.note
    assert found["GoneKvBackend"][0].status == BROKEN


def test_a_renamed_wrapper_named_after_a_dependency_is_still_broken(vllm: PinView) -> None:
    (f,) = _check("vLLM quantizes with `flashinfer_quantize_gone_legacy()` before the GEMM.\n", vllm)["flashinfer_quantize_gone_legacy()"]
    assert f.status == BROKEN


def test_the_name_a_formula_assigns_is_the_authors(vllm: PinView) -> None:
    # A configuration note's formula in code font (held-out 5): an expression, not a name.
    doc = (
        "In vLLM:\n\n"
        "- **Formula**: `kv_cache_blocks = (total_vram - model_size) × gpu_memory_utilization / block_size`\n"
        "- **Old knob**: `forward_decode = True`\n"
    )
    found = _check(doc, vllm)
    (f,) = found["kv_cache_blocks = (total_vram - model_size) × gpu_memory_utilization / block_size"]
    assert f.status == NOT_CHECKABLE and "formula" in f.note
    # A name set to a value (a setting), not computed: still judged.
    assert [g.status for g in found["forward_decode = True"]] == [BROKEN]


def test_a_class_shaped_factor_of_a_formula_in_a_text_block_is_the_authors(vllm: PinView) -> None:
    # A fork's notes (held-out 17): an objective written as a quotient, not a constructor.
    doc = "In vLLM the drafter picks the draft length:\n\n```\nObjective: maximize E[accepted] / Latency(total_tokens)\nthen GoneBuilder(config)\n```\n"
    found = _check(doc, vllm)
    assert "Latency" not in found and "Latency(total_tokens)" not in found
    # a class called on its own line of the same block is still read as code
    assert any(text.startswith("GoneBuilder") for text in found), sorted(found)


def test_a_name_beside_the_projects_own_code_is_judged_though_its_sentence_names_another_program(vllm: PinView) -> None:
    # The fake pin's Scheduler has `schedule`: quoted beside the name, nearer than TRL.
    near = _check("In vLLM, for TRL runs: `Scheduler.schedule` + `use_trl_knob`.\n", vllm)
    assert near["use_trl_knob"][0].status == BROKEN
    # the program named nearer than the project's code: its name, as before
    far = _check("In vLLM, `Scheduler.schedule` runs, and the TRL trainer sets `use_trl_knob`.\n", vllm)
    assert far["use_trl_knob"][0].status == NOT_CHECKABLE and "TRL" in far["use_trl_knob"][0].note
    # quoted code the pin does not resolve says nothing of the project
    gone = _check("In vLLM, for TRL runs: `Nowhere.thing` + `use_trl_knob`.\n", vllm)
    assert gone["use_trl_knob"][0].status == NOT_CHECKABLE


def test_a_gone_name_beside_a_quoted_class_member_is_offered_that_class_s_closest_member(vllm: PinView) -> None:
    (f,) = _check("In vLLM, for TRL runs: `Scheduler.schedule` + `_preempt_requst`.\n", vllm)["_preempt_requst"]
    assert f.status == BROKEN
    assert [s.replacement for s in f.suggestions] == ["Scheduler._preempt_request"]
    (plain,) = _check("In vLLM, `forward_decode` picks v1 or v2.\n", vllm)["forward_decode"]
    assert plain.status == BROKEN and plain.suggestions == []  # no lead: nothing offered, as before


def test_settings_lines_are_keywords_of_the_call_the_document_passes_them_to(vllm: PinView) -> None:
    # `per_layer_sliding_window = 4` / `made_up_scales = False` with no call around them: the reader is
    # told to pass them, and the document's `LLM(...)` takes one of them, so they are `LLM`'s
    # keywords, judged as the call's own are.
    call = '```python\nfrom vllm import LLM\nllm = LLM(model="m", per_layer_sliding_window=4, made_up_scales=True)\n```\n'
    doc = 'Configure with:\n\n```python\nper_layer_sliding_window=4\nmade_up_scales=False\n```\n\n' + call
    found = _check(doc, vllm)
    lines = {(f.ref.line, f.ref.text): f.status for fs in found.values() for f in fs}
    assert lines[(5, "made_up_scales")] == lines[(10, "made_up_scales")] == BROKEN
    assert lines.get((4, "per_layer_sliding_window")) == lines.get((10, "per_layer_sliding_window")) != BROKEN
    # With no call that takes one of them, nothing says whose settings they are.
    alone = _check('Configure with:\n\n```python\nper_layer_sliding_window=4\nmade_up_scales=False\n```\n', vllm)
    assert "made_up_scales" not in alone


def test_a_keyword_in_the_prose_is_the_keyword_of_the_call_that_takes_it(vllm: PinView) -> None:
    # `made_up_scales=False` in a heading, where the document's `LLM(...)` is passed it: that
    # call's keyword, judged as there; without such a call it is nobody's keyword in particular.
    call = '```python\nfrom vllm import LLM\nllm = LLM(model="m", made_up_scales=True)\n```\n'
    doc = "### No calibration (`made_up_scales=False`)\n\n" + call
    found = _check(doc, vllm)
    assert [(f.status, f.ref.callee) for f in found["made_up_scales=False"]] == [(BROKEN, "vllm.LLM")]
    alone = _check("### No calibration (`made_up_scales=False`)\n", vllm)
    assert all(f.ref.callee is None for f in alone.get("made_up_scales=False", []))
