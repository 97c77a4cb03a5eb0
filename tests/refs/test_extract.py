from __future__ import annotations

from analyzer.refs.extract import extract_references
from analyzer.refs.models import Reference

DOC = """\
# Scheduling in vLLM and SGLang

vLLM's `Scheduler.schedule()` lives in `vllm/v1/core/sched/scheduler.py`, while SGLang's
`Scheduler.get_next_batch_to_run` lives in `python/sglang/srt/managers/scheduler.py`.
Use `torch.cat` freely. The flag `--enable-prefix-caching`
matters in vLLM.

```bash
vllm serve Qwen/Qwen3-0.6B --enable-prefix-caching \\
    --max-num-seqs 64
pip install --upgrade vllm
```

```python
from vllm import LLM, SamplingParams
import torch
x = torch.cat([a, b])
os.environ["SGLANG_ENABLE_TORCH_COMPILE"] = "1"
```

> **Source code**
>
> - vLLM: [`KVCacheManager.allocate_slots`](https://github.com/vllm-project/vllm/blob/5cecfc0/vllm/v1/core/kv_cache_manager.py#L30-L60)
> - SGLang: `RadixCache.match_prefix`, `ScheduleBatch`

## The radix tree

Both engines name it `Scheduler`. Here `TreeNode` is SGLang's.

## Blocks in vLLM

The result of a step is `SchedulerOutput`.
"""


def _refs() -> list[Reference]:
    return extract_references("ch.md", DOC)


def _by_text(text: str) -> list[Reference]:
    return [r for r in _refs() if r.text == text]


def test_columns_point_at_the_written_text() -> None:
    lines = DOC.splitlines()
    for ref in _refs():
        assert ref.col >= 0, ref
        assert lines[ref.line - 1][ref.col : ref.col + len(ref.text)] == ref.text


def test_ordinary_code_is_ignored() -> None:
    texts = {r.text for r in _refs()}
    assert "torch.cat" not in texts
    assert "--upgrade" not in texts
    assert "torch" not in texts


def test_kinds_and_lines() -> None:
    got = {(r.line, r.kind, r.target) for r in _refs()}
    assert (3, "symbol", "Scheduler.schedule") in got
    assert (3, "path", "vllm/v1/core/sched/scheduler.py") in got
    assert (4, "symbol", "Scheduler.get_next_batch_to_run") in got
    assert (9, "flag", "--enable-prefix-caching") in got
    assert (10, "flag", "--max-num-seqs") in got
    assert (15, "symbol", "vllm.LLM") in got
    assert (15, "symbol", "vllm.SamplingParams") in got
    assert (18, "env", "SGLANG_ENABLE_TORCH_COMPILE") in got


def test_framework_from_sentence_prefix_and_command() -> None:
    assert _by_text("Scheduler.schedule()")[0].framework == "vllm"
    assert _by_text("Scheduler.get_next_batch_to_run")[0].framework == "sglang"
    inline_flag, fence_flag = _by_text("--enable-prefix-caching")
    assert inline_flag.framework == "vllm" and "sentence" in inline_flag.framework_reason
    assert fence_flag.framework == "vllm" and fence_flag.command == "vllm serve"


def test_source_code_box_labels_decide_each_item() -> None:
    assert _by_text("KVCacheManager.allocate_slots")[0].framework == "vllm"
    assert _by_text("RadixCache.match_prefix")[0].framework == "sglang"
    assert _by_text("ScheduleBatch")[0].framework == "sglang"


def test_github_link_with_anchor() -> None:
    link = next(r for r in _refs() if r.origin == "link")
    assert link.kind == "path" and link.framework == "vllm"
    assert link.target == "vllm/v1/core/kv_cache_manager.py"
    assert link.line_range == (30, 60)
    assert link.commit == "5cecfc0"
    assert link.link_symbol == "KVCacheManager.allocate_slots"


def test_ambiguous_when_nothing_decides() -> None:
    scheduler = [r for r in _refs() if r.text == "Scheduler"]
    assert scheduler and scheduler[0].framework == "ambiguous"
    assert _by_text("TreeNode")[0].framework == "sglang"


def test_section_heading_decides() -> None:
    assert _by_text("SchedulerOutput")[0].framework == "vllm"
    assert "section" in _by_text("SchedulerOutput")[0].framework_reason


def test_python_snippet_with_placeholders_still_yields_imports() -> None:
    doc = "```python\nfrom sglang.srt.managers.scheduler import Scheduler\nscheduler = Scheduler(...)\n    ...broken indent\n```\n"
    refs = extract_references("x.md", doc)
    # The `from` line cites its module as well as the name it imports; the call cites the name again.
    assert [(r.target, r.line) for r in refs] == [("sglang.srt.managers.scheduler", 2), ("sglang.srt.managers.scheduler.Scheduler", 2), ("Scheduler", 3)]


def test_inline_command_span() -> None:
    refs = extract_references("x.md", "Run `python -m sglang.launch_server --disable-radix-cache` now.\n")
    flag = next(r for r in refs if r.kind == "flag")
    assert flag.text == "--disable-radix-cache" and flag.framework == "sglang"
    line = "Run `python -m sglang.launch_server --disable-radix-cache` now."
    assert line[flag.col : flag.col + len(flag.text)] == flag.text


def test_table_cells_and_tree_links() -> None:
    doc = (
        "| vLLM | SGLang |\n|---|---|\n| `BlockPool` | `RadixCache` |\n\n"
        "See [the managers](https://github.com/sgl-project/sglang/tree/main/python/sglang/srt/managers/).\n"
    )
    refs = extract_references("x.md", doc)
    assert {r.text for r in refs if r.kind == "symbol"} == {"BlockPool", "RadixCache"}
    link = next(r for r in refs if r.origin == "link")
    assert link.target == "python/sglang/srt/managers" and link.framework == "sglang" and link.repo_layout


def test_fence_indented_under_a_list_item_keeps_source_columns() -> None:
    # markdown-it hands a fence nested in a list item its lines without the item's indent;
    # the written text (what a report shows and `--fix` rewrites) must still be the name alone.
    doc = (
        "1. **Call chain**:\n"
        "   ```\n"
        "   llm_engine.step()\n"
        "     → EngineCore.step()\n"
        "       → CacheEngine.swap_in()\n"
        "   ```\n"
    )
    lines = doc.splitlines()
    refs = [r for r in extract_references("x.md", doc) if r.col >= 0]
    assert {r.text for r in refs} >= {"EngineCore.step", "CacheEngine.swap_in"}
    for r in refs:
        assert lines[r.line - 1][r.col : r.col + len(r.text)] == r.text, r
