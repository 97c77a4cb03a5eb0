"""Names real authors write outside code font or in shorthand: the bold lead name of each item of
a list of the project's classes, and `name_v1/v2` alternations."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK

from .test_quoted_code import _SOURCE, _check, _view


def test_a_bold_lead_name_in_a_list_of_the_projects_classes_is_judged(tmp_path: Path) -> None:
    doc = (
        "# SGLang batches\n\n"
        "The classes:\n\n"
        "- **Scheduler**: runs the loop.\n"
        "- **ScheduleBatch**: one batch; see [the example](../../examples/run.sh).\n"
        "- **LegacyBatchPlanner**: plans batches.\n"
        "- **run_scheduler_process**: starts it.\n"
        "- **old_batch_helper**: gone.\n"
    )
    found = _check(doc, _view(tmp_path))
    assert found["ScheduleBatch"] == [OK] and found["run_scheduler_process"] == [OK]
    assert found["LegacyBatchPlanner"] == [BROKEN]
    assert found["old_batch_helper"] == [BROKEN]


def test_bold_terms_of_a_list_that_names_no_class_are_not_judged(tmp_path: Path) -> None:
    doc = (
        "# SGLang concepts\n\n"
        "- **LookupBuffer**: stores KV.\n"
        "- **PipeStage**: moves tensors.\n"
        "- **Scheduler**: runs the loop.\n"
        "- **kv_producer_role**: the sender.\n"
    )
    found = _check(doc, _view(tmp_path))
    assert all(s != BROKEN for statuses in found.values() for s in statuses), found


def test_a_bold_name_written_with_its_file_is_judged_whatever_the_list(tmp_path: Path) -> None:
    """`**LookupBuffer** (`lookup_buffer.py`)`: the item says where the class lives, so the name is
    code without two siblings of the project's to vouch for it; the same list without the files
    stays a list of terms."""
    doc = (
        "# SGLang concepts\n\n"
        "1. **Scheduler** (`scheduler.py`) runs the loop.\n"
        "2. **LookupBuffer** (`lookup_buffer.py`) stores KV.\n"
        "3. **ScheduleBatch** (`schedule_batch.py`) holds a batch.\n"
    )
    view = _view(tmp_path)
    found = _check(doc, view)
    assert found["LookupBuffer"] == [BROKEN]
    assert BROKEN not in found.get("ScheduleBatch", [])
    unfiled = _check(doc.replace(" (`lookup_buffer.py`)", "").replace(" (`schedule_batch.py`)", ""), view)
    assert BROKEN not in unfiled.get("LookupBuffer", [])


def test_a_slash_alternation_checks_every_variant(tmp_path: Path) -> None:
    view = _view(tmp_path, source=_SOURCE + "\n\ndef decode(q):\n    return torch.ops.aiter.paged_attention_v1(q)\n")
    found = _check("In SGLang, decode uses `paged_attention_v1/v2`; `input/output` are tensors.\n", view)
    # v1 is used (a dependency's op) without being defined: unjudged; v2 is spelled nowhere.
    assert sorted(found["paged_attention_v1/v2"]) == [BROKEN, NOT_CHECKABLE]
    assert "input/output" not in found


def test_an_options_only_shell_block_sets_the_documents_server_flags(tmp_path: Path) -> None:
    from .fakes import vllm_view

    doc = (
        "# Prefix caching in vLLM\n\nvLLM caches prefixes; vLLM's scheduler reuses them (vLLM docs).\n\n"
        "Turn it on with:\n\n```bash\n--enable-prefix-caching \\\n  --enable-prefix-cache-gone '{\"a\": 1}'\n```\n"
    )
    found = _check(doc, vllm_view(tmp_path))
    assert found["--enable-prefix-caching"] == [OK]
    assert found["--enable-prefix-cache-gone"] == [BROKEN]


def test_a_guides_new_file_is_not_a_citation_but_a_moved_one_is(tmp_path: Path) -> None:
    doc = (
        "# Adding a scheduler to SGLang\n\n```python\n"
        "# python/sglang/srt/managers/my_scheduler.py\n"
        "class MyNewScheduler(Scheduler):\n    pass\n```\n\n"
        "```python\n# python/sglang/srt/old_managers/scheduler.py\n"
        "class MyOtherScheduler(Scheduler):\n    pass\n```\n"
    )
    found = _check(doc, _view(tmp_path))
    assert "python/sglang/srt/managers/my_scheduler.py" not in found  # the file the reader writes
    assert found["python/sglang/srt/old_managers/scheduler.py"] == [BROKEN]  # its folder is gone too


def test_options_inside_a_script_are_not_taken_for_the_servers(tmp_path: Path) -> None:
    from .fakes import vllm_view

    doc = (
        "# Prefix caching in vLLM\n\nvLLM caches prefixes; vLLM's scheduler reuses them (vLLM docs).\n\n"
        "```bash\nset -u\nARGS=(\n  --image-width-gone 1024\n)\nrun_tool \"${ARGS[@]}\"\n```\n"
    )
    found = _check(doc, vllm_view(tmp_path))
    assert "--image-width-gone" not in found
