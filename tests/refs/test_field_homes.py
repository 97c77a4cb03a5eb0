"""A request field that moved into a nested parameters object (`field_homes.py`): vLLM's
`guided_json` became `structured_outputs: StructuredOutputsParams` with a `json` member. Judged
on a small pin whose sources are real Python on disk, in the forms of vLLM's early-2025
structured-outputs page."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView

from . import test_fields

_PROTOCOL = '''
class OpenAIBaseModel(BaseModel):
    model_config = ConfigDict(extra="allow")


class ChatCompletionRequest(OpenAIBaseModel):
    messages: list
    model: str | None = None
    structured_outputs: StructuredOutputsParams | None = Field(
        default=None,
    )
    response_format: AnyResponseFormat | None = None
'''
_SAMPLING = '''
class StructuredOutputsParams(msgspec.Struct):
    json: str | dict | None = None
    regex: str | None = None
    choice: list[str] | None = None


class SamplingParams(msgspec.Struct):
    n: int = 1
    structured_outputs: StructuredOutputsParams | None = None
'''

_DOC = """# Structured Outputs in vLLM

The following parameters are supported, which must be added as extra parameters:

- `guided_choice`: the output will be exactly one of the choices.
- `guided_json`: the output will follow the JSON schema.
- `guided_whitespace_pattern`: overrides the whitespace pattern.

```python
completion = client.chat.completions.create(
    model="m",
    messages=[],
    extra_body={"guided_regex": r"\\w+@\\w+", "guided_choice": ["a", "b"]},
)
completion = client.chat.completions.create(
    model="m",
    messages=[],
    extra_body={"guided_json": schema, "guided_whitespace_pattern": " "},
)
```
"""


@pytest.fixture
def pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PinView:
    monkeypatch.setattr(test_fields, "_PROTOCOL", _PROTOCOL)
    monkeypatch.setattr(test_fields, "_SAMPLING", _SAMPLING)
    return test_fields._view(tmp_path, "0.33.0", guided=False)


def test_a_flat_field_gone_into_a_nested_object_is_suggested_there(pin: PinView) -> None:
    got = {f.ref.text: f for f in check_references(extract_all([("doc.md", _DOC)]), [pin]) if f.ref.field_of}
    assert got["guided_choice"].status == "broken"
    best = {text: (f.best.replacement if f.best else None) for text, f in got.items()}
    assert best["guided_choice"] == "StructuredOutputsParams.choice"
    assert best["guided_json"] == "StructuredOutputsParams.json"
    assert best["guided_regex"] == "StructuredOutputsParams.regex"  # an `extra_body` key
    # No member of a held object is named like what is left of it: no suggestion, not a guess.
    assert best.get("guided_whitespace_pattern") is None
    assert got["guided_json"].best is not None and got["guided_json"].best.confidence < 0.8  # not applied by --fix
