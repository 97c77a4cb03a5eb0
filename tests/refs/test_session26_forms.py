"""Forms from the false alarms of held-out 148-153 (labelled blind this session): a script run by
its bare name in a block with no language, and the file a sentence has the reader create."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, OK

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
