"""The sample manuscript in examples/book: extraction offline, resolution against the real pins
(integration tier)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.refs.check import extract_all
from analyzer.refs.config import load_book
from analyzer.settings import Settings

BOOK = Path(__file__).resolve().parents[2] / "examples" / "book"


def _refs():  # type: ignore[no-untyped-def]
    book = load_book([BOOK])
    return extract_all(((book.display(p), p.read_text(encoding="utf-8")) for p in book.files), book.ignores)


def test_sample_book_config() -> None:
    book = load_book([BOOK])
    assert book.pins == ("vllm@0.30.0", "sglang@0.5.20")
    assert len(book.files) >= 4


def test_sample_book_extraction() -> None:
    refs = _refs()
    kinds = {r.kind for r in refs}
    assert kinds == {"path", "symbol", "flag", "env"}
    assert sum(r.origin == "link" for r in refs) >= 4
    assert not any("torch" in r.text or "nano_engine" in r.text for r in refs)
    by_text = {(r.file, r.text): r for r in refs}
    assert by_text[("chapters/01-life-of-a-request.md", "TokenizerManager.generate_request")].framework == "sglang"
    assert by_text[("chapters/01-life-of-a-request.md", "AsyncLLM.generate")].framework == "vllm"
    assert by_text[("chapters/03-scheduler.md", "--chunked-prefill-size")].command == "sglang.launch_server"
    ambiguous = [r for r in refs if r.framework == "ambiguous"]
    assert [r.text for r in ambiguous] == ["Scheduler"]  # "Both engines call ... `Scheduler`"


def _invoke(settings: Settings, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--cache-dir", str(settings.cache_dir), "check", *args])
    return result.exit_code, result.stdout


@pytest.mark.integration
def test_sample_book_is_clean_against_its_pins(integration_settings: Settings) -> None:
    code, out = _invoke(integration_settings, str(BOOK), "--json")
    findings = json.loads(out)
    broken = [f for f in findings if f["status"] == "broken"]
    assert code == 0 and broken == [], broken
    statuses = {(f["text"], f["status"]) for f in findings}
    assert ("tests/v1/core/test_scheduler.py", "not-checkable") in statuses
    assert ("csrc/attention/", "not-checkable") in statuses
    ok = {f["text"] for f in findings if f["status"] == "ok"}
    assert {"Scheduler.schedule", "RadixCache.match_prefix", "--chunked-prefill-size", "VLLM_LOGGING_LEVEL"} <= ok


@pytest.mark.integration
def test_sample_book_upgrade_to_vllm_033(integration_settings: Settings, tmp_path: Path) -> None:
    copy = tmp_path / "book"
    shutil.copytree(BOOK, copy)
    code, out = _invoke(integration_settings, str(copy), "--from", "vllm@0.30.0", "--to", "vllm@0.33.0", "--json")
    assert code == 1
    findings = json.loads(out)
    newly = {f["text"]: f for f in findings if f["previous_status"] == "ok" and f["status"] in {"broken", "warning"}}
    assert newly["VLLM_ENGINE_ITERATION_TIMEOUT_S"]["status"] == "broken"
    assert newly["vllm/entrypoints/chat_utils.py"]["status"] == "broken"
    anchor = next(t for t in newly if t.endswith("kv_cache_manager.py#L370-L601"))
    assert newly[anchor]["status"] == "warning"  # the file is there; its lines moved
    assert newly[anchor]["suggestion"].endswith("/blob/v0.33.0/vllm/v1/core/kv_cache_manager.py#L380-L627")
    assert newly[anchor]["confidence"] >= 0.8
    code, _ = _invoke(integration_settings, str(copy), "--from", "vllm@0.30.0", "--to", "vllm@0.33.0", "--fix", "--write")
    text = (copy / "chapters" / "02-paged-kv.md").read_text(encoding="utf-8")
    assert "v0.33.0/vllm/v1/core/kv_cache_manager.py#L380-L627" in text
