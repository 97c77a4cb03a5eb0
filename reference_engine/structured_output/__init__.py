"""Structured output: constrain sampling to a JSON Schema, a regex, an EBNF grammar or a
fixed set of choices, with xgrammar (the grammar engine vLLM and SGLang use).

- params.py            StructuredOutputsParams (vLLM's name), one constraint per request
- xgrammar_backend.py  compiles constraints against the tokenizer's vocabulary
- manager.py           StructuredOutputManager: per-sequence matchers, the batch's token
                       bitmask applied to the logits, matchers advanced on emitted tokens
"""

from reference_engine.structured_output.params import StructuredOutputsParams

__all__ = ["StructuredOutputsParams"]
