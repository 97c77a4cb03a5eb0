"""Names no definition of the symbol index stands for that are still the pin's, or no one's to
judge (`resolve._beside_the_index`; held-out 23): a custom op the project registers with torch
(`vllm.unified_attention_with_output` in a `splitting_ops` list), an enum member's `.value`, and a
test's name, which a release does not ship."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.build import custom_ops
from analyzer.refs.pinview import SymbolEntry

from .fakes import statuses, vllm_view

_REGISTERS = '''
direct_register_custom_op(
    op_name="unified_attention_with_output",
    op_func=unified_attention_with_output,
)


@torch.library.custom_op("vllm::triton_rearrange", mutates_args=())
def triton_rearrange(x):
    return x
'''


def test_custom_ops_are_read_from_their_registrations(tmp_path: Path) -> None:
    (tmp_path / "vllm" / "attention").mkdir(parents=True)
    (tmp_path / "vllm" / "attention" / "layer.py").write_text(_REGISTERS, encoding="utf-8")
    assert custom_ops(tmp_path, ["vllm"]) == {
        "unified_attention_with_output": "vllm/attention/layer.py:3",
        "triton_rearrange": "vllm/attention/layer.py:8",
    }


def test_names_beside_the_index(tmp_path: Path) -> None:
    pin = vllm_view(tmp_path)
    enum = "vllm/v1/engine/__init__.py"
    pin = replace(
        pin,
        kind="release",
        custom_ops={"unified_attention_with_output": "vllm/attention/layer.py:3"},
        symbols=[
            *pin.table,
            SymbolEntry("vllm.v1.engine.EngineCoreRequestType", enum, 10, 20, "class", ("enum.Enum",)),
            SymbolEntry("vllm.v1.engine.EngineCoreRequestType.ADD", enum, 11, 11, "attribute"),
        ],
    )
    doc = (
        "# vLLM\n\n"
        '```python\n_attention_ops: ClassVar[list[str]] = [\n    "vllm.unified_attention_with_output",\n    "vllm.unified_attention_gone",\n]\n```\n\n'
        "It sends `EngineCoreRequestType.ADD.value` and `EngineCoreRequestType.ADD.nonsense`; see "
        "`test_hicache_keeps_backend` for the check.\n"
    )
    found = statuses(doc, pin)
    assert found["vllm.unified_attention_with_output"] == ["ok"]
    assert found["vllm.unified_attention_gone"] == ["broken"]
    assert found["EngineCoreRequestType.ADD.value"] == ["ok"]
    assert found["EngineCoreRequestType.ADD.nonsense"] == ["broken"]
    assert found["test_hicache_keeps_backend"] == ["not-checkable"]


def test_a_test_s_name_in_prose_is_not_judged_against_a_wheel(tmp_path: Path) -> None:
    # Held-out 22's "回归测试 `test_hicache_kernel_keeps_implicit_fa3_decode_backend`": judged in code
    # font by spelling alone, where the sources of a wheel (no tests) never spell it.
    from .test_undefined_names import _with_words

    pin = _with_words(vllm_view(tmp_path), tmp_path)
    doc = "# vLLM\n\nThe regression test `test_hicache_keeps_fa3_backend` covers it; `hicache_fa3_backend_gone` is gone.\n"
    found = statuses(doc, pin)
    assert found["test_hicache_keeps_fa3_backend"] == ["not-checkable"]
    assert found["hicache_fa3_backend_gone"] == ["broken"]
