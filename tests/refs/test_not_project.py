"""Names the pin itself says are another package's (issue 12 §2): a root its wheel's METADATA
requires or its sources import, a name its sources import from a dependency, a module of
Python's standard library. Unjudged with the reason, never dropped; the project's own names and
removed ones stay broken."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.dependencies import collect
from analyzer.refs.models import BROKEN, NOT_CHECKABLE
from analyzer.refs.pinview import PinView
from analyzer.refs.symbols import SymbolEntry

from .fakes import vllm_view

_SOURCE = '''
"""Docstring prose: you can import there the helpers (not an import)."""
from cachelib.adapters import (
    BlockAdapter,
    ForwardPattern as Pattern,  # renamed locally
)
import kvstore.client as kv
from kvstore.client import StoreClient
from runner.pytest_runner import SuiteRunner
import dumper
from dumper import Dumper
from collections.abc import Sequence
from http import HTTPStatus
from fastapi import FastAPI
from pydantic import BaseModel

schema = BaseModel.model_json_schema
pending = BaseModel.has_requests

if kv:
    from flashkernels.decode import DecodeWrapper
'''

_METADATA = (
    "Metadata-Version: 2.1\nName: vllm\nRequires-Dist: flashkernels_python==0.7\nRequires-Dist: numpy\n"
    "Requires-Dist: cache-dit>=1.0\nRequires-Dist: requests\n"
)


def _with_deps(view: PinView, tmp_path: Path) -> PinView:
    assert view.tree is not None
    root = Path(view.tree)
    (root / "vllm" / "adapters.py").write_text(_SOURCE, encoding="utf-8")
    (root / "vllm" / "dumper.py").write_text("X = 1\n", encoding="utf-8")
    # The pin's own folder named like a dependency (its connector to it), and a test runner module.
    for own in ("vllm/distributed/kvstore/connector.py", "vllm/tests/runner/pytest_runner.py"):
        (root / own).parent.mkdir(parents=True, exist_ok=True)
        (root / own).write_text("Y = 2\n", encoding="utf-8")
    view = replace(view, files=view.files | {"vllm/distributed/kvstore/connector.py", "vllm/tests/runner/pytest_runner.py"})
    (root / "vllm-0.30.0.dist-info").mkdir(exist_ok=True)
    (root / "vllm-0.30.0.dist-info" / "METADATA").write_text(_METADATA, encoding="utf-8")
    view = replace(view, kind="release")
    view.words_path = str(tmp_path / "cache" / "words" / f"{view.pin}.abc.w5.json")
    return view


@pytest.fixture
def vllm(tmp_path: Path) -> PinView:
    return _with_deps(vllm_view(tmp_path / "t"), tmp_path)


def _check(doc: str, pin: PinView) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin]):
        out.setdefault(f.ref.text, []).append(f)
    return out


def test_collects_imports_and_requirements_as_text(vllm: PinView) -> None:
    assert vllm.tree is not None
    deps = collect(Path(vllm.tree), {"vllm"})
    assert {"cachelib", "kvstore", "flashkernels"} <= deps.roots
    assert "there" not in deps.roots and "dumper" not in deps.roots  # prose; a module beside the file
    assert deps.imported["BlockAdapter"] == "cachelib.adapters" and deps.imported["ForwardPattern"] == "cachelib.adapters"
    assert deps.imported["DecodeWrapper"] == "flashkernels.decode" and "Pattern" not in deps.imported
    assert "flashkernels_python" in deps.declared


def test_a_name_the_sources_import_from_a_dependency_is_not_judged(vllm: PinView) -> None:
    doc = "In vLLM, register it with `BlockAdapter` and pick `ForwardPattern.Pattern_0`; decode runs `DecodeWrapper`; `StoreClient` stores.\n"
    found = _check(doc, vllm)
    # (`kvstore` is also a folder of the pin, but the pin has no `kvstore.client` module.)
    for text in ("BlockAdapter", "ForwardPattern.Pattern_0", "DecodeWrapper", "StoreClient"):
        (f,) = found[text]
        assert f.status == NOT_CHECKABLE and "a dependency" in f.note, (text, f.note)
        assert not f.suggestions


def test_typing_names_in_a_passage_on_typing(vllm: PinView) -> None:
    typed = _check("In vLLM's type hints the batch is a `Sequence` of requests.\n", vllm)
    (f,) = typed["Sequence"]
    assert f.status == NOT_CHECKABLE and "typing" in f.note


def test_the_projects_own_and_unrelated_names_stay_broken(vllm: PinView) -> None:
    doc = "In vLLM, the scheduler keeps a `Sequence` per request, built by `SequenceGroupMaker`, `Dumper` and `SuiteRunner`.\n"
    found = _check(doc, vllm)
    # A stdlib import; a module beside the importing file; a module the pin holds (`runner.pytest_runner`).
    for text in ("Sequence", "SequenceGroupMaker", "Dumper", "SuiteRunner"):
        assert all(f.status == BROKEN for f in found[text]), (text, [f.note for f in found[text]])


def test_a_flag_handed_to_another_program_is_its_option(vllm: PinView) -> None:
    doc = (
        "Start ComfyUI with `--disable-cuda-malloc` for integrated mode.\n\n"
        "Strict isolation needs a Mooncake master started with `--enable_multi_tenants=true`.\n\n"
        "Start the external `mooncake_client` with the matching `--tenant_id` flag.\n"
    )
    found = _check(doc, vllm)
    for text in ("--disable-cuda-malloc", "--enable_multi_tenants", "--tenant_id"):
        assert found[text], text
        for f in found[text]:
            assert f.status == NOT_CHECKABLE and "an option handed to" in f.note, (text, f.note)


def test_a_flag_the_project_is_given_stays_broken(vllm: PinView) -> None:
    doc = (
        "It starts the native pipeline under `--comfyui-mode` and loads a ComfyUI checkpoint.\n\n"
        "Start ComfyUI, then launch vLLM with `--enable-ghost-mode`.\n"
    )
    found = _check(doc, vllm)
    for text in ("--comfyui-mode", "--enable-ghost-mode"):
        assert found[text] and all(f.status == BROKEN for f in found[text]), (text, [f.note for f in found[text]])


def test_members_of_an_object_whose_class_is_a_dependencys(vllm: PinView) -> None:
    # A note's outline of vLLM's API server: `app = FastAPI()` above `@app.post(...)`; the pin's
    # sources import `FastAPI` from `fastapi`, so `post` is FastAPI's, not a gone vLLM name.
    doc = (
        "# vLLM API server\n\n```python\napp = FastAPI()\n\n@app.post(\"/v1/completions\")\n"
        "async def create_completion(request: CompletionRequest):\n    ...\n```\n"
    )
    serving = "vllm/entrypoints/openai/serving_completion.py"
    handler = SymbolEntry("vllm.entrypoints.openai.serving_completion.create_completion", serving, 10, 40, "function")
    (f,) = _check(doc, replace(vllm, symbols=[*vllm.table, handler]))["app.post"]
    assert f.status == NOT_CHECKABLE and "from `fastapi`, a dependency" in f.note, f.note


def test_members_of_an_object_of_the_projects_class_stay_judged(vllm: PinView) -> None:
    doc = "# vLLM\n\n```python\nsched = Scheduler()\nsched.schedule_all()\n```\n"
    found = _check(doc, vllm)
    assert found["sched.schedule_all"] and all(f.status == BROKEN for f in found["sched.schedule_all"]), found


def test_a_name_in_a_paragraph_on_a_package_the_pin_requires(vllm: PinView) -> None:
    # SGLang's cache-dit skill: a paragraph on the dependency's own internals, naming it (as its
    # METADATA spells it, or by a path into it) and never the project.
    doc = (
        "# vLLM and cache-dit\n\n"
        "**Fix idea**: cache-dit's `LTX2PatchFunctor` rewrites the call site.\n\n"
        "**Example** (`<dir>/src/cache_dit/caching/patch_functors/functor_ernie.py`): `ErnieImagePatchFunctor` hoists it.\n\n"
        "vLLM wraps cache-dit's `CacheAdapterV9` in its own runner.\n\n"
        "The engine batches requests; `BatchRunnerV9` runs them.\n\n"
        "It casts to `numpy.float16` in `HalfCasterV9`.\n"
    )
    found = _check(doc, vllm)
    for text in ("LTX2PatchFunctor", "ErnieImagePatchFunctor"):
        (f,) = found[text]
        assert f.status == NOT_CHECKABLE and "a package vllm@0.30.0 depends on" in f.note, (text, f.note)
    # The paragraph names the project too; a requirement spelled as an English word in prose; a
    # dotted name that merely uses a package: still judged.
    for text in ("CacheAdapterV9", "BatchRunnerV9", "HalfCasterV9"):
        assert found[text] and all(f.status == BROKEN for f in found[text]), (text, [f.note for f in found[text]])


def test_a_member_inherited_from_a_dependencys_base_class(vllm: PinView) -> None:
    # vLLM's structured-outputs page: `CarDescription.model_json_schema()` on a pydantic model that
    # a source pin's examples also define; the member is pydantic's, which the sources call.
    cars = SymbolEntry("vllm.examples.cars.CarDescription", "vllm/examples/cars.py", 3, 9, "class", ("BaseModel",))
    pin = replace(vllm, symbols=[*vllm.table, cars])
    found = _check("In vLLM, pass `CarDescription.model_json_schema()`, `CarDescription.model_dump_legacy()` and `CarDescription.has_requests()`.\n", pin)
    (f,) = found["CarDescription.model_json_schema()"]
    assert f.status == NOT_CHECKABLE and "inherited from there" in f.note, f.note
    # A member the sources never spell, or one the project defines on its own classes (as the
    # generated book's `X.forward_impl` on nn.Module subclasses): still judged.
    assert [g.status for g in found["CarDescription.model_dump_legacy()"]] == [BROKEN]
    assert [g.status for g in found["CarDescription.has_requests()"]] == [BROKEN]


def test_a_class_the_sources_import_from_the_standard_library(vllm: PinView) -> None:
    """`status_code: HTTPStatus` in a copied function: the pin imports it from `http` and never
    defines it, so it is Python's; `typing`'s names (`Sequence`) stay judged outside a passage
    on typing, since the projects name classes of their own so."""
    doc = "In vLLM:\n\n```python\ndef prepare_abort(req, status_code: HTTPStatus, seqs: Sequence):\n    pass\n```\n"
    found = _check(doc, vllm)
    (f,) = found["HTTPStatus"]
    assert f.status == NOT_CHECKABLE and "standard library" in f.note
    assert all(g.status != NOT_CHECKABLE or "standard library" not in g.note for g in found.get("Sequence", []))


def test_a_member_of_a_standard_library_class_is_pythons(vllm: PinView) -> None:
    # Held-out 49's and 57's `if status_code in (HTTPStatus.SERVICE_UNAVAILABLE, ...)`.
    doc = "In vLLM:\n\n```python\nif status_code == HTTPStatus.SERVICE_UNAVAILABLE:\n    pass\n```\n"
    (f,) = _check(doc, vllm)["HTTPStatus.SERVICE_UNAVAILABLE"]
    assert f.status == NOT_CHECKABLE and "standard library" in f.note


_FRAMEWORK_SOURCE = (
    "import torch\nimport zmq\n\n"
    "def expand(logits, counts):\n    return torch.repeat_interleave(logits, counts, dim=0)\n\n"
    "def recv(sock: zmq.Socket):\n    return sock.recv_multipart()\n"
)


def test_a_name_reached_only_through_torch_is_torchs_whatever_the_text_says(vllm: PinView) -> None:
    # Held-out 22's "penalties: `repeat_interleave(num_draft_tokens)` 后 mask", in a note that never
    # writes "torch": both projects are PyTorch programs, so a tensor method the pin only reaches
    # through torch is torch's. Another dependency (`pyzmq`, imported as `zmq`) still needs the
    # text to name it (held-out 23's "**ZMQ 释放 GIL**：在 `recv_multipart()` 等待时").
    assert vllm.tree is not None
    (Path(vllm.tree) / "vllm" / "framework.py").write_text(_FRAMEWORK_SOURCE, encoding="utf-8")
    metadata = Path(vllm.tree) / "vllm-0.30.0.dist-info" / "METADATA"
    metadata.write_text(_METADATA + "Requires-Dist: torch==2.9\nRequires-Dist: pyzmq>=25\n", encoding="utf-8")
    # The pin's own `vllm/utils/zmq.py` (its helpers around the library): `zmq` is still the
    # dependency `pyzmq` provides.
    (Path(vllm.tree) / "vllm" / "utils").mkdir(exist_ok=True)
    (Path(vllm.tree) / "vllm" / "utils" / "zmq.py").write_text("Z = 1\n", encoding="utf-8")
    vllm = replace(vllm, files=vllm.files | {"vllm/utils/zmq.py"})
    doc = "# vLLM\n\nPenalties: `repeat_interleave(num_draft_tokens)`, then mask. The engine waits in `recv_multipart()`.\n"
    found = _check(doc, vllm)
    (torch_name,) = found["repeat_interleave(num_draft_tokens)"]
    assert torch_name.status == NOT_CHECKABLE and "torch" in torch_name.note, torch_name.note
    (zmq_name,) = found["recv_multipart()"]
    assert zmq_name.status == BROKEN  # the text never speaks of ZMQ
    (zmq_named,) = _check(doc.replace("The engine", "Over ZMQ the engine"), vllm)["recv_multipart()"]
    assert zmq_named.status == NOT_CHECKABLE and "zmq" in zmq_named.note, zmq_named.note


def test_a_name_the_sentence_gives_to_another_program_by_its_possessive(vllm: PinView) -> None:
    # Held-out 23's pi0 page: "`mode` may be ... (matches LeRobot's\n`NormalizerProcessorStep` semantics)".
    doc = (
        "# vLLM\n\nThe mode matches LeRobot's\n`NormalizerProcessorStep` semantics; V0's `SequenceGroupV9` is gone; "
        "vLLM's `SchedulerV9` too; the Scheduler's `SchedulerQueueV9` as well.\n"
    )
    found = _check(doc, vllm)
    (other,) = found["NormalizerProcessorStep"]
    assert other.status == NOT_CHECKABLE and "LeRobot" in other.note, other.note
    # A release (no lower-case letter), the project, a class of the pin: still judged.
    for text in ("SequenceGroupV9", "SchedulerV9", "SchedulerQueueV9"):
        assert found[text] and all(f.status == BROKEN for f in found[text]), (text, [f.note for f in found[text]])
