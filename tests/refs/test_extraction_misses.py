"""`benchmarks/extraction_misses.py`, the measuring aid for references the extractor never finds:
where a labelled text stands (its form) and what it looks like (its shape), and the misses it
lists on a made-up part."""

from __future__ import annotations

from benchmarks.check_real_docs import Label
from benchmarks.extraction_misses import block_languages, form, shape

_DOC = """<!-- source -->
# `Scheduler.schedule()` 的流程

调用 `allocate` 分配，见 vllm/v1/core/sched/scheduler.py。

| name | what |
| --- | --- |
| `free_blocks` | gives blocks back |

```python
@torch.inference_mode()
def step(self):  # calls self.engine_core.step
    return 1
```

Plain [scheduler.py](https://example.com/scheduler.py) text.
"""


def _label(line: int, text: str) -> Label:
    return Label("p/x.md", "vllm", line, "symbol", text, {"*": "broken"}, "-", "")


def test_forms_name_the_place_of_the_text() -> None:
    lines = _DOC.splitlines()
    blocks, _ = block_languages(_DOC)
    assert form(_label(2, "Scheduler.schedule()"), lines, blocks) == "heading CJK"
    assert form(_label(4, "allocate"), lines, blocks) == "code span CJK"
    assert form(_label(4, "vllm/v1/core/sched/scheduler.py"), lines, blocks) == "prose CJK"
    assert form(_label(8, "free_blocks"), lines, blocks) == "table"
    assert form(_label(12, "step"), lines, blocks) == "python block"
    assert form(_label(16, "scheduler.py"), lines, blocks) == "link text"


def test_shapes() -> None:
    got = [shape(t) for t in ("--max-num-seqs", "VLLM_USE_V1", "vllm/a.py", "Scheduler.schedule()", "a.b.c", "step()", "SpecDecodeWorker", "_blocks", "free", "nvtx_range")]
    assert got == ["flag", "env", "path", "Class.method()", "dotted", "call()", "CamelCase", "word", "word", "snake_case"]


def test_unread_lines_of_a_snippet_are_the_ones_no_statement_covers() -> None:
    _, unread = block_languages("```python\nx = f(1)\nthis line is not code at all\n```\n\n```python\n@cache\ndef f(n):\n    return n\n```\n")
    assert unread == {3}  # the decorator's line is its function's
