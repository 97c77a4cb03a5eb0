"""A bare file name that moved deeper inside the folder the document is about.

`cutlass_moe.py` in a page on `vllm/model_executor/layers/fused_moe/fused_moe.py`: a file of that
name exists at the pin (`fused_moe/experts/cutlass_moe.py`), so the name alone resolves, but the
page means the file beside the one it cites in full, and a past release had it there
(`vllm.model_executor.layers.fused_moe.cutlass_moe`). A careful editor reads the bare name in the
document's folder: gone from it, with the pin's file of that name under that folder as its home.
Only the past releases' evidence (the lineage) says the file was in the folder, so a name the
document merely shares with a file elsewhere is never judged so.

Plain findings in, the same findings out (verdicts and homes set in place); run after the passes
that settle verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from analyzer.refs.lineage import Lineage, past_names
from analyzer.refs.models import BROKEN, OK, PATH, Finding, Suggestion
from analyzer.refs.pinview import PinView

_HOME_CONFIDENCE = 0.7


def moved_within_the_documents_folder(findings: list[Finding], pins: Sequence[PinView], lineages: Mapping[str, Lineage]) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    folders: dict[tuple[str, str | None], set[str]] = {}  # (document, pin) -> the folders it cites, and those of its files
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or f.ref.kind != PATH or f.ref.bare_file or f.status != OK or not f.resolved_at:
            continue
        place = f.resolved_at.split(":", 1)[0].rstrip("/")
        folder = place if place in pin.dirs else place.rsplit("/", 1)[0] if place.endswith(".py") else None
        if folder:
            folders.setdefault((f.ref.file, f.pin), set()).add(folder)
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or f.ref.kind != PATH or not f.ref.bare_file or f.status != OK or not f.ref.target.endswith(".py"):
            continue
        name = f.ref.target
        cited = sorted(folders.get((f.ref.file, f.pin), set()))
        if any(pin.has_path(f"{folder}/{name}") for folder in cited):
            continue  # it is still beside a file the document cites
        past = {n.full for n in past_names(name.removesuffix(".py"), pin.project, lineages) if n.kind == "module"}
        for folder in cited:
            if f"{folder.replace('/', '.')}.{name.removesuffix('.py')}" not in past:
                continue
            under = [p for p in pin.files_named(name) if p.startswith(f"{folder}/")]
            f.status = BROKEN
            f.note = f"no {name} in {folder}/, the folder of the files the document cites, where a past release kept it"
            if len(under) == 1:
                f.note += f"; it is {under[0]} now"
                f.suggestions = [Suggestion(under[0], _HOME_CONFIDENCE, f"the one {name} under {folder}/", None)]
            else:
                f.suggestions = []
            break
    return findings
