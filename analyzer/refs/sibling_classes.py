"""A gone class renamed inside its module (issue 12 §3: renames with the same parent first).

`from vllm.config import CompilationConfig, CompilationLevel` at a pin where `vllm.config` still
stands and `CompilationLevel` does not: a class of that module named with the same leading words
and one other last word (`CompilationMode`, `CompilationConfig`) is its new name, unless the
document names that class itself (it writes `CompilationConfig` beside `CompilationLevel`: two
classes). When the document writes the gone class's members in capitals
(`CompilationLevel.PIECEWISE`), it was an enum, and so is its successor. Offered only when exactly
one class is left; with no older pin to compare members, the module and the leading words are the
evidence, so the confidence stays below a git rename's or a member match's. Failing that, the one
class of the module with the old one's last word (`GuidedDecodingParams` -> `StructuredOutputsParams`)
that takes every keyword the text passes to the old class: the same parent and the same signature.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from analyzer.refs.fields import accepts
from analyzer.refs.models import BROKEN, SYMBOL, Finding, Suggestion
from analyzer.refs.pinview import PinView, SymbolEntry

_CAMEL_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
_ENUM_MEMBER_RE = re.compile(r"[A-Z][A-Z0-9_]*")
CONFIDENCE = 0.6
# A class of the module with the gone class's last word that takes every keyword the text
# passes to it: the same parent and the same signature.
SIGNATURE_CONFIDENCE = 0.7


def _defined(entry: SymbolEntry, module: str, pin: PinView) -> SymbolEntry | None:
    """The class a module's member is: itself, or for a re-export the one class of that name
    defined under the module's package."""
    if entry.kind == "class":
        return entry
    if entry.kind != "import":
        return None
    classes = [c for c in pin.table.ending_with(entry.last) if c.kind == "class" and c.full.startswith(module + ".")]
    return classes[0] if len(classes) == 1 else None


def renamed_in_module(target: str, named: set[str], enum: bool, pin: PinView) -> SymbolEntry | None:
    """`pkg.mod.OldName` gone while `pkg.mod` stands: the one class of `pkg.mod` named with
    OldName's leading words and another last word, not among the names the document writes
    (`named`), an enum when the old one was (`enum`)."""
    module, _, name = target.rpartition(".")
    words = _CAMEL_RE.findall(name)
    if not module or not name[:1].isupper() or len(words) < 2 or "".join(words) != name:
        return None
    if not any(e.kind == "module" for e in pin.table.named(module)):
        return None
    head = "".join(words[:-1])
    found: dict[str, SymbolEntry] = {}
    for entry in pin.table.members(module):
        rest = entry.last[len(head):]
        if not entry.last.startswith(head) or entry.last == name or len(_CAMEL_RE.findall(rest)) != 1 or not rest[:1].isupper():
            continue
        cls = _defined(entry, module, pin)
        if cls is None or cls.last in named or (enum and not any("Enum" in b for b in cls.bases)):
            continue
        found[cls.full] = cls
    return next(iter(found.values())) if len(found) == 1 else None


def same_signature(target: str, keywords: set[str], named: set[str], pin: PinView) -> SymbolEntry | None:
    """`vllm.sampling_params.GuidedDecodingParams(choice=...)` gone while `vllm.sampling_params`
    stands: the one class of the module whose name ends with the old one's last word (`...Params`),
    not among the names the document writes, that takes every keyword the text passes to the old
    class (`StructuredOutputsParams` takes `choice`)."""
    module, _, name = target.rpartition(".")
    words = _CAMEL_RE.findall(name)
    if not keywords or not module or len(words) < 2 or not any(e.kind == "module" for e in pin.table.named(module)):
        return None
    found: dict[str, SymbolEntry] = {}
    for entry in pin.table.members(module):
        cls = _defined(entry, module, pin)
        if cls is None or cls.last == name or cls.last in named or _CAMEL_RE.findall(cls.last)[-1:] != words[-1:]:
            continue
        if all(accepts(cls.full, kw, pin) for kw in keywords):
            found[cls.full] = cls
    return next(iter(found.values())) if len(found) == 1 else None


def renamed_siblings(findings: list[Finding], pins: Sequence[PinView], keywords: dict[str, set[str]] | None = None) -> list[Finding]:
    """Put the renamed class first on each broken `pkg.mod.OldName` (see the module's doc); with
    `keywords` (a callee's dotted name -> the keywords the text passes to it), a class of the
    module that takes them (`same_signature`), on the class's other mentions in the document too."""
    by_pin = {p.pin: p for p in pins}
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        by_file.setdefault(f.ref.file, []).append(f)
    for group in by_file.values():
        gone = [f for f in group if f.status == BROKEN and f.ref.kind == SYMBOL and "." in f.ref.target and f.pin in by_pin]
        if not gone:
            continue
        named = {f.ref.target.rsplit(".", 1)[-1] for f in group if f.ref.kind == SYMBOL}
        for f in gone:
            if f.suggestions and f.suggestions[0].confidence >= CONFIDENCE:
                continue
            old = f.ref.target.rsplit(".", 1)[-1]
            enum = any(
                g.ref.target.startswith(old + ".") and _ENUM_MEMBER_RE.fullmatch(g.ref.target.split(".", 2)[1])
                for g in group if g.ref.kind == SYMBOL
            )
            cls = renamed_in_module(f.ref.target, named - {old}, enum, by_pin[f.pin or ""])
            module = f.ref.target.rpartition(".")[0]
            if cls is not None:
                why = f"the one class of `{module}` named `{old}`'s way but for its last word, that the text does not name itself"
                f.suggestions = [Suggestion(cls.full, CONFIDENCE, why, cls.location), *f.suggestions]
                continue
            passed = (keywords or {}).get(f.ref.target, set())
            cls = same_signature(f.ref.target, passed, named - {old}, by_pin[f.pin or ""])
            if cls is None:
                continue
            shown = ", ".join(f"`{k}`" for k in sorted(passed)[:3])
            why = f"the one `...{_CAMEL_RE.findall(old)[-1]}` class of `{module}` that takes what the text passes to `{old}` ({shown})"
            for g in group:
                # The import and the class's bare mentions in the same document are one rename.
                mention = g.status == BROKEN and g.pin == f.pin and g.ref.kind == SYMBOL and g.ref.target in {f.ref.target, old}
                if mention and not (g.suggestions and g.suggestions[0].confidence >= SIGNATURE_CONFIDENCE):
                    g.suggestions = [Suggestion(cls.full, SIGNATURE_CONFIDENCE, why, cls.location), *g.suggestions]
    return findings
