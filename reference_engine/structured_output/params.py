"""StructuredOutputsParams: what a request's output must match (vLLM's SamplingParams
`structured_outputs`; its older name was `guided_decoding`). Exactly one field is set."""

from __future__ import annotations

import json as _json
from dataclasses import dataclass, field
from typing import Any

KINDS = ("json", "regex", "choice", "grammar", "json_object")


@dataclass(slots=True)
class StructuredOutputsParams:
    json: str | dict[str, Any] | None = None  # a JSON Schema (dict or its JSON text)
    regex: str | None = None
    choice: list[str] | None = None  # the output is exactly one of these strings
    grammar: str | None = None  # EBNF (xgrammar's GBNF dialect), `root` is the start rule
    json_object: bool = False  # any JSON object (OpenAI's response_format json_object)
    _key: tuple[str, str] = field(default=("", ""), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_fields = [k for k in KINDS if getattr(self, k) not in (None, False)]
        if len(set_fields) != 1:
            raise ValueError(
                "structured output needs exactly one of json, regex, choice, grammar or "
                f"json_object; got {set_fields or 'none'}"
            )
        kind = set_fields[0]
        if kind == "choice" and (
            not self.choice or not all(isinstance(c, str) and c for c in self.choice)
        ):
            raise ValueError("choice must be a non-empty list of non-empty strings")
        if kind == "json" and isinstance(self.json, dict):
            spec = _json.dumps(self.json)  # key order kept: it is the order generated
        elif kind == "choice":
            spec = _json.dumps(self.choice)
        else:
            spec = str(getattr(self, kind))
        self._key = (kind, spec)

    @property
    def kind(self) -> str:
        return self._key[0]

    @property
    def spec(self) -> str:
        """The constraint as text (a schema as JSON, choices as a JSON list)."""
        return self._key[1]
