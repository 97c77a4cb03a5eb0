"""A Python copy fenced as another language (held-out 21's DP-attention note fences its copies of
`DataParallelController` and `Scheduler.prepare_dp_attn_batch` as ```` ```cpp ````, for the colours):
read as the Python it is, so its gone methods are found as they are in a ```` ```python ```` fence."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.document import mislabelled_python
from analyzer.refs.models import BROKEN

from .fakes import vllm_view

_COPY = (
    "class Scheduler:\n"
    "    def schedule(self):\n"
    "        self._preempt_request()\n"
    "\n"
    "    def _preempt_request(self):\n"
    "        pass\n"
    "\n"
    "    def _schedule_swapped(self):\n"
    "        pass\n"
)


def _broken(lang: str, tmp_path: Path) -> set[tuple[int, str]]:
    doc = f"# vLLM's scheduler\n\nThe V1 `Scheduler`:\n\n```{lang}\n{_COPY}```\n"
    findings = check_references(extract_all([("s.md", doc)]), [vllm_view(tmp_path)])
    return {(f.ref.line, f.ref.text) for f in findings if f.status == BROKEN}


def test_a_python_copy_fenced_as_cpp_is_judged_as_python(tmp_path: Path) -> None:
    assert (13, "_schedule_swapped") in _broken("python", tmp_path)
    assert _broken("cpp", tmp_path) == _broken("python", tmp_path)


def test_only_a_block_that_is_python_and_defines_something() -> None:
    assert mislabelled_python("cpp", _COPY)
    assert mislabelled_python("java", "def prepare_for_idle(self):\n    self.forward_mode = ForwardMode.IDLE\n")
    assert not mislabelled_python("cpp", "int main() {\n  return 0;\n}\n")  # C++ is not Python
    assert not mislabelled_python("json", '{"model": "x", "max_tokens": 8}\n')  # parses, defines nothing
    assert not mislabelled_python("yaml", "model: x\nport: 8000\n")  # `a: b` parses as an annotation
    assert not mislabelled_python("python", _COPY)  # already Python
    assert not mislabelled_python("text", _COPY)  # text fences have their own reader
