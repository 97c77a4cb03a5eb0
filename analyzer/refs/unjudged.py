"""Broken findings a careful reader would not call broken: positive evidence, in the text or
in the pin, that the string does not cite the pin's code at that place.

Each rule turns a broken finding into not-checkable with the reason (never drops it), so the
report still shows the string and why it was left unjudged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from analyzer.refs.classify import REPO_ONLY_DIRS
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, PATH, SYMBOL, Finding
from analyzer.refs.pinview import PinView, is_native
from analyzer.refs.resolve import package_path
from analyzer.refs.suggest import History

# `Model.forward()`, `Layer.forward()`: one capitalised word as the class.
_ONE_WORD_CLASS_RE = re.compile(r"^[A-Z][a-z]+$")
# A category name stands for its kinds when the project has at least this many of them.
_STAND_IN_KINDS = 3
# Words that tell the reader to make a file rather than open one.
_CREATE_RE = re.compile(r"\b(?:create|creating|add(?:ing)?\s+a\s+new|new\s+file|write\s+a\s+new)\b|创建|新建|新增", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.;!?](?=\s|$)|[。；！？\n]")
# `YourModelForCausalLM`, `MyAttentionBackend`, `my_platform_plugin`: the reader's own name.
_PLACEHOLDER_RE = re.compile(r"_*(?:(?:My|Your)(?=[A-Z])|(?:my|your)_)")
_PART_SPLIT_RE = re.compile(r"[./:]")


def unjudged(findings: list[Finding], pins: Sequence[PinView], histories: dict[str, History] | None = None) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    beside_repo_files = _repo_only_lines(findings, by_pin)
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if f.status != BROKEN or pin is None:
            continue
        history = (histories or {}).get(pin.pin)
        repo_file = beside_repo_files.get((f.ref.file, f.ref.line, pin.pin))
        note = _placeholder(f, history) or _generic_stand_in(f, pin, history) or _file_to_create(f, pin) or (_beside_repo_file(f, pin, repo_file) if repo_file else None)
        if note:
            f.status, f.note, f.suggestions = NOT_CHECKABLE, note, []
    return findings


def _placeholder(f: Finding, history: History | None) -> str | None:
    """`YourModelImageInputs`, `MyMMPlatform`, `my_platform_plugin.device`: a name that says it is the
    reader's ("your", "my") stands for what the reader writes, not for the project's code; a name
    an older pin of the project did define is a real, removed one."""
    ref = f.ref
    if ref.kind != SYMBOL:
        return None  # a file's name (`my_model.py`) is judged as a file: `_file_to_create`
    part = next((p for p in _PART_SPLIT_RE.split(ref.target) if _PLACEHOLDER_RE.match(p)), None)
    if part is None:
        return None
    old = history.old if history is not None else None
    if old is not None and old.find_symbol(ref.target):
        return None
    return f"`{part}` is a placeholder for the reader's own code (named \"my\"/\"your\"), not {f.pin}'s"


def _generic_stand_in(f: Finding, pin: PinView, history: History | None) -> str | None:
    """`Model.forward()` in a summary call chain: no class is called `Model`, but the project has
    many kinds of model (`LlamaModel`, `Qwen2Model`, ...) that define `forward`. One plain word
    standing for a whole category of classes is a placeholder, not a citation of one class; a
    class an older pin of the project did define under that word is a real, removed one."""
    ref = f.ref
    parts = ref.target.split(".")
    if ref.kind != SYMBOL or len(parts) != 2 or not _ONE_WORD_CLASS_RE.match(parts[0]):
        return None
    word, member = parts
    for view in (pin, history.old if history is not None else None):
        if view is not None and any(e.kind == "class" for e in view.find_symbol(word)):
            return None
    kinds = sorted({
        e.parent.rsplit(".", 1)[-1]
        for e in pin.find_symbol(member)
        if e.kind == "function" and e.parent.rsplit(".", 1)[-1].endswith(word) and e.parent.rsplit(".", 1)[-1] != word
    })
    if len(kinds) < _STAND_IN_KINDS:
        return None
    return (f"no class is named `{word}` in {pin.pin}; {len(kinds)} kinds of `{word}` define `{member}` "
            f"(`{kinds[0]}`, `{kinds[1]}`, ...): a generic stand-in, not one class")


def _file_to_create(f: Finding, pin: PinView) -> str | None:
    """"Create a layer in `vllm/model_executor/layers/sonic_moe.py`": the file the text tells the
    reader to write, in a folder the pin has. A file whose folder is gone too is a moved one."""
    ref = f.ref
    if ref.kind != PATH or ref.origin != "inline" or not ref.paragraph:
        return None
    quoted = ref.sentence(_SENTENCE_END_RE)
    if quoted is None or not _CREATE_RE.search(quoted[0]):
        return None
    folder = ref.target.strip("/").rsplit("/", 1)[0]
    path = package_path(folder, pin)
    if path is None or path not in pin.dirs:
        return None
    return f"the file the text tells the reader to create (its folder {folder}/ is in {pin.pin})"


def _repo_only_lines(findings: list[Finding], by_pin: dict[str, PinView]) -> dict[tuple[str, int, str], str]:
    """(document, line, pin) -> a native source named on that line (`csrc/x.cu`) that a wheel pin
    does not hold. Only native sources: a script or an example beside a name (`examples/x.sh`
    beside `P2pNcclConnector`) uses the name; it is not where the name lives."""
    out: dict[tuple[str, int, str], str] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or pin.kind != "release" or f.ref.kind != PATH:
            continue
        target = f.ref.target.strip("/").removeprefix(pin.layout_prefix)
        if is_native(target) and (target.split("/", 1)[0] in REPO_ONLY_DIRS.get(pin.project, ()) or package_path(target, pin) is None):
            out.setdefault((f.ref.file, f.ref.line, pin.pin), f.ref.text)
    return out


def _beside_repo_file(f: Finding, pin: PinView, path: str) -> str | None:
    """`csrc/attention/paged_attention_v2.cu: paged_attention_v2()`: a name the line gives to a
    repository-only source lives in that file, which a wheel does not hold; unjudged there (a
    git pin holds the file and judges both). Only a name the wheel's sources never spell."""
    if f.ref.kind != SYMBOL or "." in f.ref.target or pin.mentions(f.ref.target) is not False:
        return None
    return f"`{f.ref.target}` is named beside {path}, a file the wheel {pin.pin} does not hold (a git pin does)"
