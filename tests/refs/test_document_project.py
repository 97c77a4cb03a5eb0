"""The project of a page that never names it near its references (a configuration reference
excerpted from its section 2, its title "vLLM ..." left out): decided once for the document from
what its other references resolve to, not flag by flag (held-out 5's config-reference page)."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.docproject import MIN_EVIDENCE
from analyzer.refs.pinview import PinView

# The form of the page: one section per flag, no project named anywhere in the excerpt.
CONFIG_PAGE = """\
## 2. Scheduling

### 2.1 `--max-num-seqs`
- **Default**: `256`
- **Purpose**: Upper bound on sequences per iteration

### 2.2 `--gpu-memory-utilization`
- **Default**: `0.9`

### 2.3 `--enable-prefix-caching`
- **Purpose**: Reuse KV blocks of shared prefixes

### 2.4 `--num-scheduler-steps`
- **Default**: `1`
- **Purpose**: Multi-step scheduling (removed upstream)
"""


def test_gone_flag_of_a_page_whose_references_all_resolve_in_one_project(vllm30: PinView, sglang20: PinView) -> None:
    findings = check_references(extract_all([("config.md", CONFIG_PAGE)]), [vllm30, sglang20])
    gone = [f for f in findings if f.ref.text == "--num-scheduler-steps"]
    assert [(f.pin, f.status) for f in gone] == [("vllm@0.30.0", "broken")]
    assert "every reference of the document that resolves is vllm's (3)" in gone[0].ref.framework_reason
    assert all(f.pin == "vllm@0.30.0" for f in findings if f.ref.text.startswith("--") and f.status == "ok")


def test_a_page_whose_references_resolve_in_both_projects_keeps_flag_by_flag_ambiguity(vllm30: PinView, sglang20: PinView) -> None:
    # One SGLang flag among them: the page is not one project's, so nothing is re-judged.
    page = CONFIG_PAGE + "\n### 2.5 `--chunked-prefill-size`\n- **Default**: `8192`\n"
    findings = check_references(extract_all([("config.md", page)]), [vllm30, sglang20])
    gone = [f for f in findings if f.ref.text == "--num-scheduler-steps"]
    assert gone and all(f.ref.framework == "ambiguous" for f in gone)


def test_too_few_resolving_references_say_nothing(vllm30: PinView, sglang20: PinView) -> None:
    page = "### `--max-num-seqs`\n\n### `--num-scheduler-steps`\n"
    assert MIN_EVIDENCE > 1
    findings = check_references(extract_all([("config.md", page)]), [vllm30, sglang20])
    assert all(f.ref.framework == "ambiguous" for f in findings if f.ref.text == "--num-scheduler-steps")


def test_a_comparison_s_named_column_does_not_hide_the_document_s_own_project(vllm30: PinView, sglang20: PinView) -> None:
    # Held-out 28's SGLang note with a "vs vLLM" table: the vLLM column's cells are vLLM's by their
    # header; the references the text leaves ambiguous all resolve in vLLM here, so the gone one is
    # judged against vLLM alone, not against whichever pin offers the closer replacement.
    page = CONFIG_PAGE + "\n| 维度 | SGLang | vLLM |\n|---|---|---|\n| flag | `--chunked-prefill-size` | `--max-num-seqs` |\n"
    findings = check_references(extract_all([("config.md", page)]), [vllm30, sglang20])
    gone = [f for f in findings if f.ref.text == "--num-scheduler-steps"]
    assert [(f.pin, f.status) for f in gone] == [("vllm@0.30.0", "broken")]
