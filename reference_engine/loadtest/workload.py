"""What to send: synthetic prompts, or a JSONL file of {"prompt", "max_tokens"} lines."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

# A fixed word list keeps synthetic prompts readable and tokenizer-agnostic: the load
# generator does not know the server's vocabulary, so it sends text, not token ids.
_WORDS = [
    "batch",
    "block",
    "cache",
    "chunk",
    "decode",
    "engine",
    "token",
    "prefill",
    "queue",
    "request",
    "schedule",
    "sample",
    "latency",
    "memory",
    "page",
    "radix",
    "prefix",
    "kernel",
    "tensor",
    "stream",
    "model",
    "layer",
    "head",
    "value",
    "key",
    "throughput",
    "budget",
    "preempt",
    "swap",
    "fork",
    "tree",
    "hash",
    "step",
    "graph",
    "server",
    "client",
]


class WorkloadError(ValueError):
    """A workload file or setting that cannot be used; the message says where and why."""


@dataclass(frozen=True, slots=True)
class LoadRequest:
    prompt: str
    max_tokens: int


def synthetic_workload(
    num: int,
    prompt_words: tuple[int, int],
    output_tokens: tuple[int, int],
    seed: int = 0,
    shared_prefix_words: int = 0,
) -> list[LoadRequest]:
    """Random prompts; with `shared_prefix_words` every prompt starts with the same words (a
    system prompt, what prefix caching saves), the rest as without it."""
    for lo, hi, what in (*prompt_words, "prompt words"), (*output_tokens, "output tokens"):
        if lo < 1 or hi < lo:
            raise WorkloadError(f"{what}: need 1 <= min <= max, got {lo}..{hi}")
    if num < 1:
        raise WorkloadError(f"the workload needs at least one request, got {num}")
    if shared_prefix_words < 0:
        raise WorkloadError(f"shared prefix words must be >= 0, got {shared_prefix_words}")
    prefix_rng = random.Random(f"prefix-{seed}")  # its own stream: the rest is unchanged
    prefix = [prefix_rng.choice(_WORDS) for _ in range(shared_prefix_words)]
    rng = random.Random(seed)
    reqs = []
    for _ in range(num):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(*prompt_words))]
        reqs.append(LoadRequest(" ".join(prefix + words), rng.randint(*output_tokens)))
    return reqs


def load_jsonl(path: Path, default_max_tokens: int = 64) -> list[LoadRequest]:
    """One JSON object per line: {"prompt": str, "max_tokens": int (optional)}."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"cannot read {path}: {exc}") from None
    reqs = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise WorkloadError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(item, dict) or not isinstance(item.get("prompt"), str):
            raise WorkloadError(f'{path}:{number}: expected an object with a string "prompt"')
        max_tokens = item.get("max_tokens", default_max_tokens)
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise WorkloadError(f"{path}:{number}: max_tokens must be a positive integer")
        reqs.append(LoadRequest(item["prompt"], max_tokens))
    if not reqs:
        raise WorkloadError(f"{path} holds no requests")
    return reqs
