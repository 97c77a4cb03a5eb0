"""Broken findings a reader would not call broken: a generic stand-in for a category of classes,
a file the text tells the reader to create, a name given to a native source a wheel lacks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.suggest import History

from .test_undefined_names import _with_words

_MODELS = "vllm/model_executor/models"


def _view(tmp_path: Path, symbols: list[SymbolEntry], files: list[str], pin: str = "vllm@0.33.0") -> PinView:
    tree = tmp_path / pin
    for f in files:
        (tree / f).parent.mkdir(parents=True, exist_ok=True)
        (tree / f).write_text("# a file\n", encoding="utf-8")
    return PinView(
        pin=pin, project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(files), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )


def _models(tmp_path: Path, kinds: int, pin: str = "vllm@0.33.0") -> PinView:
    names = ["LlamaModel", "Qwen2Model", "MistralModel", "GemmaModel"][:kinds]
    symbols: list[SymbolEntry] = []
    files: list[str] = []
    for name in names:
        path = f"{_MODELS}/{name.lower()}.py"
        module = path.removesuffix(".py").replace("/", ".")
        files.append(path)
        symbols.append(SymbolEntry(f"{module}.{name}", path, 10, 90, "class"))
        symbols.append(SymbolEntry(f"{module}.{name}.forward", path, 40, 80, "function"))
    return _view(tmp_path, symbols, files, pin)


def _check(doc: str, pin: PinView, histories: dict[str, History] | None = None) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin], histories):
        out.setdefault(f.ref.text, []).append(f)
    return out


_CHAIN = "In vLLM the runner calls `Model.forward()`, which calls each layer.\n"


def test_one_word_standing_for_many_classes_is_a_placeholder(tmp_path: Path) -> None:
    (f,) = _check(_CHAIN, _models(tmp_path, 3))["Model.forward()"]
    assert f.status == NOT_CHECKABLE and "generic stand-in" in f.note and not f.suggestions


def test_a_word_with_few_kinds_is_still_judged(tmp_path: Path) -> None:
    # Two classes named `...Model` are not a category the text could mean as a whole.
    (f,) = _check(_CHAIN, _models(tmp_path, 2))["Model.forward()"]
    assert f.status == BROKEN


def test_a_class_an_older_pin_defined_is_a_removed_one(tmp_path: Path) -> None:
    new = _models(tmp_path / "new", 3)
    old_module = f"{_MODELS}/model".replace("/", ".")
    old = _view(tmp_path / "old", [SymbolEntry(f"{old_module}.Model", f"{_MODELS}/model.py", 1, 50, "class")], [f"{_MODELS}/model.py"], "vllm@0.30.0")
    (f,) = _check(_CHAIN, new, {new.pin: History(old)})["Model.forward()"]
    assert f.status == BROKEN


def test_a_file_the_text_says_to_create_is_not_a_citation(tmp_path: Path) -> None:
    pin = _models(tmp_path, 1)
    doc = "To add a model to vLLM, create `vllm/model_executor/models/my_model.py` with its layers.\n"
    (f,) = _check(doc, pin)["vllm/model_executor/models/my_model.py"]
    assert f.status == NOT_CHECKABLE and "create" in f.note
    # Without the instruction, or when the folder itself is gone, the file is missing.
    (plain,) = _check("In vLLM, the model lives in `vllm/model_executor/models/my_model.py`.\n", pin)["vllm/model_executor/models/my_model.py"]
    assert plain.status == BROKEN
    (moved,) = _check("In vLLM, create `vllm/old_models/my_model.py` first.\n", pin)["vllm/old_models/my_model.py"]
    assert moved.status == BROKEN


def test_a_name_given_to_a_native_source_is_not_judged_in_a_wheel(tmp_path: Path) -> None:
    pin = _models(tmp_path, 1)
    path = f"{_MODELS}/llamamodel.py"
    helpers = [SymbolEntry(f"vllm.model_executor.models.llamamodel.{name}", path, 95, 99, "function") for name in ("build_model", "load_weights")]
    pin = _with_words(replace(pin, symbols=[*pin.table, *helpers]), tmp_path)
    # A call flow of the project's functions (so its calls are judged), one given to a CUDA file.
    doc = (
        "In vLLM:\n\n```text\n"
        "vllm/model_executor/models/llamamodel.py: build_model()\n"
        "    ↓\n"
        "vllm/model_executor/models/llamamodel.py: load_weights()\n"
        "    ↓\n"
        "csrc/attention/paged_attention_v9.cu: paged_attention_v9()\n"
        "    ↓\n"
        "vllm/model_executor/models/llamamodel.py: gone_helper_v9()\n"
        "```\n"
    )
    found = _check(doc, pin)
    (kernel,) = found["paged_attention_v9"]
    assert kernel.status == NOT_CHECKABLE and "csrc/attention/paged_attention_v9.cu" in kernel.note
    # A name beside a Python file of the package is judged as ever.
    assert found["gone_helper_v9"][0].status == BROKEN
    # A git pin holds the native sources: there the name is judged.
    git = replace(pin, kind="git", pin="vllm@0.33.0-src")
    git.words_path = str(tmp_path / "words" / "git.json")
    assert _check(doc, git)["paged_attention_v9"][0].status == BROKEN
