"""A name the text itself says is a package to install.

"Requires `SpargeAttn`", "needs `sageattention` installed", "depends on `flashinfer`": the sentence
names something the reader installs beside the project, a dependency, not one of the project's own
names; a pin that does not define it proves nothing. A reader does not report it; the finding
stays, not-checkable with the reason. Only the words right before the name count, so "requires
calling `init_cache()` first" (a call the project must have) is still judged.
"""

from __future__ import annotations

import re

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, SYMBOL, Finding

# Right before the name: "Requires `X`", "requires the `X` package", "pip install `X`".
_REQUIRED_BEFORE_RE = re.compile(
    r"(?:\brequires?|\bneeds?|\bdepends\s+on|\bpip\s+install|\binstall)\s+(?:the\s+)?`?$", re.IGNORECASE
)
_SENTENCE_END_RE = re.compile(r"[.;!?](?=\s|$)|[。；！？]|\|")


def said_required(findings: list[Finding]) -> list[Finding]:
    for f in findings:
        if f.status != BROKEN or f.ref.kind != SYMBOL or f.ref.origin != "inline" or not f.ref.paragraph:
            continue
        quoted = f.ref.sentence(_SENTENCE_END_RE)
        if quoted is not None and _REQUIRED_BEFORE_RE.search(quoted[0][: quoted[1]]):
            f.status, f.suggestions = NOT_CHECKABLE, []
            f.note = f"the text says `{f.ref.text}` is a package to install; {f.note}"
    return findings
