"""Precision on real writing (issue 12 §2): strings a careful editor would not call broken. A
class reached through a module-level alias; the standard library's and a dependency's names and
objects in the document's own code; a placeholder for the reader's own class; another tool's
flag recommended "for vLLM"; example values listed in a table row on an env var. Each keeps a
counter-case that is still judged (broken where the project lost the name)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import EnvEntry, PinView, SymbolEntry
from analyzer.refs.resolve import alias_of

from .fakes import vllm_view
from .test_undefined_names import _check, _with_words

_ENGINE = "vllm/engine/front.py"
_CORE = "vllm/v1/engine/core_front.py"


@pytest.fixture
def vllm(tmp_path: Path) -> PinView:
    view = _with_words(vllm_view(tmp_path), tmp_path)
    assert view.tree is not None
    tree = Path(view.tree)
    for rel, text in {
        _ENGINE: "from vllm.v1.engine.core_front import FrontEngine\n\nOldFrontEngine = FrontEngine  # kept for users\nLIMIT = 4\n",
        _CORE: "class FrontEngine:\n    @classmethod\n    def from_settings(cls): ...\n",
    }.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
    symbols = [
        *view.symbols,
        SymbolEntry("vllm.engine.front", _ENGINE, 1, 4, "module"),
        SymbolEntry("vllm.engine.front.OldFrontEngine", _ENGINE, 3, 3, "attribute"),
        SymbolEntry("vllm.engine.front.LIMIT", _ENGINE, 4, 4, "attribute"),
        SymbolEntry("vllm.v1.engine.core_front.FrontEngine", _CORE, 1, 3, "class"),
        SymbolEntry("vllm.v1.engine.core_front.FrontEngine.from_settings", _CORE, 3, 3, "function"),
    ]
    envs = [*view.envs, EnvEntry("VLLM_DEVICE_PLUGIN", "vllm/envs.py:12")]
    return replace(view, symbols=symbols, envs=envs, files=view.files | {_ENGINE, _CORE})


def test_a_member_through_a_module_level_alias_of_a_class(vllm: PinView) -> None:
    (alias,) = [e for e in vllm.find_symbol("OldFrontEngine") if e.kind == "attribute"]
    assert alias_of(alias, vllm) == "FrontEngine"
    (limit,) = [e for e in vllm.find_symbol("LIMIT") if e.kind == "attribute"]
    assert alias_of(limit, vllm) is None  # a value, not a class
    found = _check("In vLLM, `OldFrontEngine.from_settings()` builds it and `OldFrontEngine.from_env()` is gone.\n", vllm)
    (ok,) = found["OldFrontEngine.from_settings()"]
    assert ok.status == OK and "alias of `FrontEngine`" in ok.note
    (gone,) = found["OldFrontEngine.from_env()"]
    assert gone.status == BROKEN  # the alias does not make every member current


def test_names_and_objects_of_the_standard_library_or_a_dependency_in_the_documents_code(vllm: PinView) -> None:
    doc = (
        "vLLM's entry point:\n\n```python\n"
        "def cmd(args: argparse.Namespace) -> None:\n    run(args)\n\n"
        "def hash_block_tokens(args: Namespace) -> None:\n"
        "    web = http.server.HTTPServer(args)\n"
        "    web.serve_forever(poll_interval=1)\n"
        "    sched = Scheduler(args)\n"
        "    sched.make_thing(args)\n```\n"
    )
    found = _check(doc, vllm)
    # `argparse.Namespace` is written in the document's own code: the bare `Namespace` is argparse's.
    assert "Namespace" not in found
    # `web` holds the standard library's object: its method and keyword are not the project's.
    assert "web.serve_forever" not in found and "poll_interval" not in found
    # An object of the project's class in the same code is still judged.
    assert [f.status for f in found["sched.make_thing"]] == [BROKEN]


def test_a_placeholder_for_the_readers_own_class_is_not_judged(vllm: PinView) -> None:
    doc = (
        "Adding a model to vLLM:\n\n```python\n"
        "class YourModelForCausalLM(nn.Module):\n"
        "    def _process(self, image_input: YourModelImageInputs) -> KVCacheManager:\n"
        "        return image_input\n```\n\n"
        "```text\nScheduler\n└── MyScheduler(Scheduler, MyMixin)   # your plugin\n└── FancyScheduler(Scheduler)\n```\n"
    )
    found = _check(doc, vllm)
    for text in ("YourModelImageInputs", "MyScheduler"):
        assert all(f.status == NOT_CHECKABLE and "placeholder" in f.note for f in found.get(text, [])), text
    # A class the text does not call the reader's is judged as before.
    assert [f.status for f in found["FancyScheduler"]] == [BROKEN]


def test_another_tools_flags_recommended_for_the_project(vllm: PinView) -> None:
    doc = (
        "Nsight Systems can be launched with `nsys profile ...`, with a few recommended flags for vLLM: "
        "`--trace-fork-before-exec=true`.\n\n"
        "Start the server with `nsys profile` around it, and pass vLLM `--max-num-seq-groups`.\n"
    )
    found = _check(doc, vllm)
    (tool,) = found["--trace-fork-before-exec"]
    assert tool.status == NOT_CHECKABLE and "nsys" in tool.note
    # Handed to vLLM itself ("pass vLLM ..."): still vLLM's flag, and gone.
    (own,) = found["--max-num-seq-groups"]
    assert own.status == BROKEN


def test_example_values_in_a_table_row_on_an_env_var(vllm: PinView) -> None:
    doc = (
        "vLLM's variables:\n\n"
        "| Variable | Meaning |\n|---|---|\n"
        "| `VLLM_DEVICE_PLUGIN` | The plugin to load by its name (e.g. `acme_npu`, `demo_cuda`). |\n"
        "| Loading | Calls `forward_decode_v9` and `hash_block_tokens`. |\n\n"
        "Set `VLLM_LOGGING_LEVEL` to one of `quiet_mode`, `loud_mode`.\n"
    )
    found = _check(doc, vllm)
    for text in ("acme_npu", "demo_cuda", "quiet_mode", "loud_mode"):
        assert all(f.status == NOT_CHECKABLE for f in found[text]), text
    # A row that names no setting: a name the sources never spell is broken.
    assert [f.status for f in found["forward_decode_v9"]] == [BROKEN]
