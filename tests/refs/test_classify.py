from __future__ import annotations

import pytest

from analyzer.refs.classify import classify
from analyzer.refs.models import SYMBOL


@pytest.mark.parametrize(
    ("text", "kind", "target", "framework"),
    [
        ("--enable-prefix-caching", "flag", "--enable-prefix-caching", None),
        ("--chunked-prefill-size=4096", "flag", "--chunked-prefill-size", None),
        ("VLLM_USE_V1", "env", "VLLM_USE_V1", "vllm"),
        ("VLLM_USE_V1=0", "env", "VLLM_USE_V1", "vllm"),
        ("$SGLANG_LOG_LEVEL", "env", "SGLANG_LOG_LEVEL", "sglang"),
        ("SGL_ENABLE_JIT_DEEPGEMM", "env", "SGL_ENABLE_JIT_DEEPGEMM", "sglang"),
        ("envs.VLLM_LOGGING_LEVEL", "env", "VLLM_LOGGING_LEVEL", "vllm"),
        ("vllm/v1/core/sched/scheduler.py", "path", "vllm/v1/core/sched/scheduler.py", "vllm"),
        ("python/sglang/srt/managers/scheduler.py", "path", "python/sglang/srt/managers/scheduler.py", "sglang"),
        ("sglang/srt/managers/", "path", "sglang/srt/managers", "sglang"),
        ("csrc/attention/", "path", "csrc/attention", None),
        ("srt/managers/scheduler.py", "path", "srt/managers/scheduler.py", None),
        ("vllm.v1.core.sched.scheduler.Scheduler", "symbol", "vllm.v1.core.sched.scheduler.Scheduler", "vllm"),
        ("Scheduler", "symbol", "Scheduler", None),
        ("Scheduler.schedule()", "symbol", "Scheduler.schedule", None),
        ("allocate_slots(request, num_new_tokens)", "symbol", "allocate_slots", None),
        ("RadixCache.match_prefix", "symbol", "RadixCache.match_prefix", None),
    ],
)
def test_references(text: str, kind: str, target: str, framework: str | None) -> None:
    found = classify(text)
    assert found is not None
    assert (found.kind, found.target, found.framework) == (kind, target, framework)


@pytest.mark.parametrize(
    "text",
    [
        "torch.cat",
        "torch.cat([a, b])",
        "self.block_pool",
        "x = y + 1",
        "CUDA_VISIBLE_DEVICES",
        "HF_TOKEN=abc",
        "GPU",
        "lpm",
        "a/b",
        "Tensor",
        "https://example.com/x",
        "np.zeros(3)",
        "",
        "q(·)",  # a formula's function of one letter (held-out 22)
        "f(x)",
    ],
)
def test_ordinary_code_is_not_a_reference(text: str) -> None:
    assert classify(text) is None


def test_path_line_suffix_becomes_a_range() -> None:
    found = classify("vllm/v1/core/block_pool.py:120")
    assert found is not None and found.line_range == (120, 120)
    found = classify("vllm/v1/core/block_pool.py:120-140")
    assert found is not None and found.line_range == (120, 140) and found.target == "vllm/v1/core/block_pool.py"


def test_bare_snake_case_name_is_tentative() -> None:
    found = classify("hash_block_tokens")
    assert found is not None and found.kind == "symbol" and found.tentative
    called = classify("hash_block_tokens()")
    assert called is not None and not called.tentative


@pytest.mark.parametrize(
    ("text", "target", "framework", "tentative"),
    [
        ("vllm::paged_attention_v1_kernel", "vllm.paged_attention_v1_kernel", "vllm", False),
        ("Router::new()", "Router.new", None, False),
        ("crate::policies::CacheAwarePolicy", "policies.CacheAwarePolicy", None, False),
        ("paged_attention_v1_kernel<T, 128>", "paged_attention_v1_kernel", None, True),
        ("paged_attention_v2_launcher<...>(...)", "paged_attention_v2_launcher", None, True),
    ],
)
def test_cpp_and_rust_names(text: str, target: str, framework: str | None, tentative: bool) -> None:
    found = classify(text)
    assert found is not None and found.kind == SYMBOL
    assert (found.target, found.framework, found.tentative) == (target, framework, tentative)


@pytest.mark.parametrize("text", ["std::vector<int>", "torch::Tensor", "List<int>", "a<b", "x < y > z"])
def test_library_scopes_and_comparisons_are_not_references(text: str) -> None:
    assert classify(text) is None


def test_a_path_with_a_github_line_anchor_in_code_font() -> None:
    found = classify("python/sglang/srt/managers/scheduler.py#L120-L180")
    assert found is not None and found.kind == "path"
    assert (found.target, found.line_range, found.framework) == ("python/sglang/srt/managers/scheduler.py", (120, 180), "sglang")
    assert classify("notes#L3") is None  # no folders: not a source path


@pytest.mark.parametrize(
    ("text", "target", "framework"),
    [
        ("/home/ann/src/vllm/vllm/v1/core/kv_cache_manager.py", "vllm/v1/core/kv_cache_manager.py", "vllm"),
        ("/srv/ci/sglang/python/sglang/srt/mem_cache/", "python/sglang/srt/mem_cache", "sglang"),
        ("/python/sglang/srt/server_args.py", "python/sglang/srt/server_args.py", "sglang"),
        ("/opt/venv/lib/python3.12/site-packages/vllm/config/cache.py", "vllm/config/cache.py", "vllm"),
        ("/vllm/engine/arg_utils.py", "vllm/engine/arg_utils.py", "vllm"),
    ],
)
def test_absolute_path_into_a_checkout_is_read_from_its_package(text: str, target: str, framework: str) -> None:
    c = classify(text)
    assert c is not None and (c.kind, c.target, c.framework) == ("path", target, framework)


@pytest.mark.parametrize(
    "text",
    ["/v1/chat/completions", "/path/to/model", "/dev/shm", "~/.cache/huggingface/hub", "/home/ann/vllm/benchmarks/run.py"],
)
def test_absolute_path_with_no_package_start_is_not_a_reference(text: str) -> None:
    # the last: a lone `vllm/` may be the checkout's root, so nothing says where the package starts
    assert classify(text) is None


@pytest.mark.parametrize(
    ("text", "target"),
    [("List[SequenceGroupMetadata]", "SequenceGroupMetadata"), ("Optional[Req]", "Req"), ("Dict[str, SequenceData]", "SequenceData")],
)
def test_container_type_cites_its_one_class(text: str, target: str) -> None:
    c = classify(text)
    assert c is not None and (c.kind, c.target) == ("symbol", target)


@pytest.mark.parametrize("text", ["List[int]", "List[torch.Tensor]", "Dict[seq_id, BlockTable]", "Tuple[Req, Batch]", "Optional[List[str]] = None"])
def test_container_type_of_builtins_or_several_names_is_not_read(text: str) -> None:
    c = classify(text)
    assert c is None or c.kind != "symbol"


def test_a_comparison_names_the_field_it_tests_not_a_keyword() -> None:
    # Held-out 23: "only nodes with `mamba_lock_ref == 0`" (a field), `page_size == 1` (no keyword).
    found = classify("mamba_lock_ref == 0")
    assert found is not None and (found.kind, found.target, found.tentative, found.reason) == (SYMBOL, "mamba_lock_ref", True, "compared")
    assert classify("x == 1") is None  # one word: a formula's variable
