"""A `python -m` path kept as a shim (`vllm.entrypoints.openai.run_batch`, whose main block
imports `main, parse_args` from the module that now builds the parser): its flags are that
module's, short options included; and a class name miswritten in case is broken with the class."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.commandflags import command_flags, delegate
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import FlagEntry, PinView
from analyzer.refs.symbols import SymbolEntry

FILES = {
    "vllm/__init__.py": "",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/openai/__init__.py": "",
    "vllm/entrypoints/openai/run_batch.py": (
        "import warnings\n\nwarnings.warn('deprecated: use vllm run-batch')\n\n"
        "if __name__ == '__main__':\n"
        "    from vllm.entrypoints.launchers.run_batch import main, parse_args\n\n"
        "    args = parse_args()\n    main(args)\n"
    ),
    "vllm/entrypoints/launchers/__init__.py": "",
    "vllm/entrypoints/launchers/run_batch.py": (
        "import argparse\n\n\n"
        "def parse_args():\n"
        "    parser = argparse.ArgumentParser(description='batch runner')\n"
        "    parser.add_argument('-i', '--input-file', required=True)\n"
        "    parser.add_argument('-o', '--output-file', required=True)\n"
        "    return parser.parse_args()\n\n\n"
        "def main(args):\n    return args\n"
    ),
    "vllm/executor.py": "class MultiprocExecutor:\n    pass\n",
}


def _view(tmp_path: Path) -> PinView:
    root = tmp_path / "tree"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    symbols = [
        SymbolEntry("vllm.executor", "vllm/executor.py", 1, 2, "module"),
        SymbolEntry("vllm.executor.MultiprocExecutor", "vllm/executor.py", 1, 2, "class"),
    ]
    return PinView(
        pin="vllm@9.9", project="vllm", kind="release", layout_prefix="", packages=("vllm",), files=frozenset(FILES),
        symbols=symbols, flags=[FlagEntry("--model", (), "model", "vllm/engine/arg_utils.py:1")], envs=[], tree=str(root),
    )


def test_a_shim_runs_the_parser_of_the_module_it_imports(tmp_path: Path) -> None:
    view = _view(tmp_path)
    assert delegate(view, "vllm.entrypoints.openai.run_batch") == "vllm.entrypoints.launchers.run_batch"
    assert delegate(view, "vllm.entrypoints.launchers.run_batch") is None  # it builds its own parser
    found = command_flags(view, "vllm.entrypoints.openai.run_batch")
    assert found is not None and {"-i", "-o", "--input-file", "--output-file"} <= found.flags


def test_short_options_of_the_shim_command_are_ok(tmp_path: Path) -> None:
    doc = "Run the batch with vLLM:\n\n```bash\npython -m vllm.entrypoints.openai.run_batch \\\n    -i in.jsonl \\\n    -o out.jsonl --bogus-x 1\n```\n"
    findings = {f.ref.text: f for f in check_references(extract_all([("b.md", doc)]), [_view(tmp_path)]) if f.ref.kind == "flag"}
    assert findings["-i"].status == OK and findings["-o"].status == OK
    assert findings["--bogus-x"].status == BROKEN


def test_a_class_name_in_another_case(tmp_path: Path) -> None:
    doc = "In vLLM, `MultiProcExecutor` starts one worker process per GPU.\n"
    (f,) = [f for f in check_references(extract_all([("c.md", doc)]), [_view(tmp_path)]) if f.ref.text == "MultiProcExecutor"]
    assert f.status == BROKEN
    assert [s.replacement for s in f.suggestions] == ["MultiprocExecutor"]


def test_a_class_name_in_another_case_in_plain_prose(tmp_path: Path) -> None:
    """Out of code font (a heading), the miswritten class is still the reader's reference; a prose
    word that is no class in any case (`ProcessExecutor`) stays the author's word."""
    doc = "# vLLM: from MultiProcExecutor to ProcessExecutor\n\nIn vLLM the MultiprocExecutor runs workers.\n"
    found = {f.ref.text: f for f in check_references(extract_all([("d.md", doc)]), [_view(tmp_path)])}
    assert found["MultiProcExecutor"].status == BROKEN
    assert [s.replacement for s in found["MultiProcExecutor"].suggestions] == ["MultiprocExecutor"]
    assert "ProcessExecutor" not in found
    assert found.get("MultiprocExecutor") is None or found["MultiprocExecutor"].status == OK
