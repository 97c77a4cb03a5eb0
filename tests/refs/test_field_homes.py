"""A request field that moved into a nested parameters object (`field_homes.py`): vLLM's
`guided_json` became `structured_outputs: StructuredOutputsParams` with a `json` member. Judged
on a small pin whose sources are real Python on disk, in the forms of vLLM's early-2025
structured-outputs page."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView, SymbolEntry

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


_CACHE = "sglang/srt/mem_cache/radix_cache.py"
_PARAMS = "sglang/srt/mem_cache/cache_init_params.py"
_ENGINE = "sglang/srt/engine.py"
_CACHE_SOURCES = {
    "sglang/__init__.py": "",
    _ENGINE: "class Engine:\n    @classmethod\n    def from_config(cls, config, enable_log_requests: bool = False, log_level: str = 'info'):\n        pass\n",
    _CACHE: (
        "class RadixCache:\n"
        "    def __init__(self, params: CacheInitParams):\n"
        "        self.page_size = params.page_size\n"
        "        self.root_node = None\n"
    ),
    _PARAMS: "@dataclasses.dataclass\nclass CacheInitParams:\n    page_size: int\n    disable: bool = False\n",
}


def _cache_view(tmp_path: Path, holder: str = "CacheInitParams") -> PinView:
    """`holder`: the class the constructor's one parameter is annotated with."""
    sources = {rel: text.replace("CacheInitParams", holder) for rel, text in _CACHE_SOURCES.items()}
    tree = tmp_path / "sglang-0.5.23"
    for rel, text in sources.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
    symbols = [
        SymbolEntry("sglang", "sglang/__init__.py", 1, 1, "module"),
        SymbolEntry("sglang.srt.engine.Engine", _ENGINE, 1, 4, "class"),
        SymbolEntry("sglang.srt.engine.Engine.from_config", _ENGINE, 2, 4, "function"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache", _CACHE, 1, 4, "class"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache.__init__", _CACHE, 2, 4, "function"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache.page_size", _CACHE, 3, 3, "attribute"),
        SymbolEntry("sglang.srt.mem_cache.radix_cache.RadixCache.root_node", _CACHE, 4, 4, "attribute"),
        SymbolEntry("sglang.srt.mem_cache.cache_init_params.CacheInitParams", _PARAMS, 2, 4, "class"),
        SymbolEntry("sglang.srt.mem_cache.cache_init_params.CacheInitParams.page_size", _PARAMS, 3, 3, "attribute"),
        SymbolEntry("sglang.srt.mem_cache.cache_init_params.CacheInitParams.disable", _PARAMS, 4, 4, "attribute"),
    ]
    symbols = [SymbolEntry(e.full.replace("CacheInitParams", holder), e.path, e.line, e.end_line, e.kind) for e in symbols]
    view = PinView(
        pin="sglang@0.5.23", project="sglang", kind="release", layout_prefix="", packages=("sglang",),
        files=frozenset(_CACHE_SOURCES), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(tmp_path / "words.json")
    return view


_COPY = (
    "# SGLang radix cache\n\n"
    "```python\n"
    "class RadixCache:\n"  # 4
    "    def __init__(\n"
    "        self,\n"
    "        page_size: int,\n"  # 7
    "        disable: bool = False,\n"  # 8
    "        token_budget: int = 0,\n"  # 9
    "    ):\n"
    "        self.page_size = page_size\n"
    "        self.root_node = None\n"
    "```\n"
)


def test_a_constructor_parameter_gathered_into_a_parameters_object_is_suggested_there(tmp_path: Path) -> None:
    got = {f.ref.text: f for f in check_references(extract_all([("doc.md", _COPY)]), [_cache_view(tmp_path)]) if f.ref.field_of}
    assert got["page_size"].status == "broken"  # the pin's constructor takes `params` only
    best = {text: (f.best.replacement if f.best else None) for text, f in got.items()}
    assert best["page_size"] == "CacheInitParams.page_size"
    assert best["disable"] == "CacheInitParams.disable"
    # The parameters object has no such field: no suggestion, not a guess.
    assert got["token_budget"].status == "broken" and best["token_budget"] is None


def test_a_held_component_s_field_is_not_a_gathered_parameter(tmp_path: Path) -> None:
    # `__init__(self, params: KVCache)`: the pool it is handed has a `page_size` of its own.
    view = _cache_view(tmp_path, holder="KVCache")
    got = {f.ref.text: f for f in check_references(extract_all([("doc.md", _COPY)]), [view]) if f.ref.field_of}
    assert got["page_size"].status == "broken" and got["page_size"].best is None


def test_a_switch_turned_over_is_the_callable_s_opposite_parameter(tmp_path: Path) -> None:
    doc = (
        "# Starting the engine\n\n"
        "```python\n"
        "from sglang.srt.engine import Engine\n"
        "engine = Engine.from_config(config, disable_log_requests=args.disable_log_requests, disable_log_level=True)\n"
        "```\n"
    )
    got = {f.ref.text: f for f in check_references(extract_all([("doc.md", doc)]), [_cache_view(tmp_path)]) if f.ref.field_of}
    assert got["disable_log_requests"].status == "broken"
    best = got["disable_log_requests"].best
    assert best is not None and best.replacement == "enable_log_requests"
    assert best.confidence < 0.8  # not applied by --fix: the value must be negated by hand
    # No `enable_log_level` to turn over to: no suggestion of that kind.
    other = got["disable_log_level"].best
    assert other is None or other.replacement != "enable_log_level"


def test_a_keyword_with_stray_underscores_or_a_letter_off_is_the_callee_s_own(tmp_path: Path) -> None:
    # A blog's markup leaves `page_size\_=` as `page_size_=`; `disabel` is a typo of `disable`.
    doc = (
        "# Cache parameters\n\n"
        "```python\n"
        "from sglang.srt.mem_cache.cache_init_params import CacheInitParams\n"
        "params = CacheInitParams(page_size_=16, disabel=False, dsable_x=1, tokens=2)\n"
        "```\n"
    )
    got = {f.ref.target: f for f in check_references(extract_all([("doc.md", doc)]), [_cache_view(tmp_path)]) if f.ref.field_of}
    assert {t for t, f in got.items() if f.status == "broken"} >= {"page_size_", "disabel", "dsable_x", "tokens"}
    best = {t: (f.best.replacement if f.best else None) for t, f in got.items()}
    assert best["page_size_"] == "page_size" and best["disabel"] == "disable"
    # Two letters off, or nothing near: no guess.
    assert best["dsable_x"] is None and best["tokens"] is None
    assert all(f.best is None or f.best.confidence < 0.85 for f in got.values())  # not applied by --fix
