"""Names a V0-era sketch re-types from the project's code, judged by past releases (`--past`).

Third-party notes sketch vLLM's V0 scheduler in pseudocode: `def swap_out(seq_group):` calling
`can_swap_out(seq_group)` bare, `def _preempt(self, ...)` quoted on its own. Some of the names are
the project's (V0's `BlockSpaceManager.can_swap_out`), others the author's invented helpers
(`get_gpu_blocks`). Only a past release that defined the name, as a function or class, tells them
apart; a how-to page's own code (its classes, its helpers, another library's imports) is never
reported. A tiny past release is written and indexed here (no network), as `test_lineage.py` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.pinned import directory_tree
from analyzer.refs.build import symbols_and_open_classes
from analyzer.refs.check import check_references, extract_all
from analyzer.refs.lineage import Lineage, build_lineage, code_shaped
from analyzer.refs.models import BROKEN, Finding
from analyzer.settings import Settings

from .fakes import vllm_view

# A past vLLM with V0's block manager and scheduler, and a module named like a helper.
_PAST_FILES = {
    "vllm/__init__.py": "",
    "vllm/core/__init__.py": "",
    "vllm/core/block_manager.py": (
        "class BlockSpaceManager:\n"
        "    def can_swap_out(self, seq_group):\n"
        "        return True\n\n"
        "    def get_num_free_gpu_blocks(self):\n"
        "        return 0\n\n"
        "    def swap_out(self, seq_group):\n"
        "        return {}\n"
    ),
    "vllm/core/scheduler.py": (
        "class Scheduler:\n"
        "    def _preempt(self, seq_group, blocks_to_swap_out):\n"
        "        return self._preempt_by_swap(seq_group, blocks_to_swap_out)\n\n"
        "    def _preempt_by_swap(self, seq_group, blocks_to_swap_out):\n"
        "        pass\n\n"
        "    def _forward(self):\n"
        "        pass\n"
    ),
    # Only a module of this name: a called name is a function's or a class's, not a module's.
    "vllm/core/swap_planner.py": "PLAN = 1\n",
    # A function a how-to page's helper happens to share a name with.
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/weight_utils.py": "def build_layer_stack(config):\n    return []\n",
}


@pytest.fixture
def lineage(tmp_path: Path) -> Lineage:
    root = tmp_path / "past"
    for rel, text in _PAST_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    tree = directory_tree(Settings(cache_dir=tmp_path / "cache"), root / "vllm", "vllm", read_knobs=False)
    tree.jobs = 1
    return build_lineage("vllm", [("vllm@0.6.6-src", symbols_and_open_classes(tree.index.modules.values())[0])])


def _findings(doc: str, tmp_path: Path, lineage: Lineage | None) -> dict[tuple[int, str], Finding]:
    pin = vllm_view(tmp_path)
    pin.words_path = str(tmp_path / "words" / f"{pin.pin}.json")  # what the sources spell: nothing
    found = check_references(extract_all([("ch.md", doc)]), [pin], lineages={"vllm": lineage} if lineage else None)
    return {(f.ref.line, f.ref.text): f for f in found}


_SKETCH = (
    "# vLLM 调度器\n\n"
    "```python\n"
    "def swap_out(seq_group):\n"  # 4
    "    if not can_swap_out(seq_group):\n"  # 5: V0's BlockSpaceManager.can_swap_out
    "        raise MemoryError(\"no CPU space\")\n"
    "    gpu_blocks = get_gpu_blocks(seq_group)\n"  # 7: the author's helper
    "    swap_planner(gpu_blocks)\n"  # 8: only a past module of that name
    "    return len(gpu_blocks)\n\n"
    "def check_watermark(required_blocks):\n"  # 11
    "    free_blocks = get_num_free_gpu_blocks()\n"  # 12: V0's
    "    return free_blocks - required_blocks\n"
    "```\n\n"
    "```python\n"
    "def _preempt(self, seq_group, blocks_to_swap_out):\n"  # 17: V0's Scheduler._preempt, quoted alone
    "    return self._preempt_by_swap(seq_group, blocks_to_swap_out)\n"
    "```\n"
)


def test_a_sketch_s_bare_calls_of_past_functions_are_broken_with_their_evidence(tmp_path: Path, lineage: Lineage) -> None:
    found = _findings(_SKETCH, tmp_path, lineage)
    assert found[(5, "can_swap_out")].status == BROKEN
    assert "was `vllm.core.block_manager.BlockSpaceManager.can_swap_out` at vllm 0.6.6" in found[(5, "can_swap_out")].note
    assert found[(12, "get_num_free_gpu_blocks")].status == BROKEN
    assert found[(4, "swap_out")].status == BROKEN  # the sketch's def: a past function of that name
    # The author's own helpers, and a name only a past module had, are not citations.
    assert not {text for _, text in found} & {"get_gpu_blocks", "swap_planner", "check_watermark"}


def test_a_private_method_quoted_alone_is_judged_by_its_past_definition(tmp_path: Path, lineage: Lineage) -> None:
    found = _findings(_SKETCH, tmp_path, lineage)
    assert found[(17, "_preempt")].status == BROKEN
    assert "was `vllm.core.scheduler.Scheduler._preempt` at vllm 0.6.6" in found[(17, "_preempt")].note
    # The shape: one private word is code, unless it is a common word behind the underscore.
    assert code_shaped("_preempt")
    assert not code_shaped("_forward")
    assert not code_shaped("_x")
    assert not code_shaped("__init__")


def test_a_how_to_page_s_own_code_is_never_reported(tmp_path: Path, lineage: Lineage) -> None:
    # Adding a model: the page's class, its helpers (defined, or another library's import) and its
    # entry point are its own, whatever a past release once named the same way.
    doc = (
        "# Adding a model\n\n"
        "```python\n"
        "from torch import nn\n"
        "from my_layers import can_swap_out\n\n"
        "def build_layer_stack(config):\n"
        "    return []\n\n"
        "class MyModelForCausalLM(nn.Module):\n"
        "    def __init__(self, config):\n"
        "        super().__init__()\n"
        "        self.layers = build_layer_stack(config)\n"
        "        self.ok = can_swap_out(config)\n"
        "        self.plan = make_my_plan(config)\n\n"
        "def main():\n"
        "    model = MyModelForCausalLM(load_my_config())\n"
        "```\n"
    )
    found = _findings(doc, tmp_path, lineage)
    assert not {text for _, text in found} & {"can_swap_out", "make_my_plan", "load_my_config", "main", "MyModelForCausalLM"}
    # The call of the page's own `build_layer_stack` is not judged (the page defines it). Its
    # top-level `def` is, by the older rule for a snippet's top-level functions (a pasted copy of
    # `def _schedule_prefills`): a past function of that name makes it broken, a known limit.
    assert (12, "build_layer_stack") not in found
    assert found[(7, "build_layer_stack")].status == BROKEN


def test_without_a_lineage_the_sketch_cites_none_of_them(tmp_path: Path) -> None:
    found = _findings(_SKETCH, tmp_path, None)
    assert not {text for _, text in found} & {"can_swap_out", "get_num_free_gpu_blocks", "get_gpu_blocks", "swap_planner"}


def test_a_method_called_on_an_unbound_variable_is_judged_by_its_past_definition(tmp_path: Path, lineage: Lineage) -> None:
    # A note's core lines of V0's scheduler (held-out 19's `batch.get_model_worker_batch()`): the
    # object is the project's, the method a past release's; an object the page binds is its own.
    doc = (
        "# vLLM 调度器\n\n"
        "```python\n"
        "blocks = block_manager.can_swap_out(seq_group)\n"  # 4: V0's, on an object nothing binds
        "planner = make_planner()\n"
        "planner.can_swap_out(seq_group)\n"  # 6: the page's own object
        "```\n\n"
        "Then `block_manager.get_num_free_gpu_blocks()` counts, and `planner.swap_out()` plans.\n"  # 9
    )
    found = _findings(doc, tmp_path, lineage)
    assert found[(4, "block_manager.can_swap_out")].status == BROKEN
    assert "was `vllm.core.block_manager.BlockSpaceManager.can_swap_out`" in found[(4, "block_manager.can_swap_out")].note
    assert not {(line, text) for line, text in found if line == 6}
    # In the prose: an object's member no pin knows, judged only by a past definition.
    assert found[(9, "block_manager.get_num_free_gpu_blocks()")].status == BROKEN
    assert (9, "planner.swap_out()") not in found
    # Without a lineage, nothing vouches for the prose's member.
    assert not {text for line, text in _findings(doc, tmp_path / "bare", None) if line == 9}
