"""A gone method named bare in prose among the methods a passage walks through is looked for in the
class those methods belong to (`self_check_during_idle()` beside `recv_requests()`,
`get_next_batch_to_run()`, `run_batch()`: `Scheduler`'s). With too few neighbours, or neighbours
of several classes as many, no class is taken."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

_SCHED = "sglang/srt/managers/scheduler.py"
_WORKER = "sglang/srt/managers/tp_worker.py"

_SCHED_SRC = """class Scheduler:
    def recv_requests(self):
        pass
    def get_next_batch_to_run(self):
        pass
    def run_batch(self, batch):
        pass
    def event_loop_normal(self):
        batch = self.get_next_batch_to_run()
        if batch is None:
            # When the server is idle, do self-check and re-init some states
            self.on_idle()
    def on_idle(self):
        pass
"""

_WORKER_SRC = """class TpModelWorker:
    def forward_batch_generation(self, batch):
        pass
    def get_worker_info(self):
        pass
"""


def _view(tmp_path: Path) -> PinView:
    for rel, text in ((_SCHED, _SCHED_SRC), (_WORKER, _WORKER_SRC)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    s = "sglang.srt.managers.scheduler.Scheduler"
    w = "sglang.srt.managers.tp_worker.TpModelWorker"
    symbols = [
        SymbolEntry(s, _SCHED, 1, 14, "class"),
        SymbolEntry(f"{s}.recv_requests", _SCHED, 2, 3, "function"),
        SymbolEntry(f"{s}.get_next_batch_to_run", _SCHED, 4, 5, "function"),
        SymbolEntry(f"{s}.run_batch", _SCHED, 6, 7, "function"),
        SymbolEntry(f"{s}.event_loop_normal", _SCHED, 8, 12, "function"),
        SymbolEntry(f"{s}.on_idle", _SCHED, 13, 14, "function"),
        SymbolEntry(w, _WORKER, 1, 5, "class"),
        SymbolEntry(f"{w}.forward_batch_generation", _WORKER, 2, 3, "function"),
        SymbolEntry(f"{w}.get_worker_info", _WORKER, 4, 5, "function"),
    ]
    return PinView(
        pin="sglang@0.5.20", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset([_SCHED, _WORKER]), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def _best(doc: str, tmp_path: Path) -> str | None:
    for f in check_references(extract_all([("ch.md", doc)]), [_view(tmp_path)]):
        if f.ref.text == "self_check_during_idle()":
            assert f.status == BROKEN
            return f.best.replacement if f.best is not None and f.best.confidence >= 0.5 else None
    raise AssertionError("not found")


def test_a_gone_method_among_one_class_s_methods_is_looked_for_in_that_class(tmp_path: Path) -> None:
    doc = (
        "# SGLang scheduler loop\n\n"
        "- `recv_requests()` receives requests.\n"
        "- `get_next_batch_to_run()` picks a batch.\n"
        "- `run_batch()` runs it.\n"
        "- `self_check_during_idle()` checks the state when idle.\n"
    )
    assert _best(doc, tmp_path) == "Scheduler.on_idle"


def test_neighbours_of_several_classes_or_too_few_name_no_class(tmp_path: Path) -> None:
    few = "# SGLang scheduler loop\n\n- `recv_requests()` receives requests.\n- `self_check_during_idle()` checks the state.\n"
    assert _best(few, tmp_path) is None
    mixed = (
        "# SGLang scheduler loop\n\n"
        "- `recv_requests()` and `run_batch()` on one side, `forward_batch_generation()` and\n"
        "  `get_worker_info()` on the other; `self_check_during_idle()` checks the state.\n"
    )
    assert _best(mixed, tmp_path) is None
