"""References to C++/CUDA kernels and Rust types resolve like Python names: against a git
pin that holds them (its repository folders included), and not-checkable against a wheel."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.loader import load_pin
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK, WARNING, Finding
from analyzer.settings import Settings
from analyzer.snapshots import add_git_pin

from .fakes import vllm_view

KERNEL = """\
#include <cuda_runtime.h>
namespace sgl {
template <typename T>
__global__ void merge_state_kernel(T* out, const int n) {
  out[0] = T(0);
}
}  // namespace sgl
"""
RUST = """\
pub struct CacheAwarePolicy {
    threshold: f32,
}

impl CacheAwarePolicy {
    pub fn new(threshold: f32) -> Self {
        Self { threshold }
    }
}
"""
VLLM_KERNEL = """\
namespace vllm {
template <typename scalar_t, int HEAD_SIZE>
__global__ void paged_attention_v1_kernel(scalar_t* __restrict__ out) {}
}  // namespace vllm
"""


def _repo(root: Path, files: dict[str, str]) -> tuple[str, str]:
    repo = git.Repo.init(root)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        repo.index.add([rel])
    actor = git.Actor("test", "test@example.com")
    return str(root), repo.index.commit("sources", author=actor, committer=actor).hexsha


def _by_text(findings: list[Finding]) -> dict[str, Finding]:
    return {f.ref.text: f for f in findings}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=tmp_path / "cache")


@pytest.mark.slow
def test_sglang_git_pin_resolves_kernels_and_router_outside_the_package(settings: Settings, tmp_path: Path) -> None:
    url, sha = _repo(
        tmp_path / "sglang",
        {
            "python/sglang/__init__.py": "",
            "python/sglang/srt/radix.py": "class RadixCache:\n    def match_prefix(self):\n        pass\n",
            "sgl-kernel/csrc/attention/merge_attn_states.cu": KERNEL,
            "sgl-router/src/policies/cache_aware.rs": RUST,
            "sgl-router/src/third_party/vendored.rs": "pub struct Vendored;\n",
        },
    )
    add_git_pin(settings, "sglang@src", url, sha, layout_prefix="python/")
    pin = load_pin(settings, "sglang@src")
    assert "sgl-kernel/csrc/attention/merge_attn_states.cu" in pin.outside_files
    link = "https://github.com/sgl-project/sglang/blob/main/sgl-router/src/policies/cache_aware.rs"
    doc = f"""\
# SGLang's kernels and router

The merge runs in `merge_state_kernel` (`sgl-kernel/csrc/attention/merge_attn_states.cu`);
`sgl::merge_state_kernel` is its scoped name, and `sgl::merge_states_kernel_v2` is not there.
The router's `CacheAwarePolicy::new` lives in `sgl-router/src/policies/cache_aware.rs`, not in
`sgl-router/src/policies/random.rs`; `CacheAwarePolicy::select_worker` is gone.
See [`CacheAwarePolicy`]({link}#L1-L3).

Its constructor: [`CacheAwarePolicy`]({link}#L6-L8).
Python still has `RadixCache.match_prefix`.
"""
    findings = check_references(extract_all([("ch.md", doc)]), [pin])
    got = _by_text(findings)
    assert got["merge_state_kernel"].status == OK
    assert got["merge_state_kernel"].resolved_at == "sgl-kernel/csrc/attention/merge_attn_states.cu:4"
    assert got["sgl-kernel/csrc/attention/merge_attn_states.cu"].status == OK
    assert got["sgl::merge_state_kernel"].status == OK
    assert got["sgl::merge_states_kernel_v2"].status == BROKEN
    assert got["CacheAwarePolicy::new"].status == OK, got["CacheAwarePolicy::new"]
    assert got["CacheAwarePolicy::new"].resolved_at == "sgl-router/src/policies/cache_aware.rs:6"
    assert got["sgl-router/src/policies/cache_aware.rs"].status == OK
    assert got["sgl-router/src/policies/random.rs"].status == BROKEN
    assert got["CacheAwarePolicy::select_worker"].status == BROKEN
    assert got["RadixCache.match_prefix"].status == OK
    # `#L` anchors into a Rust file: lines that still hold the struct, and lines that moved.
    anchors = sorted((f for f in findings if f.ref.origin == "link"), key=lambda f: f.ref.line)
    assert [f.status for f in anchors] == [OK, WARNING]
    assert anchors[1].note.startswith("L6-L8 holds `CacheAwarePolicy.new`; `CacheAwarePolicy` is at L1-L3")


@pytest.mark.slow
def test_vllm_git_pin_checks_csrc_which_a_wheel_cannot(settings: Settings, tmp_path: Path) -> None:
    url, sha = _repo(
        tmp_path / "vllm",
        {
            "vllm/__init__.py": "",
            "vllm/_custom_ops.py": "def paged_attention_v1(out):\n    pass\n",
            "csrc/attention/attention_kernels.cu": VLLM_KERNEL,
        },
    )
    add_git_pin(settings, "vllm@src", url, sha, layout_prefix="")
    pin = load_pin(settings, "vllm@src")
    doc = """\
# vLLM's paged attention

`vllm::paged_attention_v1_kernel` in `csrc/attention/attention_kernels.cu` is launched by
`paged_attention_v1`; `csrc/attention/paged_attention_v2.cu` and `vllm::paged_attention_v2_kernel`
are gone.
"""
    got = _by_text(check_references(extract_all([("ch.md", doc)]), [pin]))
    assert got["vllm::paged_attention_v1_kernel"].status == OK
    assert got["csrc/attention/attention_kernels.cu"].status == OK
    assert got["paged_attention_v1"].status == OK
    assert got["csrc/attention/paged_attention_v2.cu"].status == BROKEN
    assert got["vllm::paged_attention_v2_kernel"].status == BROKEN
    # The same text against a wheel: its csrc/ and kernels are not there to check.
    wheel = _by_text(check_references(extract_all([("ch.md", doc)]), [vllm_view(tmp_path)]))
    assert wheel["vllm::paged_attention_v1_kernel"].status == NOT_CHECKABLE
    assert wheel["csrc/attention/attention_kernels.cu"].status == NOT_CHECKABLE


def test_a_list_of_kernels_introduced_by_a_repository_folder_is_not_judged_by_a_wheel(sglang20, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`Key kernels in `sgl-kernel/`:` then a list of names: a name the wheel never spells is a
    kernel of sources it does not hold (not-checkable), even shaped like a class; the same list
    introduced by plain prose judges it as before."""
    sglang20.words_path = str(tmp_path / "words.json")  # what the wheel's sources spell
    listed = "# SGLang\n\n{lead}\n\n- `TreeSamplingTargetOnlyKernel`: target-only sampling\n- `RadixCache`: the tree\n"
    found = _by_text(check_references(extract_all([("k.md", listed.format(lead="Key kernels in `sgl-kernel/`:"))]), [sglang20]))
    assert found["TreeSamplingTargetOnlyKernel"].status == NOT_CHECKABLE
    assert "repository files" in found["TreeSamplingTargetOnlyKernel"].note
    assert found["RadixCache"].status == OK
    plain = _by_text(check_references(extract_all([("k.md", listed.format(lead="Key classes:"))]), [sglang20]))
    assert plain["TreeSamplingTargetOnlyKernel"].status == BROKEN


def test_a_package_folder_named_like_a_repository_folder_is_no_repository_context(sglang20, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`benchmarks/` inside a package path (`sglang/multimodal_gen/benchmarks/x.py`) is the
    package's folder: the paragraph is not about repository files, so a name the wheel never
    spells there is broken; `benchmarks/` at a path's start is the repository's."""
    sglang20.words_path = str(tmp_path / "words.json")
    doc = "# SGLang\n\nIn SGLang, `TreeSamplingTargetOnlyKernel` runs;\nthe code is in `{path}`.\n"
    inside = _by_text(check_references(extract_all([("k.md", doc.format(path="python/sglang/multimodal_gen/benchmarks/x.py"))]), [sglang20]))
    assert inside["TreeSamplingTargetOnlyKernel"].status == BROKEN
    outside = _by_text(check_references(extract_all([("k.md", doc.format(path="benchmarks/bench_serving.py"))]), [sglang20]))
    assert outside["TreeSamplingTargetOnlyKernel"].status == NOT_CHECKABLE
