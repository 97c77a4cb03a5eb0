"""A gone abstract base and the module named after it (issue 12 §3, the class named after the
missing one): `ExecutorBase` gave way to the abstract `Executor`, so `ExecutorBase` is suggested
as `Executor` and `executor_base.py` as the file `Executor` lives in. A same-named file somewhere
unrelated, found only because the package itself survived, is a weak lead."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN
from analyzer.refs.namesakes import base_class_successor
from analyzer.refs.pinview import PinView, SymbolEntry

_ABSTRACT = "vllm/v1/executor/abstract.py"
_UNIPROC = "vllm/v1/executor/uniproc.py"
_RUNTIME = "vllm/models/acme/runtime/executor.py"
_WORKER = "vllm/v1/worker/worker.py"


def _view(tmp_path: Path) -> PinView:
    files = [_ABSTRACT, _UNIPROC, _RUNTIME, _WORKER, "vllm/__init__.py"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("# a file\n", encoding="utf-8")
    symbols = [
        SymbolEntry("vllm", "vllm/__init__.py", 1, 1, "module"),
        SymbolEntry("vllm.v1.executor.abstract", _ABSTRACT, 1, 90, "module"),
        SymbolEntry("vllm.v1.executor.abstract.Executor", _ABSTRACT, 10, 90, "class", ("ABC",)),
        SymbolEntry("vllm.v1.executor.abstract.Executor.execute_model", _ABSTRACT, 40, 50, "function"),
        SymbolEntry("vllm.v1.executor.uniproc.UniProcExecutor", _UNIPROC, 5, 40, "class", ("Executor",)),
        SymbolEntry("vllm.models.acme.runtime.executor.Runner", _RUNTIME, 5, 40, "class"),
        # A concrete class named like a base less its affix: not the base's successor.
        SymbolEntry("vllm.v1.worker.worker.Worker", _WORKER, 5, 40, "class", ("object",)),
    ]
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(files), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def _best(doc: str, pin: PinView) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin]):
        if f.status == BROKEN:
            out[f.ref.text] = f.best.replacement if f.best and f.best.confidence >= 0.5 else None
    return out


def test_the_abstract_class_less_the_base_affix(tmp_path: Path) -> None:
    pin = _view(tmp_path)
    for old in ("ExecutorBase", "BaseExecutor", "AbstractExecutor", "ExecutorInterface"):
        found = base_class_successor(old, pin)
        assert found is not None and found.full == "vllm.v1.executor.abstract.Executor", old
    assert base_class_successor("WorkerBase", pin) is None  # `Worker` is not abstract
    assert base_class_successor("Executor", pin) is None  # no affix: not a base's name


def test_a_gone_base_and_its_module_are_suggested_where_the_successor_lives(tmp_path: Path) -> None:
    pin = _view(tmp_path)
    doc = (
        "In vLLM, `vllm/executor/executor_base.py` defines `ExecutorBase`, the parent of every executor;\n"
        "`vllm/worker/worker_base.py` defines `WorkerBase`.\n"
    )
    best = _best(doc, pin)
    assert best["ExecutorBase"] == "vllm.v1.executor.abstract.Executor"
    assert best["vllm/executor/executor_base.py"] == _ABSTRACT
    # No abstract successor, and only the package left of the old folders: `worker.py` somewhere
    # in it is no confident home.
    assert best["WorkerBase"] is None
    assert best["vllm/worker/worker_base.py"] is None
