from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.models import Reference
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import resolve


def ref(text: str, kind: str, target: str | None = None, framework: str = "vllm", **extra: object) -> Reference:
    return Reference(
        file="ch.md", line=1, col=0, text=text, kind=kind, target=target or text,
        framework=framework, framework_reason="test", origin=str(extra.pop("origin", "inline")), **extra,  # type: ignore[arg-type]
    )


def test_paths(vllm30: PinView, sglang20: PinView) -> None:
    assert resolve(ref("vllm/v1/core/sched/scheduler.py", "path"), vllm30).status == "ok"
    assert resolve(ref("vllm/v1/core/sched", "path"), vllm30).resolved_at == "vllm/v1/core/sched"
    missing = resolve(ref("vllm/core/scheduler.py", "path"), vllm30)
    assert missing.status == "broken"
    repo = resolve(ref("python/sglang/srt/mem_cache/radix_cache.py", "path", framework="sglang"), sglang20)
    assert (repo.status, repo.resolved_at) == ("ok", "sglang/srt/mem_cache/radix_cache.py")
    relative = resolve(ref("srt/managers/scheduler.py", "path", framework="sglang"), sglang20)
    assert (relative.status, relative.resolved_at) == ("ok", "sglang/srt/managers/scheduler.py")


def test_repository_only_paths_are_not_checkable_never_broken(vllm30: PinView, sglang20: PinView) -> None:
    for path in ("csrc/attention/attention_kernels.cu", "docs/index.md", "tests/v1/core/test_scheduler.py", "benchmarks/benchmark_serving.py"):
        assert resolve(ref(path, "path"), vllm30).status == "not-checkable", path
    assert resolve(ref("sgl-kernel/csrc/x.cu", "path", framework="sglang"), sglang20).status == "not-checkable"
    assert resolve(ref("test/srt/test_radix.py", "path", framework="sglang"), sglang20).status == "not-checkable"


def test_line_suffix_past_end_of_file_is_a_warning(vllm30: PinView) -> None:
    ok = resolve(ref("vllm/v1/core/kv_cache_manager.py:40", "path", "vllm/v1/core/kv_cache_manager.py", line_range=(40, 40)), vllm30)
    assert (ok.status, ok.resolved_at) == ("ok", "vllm/v1/core/kv_cache_manager.py:40")
    assert "allocate_slots" in ok.note
    past = resolve(ref("x", "path", "vllm/v1/core/kv_cache_manager.py", line_range=(118, 130)), vllm30)
    assert past.status == "warning" and "past the end" in past.note  # the file itself is fine


def test_link_anchor_checked_against_the_named_symbol(vllm30: PinView, vllm33: PinView) -> None:
    link = ref(
        "https://github.com/vllm-project/vllm/blob/v0.30.0/vllm/v1/core/kv_cache_manager.py#L30-L60",
        "path", "vllm/v1/core/kv_cache_manager.py", origin="link", line_range=(30, 60),
        link_symbol="KVCacheManager.allocate_slots", repo_layout=True,
    )
    at_30 = resolve(link, vllm30)
    assert (at_30.status, at_30.resolved_at) == ("ok", "vllm/v1/core/kv_cache_manager.py:30")
    # In 0.33 the method spans 40-70: L30-L60 overlaps it but starts in front of it.
    shifted = resolve(link, vllm33)
    assert shifted.status == "warning" and "is at L40-L70" in shifted.note
    assert resolve(replace(link, line_range=(45, 50)), vllm33).status == "ok"  # inside the body
    moved = replace(link, line_range=(80, 100))
    stale = resolve(moved, vllm30)
    assert stale.status == "warning"  # the file exists: a warning with the new lines, not a broken file
    assert "KVCacheManager.get_computed_blocks" in stale.note and "L30-L60" in stale.note
    gone = replace(link, link_symbol="KVCacheManager.free_all")
    missing = resolve(gone, vllm30)  # the file is there: the name's own reference says it is gone
    assert missing.status == "warning" and "`KVCacheManager.free_all` is not defined in" in missing.note


def test_symbols(vllm30: PinView) -> None:
    found = resolve(ref("Scheduler.schedule", "symbol"), vllm30)
    assert (found.status, found.resolved_at) == ("ok", "vllm/v1/core/sched/scheduler.py:50")
    assert resolve(ref("vllm.v1.core.sched.scheduler.Scheduler", "symbol"), vllm30).status == "ok"
    assert resolve(ref("vllm.v1.core.sched.scheduler", "symbol"), vllm30).status == "ok"
    assert resolve(ref("vllm.LLM", "symbol"), vllm30).status == "ok"
    assert resolve(ref("Scheduler.waiting", "symbol"), vllm30).status == "ok"
    assert resolve(ref("Scheduler.run", "symbol"), vllm30).status == "broken"
    # A dotted module path must match in full; a suffix elsewhere does not count.
    assert resolve(ref("vllm.core.scheduler.Scheduler", "symbol"), vllm30).status == "broken"


def test_inherited_method_resolves_through_base_class(vllm30: PinView) -> None:
    found = resolve(ref("Scheduler.has_requests", "symbol"), vllm30)
    assert found.status == "ok"
    assert found.resolved_at == "vllm/v1/core/sched/interface.py:20"
    assert "inherited from `SchedulerInterface`" in found.note


def test_flags(vllm30: PinView) -> None:
    ok = resolve(ref("--max-num-seqs", "flag", command="vllm serve"), vllm30)
    assert (ok.status, ok.resolved_at) == ("ok", "vllm/engine/arg_utils.py:41")
    assert resolve(ref("--no-enable-prefix-caching", "flag"), vllm30).status == "ok"
    underscore = resolve(ref("--max_num_seqs", "flag"), vllm30)
    assert underscore.status == "ok" and "underscore" in underscore.note
    assert resolve(ref("--num-scheduler-steps", "flag", command="vllm serve"), vllm30).status == "broken"
    bench = resolve(ref("--dataset-name", "flag", command="vllm bench"), vllm30)
    assert bench.status == "not-checkable"


def test_env_vars(vllm30: PinView, sglang23: PinView) -> None:
    assert resolve(ref("VLLM_LOGGING_LEVEL", "env"), vllm30).status == "ok"
    assert resolve(ref("VLLM_USE_V1", "env"), vllm30).status == "broken"
    old = resolve(ref("SGLANG_OPT_SWA_RELEASE_LEAF_LOCK_AFTER_WINDOW", "env", framework="sglang"), sglang23)
    assert old.status == "ok" and "deprecated name of SGLANG_OPT_RELEASE_PREFILL_SWA" in old.note


def test_pin_without_flags_or_symbols_is_not_checkable(vllm30: PinView) -> None:
    empty = PinView(
        pin="vllm@0.1", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=vllm30.files, symbols=[], flags=[], envs=[],
    )
    assert resolve(ref("--max-num-seqs", "flag", command="vllm serve"), empty).status == "not-checkable"
    assert resolve(ref("VLLM_X", "env"), empty).status == "not-checkable"
    assert resolve(ref("Scheduler", "symbol"), empty).status == "not-checkable"


def test_link_commit_other_than_the_pin_is_noted(vllm30: PinView) -> None:
    base = ref("u", "path", "vllm/v1/core/sched/scheduler.py", origin="link", repo_layout=True)
    assert "checked against" not in resolve(replace(base, commit="v0.30.0"), vllm30).note
    assert "checked against" not in resolve(replace(base, commit="aaaaaaa"), vllm30).note  # the pin's upstream commit
    assert "link names 5cecfc0, checked against vllm@0.30.0" in resolve(replace(base, commit="5cecfc0"), vllm30).note


def test_a_member_of_a_class_only_a_test_function_defines_is_not_broken(tmp_path: Path) -> None:
    # vllm@0.30.0-src: `tests/.../test_utils.py` defines `class Layer(torch.nn.Module)` inside a
    # test function; held-out 4's diagram says `Layer.forward()` of no class in particular.
    test = "tests/model_executor/test_utils.py"
    mod = "vllm/model_executor/layers/linear.py"
    fn = "tests.model_executor.test_utils.test_replace"
    view = PinView(
        pin="vllm@0.30.0-src", project="vllm", kind="git", layout_prefix="", packages=("vllm",),
        files=frozenset({test, mod}), flags=[], envs=[], upstream_commit=None, store_commit="b" * 40, tree=str(tmp_path),
        symbols=[
            SymbolEntry(fn, test, 200, 240, "function"),
            SymbolEntry(f"{fn}.Layer", test, 216, 220, "class", ("torch.nn.Module",)),
            SymbolEntry(f"{fn}.Layer.weight_loader", test, 217, 220, "function"),
            SymbolEntry("vllm.model_executor.layers.linear.LinearBase", mod, 10, 90, "class", ("torch.nn.Module",)),
            SymbolEntry("vllm.model_executor.layers.linear.LinearBase.weight_loader", mod, 20, 30, "function"),
        ],
    )
    local = resolve(ref("Layer.forward()", "symbol", "Layer.forward"), view)
    assert local.status == "not-checkable" and "inside a function" in local.note and test in local.note
    assert resolve(ref("Layer.weight_loader", "symbol"), view).status == "ok"
    # A class a module defines is judged as before: its missing member is broken.
    assert resolve(ref("LinearBase.forward()", "symbol", "LinearBase.forward"), view).status == "broken"
