"""Modules a guide shows the reader how to write, imported elsewhere in the same guide.

An add-a-model guide heads a snippet with the file it goes in (`# python/sglang/multimodal_gen/
configs/models/dits/mymodel.py` over `class MyModelDitConfig`); `check.py` already leaves such a
path alone when its folder exists and the pin lacks the snippet's code (`Reference.writes`). A
later snippet of the guide imports from it (`from sglang.multimodal_gen.configs.models.dits.mymodel
import MyModelDitConfig`): that module is the reader's new file too, by the guide's own word, so
a pin without it says nothing. Such findings become not-checkable with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, PATH, SYMBOL, Finding, Reference


def written_modules(checked: Sequence[tuple[Reference, list[Finding]]], packages: set[str]) -> dict[str, dict[str, int]]:
    """file -> {dotted module: line} of the new files each document shows the reader how to
    write (a path heading a snippet that nothing judged: see `check._new_file`)."""
    out: dict[str, dict[str, int]] = {}
    for ref, found in checked:
        if ref.kind != PATH or ref.writes is None or found or not ref.target.endswith(".py"):
            continue
        parts = ref.target.strip("/").removesuffix(".py").removesuffix("/__init__").split("/")
        starts = [i for i, p in enumerate(parts) if p in packages]
        if starts:
            out.setdefault(ref.file, {})[".".join(parts[starts[0] :])] = ref.line
    return out


def readers_modules(findings: list[Finding], written: dict[str, dict[str, int]]) -> list[Finding]:
    for f in findings:
        modules = written.get(f.ref.file)
        if not modules or f.status != BROKEN or f.ref.kind != SYMBOL:
            continue
        target = f.ref.target
        module = next((m for m in modules if target == m or target.startswith(m + ".")), None)
        if module is not None:
            f.status, f.suggestions = NOT_CHECKABLE, []
            f.note = f"`{module}` is the module the document shows the reader how to write (line {modules[module]}); {f.note}"
    return findings
