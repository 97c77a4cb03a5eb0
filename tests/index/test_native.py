"""C/C++/CUDA/Rust definitions read with tree-sitter (analyzer/index/native.py)."""

from __future__ import annotations

from pathlib import Path

from analyzer.index.native import blank_cuda, extract_native, index_native, native_files

CUDA = b"""\
#include <cuda_runtime.h>
namespace vllm {

template <typename scalar_t, int HEAD_SIZE, int BLOCK_SIZE>
__global__ void __launch_bounds__(256, 1) paged_attention_v1_kernel(
    scalar_t* __restrict__ out, const int num_seqs) {
  helper<<<grid, block, 0, stream>>>(out);
}

__device__ __forceinline__ float warp_sum(float v) { return v; }

struct Vec { int x; };
class CacheEngine : public Base {
 public:
  void swap(int a);
  static int count(int a) { return a; }
};
void CacheEngine::swap(int a) {}
enum class Kind { kDecode, kPrefill };
}  // namespace vllm

void paged_attention_v1(torch::Tensor& out);
#define LAUNCH_PAGED_ATTENTION_V1(HEAD_SIZE) paged_attention_v1_kernel<T, HEAD_SIZE><<<1, 1>>>()
"""

RUST = b"""\
pub mod policies {
    pub struct CacheAwarePolicy { tree: u32 }
}
pub struct Router<T> { workers: Vec<T> }
impl<T: Clone> RouterTrait for Router<T> {
    async fn route_typed_request(&self) -> u8 { 1 }
}
impl<T> Router<T> { pub fn new() -> Self { todo!() } }
pub enum PolicyKind { Random, RoundRobin }
pub trait RouterTrait { fn route_typed_request(&self) -> u8; }
macro_rules! route_all { () => {} }
"""


def _by_name(path: str, data: bytes) -> dict[str, tuple[str, int, int]]:
    return {s.qualname: (s.kind, s.line, s.end_line) for s in extract_native(path, data).symbols}


def test_cuda_kernels_classes_methods_and_prototypes() -> None:
    found = _by_name("csrc/attention/attention_kernels.cu", CUDA)
    assert found["vllm.paged_attention_v1_kernel"] == ("function", 5, 8)
    assert found["vllm.warp_sum"][0] == "function"
    assert found["vllm.Vec"][0] == "class"
    assert found["vllm.CacheEngine"] == ("class", 13, 17)
    assert found["vllm.CacheEngine.count"][0] == "function"
    # The in-class prototype is a declaration; the out-of-class `void CacheEngine::swap` its definition.
    kinds = {(s.kind, s.line) for s in extract_native("a.cu", CUDA).symbols if s.qualname == "vllm.CacheEngine.swap"}
    assert kinds == {("declaration", 15), ("function", 18)}
    assert found["vllm.Kind"][0] == "class" and found["vllm.Kind.kDecode"][0] == "attribute"
    assert found["paged_attention_v1"][0] == "declaration"
    assert found["LAUNCH_PAGED_ATTENTION_V1"][0] == "macro"
    assert found["vllm"][0] == "module"


def test_cuda_qualifiers_are_blanked_in_place() -> None:
    blanked = blank_cuda(CUDA)
    assert len(blanked) == len(CUDA) and blanked.count(b"\n") == CUDA.count(b"\n")
    assert b"__global__" not in blanked and b"__launch_bounds__" not in blanked and b"__restrict__" not in blanked
    assert b"paged_attention_v1_kernel" in blanked


def test_rust_items_impl_methods_and_trait_methods() -> None:
    found = _by_name("sgl-router/src/lib.rs", RUST)
    assert found["policies"][0] == "module"
    assert found["policies.CacheAwarePolicy"][0] == "class"
    assert found["Router"][0] == "class"
    assert found["Router.workers"][0] == "attribute"
    assert found["Router.new"][0] == "function"  # from `impl<T> Router<T>`
    assert found["Router.route_typed_request"][0] == "function"  # from `impl RouterTrait for Router<T>`
    assert found["RouterTrait.route_typed_request"][0] == "function"
    assert found["PolicyKind.RoundRobin"][0] == "attribute"
    assert found["route_all"][0] == "macro"


def test_bad_input_is_reported_not_fatal() -> None:
    # Latin-1 bytes in a comment: identifiers still come out.
    latin = extract_native("a.cpp", b"// caf\xe9 \xff\xfe\nint add(int a) { return a; }\n")
    assert [s.qualname for s in latin.symbols] == ["add"]
    # A BOM keeps line numbers.
    bom = extract_native("b.h", b"\xef\xbb\xbfstruct S { int x; };\n")
    assert [(s.qualname, s.line) for s in bom.symbols] == [("S", 1)]
    binary = extract_native("c.cu", b"\x7fELF\x00\x00\x01")
    assert binary.symbols == () and binary.error == "binary content"
    truncated = extract_native("d.cu", CUDA[: len(CUDA) // 2])
    assert truncated.error is not None and "parsed with errors" in truncated.error
    assert any(s.qualname.endswith("paged_attention_v1_kernel") for s in truncated.symbols)
    assert extract_native("e.cc", b"").symbols == ()
    assert extract_native("f.txt", b"int x;").error is not None


def test_tree_walk_skips_vendored_folders_and_reports_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "ops.cu").write_bytes(CUDA)
    (tmp_path / "third_party" / "cutlass").mkdir(parents=True)
    (tmp_path / "third_party" / "cutlass" / "tensor.hpp").write_text("struct Tensor {};\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_bytes(RUST)
    (tmp_path / "README.md").write_text("# x\n")
    assert list(native_files(tmp_path)) == ["csrc/ops.cu", "src/lib.rs"]
    files = index_native(tmp_path, ["csrc/ops.cu", "src/missing.rs"])
    assert files[0].symbols and files[1].symbols == () and "FileNotFoundError" in (files[1].error or "")
