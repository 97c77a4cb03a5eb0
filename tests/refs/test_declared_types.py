"""A gone type in a snippet's signature: its home is the type the project's same method declares in
the same place now (a parameter of a base class's `__init__` the snippet overrides, the return of a
copied class's method). A method that declares nothing there, or several classes, is no lead."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

_PARSER = "vllm/tool_parsers/abstract_tool_parser.py"
_PROTO = "vllm/tokenizers/protocol.py"
_LLM = "vllm/entrypoints/llm.py"

_SOURCES = {
    _PARSER: (
        "class ToolParser:\n"
        "    def __init__(self, tokenizer: \"TokenizerLike\", *args):\n"
        "        self.tokenizer = tokenizer\n"
        "    def extract(self, text, request):\n"
        "        return text\n"
    ),
    _PROTO: "class TokenizerLike:\n    pass\nclass TokenizerInfo:\n    pass\n",
    _LLM: (
        "class LLM:\n"
        "    def get_tokenizer(self) -> TokenizerLike:\n"
        "        return self.engine.tokenizer\n"
        "    def get_info(self) -> TokenizerLike | TokenizerInfo:\n"
        "        return self.engine.info\n"
    ),
}


def _view(tmp_path: Path) -> PinView:
    for rel, text in _SOURCES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    symbols = [
        SymbolEntry("vllm.tool_parsers.abstract_tool_parser.ToolParser", _PARSER, 1, 5, "class"),
        SymbolEntry("vllm.tool_parsers.abstract_tool_parser.ToolParser.__init__", _PARSER, 2, 3, "function"),
        SymbolEntry("vllm.tool_parsers.abstract_tool_parser.ToolParser.extract", _PARSER, 4, 5, "function"),
        SymbolEntry("vllm.tokenizers.protocol.TokenizerLike", _PROTO, 1, 2, "class"),
        SymbolEntry("vllm.tokenizers.protocol.TokenizerInfo", _PROTO, 3, 4, "class"),
        SymbolEntry("vllm.entrypoints.llm.LLM", _LLM, 1, 5, "class"),
        SymbolEntry("vllm.entrypoints.llm.LLM.get_tokenizer", _LLM, 2, 3, "function"),
        SymbolEntry("vllm.entrypoints.llm.LLM.get_info", _LLM, 4, 5, "function"),
    ]
    return PinView(
        pin="vllm@0.30.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(_SOURCES), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


def _best(doc: str, tmp_path: Path) -> dict[tuple[int, str], str | None]:
    out: dict[tuple[int, str], str | None] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [_view(tmp_path)]):
        if f.ref.text == "AnyTokenizer":
            assert f.status == BROKEN
            out[(f.ref.line, f.ref.text)] = f.best.replacement if f.best is not None and f.best.confidence >= 0.5 else None
    return out


def test_a_gone_parameter_type_of_an_overridden_method_is_the_base_s_type_now(tmp_path: Path) -> None:
    doc = (
        "# vLLM tool parsers\n\n"
        "```python\n"
        "from vllm.tool_parsers.abstract_tool_parser import ToolParser\n\n"
        "class ExampleToolParser(ToolParser):\n"
        "    def __init__(self, tokenizer: AnyTokenizer):\n"
        "        super().__init__(tokenizer)\n"
        "    def extract(self, text, request: AnyTokenizer):\n"
        "        return text\n"
        "```\n"
    )
    best = _best(doc, tmp_path)
    assert best[(7, "AnyTokenizer")] == "vllm.tokenizers.protocol.TokenizerLike"
    assert best[(9, "AnyTokenizer")] is None  # `ToolParser.extract` declares no type for `request`


def test_a_gone_return_type_of_a_copied_method_is_the_method_s_return_now(tmp_path: Path) -> None:
    doc = (
        "# vLLM's LLM class\n\n"
        "```python\n"
        "class LLM:\n"
        "    def get_tokenizer(self) -> AnyTokenizer:\n"
        "        return self.engine.tokenizer\n"
        "    def get_info(self) -> AnyTokenizer:\n"
        "        return self.engine.info\n"
        "    def get_tokenizer(self) -> Tuple[AnyTokenizer, SchedulerOutputs]:\n"
        "        return self.engine.tokenizer, None\n"
        "```\n"
    )
    best = _best(doc, tmp_path)
    assert best[(5, "AnyTokenizer")] == "vllm.tokenizers.protocol.TokenizerLike"
    assert best[(7, "AnyTokenizer")] is None  # two classes declared there: no single home
    assert best[(9, "AnyTokenizer")] is None  # the snippet wrote two types there: which is which is unknown
