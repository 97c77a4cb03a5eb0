"""Code that a note quotes from the project: a method with a line of prose pasted in, its
attributes and keywords, the path in its header comment, and the calls of a call-flow diagram.
A name in such code that the pin's sources never spell is stale; one they spell says nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.check import check_upgrade, extract_all
from analyzer.refs.document import parse_snippet
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.suggest import History

from .fakes import statuses

_SCHED = "sglang/srt/managers/scheduler.py"
_BATCH = "sglang/srt/managers/schedule_batch.py"
# What the pin's sources spell: the scheduler's loop, its batch and the process launcher.
_SOURCE = '''
class ScheduleBatch:
    def __init__(self, reqs, forward_mode):
        self.reqs = reqs
        self.forward_mode = forward_mode

    def copy(self):
        return ScheduleBatch(self.reqs, self.forward_mode)


class Scheduler:
    def __init__(self, server_args, gpu_id):
        self.last_batch = None
        self.tp_worker = None

    def event_loop_normal(self):
        batch = self.get_next_batch_to_run()
        self.run_batch(batch)
        self.on_idle()

    def get_next_batch_to_run(self):
        return None

    def run_batch(self, batch):
        return batch

    def on_idle(self):
        pass


def run_scheduler_process(server_args, gpu_id):
    return Scheduler(server_args, gpu_id=gpu_id)
'''


def _sym(full: str, path: str, line: int, end: int, kind: str = "function") -> SymbolEntry:
    return SymbolEntry(full, path, line, end, kind, ())


def _view(tmp_path: Path, version: str = "0.5.20", source: str = _SOURCE) -> PinView:
    tree = tmp_path / f"sglang-{version}"
    (tree / "sglang/srt/managers").mkdir(parents=True)
    (tree / _SCHED).write_text(source, encoding="utf-8")
    (tree / _BATCH).write_text("# the batch\n", encoding="utf-8")
    s = "sglang.srt.managers.scheduler"
    symbols = [
        _sym(f"{s}.ScheduleBatch", _SCHED, 2, 8, "class"),
        _sym(f"{s}.ScheduleBatch.copy", _SCHED, 7, 8),
        _sym(f"{s}.Scheduler", _SCHED, 11, 28, "class"),
        _sym(f"{s}.Scheduler.event_loop_normal", _SCHED, 16, 19),
        _sym(f"{s}.Scheduler.get_next_batch_to_run", _SCHED, 21, 22),
        _sym(f"{s}.Scheduler.run_batch", _SCHED, 24, 25),
        _sym(f"{s}.Scheduler.on_idle", _SCHED, 27, 28),
        _sym(f"{s}.run_scheduler_process", _SCHED, 31, 32),
    ]
    view = PinView(
        pin=f"sglang@{version}", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset({_SCHED, _BATCH, "sglang/__init__.py"}), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(tmp_path / "words" / f"{version}.json")
    return view


@pytest.fixture
def sglang(tmp_path: Path) -> PinView:
    return _view(tmp_path)


def _check(doc: str, pin: PinView) -> dict[str, list[str]]:
    return statuses(doc, pin, name="notes.md")


_QUOTED = """# SGLang's scheduler loop

```python
def event_loop_normal(self):
    batch = self.get_next_batch_to_run()
    batch.launch_done = threading.Event()
    result = self.run_batch(batch)
    tmp = ScheduleBatch(reqs=None, next_batch_sampling_info=self.tp_worker.cur_sampling_info)
    batch.copy()
    self.last_batch = batch
    self.self_check_during_idle()

💡 **Note**: the loop runs forever.
```
"""


def test_a_quoted_method_with_a_line_of_prose_is_still_read_as_code(sglang: PinView) -> None:
    (tree,) = [t for _, t in parse_snippet("def f(self):\n    self.a()\n\nNote: prose here.\n    self.b()\n")]
    assert tree.body and tree.body[0].lineno == 1
    # An interpreter session is not repaired: it is read line by line.
    assert len(parse_snippet(">>> x = 1\n>>> y = (\n")) == 1
    found = _check(_QUOTED, sglang)
    assert found["self_check_during_idle"] == [BROKEN]
    assert found["get_next_batch_to_run"] == [OK]


def test_attributes_and_keywords_the_sources_never_spell_are_broken(sglang: PinView) -> None:
    found = _check(_QUOTED, sglang)
    assert found["batch.launch_done"] == [BROKEN]
    assert found["next_batch_sampling_info"] == [BROKEN]
    assert found["self.tp_worker.cur_sampling_info"] == [BROKEN]
    # Spelled by the sources (the types are unknown): nothing to say; the standard library's are not read.
    for spelled in ("reqs", "batch.copy", "self.last_batch", "threading.Event"):
        assert spelled not in found


def test_a_keyword_passed_to_the_projects_class_must_be_spelled(sglang: PinView) -> None:
    doc = (
        "# SGLang\n\n```python\n"
        "def run_scheduler_process(server_args, gpu_id, balance_meta):\n"
        "    scheduler = Scheduler(server_args, gpu_id=gpu_id, dp_balance_meta=balance_meta)\n"
        "    thread = Thread(target=run, daemon_mode_name=True)\n"
        "```\n"
    )
    found = _check(doc, sglang)
    assert found["dp_balance_meta"] == [BROKEN]
    assert "gpu_id" not in found
    assert "daemon_mode_name" not in found  # `Thread` is not the project's


def test_the_authors_own_method_is_not_judged(sglang: PinView) -> None:
    doc = "# SGLang\n\n```python\ndef my_loop(self):\n    batch = self.fetch_things()\n    batch.invented_field = 1\n```\n"
    assert _check(doc, sglang) == {}


def test_a_path_in_a_quoted_snippets_comment_is_checked(sglang: PinView) -> None:
    doc = (
        "# SGLang\n\n```python\n"
        "# python/sglang/srt/managers/scheduler.py:16-19\n"
        "x = 1  # sglang/srt/managers/gone_module.py\n"
        "# my_helper.py, ./utils/local.py\n"
        "```\n"
    )
    found = _check(doc, sglang)
    assert found["python/sglang/srt/managers/scheduler.py:16-19"] == [OK]
    assert found["sglang/srt/managers/gone_module.py"] == [BROKEN]
    assert not any("my_helper" in t or "local.py" in t for t in found)  # the reader's own files


def test_calls_in_a_call_flow_diagram_are_judged_together(sglang: PinView) -> None:
    flow = "# SGLang\n\n```mermaid\nsequenceDiagram\n    S->>S: get_next_batch_to_run()\n    S->>S: self.run_batch()\n    S->>S: self_check_during_idle()\n```\n"
    found = _check(flow, sglang)
    assert found["self_check_during_idle"] == [BROKEN]
    assert found["self.run_batch"] == [OK]
    # A diagram of the author's own functions (one of the project's at most) says nothing.
    own = "# SGLang\n\n```\nplan_step_one()\nrun_batch()\nmake_up_result()\n```\n"
    assert all(s != BROKEN for statuses in _check(own, sglang).values() for s in statuses)


def test_a_keyword_that_the_new_release_no_longer_spells_broke_in_the_upgrade(tmp_path: Path) -> None:
    old = _view(tmp_path / "old", "0.5.20", _SOURCE.replace("gpu_id=gpu_id", "gpu_id=gpu_id, balance_meta=None"))
    new = _view(tmp_path / "new", "0.5.23")
    doc = "# SGLang\n\n```python\ndef run_scheduler_process(server_args, gpu_id):\n    Scheduler(server_args, balance_meta=None)\n```\n"
    findings = check_upgrade(extract_all([("notes.md", doc)]), old, new, History(old))
    (f,) = [f for f in findings if f.ref.text == "balance_meta"]
    assert f.status == BROKEN and f.previous_status == OK


def test_a_name_the_sources_only_build_into_a_key_is_broken(tmp_path: Path) -> None:
    source = _SOURCE + (
        "\n\ndef send(pipe, dst):\n"
        '    """Unlike the dma_copy_async call of the driver."""\n'
        "    # the kernel's own splitkv_reduce_op runs after\n"
        '    key = f"send_tensor_key/{dst}"\n'
        '    path = "kv_dump_prefix/part.bin"\n'
        '    return getattr(pipe, "kv_role_name"), f"{pipe.buffer_size_hint}"\n'
    )
    view = _view(tmp_path, source=source)
    doc = (
        "In SGLang, `send_tensor_key` and `kv_dump_prefix` are gone; `kv_role_name` and `buffer_size_hint` are read; "
        "`dma_copy_async` and `splitkv_reduce_op` are named only in prose.\n"
    )
    found = _check(doc, view)
    for gone in ("send_tensor_key", "kv_dump_prefix"):
        assert found[gone] == [BROKEN], gone
    # Used, or named in the sources' own prose (a comment, a docstring): not called broken.
    for used in ("kv_role_name", "buffer_size_hint", "dma_copy_async", "splitkv_reduce_op"):
        assert found[used] != [BROKEN], used
