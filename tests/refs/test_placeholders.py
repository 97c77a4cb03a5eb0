"""Names a drawing numbers (`tok_1a`, `tok_2a`; `submod_0`, `submod_1`) that no pin spells are the
author's placeholders, not stale references; one such name alone is judged as any other."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from tests.refs.fakes import source_view

_DOC = """# SGLang speculation tree

EAGLE builds a **speculation tree** (not just a chain):

```
Root
├── Branch A: [tok_1a, tok_2a]
└── Branch B: [tok_1b, old_step_1]
```

The runner calls `stage_2` after `prepare_batch`.
"""


def test_a_numbered_series_no_pin_spells_is_the_authors_placeholders(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "p", {"sglang/srt/runner.py": "def prepare_batch():\n    pass\n"}, "sglang@0.5.20")
    got = {f.ref.text: f.status for f in check_references(extract_all([("ch.md", _DOC)]), [pin])}
    assert got["tok_1a"] == got["tok_2a"] == got["tok_1b"] == "not-checkable", got
    # alone in its series: judged as any name the pin lacks
    assert got["old_step_1"] == "broken" and got["stage_2"] == "broken", got
    assert got["prepare_batch"] == "ok"


_SEQUENCE = """# vLLM request flow

```mermaid
sequenceDiagram
    participant InputProc as InputProcessor
    participant Gone as GoneProcessor
    LLM->>InputProc: process_inputs(prompt)
    InputProc-->>Gone: EngineCoreRequest
```
"""


def test_a_sequence_diagrams_short_names_are_its_own(tmp_path: Path) -> None:
    # `participant InputProc as InputProcessor`: `InputProc` is the diagram's label wherever the
    # block writes it; the name after `as` is the reference, and is judged.
    pin = source_view(tmp_path / "p", {"vllm/v1/engine/input_processor.py": "class InputProcessor:\n    def process_inputs(self, prompt):\n        pass\n"})
    got = {f.ref.text: f.status for f in check_references(extract_all([("ch.md", _SEQUENCE)]), [pin])}
    assert "InputProc" not in got and "Gone" not in got, got
    assert got["InputProcessor"] == "ok" and got["GoneProcessor"] == "broken", got
