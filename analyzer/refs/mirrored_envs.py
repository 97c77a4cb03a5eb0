"""Env vars a wrapper names after the engine's flags.

A deployment guide's table of `VLLM_MAX_NUM_SEQS`, `VLLM_MAX_MODEL_LEN`, `VLLM_ENFORCE_EAGER`, ...:
none is an env var of the pin, and each is one of the pin's flags (`--max-num-seqs`) in capitals
behind the project's prefix. Those are the settings of the program the guide is about, which hands
them to the engine as flags; the pin cannot judge them, so they are not reported as broken.

One such name proves nothing: `VLLM_ATTENTION_BACKEND` was vLLM's own env var until
`--attention-backend` replaced it, a stale reference the reader must see. So a document needs
several (`_LEAST`), and they must be most of its env vars of that prefix the pin lacks: a page on
removed env vars lists others beside them.
"""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.refs.models import BROKEN, ENV, NOT_CHECKABLE, Finding
from analyzer.refs.pinview import PinView

_PREFIXES = {"vllm": "VLLM_", "sglang": "SGLANG_"}
_LEAST = 3  # distinct names that mirror a flag, in one document
_UNKNOWN = "no env var "  # `resolve._resolve_env`'s note for a name the pin neither lists nor reads


def mirrored_envs(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    # (document, pin) -> each unknown env var of the project's prefix -> the flag it spells ("" if none)
    unknown: dict[tuple[str, str], dict[str, str]] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or f.ref.kind != ENV or f.status != BROKEN or not f.note.startswith(_UNKNOWN):
            continue
        prefix = _PREFIXES.get(pin.project, "")
        name = f.ref.target
        if not prefix or not name.startswith(prefix) or len(name) == len(prefix):
            continue
        flag = "--" + name[len(prefix) :].lower().replace("_", "-")
        unknown.setdefault((f.ref.file, pin.pin), {})[name] = flag if flag in pin.flag_map else ""
    mirrored: dict[tuple[str, str], int] = {}  # (document, pin) -> how many of its env vars mirror a flag
    for key, names in unknown.items():
        count = sum(1 for flag in names.values() if flag)
        if count >= _LEAST and 2 * count > len(names):
            mirrored[key] = count
    for f in findings:
        key = (f.ref.file, f.pin or "")
        spelled = unknown.get(key, {}).get(f.ref.target) if key in mirrored else None
        if spelled and f.status == BROKEN:
            f.status = NOT_CHECKABLE
            f.note = (
                f"{f.note}; like {mirrored[key] - 1} other env vars of this document {f.pin} lacks, it is one of "
                f"its flags in capitals (`{spelled}`): the settings of the program the text is about, not {f.pin}'s"
            )
    return findings
