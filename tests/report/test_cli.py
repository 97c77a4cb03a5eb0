"""`atlas report` input errors: a clear message and exit status 2, never a traceback,
and nothing indexed or written before the input is known to be good."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_site import fixture_mappings
from typer.testing import CliRunner

from analyzer.cli import app


def run(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--cache-dir", str(tmp_path / "cache"), "report", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "pdf"], "--format must be one of html, md, both"),
        (["--concept", "no-such"], "no concept mapping named no-such"),
        (["--release", "llama@1.0"], "a report column is vllm@VERSION or sglang@VERSION"),
        (["--release", "vllm@0.30.0", "--release", "vllm@0.33.0"], "one release per project"),
    ],
)
def test_bad_arguments(tmp_path: Path, args: list[str], message: str) -> None:
    mappings = fixture_mappings(tmp_path)
    code, out = run(tmp_path, "--mappings", str(mappings), "--out", str(tmp_path / "site"), *args)
    assert code == 2, out
    assert message in " ".join(out.split()) and "Traceback" not in out
    assert not (tmp_path / "site").exists()
    assert not (tmp_path / "cache" / "index.sqlite").exists()


def test_broken_mappings_listed(tmp_path: Path) -> None:
    mappings = fixture_mappings(tmp_path)
    (mappings / "bad.toml").write_text('title = "x"\nsummary = "y"\nsymbol = ["typo"]\n[reference]\nstatus = "done"\n')
    code, out = run(tmp_path, "--mappings", str(mappings), "--json")
    assert code == 2 and "Traceback" not in out
    text = " ".join(out.split())
    assert "unknown key 'symbol'" in text and "status 'done' is not one of" in text
    code, out = run(tmp_path, "--mappings", str(tmp_path / "absent"))
    assert code == 2 and "no such mappings directory" in " ".join(out.split())
