from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.refs.loader import view_cache_path
from analyzer.settings import Settings

from .fakes import sglang_view, vllm_view

CLEAN = """\
# Prefix caching

vLLM's `Scheduler.schedule` sits in `vllm/v1/core/sched/scheduler.py`; SGLang's
`RadixCache.match_prefix` in `python/sglang/srt/mem_cache/radix_cache.py`.

```bash
vllm serve m --enable-prefix-caching
python -m sglang.launch_server --model-path m --disable-radix-cache
```
"""
STALE = """\
# Serving

vLLM parses chat in `vllm/entrypoints/chat_utils.py`; set `VLLM_USE_V1=1`.
"""


@pytest.fixture
def book(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    settings = Settings(cache_dir=cache)
    for view in (vllm_view(tmp_path), vllm_view(tmp_path, "0.33.0"), sglang_view(tmp_path)):
        view.save(view_cache_path(settings, view.pin))
    root = tmp_path / "book"
    (root / "chapters").mkdir(parents=True)
    (root / "atlas.toml").write_text('[check]\npins = ["vllm@0.30.0", "sglang@0.5.20"]\nignore = ["NanoEngine"]\n')
    (root / "chapters" / "01.md").write_text(CLEAN)
    return root


def _run(book: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--cache-dir", str(book.parent / "cache"), "check", *args])
    return result.exit_code, result.stdout, result.stderr


def test_clean_book_exits_zero(book: Path) -> None:
    code, out, _ = _run(book, str(book), "--all")
    assert code == 0, out
    assert "chapters/01.md" in out and "0 broken" in out


def test_broken_reference_exits_one_and_json_lists_findings(book: Path) -> None:
    (book / "chapters" / "02.md").write_text(STALE)
    code, out, _ = _run(book, str(book), "--json")
    assert code == 1
    findings = json.loads(out)
    keys = {"file", "line", "text", "kind", "framework", "pin", "status", "resolved_at", "suggestion", "confidence"}
    assert all(keys <= set(f) for f in findings)
    broken = {(f["file"], f["line"], f["text"]) for f in findings if f["status"] == "broken"}
    assert broken == {("chapters/02.md", 3, "VLLM_USE_V1")}
    moved = next(f for f in findings if f["text"] == "vllm/entrypoints/chat_utils.py")
    assert moved["status"] == "ok" and moved["pin"] == "vllm@0.30.0"


def test_command_line_pin_overrides_atlas_toml(book: Path) -> None:
    (book / "chapters" / "02.md").write_text(STALE)
    code, out, _ = _run(book, str(book), "--pin", "vllm@0.33.0", "--json")
    assert code == 1
    findings = json.loads(out)
    assert {f["pin"] for f in findings if f["framework"] == "vllm"} == {"vllm@0.33.0"}
    assert any(f["text"] == "vllm/entrypoints/chat_utils.py" and f["status"] == "broken" for f in findings)


def test_upgrade_fix_shows_diff_and_writes_only_with_write(book: Path) -> None:
    chapter = book / "chapters" / "02.md"
    chapter.write_text(STALE)
    code, out, _ = _run(book, str(book), "--from", "vllm@0.30.0", "--to", "vllm@0.33.0", "--fix")
    assert code == 1
    assert "+vLLM parses chat in `vllm/renderers/chat_utils/chat_message.py`" in out
    assert "vllm@0.30.0 → vllm@0.33.0" in out
    assert chapter.read_text() == STALE
    code, out, _ = _run(book, str(book), "--from", "vllm@0.30.0", "--to", "vllm@0.33.0", "--fix", "--write")
    assert "rewrote 1 file(s)" in out
    assert "`vllm/renderers/chat_utils/chat_message.py`" in chapter.read_text()
    assert code == 1  # VLLM_USE_V1 stays broken: nothing confident replaces it


def test_sarif_output(book: Path, tmp_path: Path) -> None:
    (book / "chapters" / "02.md").write_text(STALE)
    target = tmp_path / "out.sarif"
    code, _, _ = _run(book, str(book), "--sarif", str(target))
    assert code == 1
    sarif = json.loads(target.read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    errors = [r for r in results if r["level"] == "error"]
    assert len(errors) == 1 and errors[0]["ruleId"] == "refs/broken-env"
    location = errors[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("book/chapters/02.md")
    region = location["region"]
    assert region["startLine"] == 3 and STALE.splitlines()[2][region["startColumn"] - 1 :].startswith("VLLM_USE_V1")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing-folder"], "no such file or folder"),
        (["--from", "vllm@0.30.0"], "--from and --to go together"),
        (["--pin", "nonsense"], "expected PROJECT@VERSION"),
        (["--write"], "--write only applies with --fix"),
        (["--from", "vllm@0.30.0", "--to", "sglang@0.5.20"], "must name the same project"),
    ],
)
def test_bad_input_gives_a_message_not_a_traceback(book: Path, args: list[str], message: str) -> None:
    paths = [] if args and args[0] == "missing-folder" else [str(book)]
    code, out, err = _run(book, *paths, *args)
    assert code == 2
    assert message in err and "Traceback" not in err + out


def test_bad_atlas_toml(book: Path) -> None:
    (book / "atlas.toml").write_text("[check]\npins = 3\n")
    code, _, err = _run(book, str(book))
    assert code == 2 and "`pins` must be a list" in err
    (book / "atlas.toml").write_text("[check\n")
    code, _, err = _run(book, str(book))
    assert code == 2 and "atlas.toml" in err


def test_not_utf8_chapter(book: Path) -> None:
    (book / "chapters" / "bad.md").write_bytes(b"\xff\xfe bad")
    code, _, err = _run(book, str(book))
    assert code == 2 and "not UTF-8" in err


def test_fix_write_that_repairs_everything_exits_zero(book: Path) -> None:
    chapter = book / "chapters" / "03.md"
    chapter.write_text("In vLLM, start with `vllm serve m --disable-log-requests`.\n")
    code, _, _ = _run(book, str(book), "--pin", "vllm@0.33.0", "--fix")
    assert code == 1 and "--disable-log-requests" in chapter.read_text()
    code, out, _ = _run(book, str(book), "--pin", "vllm@0.33.0", "--fix", "--write")
    assert code == 0, out
    assert chapter.read_text() == "In vLLM, start with `vllm serve m --no-enable-log-requests`.\n"


def test_fix_threshold_is_stated_and_applied(book: Path) -> None:
    chapter = book / "chapters" / "02.md"
    chapter.write_text(STALE)
    args = (str(book), "--from", "vllm@0.30.0", "--to", "vllm@0.33.0", "--fix")
    code, out, _ = _run(book, *args, "--min-confidence", "0.99")
    assert code == 1 and "no replacements with confidence >= 0.99 to apply" in out
    # The findings table still names the suggestion; no diff line applies it.
    assert "+vLLM parses chat in" not in out
    code, out, _ = _run(book, *args, "--min-confidence", "0.5")
    assert "+vLLM parses chat in `vllm/renderers/chat_utils/chat_message.py`" in out
    code, _, _ = _run(book, *args, "--min-confidence", "1.5")
    assert code == 2
