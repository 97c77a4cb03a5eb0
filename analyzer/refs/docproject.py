"""The project of a document, read from what its references resolve to.

The text decides a reference's project from its sentence, its section, then the document's
own words (`framework.py`). A page that names its project only in a title left outside the
excerpt (a vLLM configuration reference starting at its section 2) leaves every flag
"ambiguous": each one is tried on both projects, and one defined in neither is reported against
whichever pin offers the closer replacement, so gone flags of the same page were judged against
SGLang or vLLM flag by flag. A reader decides once per document: when every reference of it that
resolves resolves in one project only, the document is that project's, and a reference the text
left ambiguous that resolves in neither is judged against that project alone. A document that
cites both projects (a comparison) is read by the references its text left ambiguous alone.

A document about one project that names the other only in passing ("... the ancestor of today's
`new_token_ratio`, the opposite of vLLM's approach"), after the names of its sentence or
paragraph, gives those names the other project (`framework.decide`); one that resolves nowhere
there is judged as its section's or document's project's (`weak_mentions`). The two stages
speak through the decision's reason (`framework._otherwise` writes it, `_WEAK_RE` reads it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from analyzer.refs.models import AMBIGUOUS, OK, Finding, Reference

# Fewer resolving references than this say nothing about a whole document.
MIN_EVIDENCE = 3
# A project the text gave a reference by a mention that follows it, with the one its section or
# document would have given (`framework._otherwise`).
_WEAK_RE = re.compile(r"named in the (?P<span>sentence|paragraph); the (?P<where>section|document) is about (?P<project>vllm|sglang)")

Checked = tuple[Reference, list[Finding]]


def resolved_projects(ref: Reference, findings: Sequence[Finding]) -> set[str]:
    """The projects a reference resolves in (its findings that are ok)."""
    return {f.framework or ref.framework for f in findings if f.status == OK and (f.framework or ref.framework) != AMBIGUOUS}


def document_projects(checked: Sequence[Checked]) -> dict[str, tuple[str, int]]:
    """file -> (project, how many references resolve there) for every document whose resolving
    references all resolve in that one project (a name both projects define says nothing), with at
    least `MIN_EVIDENCE` of them; documents that resolve in both projects are left out, unless
    the references the text left ambiguous all resolve in one (an SGLang note whose comparison
    table cites vLLM's classes under a vLLM column: its own unattributed names are SGLang's)."""
    every: dict[str, dict[str, int]] = {}
    unattributed: dict[str, dict[str, int]] = {}
    for ref, findings in checked:
        projects = resolved_projects(ref, findings)
        if len(projects) == 1:
            project = next(iter(projects))
            for seen in (every, unattributed) if ref.framework == AMBIGUOUS else (every,):
                counts = seen.setdefault(ref.file, {})
                counts[project] = counts.get(project, 0) + 1
    out = {}
    for seen in (unattributed, every):  # the whole document's references first
        for file, counts in seen.items():
            if len(counts) == 1 and (n := next(iter(counts.values()))) >= MIN_EVIDENCE:
                out[file] = (next(iter(counts)), n)
    return out


def settle_by_document(checked: list[Checked], recheck: Callable[[Reference], list[Finding]]) -> list[Checked]:
    """Re-judge, against its document's project (see `document_projects`), every reference the
    text left ambiguous and no pin resolved."""
    projects = document_projects(checked)
    if not projects:
        return checked
    out: list[Checked] = []
    for ref, findings in checked:
        doc = projects.get(ref.file)
        # (One with no finding too: a `self.x` judged by spelling is left alone while its project is unknown.)
        if doc is None or ref.framework != AMBIGUOUS or resolved_projects(ref, findings):
            out.append((ref, findings))
            continue
        project, n = doc
        why = f"{ref.framework_reason}; every reference of the document that resolves is {project}'s ({n})"
        placed = replace(ref, framework=project, framework_reason=why)
        out.append((placed, recheck(placed)))
    return out


def weak_mentions(checked: list[Checked], recheck: Callable[[Reference], list[Finding]]) -> list[Checked]:
    """Re-judge against its section's or document's project a reference given the other project
    only by a mention after it in its sentence or paragraph, that no pin of that project
    resolves."""
    out: list[Checked] = []
    for ref, findings in checked:
        m = _WEAK_RE.fullmatch(ref.framework_reason)
        if m is None or ref.framework in (m.group("project"), AMBIGUOUS) or any(f.status == OK for f in findings):
            out.append((ref, findings))
            continue
        project = m.group("project")
        why = f"the {m.group('where')} is about {project}; {ref.framework} is only named after it in the {m.group('span')}"
        placed = replace(ref, framework=project, framework_reason=why)
        out.append((placed, recheck(placed)))
    return out
