"""`self.x` written outside any copied class: in the prose (code font, or plain in CJK text) and in a
snippet's lines lifted out of a method. Judged by spelling: stale when the pin's sources never spell
the member; nothing said when they do (whose class it is, the text does not say)."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import extract_all
from analyzer.refs.models import BROKEN, OK

from .test_quoted_code import _check, _view


def test_self_members_in_the_prose_are_judged_by_spelling(tmp_path: Path) -> None:
    doc = (
        "# SGLang's scheduler\n\n"
        "The SGLang `Scheduler` keeps `self.last_batch` and calls `self.future_map.resolve_future()`.\n\n"
        "调度器通过 self.tp_worker.gone_forward_call() 和 self.last_batch 实现。\n"
    )
    found = _check(doc, _view(tmp_path))
    assert "self.last_batch" not in found  # spelled by the pin: nothing to say
    assert found["self.future_map.resolve_future"] == [BROKEN]  # neither name is spelled
    assert found["self.tp_worker.gone_forward_call"] == [BROKEN]  # `tp_worker` is, the call is not


def test_self_members_of_a_snippets_loose_lines_are_judged_by_spelling(tmp_path: Path) -> None:
    doc = (
        "# SGLang's scheduler\n\nIn SGLang the scheduler does:\n\n```python\n"
        "batch = self.get_next_batch_to_run()\n"
        "self.gone_watchdog_flag = False\n"
        "if self.tp_worker.gone_attribute:\n"
        "    self.last_batch = batch\n"
        "```\n"
    )
    found = _check(doc, _view(tmp_path))
    assert found["self.gone_watchdog_flag"] == [BROKEN]
    assert found["self.tp_worker.gone_attribute"] == [BROKEN]
    assert "self.last_batch" not in found and "self.tp_worker" not in found


def test_a_dunder_or_a_name_the_document_defines_is_not_a_member_reference() -> None:
    doc = (
        "# SGLang notes\n\n```python\ndef helper_of_mine(x):\n    return x\n```\n\n"
        "SGLang's `self.__class__` and `self.helper_of_mine()` are the reader's.\n"
    )
    texts = {r.text for r in extract_all([("notes.md", doc)])}
    assert not any(t.startswith("self.") for t in texts), texts


def test_a_loose_self_member_in_a_text_that_names_no_project_is_not_judged(tmp_path: Path) -> None:
    found = _check("# Notes\n\nThe loop reads `self.future_map.resolve_future()` first.\n", _view(tmp_path))
    assert "self.future_map.resolve_future" not in found


def test_a_self_member_the_text_also_writes_on_its_class_is_that_class_s(tmp_path: Path) -> None:
    # Held-out 19: `self.stream_output(...)` in a note that also writes `Scheduler.stream_output()`.
    # The pin's sources spell `copy` (ScheduleBatch's), so by spelling alone nothing is said; the
    # author's own `Scheduler.copy()` says whose member it is, and the Scheduler has none.
    doc = (
        "# SGLang's scheduler\n\n"
        "See `Scheduler.copy()` and `Scheduler.run_batch()`.\n\n"
        "Then the SGLang scheduler calls `self.copy()` and `self.run_batch(batch)`.\n"
    )
    found = _check(doc, _view(tmp_path))
    assert found["self.copy"] == [BROKEN]
    assert found["self.run_batch"] == [OK]  # the Scheduler has it
    # Written on two classes, or on none: judged by spelling as before.
    two = "# SGLang\n\nSee `Scheduler.copy()` and `ScheduleBatch.copy()`; the SGLang scheduler calls `self.copy()`.\n"
    assert "self.copy" not in _check(two, _view(tmp_path / "two"))
