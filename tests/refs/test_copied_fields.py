"""A copy of the project's dataclass lists its fields (`hidden_states: Optional[Tensor]` in the
class body): each is the class's field, judged as the copy's methods are (when the copy mirrors the
class)."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView, SymbolEntry

from .fakes import statuses

_OUTPUTS = "vllm/v1/outputs.py"
_SOURCE = "class ModelRunnerOutput:\n    req_ids: list\n    sampled_token_ids: list\n    logprobs: object = None\n"


def _view(root: Path) -> PinView:
    tree = root / "vllm-0.30.0"
    (tree / "vllm/v1").mkdir(parents=True)
    (tree / _OUTPUTS).write_text(_SOURCE, encoding="utf-8")
    cls = "vllm.v1.outputs.ModelRunnerOutput"
    symbols = [
        SymbolEntry("vllm.v1.outputs", _OUTPUTS, 1, 4, "module"),
        SymbolEntry(cls, _OUTPUTS, 1, 4, "class"),
        *(SymbolEntry(f"{cls}.{name}", _OUTPUTS, i, i, "attribute") for i, name in enumerate(("req_ids", "sampled_token_ids", "logprobs"), 2)),
    ]
    view = PinView(
        pin="vllm@0.30.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset({_OUTPUTS, "vllm/__init__.py"}), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(root / "words.json")
    return view


def _statuses(doc: str, pin: PinView) -> dict[str, list[str]]:
    return statuses(doc, pin, name="doc.md")


def test_the_fields_of_a_copied_dataclass_are_judged_on_its_class(tmp_path: Path) -> None:
    doc = (
        "# vLLM V1 outputs\n\n```python\n@dataclass\nclass ModelRunnerOutput:\n"
        '    """What the runner returns."""\n'
        "    req_ids: list[str]\n    sampled_token_ids: torch.Tensor  # [batch, samples]\n"
        "    logprobs: Optional[torch.Tensor] = None\n    hidden_states: Optional[torch.Tensor]\n```\n"
    )
    found = _statuses(doc, _view(tmp_path))
    assert found["req_ids"] == [OK] and found["logprobs"] == [OK]
    assert found["hidden_states"] == [BROKEN]


def test_the_fields_of_the_authors_own_class_are_not_judged(tmp_path: Path) -> None:
    doc = (
        "# A toy runner for vLLM\n\n```python\n@dataclass\nclass MyOutputs:\n"
        "    tokens: list[int]\n    my_hidden_states: Optional[torch.Tensor] = None\n```\n"
    )
    found = _statuses(doc, _view(tmp_path))
    assert "my_hidden_states" not in found and "tokens" not in found
