"""An import written inside a `#` comment of a Python block (a note's aside: "this means
`from vllm.engine import LLMEngine` gets the V1 engine") is cited as an import line is."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView

_DOC = """**当前状态**：`engine/llm_engine.py` 实际上从 V1 导入：
```python
# vllm/engine/llm_engine.py (当前)
from vllm.v1.core.sched.scheduler import Scheduler

# 这意味着 from vllm.v1.core.sched.scheduler import Scheduler, LegacyScheduler
# 实际获取的是 V1 版本的引擎; import vllm.v1.core.kv_cache_manager also works
# from torch import nn  (another package's import is not the project's)
```
"""


def test_imports_in_comments_are_checked(vllm30: PinView) -> None:
    got = {(f.ref.line, f.ref.text): f.status for f in check_references(extract_all([("notes.md", _DOC)]), [vllm30])}
    assert got[(6, "Scheduler")] == "ok" and got[(6, "vllm.v1.core.sched.scheduler")] == "ok"
    assert got[(6, "LegacyScheduler")] == "broken"
    assert got[(7, "vllm.v1.core.kv_cache_manager")] == "ok"
    assert not any(line == 8 for line, _ in got)
