"""Bare file and folder names of a directory tree or a file table are judged under the folder the
tree or the section heading gives (issue 12), in the forms real notes draw them (held-out 5's
`entrypoints/` tree, its `vllm/v1/kv_offload/` file table)."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.extract import extract_references
from analyzer.refs.pinview import PinView
from analyzer.refs.placement import place


def _check(doc: str, pin: PinView) -> dict[str, list[tuple[str, str | None]]]:
    out: dict[str, list[tuple[str, str | None]]] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin]):
        out.setdefault(f"{f.ref.line}:{f.ref.text}", []).append((f.status, f.resolved_at))
    return out


TREE = (
    "# vLLM\n\n## 2.3 `v1/` - the new engine\n\n"
    "```\n"
    "v1/\n"
    "├── core/                      # scheduling\n"
    "│   ├── sched/                 # the scheduler\n"
    "│   │   └── scheduler.py       # the scheduler itself\n"
    "│   ├── scheduler.py           # not here: it is in sched/\n"
    "│   ├── block_pool.py          # blocks\n"
    "│   └── test_block_pool.py     # a test module a wheel leaves out\n"
    "│\n"
    "└── engine/                    # engine\n"
    "    └── arg_utils.py           # only vllm/engine/ has one\n"
    "```\n"
)


def test_tree_entries_are_judged_under_their_folders(vllm30: PinView) -> None:
    got = _check(TREE, vllm30)
    assert got["9:scheduler.py"] == [("ok", "vllm/v1/core/sched/scheduler.py")]
    assert got["11:block_pool.py"] == [("ok", "vllm/v1/core/block_pool.py")]
    assert got["12:test_block_pool.py"][0][0] == "not-checkable"
    # A file of that name lives in another folder: not the one the tree draws.
    assert got["10:scheduler.py"][0][0] == "broken"
    assert got["15:arg_utils.py"][0][0] == "broken"


def test_tree_targets_join_root_parents_and_name() -> None:
    refs = {r.line: r for r in place(TREE, extract_references("ch.md", TREE)) if r.text.endswith(".py")}
    assert refs[9].target == "v1/core/sched/scheduler.py" and refs[9].under == "v1/core/sched"
    assert refs[15].target == "v1/engine/arg_utils.py" and not refs[15].bare_file


TABLE = (
    "# vLLM\n\n### 9. KV (KV 模块) - `vllm/v1/core/`\n\n"
    "| 文件 | 功能说明 |\n"
    "|------|----------|\n"
    "| `block_pool.py` | blocks |\n"
    "| `arg_utils.py` | not in this folder |\n"
    "| `sched/` | the scheduler |\n"
    "| `worker/` | no such folder here |\n"
    "\n## Elsewhere\n\n`arg_utils.py` alone in prose is looked up by name.\n"
)


def test_file_table_rows_are_judged_under_the_heading_folder(vllm30: PinView) -> None:
    got = _check(TABLE, vllm30)
    assert got["7:block_pool.py"] == [("ok", "vllm/v1/core/block_pool.py")]
    assert got["8:arg_utils.py"][0][0] == "broken"
    assert got["9:sched/"][0][0] == "ok"
    # A folder entry that is not there: broken, not "outside the package".
    assert got["10:worker/"][0][0] == "broken"
    assert got["14:arg_utils.py"] == [("ok", "vllm/engine/arg_utils.py")]


def test_a_tree_under_a_file_entry_or_below_prose_is_left_to_the_name() -> None:
    doc = "# vLLM\n\n```\nSee the layout:\n├── arg_utils.py\n```\n"
    (r,) = [r for r in place(doc, extract_references("ch.md", doc)) if r.text == "arg_utils.py"]
    assert r.under is None and r.bare_file


NESTED = (
    "# vLLM's layout\n\n### The package (`/vllm/vllm/`)\n\n"
    "#### Scheduling (`v1/core/`)\n"
    "- **`block_pool.py`** - blocks\n"
    "- **`arg_utils.py`** - not in this folder\n"
    "- `sched/` - the scheduler\n\n"
    "#### Engine (`engine/`)\n"
    "- **`arg_utils.py`** - here it is; `block_pool.py` in a description is looked up by name\n\n"
    "#### Gone (`core/`)\n"
    "- **`scheduler.py`** - V0's\n"
)


def test_list_items_under_nested_folder_headings(vllm30: PinView) -> None:
    """A heading's folder written without its parents lies in the folder of the heading it is nested
    under (a checkout path `/vllm/vllm/` is the package `vllm/`); the lead name of each list item
    below is that folder's entry (held-out 16's architecture tour)."""
    got = _check(NESTED, vllm30)
    assert got["6:block_pool.py"] == [("ok", "vllm/v1/core/block_pool.py")]
    assert got["7:arg_utils.py"][0][0] == "broken"
    assert got["8:sched/"][0][0] == "ok"
    assert got["11:arg_utils.py"] == [("ok", "vllm/engine/arg_utils.py")]
    assert got["11:block_pool.py"] == [("ok", "vllm/v1/core/block_pool.py")]  # not the item's lead
    assert got["13:core/"][0][0] == "broken"  # the heading's own folder: `vllm/core/`
    assert got["14:scheduler.py"][0][0] == "broken"
    refs = {(r.line, r.text): r for r in place(NESTED, extract_references("ch.md", NESTED))}
    assert refs[(14, "scheduler.py")].target == "vllm/core/scheduler.py"


CHECKOUT = (
    "# SGLang with a fork's feature\n\n## Repository Structure\n\n"
    "```\n"
    "sglang/\n"
    "├── python/sglang/srt/          # core runtime\n"
    "│   └── speculative/\n"
    "│       └── eagle_utils.py\n"
    "├── tile_spec/                  # benchmarks and tests\n"
    "│   └── run_bench.py\n"
    "└── test/\n"
    "```\n\n"
    "```\n"
    "sglang/\n"
    "├── srt/\n"
    "│   └── server_args.py\n"
    "└── lang/\n"
    "```\n"
)


def test_a_tree_drawn_from_a_checkout_s_root_gives_repository_paths() -> None:
    """A root line over `python/sglang/srt/` is the repository, not the package: its other entries
    are the repository's folders (`tile_spec/`, not `sglang/tile_spec/`); a root over the package's
    own folders (`srt/`, `lang/`) is still the package."""
    refs = {(r.line, r.text): r for r in place(CHECKOUT, extract_references("ch.md", CHECKOUT))}
    assert refs[(9, "eagle_utils.py")].target == "python/sglang/srt/speculative/eagle_utils.py"
    assert refs[(10, "tile_spec/")].target == "tile_spec/" and refs[(10, "tile_spec/")].under == "."
    assert refs[(11, "run_bench.py")].target == "tile_spec/run_bench.py"
    assert refs[(18, "server_args.py")].target == "sglang/srt/server_args.py"


def test_a_short_path_the_document_s_tree_draws_in_full_carries_that_path() -> None:
    """`speculative/eagle_utils.py` in prose after a tree that draws
    `python/sglang/srt/speculative/eagle_utils.py`: judged as drawn (`written_at`); a short path
    two drawn files end with, or none, is left as written."""
    doc = CHECKOUT + "\nSee `speculative/eagle_utils.py`, `tile_spec/run_bench.py` and `srt/other.py`.\n"
    refs = {r.text: r for r in place(doc, extract_references("ch.md", doc)) if r.line == 22}
    assert refs["speculative/eagle_utils.py"].written_at == "python/sglang/srt/speculative/eagle_utils.py"
    assert refs["tile_spec/run_bench.py"].written_at is None  # drawn exactly so: nothing to add
    assert refs["srt/other.py"].written_at is None
