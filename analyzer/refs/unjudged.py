"""Broken findings a careful reader would not call broken: positive evidence, in the text or
in the pin, that the string does not cite the pin's code at that place.

Each rule turns a broken finding into not-checkable with the reason (never drops it), so the
report still shows the string and why it was left unjudged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from analyzer.refs.classify import REPO_ONLY_DIRS
from analyzer.refs.lineage import Lineage
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


def unjudged(
    findings: list[Finding], pins: Sequence[PinView], histories: dict[str, History] | None = None, lineages: Mapping[str, Lineage] | None = None
) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    beside_repo_files = _repo_only_lines(findings, by_pin)
    own_folders = _authors_folders(findings, by_pin)
    # A name a line places in a file outside the wheel is that file's on the document's other lines too.
    placed: dict[tuple[str, str, str], str] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if f.status != BROKEN or pin is None:
            continue
        history = (histories or {}).get(pin.pin)
        repo_file = beside_repo_files.get((f.ref.file, f.ref.line, pin.pin))
        beside = _beside_repo_file(f, pin, repo_file) if repo_file else None
        if beside:
            placed.setdefault((f.ref.file, f.ref.target, pin.pin), f"{beside} (line {f.ref.line})")
        note = _placeholder(f, history) or _generic_stand_in(f, pin, history) or _file_to_create(f, pin) or beside or _authors_script(f, pin, own_folders, (lineages or {}).get(pin.project, {}))
        if note:
            f.status, f.note, f.suggestions = NOT_CHECKABLE, note, []
    for f in findings:
        note = placed.get((f.ref.file, f.ref.target, f.pin or "")) if f.status == BROKEN and f.ref.kind == SYMBOL else None
        if note:
            f.status, f.note, f.suggestions = NOT_CHECKABLE, note, []
    return findings


# Scripts a document names under one folder of its own before it names others there bare.
_OWN_SCRIPTS = 2


def _authors_folders(findings: list[Finding], by_pin: dict[str, PinView]) -> dict[tuple[str, str], str]:
    """(document, pin) -> a top folder, neither the package's nor one of the project's
    repository (`scripts/` beside vLLM), under which the document names two Python scripts or
    more: the author's own repository (a lab manual's `scripts/common.py`, `scripts/bench.py`)."""
    seen: dict[tuple[str, str, str], set[str]] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or f.ref.kind != PATH or f.status != NOT_CHECKABLE or not f.ref.target.endswith(".py"):
            continue
        top, _, rest = f.ref.target.strip("/").partition("/")
        if rest and top not in REPO_ONLY_DIRS.get(pin.project, ()) and top not in pin.packages and package_path(f.ref.target, pin) is None:
            seen.setdefault((f.ref.file, pin.pin, top), set()).add(rest)
    return {(doc, pin): top for (doc, pin, top), files in seen.items() if len(files) >= _OWN_SCRIPTS}


def _authors_script(f: Finding, pin: PinView, own: dict[tuple[str, str], str], lineage: Lineage) -> str | None:
    """`run_vllm.py` in a text that names `scripts/common.py` and `scripts/bench.py`: a script
    no file of the wheel is named as, nor a module of a past release, one of the author's own
    beside those."""
    folder = own.get((f.ref.file, pin.pin))
    if folder is None or f.ref.kind != PATH or "/" in f.ref.target.strip("/") or not f.ref.target.endswith(".py") or pin.files_named(f.ref.target):
        return None
    if any(p.kind == "module" for p in lineage.get(f.ref.target.removesuffix(".py"), ())):
        return None  # `block_manager_v2.py`: the project's, gone
    return f"`{f.ref.text}`: no file of {pin.pin} has that name, and the text names its own scripts under `{folder}/`, a folder of no project"


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


def _repo_only_lines(findings: list[Finding], by_pin: dict[str, PinView]) -> dict[tuple[str, int, str], tuple[str, int | None]]:
    """(document, line, pin) -> a source named on that line that a wheel pin does not hold, and,
    for a Python script, its column. A native source (`csrc/x.cu`) anywhere on the line; a Python
    script outside the package (`scripts/common.py`, the repository's or the author's own) only
    before the name: a script or an example beside a name (`examples/x.sh` beside
    `P2pNcclConnector`) may use the name; it is not where the name lives."""
    out: dict[tuple[str, int, str], tuple[str, int | None]] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or pin.kind != "release" or f.ref.kind != PATH:
            continue
        target = f.ref.target.strip("/").removeprefix(pin.layout_prefix)
        if is_native(target) and (target.split("/", 1)[0] in REPO_ONLY_DIRS.get(pin.project, ()) or package_path(target, pin) is None):
            out.setdefault((f.ref.file, f.ref.line, pin.pin), (f.ref.text, None))
        elif target.endswith(".py") and "/" in target and not target.startswith(".") and f.status == NOT_CHECKABLE and package_path(target, pin) is None:
            # (Not an elided path, `.../parser/harmony_utils.py`: the package's file, its folders cut.)
            out.setdefault((f.ref.file, f.ref.line, pin.pin), (f.ref.text, f.ref.col))
    return out


def _beside_repo_file(f: Finding, pin: PinView, beside: tuple[str, int | None]) -> str | None:
    """`csrc/attention/paged_attention_v2.cu: paged_attention_v2()`, `scripts/common.py` 的
    `environment_metadata()`: a name the line gives to a source outside the wheel lives in that
    file, which a wheel does not hold; unjudged there (a git pin holds the file and judges both).
    Only a name the wheel's sources never spell, and for a script one no past release defined."""
    path, col = beside
    if f.ref.kind != SYMBOL or "." in f.ref.target or pin.mentions(f.ref.target) is not False:
        return None
    if col is not None and (not 0 <= col < f.ref.col or f.past):
        return None  # (a native source's names are its own whatever a past release had: `paged_attention_v2`)
    return f"`{f.ref.target}` is named beside {path}, a file the wheel {pin.pin} does not hold (a git pin does)"
