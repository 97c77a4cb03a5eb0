"""Forms from the false alarms of held-out 148-153 (labelled blind this session): a script run by
its bare name in a block with no language, the file a sentence has the reader create, and the
options of a script a section is about (held-out 162's `compare-json-results.py`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import FlagEntry

from .fakes import findings_by_place, source_view, statuses_at

_SOURCES = {
    "sglang/srt/__init__.py": "",
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler.py": "class Scheduler:\n    def run(self):\n        return None\n",
    "sglang/launch_server.py": "def main():\n    return None\n",
}


def test_a_script_run_by_its_bare_name_in_a_block_with_no_language(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "sglang@0.5.20")
    doc = (
        "# SGLang hierarchical cache benchmark\n\n"
        "```\n"
        "python bench_multiturn.py --model-path Qwen/Qwen2.5-14B-Instruct\n"  # 4
        "see gone_tool.py and managers/scheduler.py\n"  # 5
        "```\n\n"
        "```bash\n"
        "python bench_multiturn.py --model-path Qwen/Qwen2.5-14B-Instruct\n"  # 9
        "```\n"
    )
    found = findings_by_place(doc, view)
    # The reader's own folder's script, as in the `bash` block: not the package's file.
    assert not found.get((4, "bench_multiturn.py"))
    assert not found.get((9, "bench_multiturn.py"))
    # A file the block names without running it is still looked up.
    assert statuses_at(found, 5, "gone_tool.py") == [BROKEN]
    assert statuses_at(found, 5, "managers/scheduler.py") == [OK]


def test_the_file_a_sentence_has_the_reader_create(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "sglang@0.5.20")
    doc = (
        "# Adding a model to SGLang\n\n"
        "Let's start by defining our model in a file called `llama_wrapper.py`.\n"  # 3
        "Then save it as `my_model.py` beside `scheduler.py`.\n"  # 4
        "SGLang's old `gone_wrapper.py` did this before.\n"  # 5
    )
    found = findings_by_place(doc, view)
    assert not found.get((3, "llama_wrapper.py"))
    assert not found.get((4, "my_model.py"))
    assert statuses_at(found, 4, "scheduler.py") == [OK]
    assert statuses_at(found, 5, "gone_wrapper.py") == [BROKEN]


def test_the_options_of_a_script_the_section_is_about(tmp_path: Path) -> None:
    sources = {**_SOURCES, "sglang/bench_serving.py": "def main():\n    return None\n"}
    bare = source_view(tmp_path, sources, "sglang@0.5.20")
    # The server's parser, as the flag reader gives it (the fake pin reads no parser itself).
    view = replace(bare, flags=[FlagEntry("--tp-size", (), "tp_size", "sglang/srt/server_args.py:1")])
    doc = (
        "# SGLang benchmarks\n\n"
        "## Comparing results\n\n"
        "The `compare-json-results.py` helps to compare two result files.\n\n"
        "| Parameter | Description |\n"
        "| --- | --- |\n"
        "| `--xaxis` | the column used as the X-axis |\n"  # 9
        "\n## Serving\n\n"
        "Pass `--gone-server-flag` to the server.\n"  # 13
        "\n## The package's own script\n\n"
        "The `bench_serving.py` script measures a server.\n\n"
        "| Parameter | Description |\n"
        "| --- | --- |\n"
        "| `--gone-bench-flag` | a removed option |\n"  # 21
    )
    found = findings_by_place(doc, view)
    # A script the package does not hold: its option, which no pin's parser can judge.
    assert statuses_at(found, 9, "--xaxis") == [NOT_CHECKABLE]
    # A section that names no script: the server's flag, judged as before.
    assert statuses_at(found, 13, "--gone-server-flag") == [BROKEN]
    # A script the package holds: its options are judged, not waved through.
    assert statuses_at(found, 21, "--gone-bench-flag") == [BROKEN]
