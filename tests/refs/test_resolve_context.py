"""Resolution in the reader's context and suggestions a reader can accept, on small documents
written here: a name the prose gives to a file or a class resolves there, not anywhere; a
member quoted from a class's method follows the member to the class it moved to; a flag is
replaced by one of its own command's flags; a name merely spelled like a missing one is
offered, if at all, as a low guess that says the thing is likely gone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK, Finding
from analyzer.refs.pinview import FlagEntry, PinView, SymbolEntry
from analyzer.refs.suggest import suggest

from .test_resolve import ref

_OPS = "vllm/v1/attention/ops/paged_attn.py"
_MLA = "vllm/v1/attention/backends/mla/sparse.py"
_LLAMA = "vllm/model_executor/models/llama.py"
_SCHED = "vllm/v1/core/sched/scheduler.py"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _vllm(root: Path) -> PinView:
    files = {
        _OPS: "class PagedAttention:\n    def split_kv_cache(self):\n        pass\n",
        _MLA: "class SparseMLABackend:\n    def get_kv_cache_shape(self):\n        pass\n",
        _LLAMA: "class LlamaModel:\n    def load_weights(self):\n        pass\n",
        _SCHED: "class Scheduler:\n    def schedule(self):\n        self.kv.allocate_slots()\n",
        "vllm/v1/core/kv_cache_manager.py": "class KVCacheManager:\n    def allocate_slots(self):\n        pass\n",
        "vllm/v1/worker/runner.py": "class Runner:\n    def forward(self):\n        pass\n",
    }
    _write(root, files)
    symbols = [
        SymbolEntry("vllm.v1.attention.ops.paged_attn.PagedAttention", _OPS, 1, 3, "class"),
        SymbolEntry("vllm.v1.attention.ops.paged_attn.PagedAttention.split_kv_cache", _OPS, 2, 3, "function"),
        SymbolEntry("vllm.v1.attention.backends.mla.sparse.SparseMLABackend", _MLA, 1, 3, "class"),
        SymbolEntry("vllm.v1.attention.backends.mla.sparse.SparseMLABackend.get_kv_cache_shape", _MLA, 2, 3, "function"),
        SymbolEntry("vllm.model_executor.models.llama.LlamaModel", _LLAMA, 1, 3, "class"),
        SymbolEntry("vllm.model_executor.models.llama.LlamaModel.load_weights", _LLAMA, 2, 3, "function"),
        SymbolEntry("vllm.v1.core.sched.scheduler.Scheduler", _SCHED, 1, 3, "class"),
        SymbolEntry("vllm.v1.core.sched.scheduler.Scheduler.schedule", _SCHED, 2, 3, "function"),
        SymbolEntry("vllm.v1.core.kv_cache_manager.KVCacheManager", "vllm/v1/core/kv_cache_manager.py", 1, 3, "class"),
        SymbolEntry("vllm.v1.core.kv_cache_manager.KVCacheManager.allocate_slots", "vllm/v1/core/kv_cache_manager.py", 2, 3, "function"),
        SymbolEntry("vllm.v1.worker.runner.Runner", "vllm/v1/worker/runner.py", 1, 3, "class"),
        SymbolEntry("vllm.v1.worker.runner.Runner.forward", "vllm/v1/worker/runner.py", 2, 3, "function"),
    ]
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(files), symbols=symbols, flags=[], envs=[], tree=str(root),
    )


def _check(doc: str, view: PinView) -> dict[str, Finding]:
    refs = extract_all([("ch.md", doc)])
    return {f.ref.text: f for f in check_references(refs, [view])}


def test_a_name_the_text_gives_to_a_file_resolves_in_that_file(tmp_path: Path) -> None:
    view = _vllm(tmp_path)
    doc = "# vLLM attention\n\nSee the `get_kv_cache_shape()` and `split_kv_cache()` methods of `paged_attn.py:47-54` in vLLM.\n"
    found = _check(doc, view)
    # An unrelated MLA backend defines a method of that name: not the one the text means.
    assert found["get_kv_cache_shape()"].status == BROKEN
    assert "paged_attn.py" in found["get_kv_cache_shape()"].note
    assert found["split_kv_cache()"].status == OK
    # Written the other way round, as a Chinese note writes it ("paged_attn.py 的 ...").
    zh = "# vLLM\n\n查看 vLLM `paged_attn.py:47-54` 的 `get_kv_cache_shape()` 和 `split_kv_cache()` 方法。\n"
    found = _check(zh, view)
    assert found["get_kv_cache_shape()"].status == BROKEN and found["split_kv_cache()"].status == OK


def test_a_name_merely_beside_a_file_is_not_that_files(tmp_path: Path) -> None:
    view = _vllm(tmp_path)
    doc = "# vLLM\n\nIn vLLM the scheduler in `scheduler.py` calls `allocate_slots()` for every request.\n"
    assert _check(doc, view)["allocate_slots()"].status == OK
    # A file that uses the name without defining it (a call) keeps it.
    used = "# vLLM\n\nIn vLLM, `allocate_slots()` in `scheduler.py` reserves the blocks.\n"
    assert _check(used, view)["allocate_slots()"].status == OK


def test_a_name_the_text_gives_to_a_class_resolves_in_that_class(tmp_path: Path) -> None:
    view = _vllm(tmp_path)
    doc = "# vLLM models\n\nIn vLLM, the `forward()` method of `LlamaModel` runs the layers; `load_weights()` of `LlamaModel` reads the checkpoint.\n"
    found = _check(doc, view)
    assert found["forward()"].status == BROKEN  # only an unrelated `Runner.forward` exists
    assert found["load_weights()"].status == OK


def _sglang(root: Path) -> PinView:
    sched = "sglang/srt/managers/scheduler.py"
    recv = "sglang/srt/managers/scheduler_components/request_receiver.py"
    bench = "sglang/bench_serving.py"
    files = {
        sched: "class Scheduler:\n    def event_loop_normal(self):\n        self.ingest_requests()\n",
        recv: "class SchedulerRequestReceiver:\n    def recv_requests(self):\n        pass\n",
        bench: "import argparse\np = argparse.ArgumentParser()\np.add_argument('--num-prompts')\np.add_argument('--request-rate')\n",
    }
    _write(root, files)
    symbols = [
        SymbolEntry("sglang.srt.managers.scheduler.Scheduler", sched, 1, 3, "class"),
        SymbolEntry("sglang.srt.managers.scheduler.Scheduler.event_loop_normal", sched, 2, 3, "function"),
        SymbolEntry("sglang.srt.managers.scheduler.Scheduler.ingest_requests", sched, 4, 5, "function"),
        SymbolEntry("sglang.srt.managers.scheduler_components.request_receiver.SchedulerRequestReceiver", recv, 1, 3, "class"),
        SymbolEntry("sglang.srt.managers.scheduler_components.request_receiver.SchedulerRequestReceiver.recv_requests", recv, 2, 3, "function"),
    ]
    flags = [FlagEntry("--model-impl", (), "model_impl", "sglang/srt/server_args.py:10"), FlagEntry("--num-continuous-decode-steps", (), "x", "sglang/srt/server_args.py:11")]
    return PinView(
        pin="sglang@0.5.23", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset(files), symbols=symbols, flags=flags, envs=[], tree=str(root),
    )


def test_a_quoted_methods_self_call_follows_the_member_to_its_new_class(tmp_path: Path) -> None:
    view = _sglang(tmp_path)
    loop = "def event_loop_normal(self):\n    while True:\n        recv_reqs = self.recv_requests()\n        self.ingest_requests()\n"
    found = _check(f"# SGLang event loop\n\n```python\n{loop}```\n", view)["recv_requests"]
    assert found.status == BROKEN and found.best is not None
    # Moved to a class of its own (named after the old one), not the closest-spelled member.
    assert found.best.replacement == "SchedulerRequestReceiver.recv_requests" and found.best.confidence >= 0.7


def test_a_flag_without_its_qualifier_gets_the_one_option_it_ends(tmp_path: Path) -> None:
    view = _sglang(tmp_path)
    best = suggest(ref("--impl", "flag", framework="sglang"), view)[0]
    assert best.replacement == "--model-impl" and 0.5 <= best.confidence < 0.8


def test_a_benchmark_flag_is_replaced_by_one_of_the_benchmarks_own(tmp_path: Path) -> None:
    view = _sglang(tmp_path)
    found = suggest(ref("--num-prompt", "flag", framework="sglang", command="sglang.bench_serving"), view)
    assert found and found[0].replacement == "--num-prompts"
    assert all(s.replacement not in view.flag_map for s in found)  # never a server flag


def test_a_name_only_spelled_like_a_missing_one_is_a_low_guess(tmp_path: Path) -> None:
    view = _vllm(tmp_path)
    doc = "# vLLM\n\nvLLM's `CacheEngine` allocates the cache and `Runner.forwards_all()` runs it.\n"
    found = _check(doc, view)
    for text in ("CacheEngine", "Runner.forwards_all()"):
        f = found[text]
        assert f.status == BROKEN
        assert all(s.confidence < 0.3 and "likely gone" in s.reason for s in f.suggestions), f.suggestions


def test_a_closest_spelling_is_no_second_witness_to_a_file_found_by_name() -> None:
    files = ["sglang/srt/rust_server/server.py", "sglang/srt/entrypoints/http_server.py", "sglang/srt/grpc/server.py"]
    view = PinView(
        pin="sglang@0.5.23", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset(files), symbols=[], flags=[], envs=[],
    )
    found = suggest(ref("python/sglang/srt/server.py", "path", framework="sglang", repo_layout=True), view)
    # Of several `server.py`, the nearest by folders is a guess, however closely it is spelled.
    assert found and all(s.confidence < 0.5 for s in found)


def test_an_env_var_is_the_projects_only_when_its_own_package_reads_it(tmp_path: Path) -> None:
    from analyzer.refs.build import env_literals

    _write(tmp_path, {
        "vllm/envs.py": 'os.getenv("VLLM_HOST_IP")\n',
        ".buildkite/scripts/run.py": 'env["VLLM_USE_V1"] = "0"\n',
        "tests/conftest.py": 'monkeypatch.setenv("VLLM_OLD_SWITCH", "1")\n',
    })
    # A git pin holds the whole repository: CI scripts and tests that still set a retired
    # variable do not make the project read it.
    assert env_literals(tmp_path, ("vllm",)) == frozenset({"VLLM_HOST_IP"})


def test_a_file_whose_upper_folder_was_renamed_goes_where_its_own_folders_are() -> None:
    files = [
        "examples/disaggregated/lmcache/disagg_prefill_lmcache_v1/disagg_example_nixl.sh",
        "examples/disaggregated/lmcache/disagg_prefill_lmcache_v1/disagg_proxy.py",
        "examples/basic/offline.py",
    ]
    view = PinView(
        pin="vllm@0.33.0-src", project="vllm", kind="git", layout_prefix="", packages=("vllm",),
        files=frozenset(files), symbols=[], flags=[], envs=[],
    )
    old = "examples/others/lmcache/disagg_prefill_lmcache_v1/disagg_example_nixl.sh"
    best = suggest(ref(old, "path"), view)[0]
    assert best.replacement == files[0] and best.confidence >= 0.8
    # A file of that name in another folder is no such evidence.
    assert all(s.confidence < 0.8 for s in suggest(ref("examples/others/other_tool/disagg_example_nixl.sh", "path"), view))


def _commented_view(tmp_path: Path) -> PinView:
    sched = "sglang/srt/managers/scheduler.py"
    source = (
        "class Scheduler:\n"
        "    def event_loop_normal(self):\n"
        "        batch = self.get_next_batch_to_run()\n"
        "        if batch:\n"
        "            self.run_batch(batch)\n"
        "        else:\n"
        "            # When the server is idle, do a self-check and reset some states.\n"
        "            self.on_idle()\n"
        "    def on_idle(self):\n        pass\n"
        "    def get_next_batch_to_run(self):\n        pass\n"
        "    def run_batch(self, batch):\n        pass\n"
    )
    _write(tmp_path, {sched: source})
    symbols = [
        SymbolEntry("sglang.srt.managers.scheduler.Scheduler", sched, 1, 15, "class"),
        *(SymbolEntry(f"sglang.srt.managers.scheduler.Scheduler.{n}", sched, line, line + 1, "function")
          for n, line in (("event_loop_normal", 2), ("on_idle", 9), ("get_next_batch_to_run", 11), ("run_batch", 13))),
    ]
    view = PinView(
        pin="sglang@0.5.23", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset({sched}), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )
    return view


def test_a_renamed_method_is_found_by_the_comment_left_at_its_call(tmp_path: Path) -> None:
    view = _commented_view(tmp_path)
    best = suggest(ref("Scheduler.self_check_during_idle()", "symbol", "Scheduler.self_check_during_idle", framework="sglang"), view)
    assert best and best[0].replacement == "Scheduler.on_idle" and 0.5 <= best[0].confidence < 0.8
    # A comment that shares one word with the old name ("batch") is no such evidence.
    assert not any("comment" in s.reason for s in suggest(ref("Scheduler.run_next_batch_now()", "symbol", "Scheduler.run_next_batch_now", framework="sglang"), view))


def test_a_bare_name_gets_what_the_documents_class_context_gave_it(tmp_path: Path) -> None:
    view = _commented_view(tmp_path)
    loop = (
        "def event_loop_normal(self):\n    batch = self.get_next_batch_to_run()\n    if batch:\n"
        "        self.run_batch(batch)\n    else:\n        self.self_check_during_idle()\n"
    )
    doc = f"# SGLang scheduler loop\n\n```python\n{loop}```\n\nWhen idle, SGLang's loop calls `self_check_during_idle()`.\n"
    found = [f for f in check_references(extract_all([("ch.md", doc)]), [view]) if f.ref.target == "self_check_during_idle"]
    assert {f.ref.origin for f in found} == {"fence", "inline"}
    # The prose names no class; the quoted loop shows whose method it was.
    for f in found:
        assert f.status == BROKEN and f.best is not None and f.best.replacement == "on_idle", (f.ref.origin, f.suggestions)


def test_a_test_module_a_wheel_lacks_is_not_judged(vllm30: PinView) -> None:
    # SGLang's kernel READMEs: "run `test_model_fast_paths.py`", a module of the repository's test
    # suite, which sits outside the package a wheel holds; a git pin holds it and judges it.
    doc = "# vLLM\n\nRun `test_model_fast_paths.py` after editing `fused_modulate.py`.\n"
    by_text = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [vllm30])}
    assert by_text["test_model_fast_paths.py"].status == NOT_CHECKABLE and "test module" in by_text["test_model_fast_paths.py"].note
    assert by_text["fused_modulate.py"].status == BROKEN
    git = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [replace(vllm30, kind="git")])}
    assert git["test_model_fast_paths.py"].status == BROKEN


def test_members_listed_under_a_gone_class_are_not_made_current_by_namesakes(sglang20: PinView) -> None:
    # A source-reading note's outline of a class (held-out 4: `HiRadixCache ( RadixCache):` and its
    # methods, the class gone at sglang 0.5.23): a same-named method of another class is not the one
    # listed, as its siblings that match nothing are broken too.
    doc = (
        "# SGLang radix caches\n\n"
        "```shell\nRadixCache ( BasePrefixCache):\n  match_prefix: match a prefix\n  reset: reset the tree\n```\n\n"
        "```shell\nHiRadixCache ( RadixCache):\n  match_prefix: match, with evicted nodes\n  write_backup: back up a node\n```\n"
    )
    got: dict[tuple[int, str], str] = {}
    for f in check_references(extract_all([("notes.md", doc)]), [sglang20]):
        got[(f.ref.line, f.ref.text)] = f.status
    assert got[(5, "match_prefix")] == OK  # the class is there: judged on it
    assert got[(11, "match_prefix")] == BROKEN and got[(12, "write_backup")] == BROKEN
