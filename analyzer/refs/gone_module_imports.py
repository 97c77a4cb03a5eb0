"""A name imported from a module that is gone, where the project still defines the name.

`from vllm.inputs.data import StreamingInput` at a pin without `vllm/inputs/data.py`, whose
`StreamingInput` now lives in `vllm.engine.protocol`: the line is one fix, the module's path. The
module's own reference says so (broken), and its home is where the names it imports are imported
from now (the nearest package above their module that re-exports them, else that module); the
imported name is the project's, so it is not reported a second time. A name the pin defines
nowhere stays broken. Plain findings in, the same findings out (verdicts and homes set in
place); run after the passes that settle verdicts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from analyzer.refs.models import BROKEN, OK, SYMBOL, Finding, Suggestion
from analyzer.refs.pinview import PinView
from analyzer.refs.symbols import SymbolEntry

_HOME_CONFIDENCE = 0.7


def imported_from_gone_modules(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    # (file, pin, module) -> its gone findings by line: a parenthesised import names its module
    # on the `from` line and its names on the lines below.
    modules: dict[tuple[str, str | None, str], list[Finding]] = defaultdict(list)
    for f in findings:
        if _is_import(f) and f.status == BROKEN and f.ref.text == f.ref.target:
            modules[(f.ref.file, f.pin, f.ref.target)].append(f)
    homes: dict[int, set[str]] = defaultdict(set)  # id(module finding) -> modules its names live in
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or f.status != BROKEN or not _is_import(f) or f.ref.text == f.ref.target:
            continue
        module, _, name = f.ref.target.rpartition(".")
        gone = max((m for m in modules.get((f.ref.file, f.pin, module), []) if m.ref.line <= f.ref.line), key=lambda m: m.ref.line, default=None)
        if gone is None or f.ref.text != name:
            continue
        entries = [e for e in pin.find_symbol(name) if e.last == name and _at_module_level(e)]
        defined = sorted({e.parent for e in entries if e.kind in {"class", "function"}})
        if not defined:
            continue
        f.status, f.suggestions = OK, []
        f.note = f"`{name}` is {pin.pin}'s (`{defined[0]}.{name}`); the module it is imported from is gone (said on `{module}`)"
        # The nearest package above its module that re-exports it (`vllm.inputs` for `vllm.inputs.llm`'s
        # `TokensPrompt`, not `vllm`) is where a reader imports it from; else the module itself.
        exported = sorted({e.parent for e in entries if e.kind == "import" and len(defined) == 1 and defined[0].startswith(f"{e.parent}.")}, key=len)
        homes[id(gone)].add(exported[-1] if exported else defined[0] if len(defined) == 1 else "")
    for gone in (m for found in modules.values() for m in found):
        where = homes.get(id(gone), set())
        if len(where) == 1 and "" not in where and (gone.best is None or gone.best.confidence < _HOME_CONFIDENCE):
            home = next(iter(where))
            gone.suggestions = [Suggestion(home, _HOME_CONFIDENCE, "where the names it imports are defined or re-exported now", None), *gone.suggestions]
    return findings


def _is_import(f: Finding) -> bool:
    return f.ref.kind == SYMBOL and f.ref.framework_reason == "import" and "." in f.ref.target


def _at_module_level(entry: SymbolEntry) -> bool:
    """A top-level definition: its parent is the module its file is (`vllm/engine/protocol.py`)."""
    module = entry.path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return entry.parent == module
