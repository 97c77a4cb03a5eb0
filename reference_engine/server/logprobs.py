"""Engine logprobs ({token_id: Logprob} per position) in the two OpenAI layouts."""

from __future__ import annotations

import math
from typing import Any

# JSON has no -Infinity; clients expect a number, so masked tokens get a very negative one.
_FLOOR = -9999.0


class TokenText:
    """Token id -> its text, cached (a vocabulary is finite; decoding one id is not free)."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._cache: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        text = self._cache.get(token_id)
        if text is None:
            text = self._tokenizer.decode([token_id], skip_special_tokens=False)
            self._cache[token_id] = text
        return text


def _lp(value: float) -> float:
    return value if math.isfinite(value) else _FLOOR


def _top(entry: dict[int, Any], num: int) -> list[tuple[int, float]]:
    ranked = sorted(entry.items(), key=lambda kv: kv[1].rank)
    return [(tid, _lp(lp.logprob)) for tid, lp in ranked if lp.rank <= num][:num]


def completion_logprobs(
    token_ids: list[int],
    entries: list[Any],
    num: int,
    text_of: TokenText,
    start_offset: int,
) -> dict[str, Any]:
    """The legacy completions layout; `start_offset` is where these tokens' text begins."""
    tokens: list[str] = []
    token_logprobs: list[float] = []
    top_logprobs: list[dict[str, float]] = []
    offsets: list[int] = []
    offset = start_offset
    for tid, entry in zip(token_ids, entries, strict=False):
        text = text_of(tid)
        tokens.append(text)
        token_logprobs.append(_lp(entry[tid].logprob))
        top_logprobs.append({text_of(t): lp for t, lp in _top(entry, num)})
        offsets.append(offset)
        offset += len(text)
    return {
        "tokens": tokens,
        "token_logprobs": token_logprobs,
        "top_logprobs": top_logprobs,
        "text_offset": offsets,
    }


def chat_logprobs(
    token_ids: list[int], entries: list[Any], num: int, text_of: TokenText
) -> dict[str, Any]:
    content = []
    for tid, entry in zip(token_ids, entries, strict=False):
        text = text_of(tid)
        content.append(
            {
                "token": text,
                "logprob": _lp(entry[tid].logprob),
                "bytes": list(text.encode("utf-8")),
                "top_logprobs": [
                    {"token": text_of(t), "logprob": lp, "bytes": list(text_of(t).encode("utf-8"))}
                    for t, lp in _top(entry, num)
                ],
            }
        )
    return {"content": content, "refusal": None}
