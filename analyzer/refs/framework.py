"""Which project a reference belongs to, judged from the prose around it.

Order of evidence: the reference's own text (decided in `classify.py`), then the
sentence it sits in (nearest mention before it, then after it), the other
references of the same block, the whole block, the enclosing headings. When
the evidence names both projects or neither, the answer is "ambiguous" and the
checker tries every pin.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.refs.models import AMBIGUOUS

# `nano-vllm` / `mini-sglang` are other projects: the look-behind keeps them out. ASCII word
# characters only: Chinese prose writes the name against its words ("vLLM的Scheduler").
_MENTION_RE = re.compile(r"(?<![A-Za-z0-9_-])(vllm|sglang)(?![A-Za-z0-9_-])", re.IGNORECASE)
# Words that only one project uses for its own parts.
VOCABULARY = {
    "vllm": ("PagedAttention", "EngineCore", "KVCacheManager", "BlockPool", "AsyncLLM", "vllm serve", "GPUModelRunner"),
    "sglang": ("RadixCache", "RadixAttention", "ScheduleBatch", "TokenizerManager", "launch_server", "srt/", "ModelWorkerBatch", "ForwardBatch"),
}
_BOTH_RE = re.compile(r"\b(both|either)\s+(engines|projects|frameworks|systems|servers)\b", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.;!?](?:\s|$)|[。；！？]|\n\s*\n")
_ATLAS_COMMENT_RE = re.compile(r"<!--\s*atlas:[^>]*?\brepo=(?P<repo>[\w.-]+/[\w.-]+)")
_REPOS = {"vllm-project/vllm": "vllm", "sgl-project/sglang": "sglang"}


@dataclass(frozen=True, slots=True)
class Decision:
    framework: str
    reason: str


def mentions(text: str) -> list[tuple[int, str]]:
    """(offset, framework) of every explicit project name in prose."""
    found = [(m.start(), m.group(1).lower()) for m in _MENTION_RE.finditer(text)]
    for framework, words in VOCABULARY.items():
        for word in words:
            start = text.find(word)
            while start >= 0:
                found.append((start, framework))
                start = text.find(word, start + 1)
    return sorted(found)


def document_project(source: str) -> tuple[str | None, str]:
    """The project a whole document is about: what its `<!-- atlas: repo=... -->` comment
    says, else the project its text names at least three times as often as the other."""
    m = _ATLAS_COMMENT_RE.search(source)
    if m and m.group("repo") in _REPOS:
        return _REPOS[m.group("repo")], f"the document belongs to {m.group('repo')}"
    counts = {"vllm": 0, "sglang": 0}
    for _, fw in mentions(source):
        counts[fw] += 1
    top, other = sorted(counts, key=lambda fw: -counts[fw])
    if counts[top] >= 3 and counts[top] >= 3 * counts[other]:
        return top, f"the document is about {top} ({counts[top]} mentions, {counts[other]} of {other})"
    return None, ""


def _single(frameworks: set[str]) -> str | None:
    return next(iter(frameworks)) if len(frameworks) == 1 else None


def _otherwise(chosen: str, headings: Sequence[str], document: tuple[str | None, str]) -> str:
    """`; the section is about sglang`: the project the section's heading, else the document,
    would have given a reference its sentence gives another one only by naming it after the
    name (`docproject.weak_mentions` reads it); "" when they agree or say nothing."""
    for heading in reversed(headings):
        named = {fw for _, fw in mentions(heading)}
        if (one := _single(named)) is not None:
            return f"; the section is about {one}" if one != chosen else ""
        if named:
            return ""
    return f"; the document is about {document[0]}" if document[0] not in (None, chosen) else ""


def decide(
    own: str | None,
    own_reason: str,
    block: str,
    offset: int,
    siblings: Sequence[str | None],
    headings: Sequence[str],
    length: int = 0,
    document: tuple[str | None, str] = (None, ""),
) -> Decision:
    """Decide a reference's framework.

    own: the framework its text implies (path prefix, env prefix, ...), if any;
    block/offset/length: the paragraph (or list item, table cell) and where the reference sits in it;
    siblings: text-implied frameworks of the other references in the same block;
    headings: enclosing heading texts, outermost first;
    document: the project the whole document is about, when one is (see `document_project`).
    """
    if own is not None:
        return Decision(own, own_reason or "text")
    found = mentions(block)
    # The sentence holding the reference.
    start = 0
    for m in _SENTENCE_END_RE.finditer(block, 0, offset):
        start = m.end()
    end_m = _SENTENCE_END_RE.search(block, offset)
    end = end_m.start() if end_m else len(block)
    if _BOTH_RE.search(block, start, end):
        return Decision(AMBIGUOUS, "the sentence speaks of both projects")
    if found:
        # The reference's own text first: `RadixAttention` is SGLang's word even in
        # "replace vLLM's `Attention` with `RadixAttention`".
        own_words = {fw for pos, fw in found if offset <= pos < offset + length}
        if (one := _single(own_words)) is not None:
            return Decision(one, "project vocabulary")
        before = [fw for pos, fw in found if start <= pos < offset]
        if before:
            return Decision(before[-1], "named earlier in the sentence")
        after = {fw for pos, fw in found if offset + length <= pos < end}
        if (one := _single(after)) is not None:
            return Decision(one, "named in the sentence" + _otherwise(one, headings, document))
    if (one := _single({s for s in siblings if s})) is not None:
        return Decision(one, "other references in the same block")
    if found and (one := _single({fw for _, fw in found})) is not None:
        later = all(pos >= offset + length for pos, _ in found)  # named only after it: in passing
        return Decision(one, "named in the paragraph" + (_otherwise(one, headings, document) if later else ""))
    for heading in reversed(headings):
        in_heading = {fw for _, fw in mentions(heading)}
        if (one := _single(in_heading)) is not None:
            return Decision(one, f"section {heading!r}")
        if in_heading:
            break  # a heading naming both projects settles nothing further up
    named = sorted({fw for _, fw in found})
    if document[0] is not None and (not named or named == [document[0]]):
        return Decision(document[0], document[1])
    why = f"block names {' and '.join(named)}" if named else "no project named nearby"
    return Decision(AMBIGUOUS, why)
