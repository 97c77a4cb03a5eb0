"""Names the text itself says are gone or not the name meant (forms from SGLang's kernel and
mem-cache READMEs and a diffusion guide): not reported as stale; deprecation and "use X instead
of Y" still are."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE
from analyzer.refs.pinview import PinView

DOC = """\
# vLLM kernels

As of the RFC finale the legacy `vllm.old_kernels` package has been **removed**: its helpers moved to `vllm.v1.core`.

`SchedulerInterface` is a plain class (it replaced the former `vllm.core.OldSchedulerBase`).

There is no separate `VideoSchedulerConfig` class.

The `--rope-scaling` parameter used in older versions of vLLM is no longer supported.

Multi-node runs used `--worker-use-ray` (deprecated, use `--distributed-executor-backend`).

Use `Scheduler` instead of `OldSchedulerBackend`.
"""


def test_a_name_the_sentence_says_is_gone_is_not_reported(vllm30: PinView) -> None:
    found: dict[str, list[str]] = {}
    notes: dict[str, str] = {}
    for f in check_references(extract_all([("ch.md", DOC)]), [vllm30]):
        found.setdefault(f.ref.text, []).append(f.status)
        notes[f.ref.text] = f.note
    for text in ("vllm.old_kernels", "vllm.core.OldSchedulerBase", "VideoSchedulerConfig", "--rope-scaling"):
        assert found[text] == [NOT_CHECKABLE], (text, found.get(text), notes.get(text))
        assert "the text itself says" in notes[text]
    # Deprecated is still there for the reader; "use A instead of B" may be the stale advice itself.
    for text in ("--worker-use-ray", "OldSchedulerBackend"):
        assert found[text] == [BROKEN], (text, found.get(text), notes.get(text))


REQUIRED = """\
# vLLM attention backends

| backend | notes |
| --- | --- |
| `sparse_attn` | Requires `SpargeAttn`. Install it with pip. |

The sparse backend needs `SageAttention` installed, and requires calling `GoneSetupHook` first.
"""


def test_a_package_the_text_says_to_install_is_not_the_projects(vllm30: PinView) -> None:
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", REQUIRED)]), [vllm30])}
    for text in ("SpargeAttn", "SageAttention"):
        assert got[text].status == NOT_CHECKABLE and "package to install" in got[text].note, (text, got[text].note)
    assert got["GoneSetupHook"].status == BROKEN  # "requires calling X": the project's call, judged
