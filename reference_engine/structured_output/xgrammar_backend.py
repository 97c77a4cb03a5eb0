"""The xgrammar backend: compile a constraint once per distinct spec, against the
tokenizer's vocabulary, and hand out a fresh GrammarMatcher per sequence.

xgrammar precomputes, for every grammar state, which vocabulary tokens can follow
(adaptive token masks), so filling a sequence's next-token bitmask is fast; the matcher
accepts tokens one by one and can roll back, which speculative decoding needs.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from tokenizers import Tokenizer

from reference_engine.structured_output.params import StructuredOutputsParams

_BOUNDED_STRING_CHAR = '[^\\"\\\\\\r\\n]'
_JSON_STRING_CHAR = '[^\\0-\\x1f\\"\\\\\\r\\n]'
CACHE_SIZE = 256  # compiled grammars kept (a server sees the same few schemas again and again)


class GrammarError(ValueError):
    """A constraint xgrammar cannot compile; the message says why, fit for a 400."""


def _clean(exc: Exception) -> str:
    # "[05:54:32] /project/cpp/json_schema_converter.cc:5082: Unsupported type" -> the message
    text = str(exc).strip()
    return re.sub(r"^\[[\d:]+\]\s+\S+:\d+:\s*", "", text).splitlines()[0]


class XgrammarBackend:
    """Owned by StructuredOutputManager; built on first use (xgrammar loads lazily)."""

    def __init__(self, tokenizer: Tokenizer, vocab_size: int, stop_token_ids: Sequence[int]) -> None:
        import xgrammar as xgr

        self.xgr = xgr
        vocab = tokenizer.get_vocab(with_added_tokens=True)
        encoded: list[str] = [""] * max(len(vocab), max(vocab.values(), default=-1) + 1)
        for token, index in vocab.items():
            encoded[index] = token
        # Byte-level BPE (Qwen, Llama 3), byte fallback (SentencePiece) or raw: read from the
        # tokenizer.json the way xgrammar reads a transformers tokenizer.
        meta = xgr.TokenizerInfo._detect_metadata_from_hf(tokenizer.to_str())
        info = xgr.TokenizerInfo(
            encoded,
            vocab_type=meta["vocab_type"],
            vocab_size=vocab_size,  # the model's rows: padding ids past the tokenizer are banned
            stop_token_ids=list(stop_token_ids),
            add_prefix_space=meta["add_prefix_space"],
        )
        self.vocab_size = vocab_size
        self.compiler = xgr.GrammarCompiler(info, max_threads=1)
        self._cache: OrderedDict[tuple[str, str], Any] = OrderedDict()

    def compile(self, params: StructuredOutputsParams) -> Any:
        key = (params.kind, params.spec)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        try:
            compiled = self._compile(params)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise GrammarError(f"invalid {params.kind} for structured output: {_clean(exc)}") from None
        self._cache[key] = compiled
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return compiled

    def _compile(self, params: StructuredOutputsParams) -> Any:
        c = self.compiler
        if params.kind == "json_object":
            # OpenAI's json_object: any JSON *object* (the builtin JSON grammar allows arrays).
            return self._compile_schema('{"type": "object"}')
        if params.kind == "json":
            return self._compile_schema(params.spec)
        if params.kind == "regex":
            return c.compile_regex(params.spec)
        if params.kind == "choice":
            # Each choice as an EBNF string literal (JSON string escapes are valid there).
            alternatives = " | ".join(json.dumps(choice) for choice in params.choice or [])
            return c.compile_grammar(f"root ::= {alternatives}")
        return c.compile_grammar(params.spec)

    def _compile_schema(self, schema: str) -> Any:
        try:
            json.loads(schema)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the schema is not JSON: {exc}") from None
        grammar = self.xgr.Grammar.from_json_schema(schema, any_whitespace=False, strict_mode=True)
        # xgrammar 0.2.9 writes the characters of a length-bounded string as [^"\\\r\n],
        # which lets raw control characters through (invalid JSON; tests found "\x14");
        # its unbounded strings exclude \0-\x1f. Give the bounded ones the same class.
        text = str(grammar).replace(_BOUNDED_STRING_CHAR, _JSON_STRING_CHAR)
        return self.compiler.compile_grammar(text)

    def matcher(self, compiled: Any) -> Any:
        # Unbounded rollback: speculative rows advance through drafts, then step back.
        return self.xgr.GrammarMatcher(compiled, max_rollback_tokens=-1)

    def allocate_bitmask(self, rows: int) -> Any:
        return self.xgr.allocate_token_bitmask(rows, self.vocab_size)
