"""A directory tree's folder entries (`├── attention/`) are extracted and judged under the folder
the tree places them in (`placement.py`); one whose folder the tree does not say is left alone.
The tree's form is a third-party note's (`vllm/` overview, Chinese comments, emoji)."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView

_TREE = """## 1. vllm/ 目录结构总览

```
vllm/
├── __init__.py             # 包初始化，导出公共 API
├── v1/                     # 🔵 V1 新架构（当前主要实现）
│   └── core/               # 调度与 KV cache
├── attention/              # 🔴 注意力机制
└── engine/                 # 🔵 推理引擎（Legacy，现指向 V1）
```
"""


def _statuses(doc: str, pin: PinView) -> dict[str, str]:
    return {f.ref.text: f.status for f in check_references(extract_all([("notes.md", doc)]), [pin])}


def test_folder_entries_of_a_rooted_tree_are_judged_under_its_root(vllm30: PinView) -> None:
    got = _statuses(_TREE, vllm30)
    assert got["v1/"] == "ok" and got["core/"] == "ok" and got["engine/"] == "ok"
    assert got["attention/"] == "broken"  # vllm/attention/ is not in the pin


def test_folder_entries_of_an_unplaced_or_foreign_tree_are_not_broken(vllm30: PinView) -> None:
    unrooted = "# vLLM\n\nThe layout:\n\n```\n├── attention/\n└── core/\n```\n"
    assert not any(text.endswith("/") for text in _statuses(unrooted, vllm30))
    foreign = "# Serving with vLLM\n\n```\nmy_app/\n├── configs/\n└── serve.py\n```\n"
    assert "broken" not in _statuses(foreign, vllm30).values()
