"""`self.x` in a method quoted on its own (`def event_loop_normal(self): ...`): the quoted method
says whose attribute it is, so a name the pin spells elsewhere (another class sets it) is still
broken when the classes that define the method lack it: not defined on them or their bases and
`self.x` written nowhere in their bodies."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

from .fakes import statuses

_SCHED = "sglang/srt/managers/scheduler.py"
_PP = "sglang/srt/managers/scheduler_pp_mixin.py"
_WORKER = "sglang/srt/managers/tp_worker.py"

_SCHED_SRC = """class Scheduler(SchedulerPPMixin):
    def __init__(self):
        self.last_batch = None
    def event_loop_normal(self):
        batch = self.get_next_batch_to_run()
        self.cur_batch_for_debug = batch
    def get_next_batch_to_run(self):
        return self.running_batch
"""
_PP_SRC = """class SchedulerPPMixin:
    def event_loop_pp(self):
        return self.pp_rank
"""
_WORKER_SRC = """class TpModelWorker:
    def __init__(self, batch):
        self.cur_batch = batch
"""


def _view(tmp_path: Path) -> PinView:
    tree = tmp_path / "sglang-0.5.20"
    for rel, text in ((_SCHED, _SCHED_SRC), (_PP, _PP_SRC), (_WORKER, _WORKER_SRC)):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
    s = "sglang.srt.managers.scheduler.Scheduler"
    pp = "sglang.srt.managers.scheduler_pp_mixin.SchedulerPPMixin"
    w = "sglang.srt.managers.tp_worker.TpModelWorker"
    symbols = [
        SymbolEntry(s, _SCHED, 1, 8, "class", bases=("SchedulerPPMixin",)),
        SymbolEntry(f"{s}.__init__", _SCHED, 2, 3, "function"),
        SymbolEntry(f"{s}.last_batch", _SCHED, 3, 3, "attribute"),
        SymbolEntry(f"{s}.event_loop_normal", _SCHED, 4, 6, "function"),
        SymbolEntry(f"{s}.cur_batch_for_debug", _SCHED, 6, 6, "attribute"),
        SymbolEntry(f"{s}.get_next_batch_to_run", _SCHED, 7, 8, "function"),
        SymbolEntry(pp, _PP, 1, 3, "class"),
        SymbolEntry(f"{pp}.event_loop_pp", _PP, 2, 3, "function"),
        SymbolEntry(w, _WORKER, 1, 3, "class"),
        SymbolEntry(f"{w}.__init__", _WORKER, 2, 3, "function"),
        SymbolEntry(f"{w}.cur_batch", _WORKER, 3, 3, "attribute"),
    ]
    view = PinView(
        pin="sglang@0.5.20", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset([_SCHED, _PP, _WORKER, "sglang/__init__.py"]), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(tmp_path / "words.json")
    return view


def _check(doc: str, tmp_path: Path) -> dict[str, list[str]]:
    return statuses(doc, _view(tmp_path), name="notes.md")


_QUOTED = """# SGLang's scheduler loop

```python
def event_loop_normal(self):
    batch = self.get_next_batch_to_run()
    self.cur_batch = batch
    self.last_batch = batch
    if self.pp_rank == 0 and self.running_batch:
        pass
```
"""


def test_a_member_of_a_quoted_method_is_judged_against_the_method_s_class(tmp_path: Path) -> None:
    found = _check(_QUOTED, tmp_path)
    assert found.get("self.cur_batch") == [BROKEN]  # only `TpModelWorker` spells it
    assert "self.last_batch" not in found  # the class defines it
    assert "self.pp_rank" not in found  # its base writes it
    assert "self.running_batch" not in found  # read in the class's body


def test_a_method_no_project_class_defines_judges_no_member(tmp_path: Path) -> None:
    doc = _QUOTED.replace("event_loop_normal", "my_own_loop")
    assert "self.cur_batch" not in _check(doc, tmp_path)
