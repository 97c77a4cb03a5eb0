"""A name the text itself says is gone.

"The legacy `sglang.jit_kernel` package has been **removed**", "it replaced the former
`MultiPlatformOp`", "There is no separate `VideoPipelineConfig` base class": the sentence states that the name no
longer exists, so a pin that lacks it proves the text right, not stale. A reader does not report it;
the finding stays, not-checkable with the reason. Only statements of absence count: a deprecated
name ("deprecated, use `--x`") is still offered to the reader, and "use `A` instead of `B`" may
be the stale advice itself. Left to the reader's judgement, and judged: "`X` is gone" (an author
may be listing what went stale) and "`A`, not `B`" (`B` may be a misspelling to report).
"""

from __future__ import annotations

import re

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, Finding

# After the name, in its clause (up to three words between: "`x` package has been removed").
_GONE_AFTER_RE = re.compile(
    r"^`?(?:\s+[\w-]+){0,3}\s+(?:has|have|had)\s+been\s+\W*(?:removed|deleted|dropped)\b"
    r"|^`?(?:\s+[\w-]+){0,3}\s+(?:was|were)\s+\W*(?:removed|deleted)\b"
    r"|^`?(?:\s+[\w-]+){0,3}\s+no\s+longer\s+exists?\b"
    # "The `--rope-scaling` parameter used in older versions of vLLM is no longer supported."
    r"|^`?(?:\s+[\w-]+){0,8}\s+(?:is|are)\s+no\s+longer\s+(?:supported|available)\b"
    # "老版本的 `dummy_hf` 在 0.28.0 已被移除": 已 ("already") makes it a statement of absence; a
    # plain 被移除 ("is removed from the tree") describes what the code does.
    r"|^`?[^。；！？`]{0,20}?已(?:经)?被?(?:移除|删除|删掉|去掉)|^`?[^。；！？`]{0,20}?不再存在",
    re.IGNORECASE,
)
# Right before the name: "the former `X`", "there is no (separate) `X`".
_GONE_BEFORE_RE = re.compile(r"(?:\bformer|\bthere\s+(?:is|are)\s+no(?:\s+separate)?)\s*`?$", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.;!?](?=\s|$)|[。；！？]")


def said_gone(findings: list[Finding]) -> list[Finding]:
    for f in findings:
        if f.status != BROKEN or f.ref.origin != "inline" or not f.ref.paragraph:
            continue
        quoted = f.ref.sentence(_SENTENCE_END_RE)
        if quoted is None:
            continue
        sentence, at = quoted
        before, after = sentence[:at], sentence[at + len(f.ref.text) + 2 :]
        if _GONE_AFTER_RE.search(after) or _GONE_BEFORE_RE.search(before):
            f.status, f.suggestions = NOT_CHECKABLE, []
            f.note = f"the text itself says `{f.ref.text}` is gone; {f.note}"
    return findings
