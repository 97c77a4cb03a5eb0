"""Each use of a name a snippet imports from the project cites it again (held-out 10's
`self.draft_worker = EAGLEWorker(...)` under `from sglang.srt.speculative.eagle_worker import
EAGLEWorker`): a reader who fixes a gone class fixes every place the snippet names it. The use is
judged by the name alone: a module that moved is the import line's fix, not the use's."""

from __future__ import annotations

from pathlib import Path

from .fakes import statuses, vllm_view

_DOC = (
    "# vLLM\n\n"
    "```python\n"
    "from vllm.v1.core.sched.scheduler import Scheduler, GoneScheduler\n"
    "from vllm.core.scheduler import SchedulerInterface\n"
    "\n"
    "sched = Scheduler(config)\n"
    "old = GoneScheduler(config)\n"
    "iface: SchedulerInterface = sched\n"
    "```\n"
)


def test_every_use_of_an_imported_name_is_judged_as_the_name(tmp_path: Path) -> None:
    found = statuses(_DOC, vllm_view(tmp_path))
    assert found["GoneScheduler"] == ["broken", "broken"]  # the import and the call
    assert found["Scheduler"] == ["ok", "ok"]
    # `vllm.core.scheduler` is gone (the import line's module row says so); the class itself is
    # the pin's, wherever it lives now: its use is ok.
    assert found["vllm.core.scheduler"] == ["broken"]
    assert found["SchedulerInterface"][1:] == ["ok"]  # the annotation
