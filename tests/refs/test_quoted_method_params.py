"""A method quoted on its own with its signature (`def load_lora_model(self, model: nn.Module,
model_config: ModelConfig, ...)`): its annotated parameters are the project's method's, as a
module-level function's are (`_copied_function`)."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView, SymbolEntry

from .fakes import statuses

_MIXIN = "vllm/v1/worker/lora_model_runner_mixin.py"
_SOURCE = (
    "class LoRAModelRunnerMixin:\n"
    "    def load_lora_model(self, model, vllm_config, device):\n"
    "        return model\n"
)


def _view(root: Path) -> PinView:
    tree = root / "vllm-0.30.0"
    (tree / "vllm/v1/worker").mkdir(parents=True)
    (tree / _MIXIN).write_text(_SOURCE, encoding="utf-8")
    cls = "vllm.v1.worker.lora_model_runner_mixin.LoRAModelRunnerMixin"
    symbols = [
        SymbolEntry("vllm.v1.worker.lora_model_runner_mixin", _MIXIN, 1, 3, "module"),
        SymbolEntry(cls, _MIXIN, 1, 3, "class"),
        SymbolEntry(f"{cls}.load_lora_model", _MIXIN, 2, 3, "function"),
    ]
    view = PinView(
        pin="vllm@0.30.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset({_MIXIN, "vllm/__init__.py"}), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(root / "words.json")
    return view


def test_the_annotated_parameters_of_a_quoted_method_are_the_projects_methods(tmp_path: Path) -> None:
    doc = (
        "# vLLM V1 LoRA loading\n\n```python\n"
        "def load_lora_model(self, model: nn.Module, model_config: ModelConfig,\n"
        "                    device: str) -> nn.Module:\n"
        "    return model\n```\n"
    )
    found = statuses(doc, _view(tmp_path), name="doc.md")
    assert found["model"] == [OK] and found["device"] == [OK]
    assert found["model_config"] == [BROKEN]
