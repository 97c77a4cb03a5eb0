"""A list introduced as a class's interface (`**Executor 接口**：`, "Worker interface:", the class
named in bold or plain text as well as in code font): its items are that class's methods, so a
same-named method of another class does not make one right; where the pin has no such class, the
list may name a role (`ModelRunner`), and a definition elsewhere still counts."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.document import lead_owner
from analyzer.refs.models import BROKEN, OK

from .fakes import statuses, vllm_view


def _check(doc: str, tmp_path: Path) -> dict[str, list[str]]:
    return statuses(doc, vllm_view(tmp_path))


def test_leads_that_name_a_class_s_interface() -> None:
    assert lead_owner([], "**Executor 接口**：") == ("Executor", False, True)
    assert lead_owner([], "Worker interface:") == ("Worker", False, True)
    assert lead_owner(["Req"], "`Req` has these fields:") == ("Req", True, False)
    assert lead_owner([], "In Python:") is None
    assert lead_owner([], "Example:") is None


def test_a_method_of_another_class_is_not_the_listed_one(tmp_path: Path) -> None:
    doc = "# vLLM\n\n**KVCacheManager 接口**：\n\n- `allocate_slots()`: 分配\n- `get_new_blocks()`: 取块\n"
    found = _check(doc, tmp_path)
    assert found["allocate_slots()"] == [OK]
    assert found["get_new_blocks()"] == [BROKEN]  # BlockPool's, not KVCacheManager's


def test_a_role_the_pin_has_no_class_for_keeps_definitions_elsewhere(tmp_path: Path) -> None:
    doc = "# vLLM\n\n**ModelRunner 接口**：\n\n- `get_new_blocks()`: 取块\n"
    assert _check(doc, tmp_path)["get_new_blocks()"] == [OK]


def test_fields_written_with_their_types_under_a_bold_class_lead(tmp_path: Path) -> None:
    # Held-out 19: "**InputBatch（`gpu_input_batch.py:91`）** 是一个持久对象：" then items
    # `token_ids_cpu_tensor: (max_num_reqs, max_model_len) int32`: each name is the class's member.
    assert lead_owner(["gpu_input_batch.py:91"], "**InputBatch（`gpu_input_batch.py:91`）** 是一个持久对象：") == ("InputBatch", False, False)
    doc = (
        "# vLLM\n\n**KVCacheManager（`kv_cache_manager.py:20`）** 持有：\n\n"
        "- `get_computed_blocks: (num_reqs,) int32`（L80）\n"
        "- `get_new_blocks: (num_reqs,) int32`\n"
        "- `allocate_slots: (num_reqs,) int32`、`get_computed: (num_reqs,) int32`\n\n"
        "Plain prose: `note: see below` is no field.\n"
    )
    found = _check(doc, tmp_path)
    assert found["get_computed_blocks"] == [OK]
    assert found["get_new_blocks"] == [OK]  # BlockPool's; the lead does not say these are its fields
    assert found["allocate_slots"] == [OK]
    assert "note" not in found
    # the item's second typed field is the class's too; its home, the one member with a word added
    homes = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [vllm_view(tmp_path / "h")]) if f.status == BROKEN}
    gone = homes["get_computed"]
    assert gone.ref.owner == "KVCacheManager" and gone.best is not None
    assert gone.best.replacement == "KVCacheManager.get_computed_blocks"
