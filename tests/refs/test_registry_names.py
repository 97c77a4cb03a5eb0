"""Architecture names a model registry maps (vLLM's `registry.py`, read as text) resolve after
their own class is gone: the registry still serves them through another implementation."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.build import registry_architectures
from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView

from .fakes import vllm_view

REGISTRY = '''\
_TEXT_GENERATION_MODELS = {
    # [Decoder-only]
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
}
_TRANSFORMERS_SUPPORTED_MODELS = {
    "ArceeForCausalLM": ("transformers", "TransformersForCausalLM"),
}
'''


def test_registry_keys_become_architecture_names(tmp_path: Path) -> None:
    registry = tmp_path / "vllm" / "model_executor" / "models" / "registry.py"
    registry.parent.mkdir(parents=True)
    registry.write_text(REGISTRY)
    found = registry_architectures(tmp_path, ["vllm", "missing"])
    assert [(e.last, e.line, e.kind) for e in found] == [("LlamaForCausalLM", 3, "attribute"), ("ArceeForCausalLM", 6, "attribute")]
    base = vllm_view(tmp_path)
    pin = PinView(**{**{f: getattr(base, f) for f in ("pin", "project", "kind", "layout_prefix", "packages", "files", "flags", "envs")}, "symbols": [*base.table, *found]})
    doc = "vLLM supports `ArceeForCausalLM` and `MellumForCausalLM`.\n"
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [pin])}
    assert got["ArceeForCausalLM"].status == OK
    assert got["ArceeForCausalLM"].resolved_at == "vllm/model_executor/models/registry.py:6"
    assert got["MellumForCausalLM"].status == BROKEN
