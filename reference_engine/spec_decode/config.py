"""SpeculativeConfig: vLLM's `speculative_config` dict, checked once at engine construction.

    {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}
    {"method": "draft_model", "model": "path/to/small", "num_speculative_tokens": 4}

`draft_length="adaptive"` lets DraftLengthPolicy pick 0..num_speculative_tokens per step
from the batch size and the measured acceptance (see draft_length.py); "fixed" always
proposes num_speculative_tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

METHODS = ("ngram", "draft_model")
DRAFT_LENGTHS = ("fixed", "adaptive")


class SpeculativeConfigError(ValueError):
    """A speculative_config the engine cannot use; the message says why."""


@dataclass(slots=True)
class SpeculativeConfig:
    method: str = "ngram"
    num_speculative_tokens: int = 4  # the most draft tokens per sequence per step
    prompt_lookup_max: int = 4  # n-gram: longest suffix matched
    prompt_lookup_min: int = 1  # n-gram: shortest suffix matched
    model: str | None = None  # draft_model: a checkpoint folder sharing the target's tokenizer
    num_draft_blocks: int | None = None  # draft_model: its KV pool (None: the target's size)
    draft_length: str = "fixed"  # "fixed" | "adaptive"
    # ngram: > 1 proposes a token tree of up to this many distinct continuations, each up
    # to num_speculative_tokens deep, verified at once with tree attention (tree.py).
    tree_width: int = 1

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise SpeculativeConfigError(
                f"speculative method must be one of {', '.join(METHODS)}, got {self.method!r}"
            )
        if self.num_speculative_tokens < 1:
            raise SpeculativeConfigError("num_speculative_tokens must be at least 1")
        if not 1 <= self.prompt_lookup_min <= self.prompt_lookup_max:
            raise SpeculativeConfigError(
                "need 1 <= prompt_lookup_min <= prompt_lookup_max, got "
                f"{self.prompt_lookup_min} and {self.prompt_lookup_max}"
            )
        if self.method == "draft_model" and not self.model:
            raise SpeculativeConfigError("method 'draft_model' needs 'model': the draft checkpoint")
        if self.tree_width < 1:
            raise SpeculativeConfigError("tree_width must be at least 1")
        if self.tree_width > 1 and self.method != "ngram":
            raise SpeculativeConfigError("tree drafts (tree_width > 1) are implemented for ngram only")
        if self.draft_length not in DRAFT_LENGTHS:
            raise SpeculativeConfigError(
                f"draft_length must be fixed or adaptive, got {self.draft_length!r}"
            )

    @classmethod
    def from_value(
        cls, value: SpeculativeConfig | dict[str, Any] | None
    ) -> SpeculativeConfig | None:
        if value is None or isinstance(value, SpeculativeConfig):
            return value
        if not isinstance(value, dict):
            raise SpeculativeConfigError(f"speculative_config must be a dict, got {type(value)}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise SpeculativeConfigError(
                f"unknown speculative_config keys {unknown}; known: {sorted(known)}"
            )
        raw = dict(value)
        if "method" not in raw and raw.get("model"):
            raw["method"] = "draft_model"  # vLLM infers the draft-model method from `model`
        return cls(**raw)
