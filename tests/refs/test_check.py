from __future__ import annotations

from analyzer.refs.check import check_references, check_upgrade, extract_all, pick_fixes
from analyzer.refs.pinview import PinView
from analyzer.refs.suggest import History

DOC = """\
# Chapter

Both engines call it `Scheduler`. vLLM preempts in `Scheduler._preempt_request`.
SGLang's loop is `Scheduler.event_loop_overlap`; its tree is `RadixCache`.
In vLLM, `hash_block_tokens` chains hashes and `num_tokens` counts tokens.
vLLM waits `VLLM_ENGINE_ITERATION_TIMEOUT_S` seconds; see `vllm/entrypoints/chat_utils.py`
and [`KVCacheManager.allocate_slots`](https://github.com/vllm-project/vllm/blob/v0.30.0/vllm/v1/core/kv_cache_manager.py#L30-L60).
The attention kernels live in vLLM's `csrc/attention/`.
"""


def test_ambiguous_reference_resolves_in_the_pins_that_know_it(vllm30: PinView, sglang20: PinView) -> None:
    refs = extract_all([("ch.md", DOC)])
    findings = check_references(refs, [vllm30, sglang20])
    both = [f for f in findings if f.ref.text == "Scheduler"]
    assert {(f.pin, f.status, f.framework) for f in both} == {("vllm@0.30.0", "ok", "vllm"), ("sglang@0.5.20", "ok", "sglang")}
    assert all("ambiguous" in f.note for f in both)


def test_each_reference_is_checked_against_its_own_project(vllm30: PinView, sglang20: PinView) -> None:
    findings = check_references(extract_all([("ch.md", DOC)]), [vllm30, sglang20])
    loop = next(f for f in findings if f.ref.text == "Scheduler.event_loop_overlap")
    assert (loop.pin, loop.status) == ("sglang@0.5.20", "ok")
    assert all(f.status != "broken" for f in findings), [f.to_dict() for f in findings if f.status == "broken"]
    kernels = next(f for f in findings if f.ref.text == "csrc/attention/")
    assert kernels.status == "not-checkable"


def test_bare_names_defined_nowhere_are_reported_not_checkable(vllm30: PinView) -> None:
    findings = check_references(extract_all([("ch.md", DOC)]), [vllm30])
    by_text = {f.ref.text: f for f in findings}
    assert by_text["hash_block_tokens"].status == "ok"
    # A bare name no pin defines, in a view whose sources cannot be read: said so with a
    # reason, never silently dropped, never "broken" (test_undefined_names.py judges with them).
    assert by_text["num_tokens"].status == "not-checkable" and "defined nowhere" in by_text["num_tokens"].note


def test_bare_names_of_the_documents_own_code_are_not_references(vllm30: PinView) -> None:
    doc = (
        "In vLLM the request carries `target_token` and `num_tokens`.\n\n"
        "```python\nllm.generate(p, SamplingParams(extra_args={\"target_token\": 67}))\nnum_tokens = 3\n```\n"
    )
    texts = {f.ref.text for f in check_references(extract_all([("ch.md", doc)]), [vllm30])}
    assert "target_token" not in texts and "num_tokens" not in texts


def test_missing_pin_is_not_checkable(vllm30: PinView) -> None:
    findings = check_references(extract_all([("ch.md", DOC)]), [vllm30])
    radix = next(f for f in findings if f.ref.text == "RadixCache")
    assert (radix.status, radix.pin) == ("not-checkable", None) and "no pin for sglang" in radix.note


def test_ignore_list(vllm30: PinView) -> None:
    refs = extract_all([("ch.md", DOC)], ignore=lambda r: r.text.startswith("VLLM_"))
    assert not any(r.kind == "env" for r in refs)


def test_upgrade_lists_what_breaks_with_replacements(vllm30: PinView, vllm33: PinView) -> None:
    refs = extract_all([("ch.md", DOC)])
    history = History(vllm30, {"vllm/entrypoints/chat_utils.py": ("vllm/renderers/chat_utils/chat_message.py", 0.7)})
    findings = check_upgrade(refs, vllm30, vllm33, history)
    assert all(f.pin == "vllm@0.33.0" for f in findings)
    assert not any(f.ref.text == "Scheduler.event_loop_overlap" for f in findings)  # SGLang's, not checked
    newly = {f.ref.text: f for f in findings if f.previous_status == "ok" and f.status in {"broken", "warning"}}
    url = "https://github.com/vllm-project/vllm/blob/v0.30.0/vllm/v1/core/kv_cache_manager.py#L30-L60"
    assert set(newly) == {"VLLM_ENGINE_ITERATION_TIMEOUT_S", "vllm/entrypoints/chat_utils.py", url}
    assert newly[url].status == "warning"  # the file is still there; only its lines moved
    assert newly[url].best is not None
    assert newly[url].best.replacement == url.replace("L30-L60", "L40-L70").replace("v0.30.0", "v0.33.0")
    path = newly["vllm/entrypoints/chat_utils.py"]
    assert path.best is not None and path.best.replacement == "vllm/renderers/chat_utils/chat_message.py"
    assert "ok at vllm@0.30.0" in path.note
    fixes = pick_fixes(findings, 0.8)
    assert sorted(f.ref.text for f in fixes) == sorted(["vllm/entrypoints/chat_utils.py", url])
