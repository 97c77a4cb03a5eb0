from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.refs import fix as fix_module
from analyzer.refs.check import check_upgrade, extract_all, pick_fixes
from analyzer.refs.fix import plan_fixes, write_atomic
from analyzer.refs.pinview import PinView
from analyzer.refs.suggest import History

CHAPTER = (
    "# Serving\r\n\r\n"
    "vLLM parses chat in `vllm/entrypoints/chat_utils.py` (`parse_chat_messages()`).\r\n"
    "Its timeout is `VLLM_ENGINE_ITERATION_TIMEOUT_S`.\r\n"
    "Start with `vllm serve m --disable-log-requests`.\r\n"
)


def _plans(tmp_path: Path, vllm30: PinView, vllm33: PinView) -> list[fix_module.FileFix]:
    chapter = tmp_path / "ch.md"
    chapter.write_bytes(CHAPTER.encode())
    refs = extract_all([("ch.md", CHAPTER)])
    findings = check_upgrade(refs, vllm30, vllm33, History(vllm30))
    return plan_fixes(pick_fixes(findings, 0.8), {"ch.md": chapter})


def test_fix_applies_only_high_confidence_replacements(tmp_path: Path, vllm30: PinView, vllm33: PinView) -> None:
    (plan,) = _plans(tmp_path, vllm30, vllm33)
    assert plan.applied == 2
    assert "`vllm/renderers/chat_utils/chat_message.py`" in plan.new
    assert "--no-enable-log-requests`" in plan.new
    assert "VLLM_ENGINE_ITERATION_TIMEOUT_S" in plan.new  # removed, nothing confident to offer
    assert plan.new.count("\r\n") == CHAPTER.count("\r\n")  # line endings kept
    diff = plan.diff()
    assert diff.startswith("--- a/ch.md\n+++ b/ch.md\n")
    assert "-Start with `vllm serve m --disable-log-requests`." in diff
    assert (tmp_path / "ch.md").read_bytes() == CHAPTER.encode()  # planning writes nothing


def test_write_is_atomic(tmp_path: Path, vllm30: PinView, vllm33: PinView, monkeypatch: pytest.MonkeyPatch) -> None:
    (plan,) = _plans(tmp_path, vllm30, vllm33)

    def killed(*_args: object) -> None:
        raise KeyboardInterrupt  # the process dies between writing and renaming

    monkeypatch.setattr(fix_module.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(plan.path, plan.new)
    assert plan.path.read_bytes() == CHAPTER.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ch.md", "vllm-0.30.0", "vllm-0.33.0"]
    monkeypatch.undo()
    plan.path.chmod(0o640)
    write_atomic(plan.path, plan.new)
    assert plan.path.read_bytes() == plan.new.encode()
    assert plan.path.stat().st_mode & 0o777 == 0o640


def test_text_changed_since_extraction_is_skipped(tmp_path: Path, vllm30: PinView, vllm33: PinView) -> None:
    chapter = tmp_path / "ch.md"
    chapter.write_bytes(CHAPTER.encode())
    findings = check_upgrade(extract_all([("ch.md", CHAPTER)]), vllm30, vllm33, History(vllm30))
    chapter.write_bytes(CHAPTER.replace("Start with", "To start, run").encode())
    (plan,) = plan_fixes(pick_fixes(findings, 0.8), {"ch.md": chapter})
    assert plan.applied == 1 and len(plan.skipped) == 1 and "--disable-log-requests" in plan.skipped[0]
    assert os.path.exists(chapter)
