"""Where a field a place no longer takes went: into an object the place now holds.

A request's `guided_json` gone while the request classes hold `structured_outputs:
StructuredOutputsParams`, whose class has `json`: the flat field became a member of a nested
parameters object, named by what is left of the old name once its first word (the group the
nested object now stands for) is dropped. Read from the pin: the place's fields, their annotated
classes (the field's source line, parsed, never run) and those classes' own fields.
"""

from __future__ import annotations

import ast
import re

from rapidfuzz.distance import DamerauLevenshtein

from analyzer.refs.fields import _attributes as attributes  # a class's fields, its bases' too
from analyzer.refs.fields import _function_node, accepts, request_fields, signature
from analyzer.refs.models import REQUEST, Reference, Suggestion
from analyzer.refs.namesakes import related
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import find_symbol

_NAME_RE = re.compile(r"[A-Z]\w*")
# A parameters object's class by its name (`CacheInitParams`, `EngineArgs`, `ModelConfig`): a held
# component (`kvcache: KVCache`) has fields of its own, not its holder's old parameters.
_PARAMS_CLASS_RE = re.compile(r"\w*(?:Params|Parameters|Args|Arguments|Config|Options|Kwargs)")
_OPPOSITE = {"disable": "enable", "enable": "disable"}
# `x: Ann = ...` or `x: Ann`: a field's annotation on its line.
_ANNOTATED_RE = re.compile(r"^\s*(?P<name>\w+)\s*:\s*(?P<ann>[^=#]+)")


def _place_classes(ref: Reference, pin: PinView) -> list[SymbolEntry]:
    """The classes whose fields the reference's place takes: the server's request classes, or
    the callable's class."""
    if ref.field_of == REQUEST:
        names = sorted(set(request_fields(pin).values()))
        return [e for n in names for e in pin.table.ending_with(n) if e.kind == "class" and e.path.endswith("protocol.py")]
    if ref.field_of is None:
        return []
    return [e for e in find_symbol(ref.field_of, pin)[0] if e.kind == "class"][:3]


def _annotated_classes(cls: SymbolEntry, pin: PinView) -> dict[str, SymbolEntry]:
    """Field name -> the project's class its annotation names (`StructuredOutputsParams | None`),
    for the fields of `cls` (its own, as the index lists them)."""
    out: dict[str, SymbolEntry] = {}
    for attr in pin.table.members(cls.full):
        if attr.kind != "attribute":
            continue
        lines = pin.read_lines(attr.path)
        if not lines or not 0 < attr.line <= len(lines):
            continue
        m = _ANNOTATED_RE.match(lines[attr.line - 1])
        if m is None or m.group("name") != attr.last:
            continue
        try:
            ann = ast.parse(m.group("ann").strip().rstrip(","), mode="eval")
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in {"type", "Type"} for n in ast.walk(ann)):
            continue  # `_manager_cls: type[LRUCacheLoRAModelManager]` holds a class, not an object with fields
        words = {n.id for n in ast.walk(ann) if isinstance(n, ast.Name) and _NAME_RE.fullmatch(n.id)}
        for word in sorted(words):
            # Python classes only: a git pin's native index holds Rust structs of the same name.
            classes = [e for e in pin.table.ending_with(word) if e.kind == "class" and e.path.endswith(".py")]
            if len(classes) == 1:
                out[attr.last] = classes[0]
    return out


def renamed_parameter(ref: Reference, pin: PinView) -> list[Suggestion]:
    """`set_kv_buffer(layer, loc, ...)` where the pin's `set_kv_buffer` takes `loc_info`: the one
    parameter of the callable that is the gone one with words added at one end (a signature keeps
    its parameters' roles when it renames one); or the opposite switch (`disable_x` -> `enable_x`)."""
    if ref.field_of in (None, REQUEST):
        return []
    name = ref.target
    # A switch turned over (`disable_log_requests` -> `enable_log_requests`, as the flags'
    # `--disable-x` -> `--no-enable-x`): the same setting, passed negated.
    head, sep, stem = name.partition("_")
    flipped = f"{_OPPOSITE[head]}_{stem}" if sep and head in _OPPOSITE else None
    found: set[str] = set()
    opposite = False
    for fn in [e for e in find_symbol(ref.field_of or "", pin)[0] if e.kind == "function"][:3]:
        sig = signature(fn, pin)
        if sig is None or name in sig.names:
            continue
        if flipped in sig.names:
            opposite = True
        found |= {p for p in sig.names if len(p) > len(name) and related(name, p)}
    short = ".".join(ref.field_of.rsplit(".", 2)[-2:]) if ref.field_of else ""
    if opposite and flipped is not None:
        # Under `HIGH_CONFIDENCE`: `--fix` would keep the old value, which must now be negated.
        return [Suggestion(flipped, 0.7, f"`{short}` takes the opposite switch `{flipped}` (pass it negated)", None)]
    if len(found) != 1:
        return []
    (new,) = found
    return [Suggestion(new, 0.7, f"the one parameter of `{short}` named `{name}` with words added", None)]


def _one_class(annotation: ast.expr | None, pin: PinView) -> SymbolEntry | None:
    """The one project class an annotation names (`CacheInitParams`, `Optional[X]`), else None."""
    if annotation is None:
        return None
    words = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(annotation) if isinstance(n, ast.Name | ast.Attribute)}
    classes = [e for w in sorted(words) if _NAME_RE.fullmatch(w) for e in pin.table.ending_with(w) if e.kind == "class" and e.path.endswith(".py")]
    return classes[0] if len(classes) == 1 else None


def parameter_object(ref: Reference, pin: PinView) -> list[Suggestion]:
    """`RadixCache.__init__(..., page_size)` where the pin's constructor takes `params:
    CacheInitParams`, whose class has `page_size`: the parameters were gathered into one
    parameters object (a habit of both code bases, named so: `...Params`, `...Args`, `...Config`),
    so the gone one is that class's field of the same name. One such class: a suggestion;
    several or none: none (a held component's field, `kvcache: KVCache` with its own
    `page_size`, is not the old parameter)."""
    if ref.field_of in (None, REQUEST):
        return []
    name = ref.target
    found: dict[str, SymbolEntry] = {}
    for fn in [e for e in find_symbol(ref.field_of or "", pin)[0] if e.kind == "function"][:3]:
        lines = pin.read_lines(fn.path)
        node = _function_node(lines, fn) if lines else None
        if node is None:
            continue
        params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        if any(a.arg == name for a in params):
            return []
        for a in params:
            cls = _one_class(a.annotation, pin)
            if cls is not None and _PARAMS_CLASS_RE.fullmatch(cls.last) and name in attributes(cls, pin):
                found.setdefault(f"{cls.last}.{name}", cls)
    if len(found) != 1:
        return []
    (replacement, cls), = found.items()
    short = ".".join((ref.field_of or "").rsplit(".", 2)[-2:])
    return [Suggestion(replacement, 0.75, f"`{short}` now takes a `{cls.last}`, which has `{name}`", cls.location)]


# A keyword this short one letter off is as likely another keyword (`tp`/`pp`, `top_k`/`top_p`).
_TYPO_MIN_LENGTH = 6


def _keywords(callee: str, pin: PinView) -> set[str]:
    """The keywords the pin's `callee` takes (as `fields.accepts` judges them): its classes'
    fields and `__init__` parameters, its functions' parameters."""
    names: set[str] = set()
    for e in find_symbol(callee, pin)[0][:3]:
        if e.kind == "class":
            names |= attributes(e, pin)
            for init in find_symbol(f"{e.last}.__init__", pin)[0][:3]:
                sig = signature(init, pin) if init.parent == e.full else None
                names |= sig.names if sig is not None else set()
        elif e.kind == "function" and (sig := signature(e, pin)) is not None:
            names |= sig.names
    return {n for n in names if accepts(callee, n, pin) is True}


def misspelled_parameter(ref: Reference, pin: PinView) -> list[Suggestion]:
    """`EagleVerifyInput(draft_token_=..., retrive_index=...)` where the class takes `draft_token`
    and `retrieve_index`: the one keyword the callee takes that is the written one less the
    underscores at its ends (a blog's markup leaves `draft_token\\_=` as `draft_token_=`), else
    the one a letter off (a typo). Only among the callee's own keywords, a short list an editor
    reads; none for a short name or for one differing in a number (`_v1`/`_v2`)."""
    if ref.field_of in (None, REQUEST):
        return []
    name = ref.target
    bare = name.strip("_")
    taken = _keywords(ref.field_of or "", pin)
    short = ".".join((ref.field_of or "").rsplit(".", 2)[-2:])
    if bare != name and bare in taken:
        return [Suggestion(bare, 0.8, f"`{short}` takes `{bare}` (the written name with stray underscores)", None)]
    if len(bare) < _TYPO_MIN_LENGTH:
        return []
    plain = re.sub(r"\d", "", bare)
    typos = [k for k in taken if DamerauLevenshtein.distance(bare, k) == 1 and re.sub(r"\d", "", k) != plain]
    if len(typos) != 1:
        return []
    return [Suggestion(typos[0], 0.75, f"the one keyword of `{short}` a letter off", None)]


def field_homes(ref: Reference, pin: PinView) -> list[Suggestion]:
    """The member of a class one of the place's fields holds, named as the gone field less its
    first word (or as the whole field); one such member: a suggestion, several: none. Else a
    parameter renamed by words added (`renamed_parameter`), or gathered into a parameters
    object the callable now takes (`parameter_object`), or misspelled (`misspelled_parameter`)."""
    renamed = renamed_parameter(ref, pin) or parameter_object(ref, pin) or misspelled_parameter(ref, pin)
    if renamed:
        return renamed
    name = ref.target
    words = name.split("_")
    if len(words) < 2:
        return []
    rest = "_".join(words[1:])
    found: dict[str, tuple[str, SymbolEntry]] = {}
    for place in _place_classes(ref, pin):
        # A public field first: the one a request spells (`structured_outputs`, not a parser's copy).
        for holder, cls in sorted(_annotated_classes(place, pin).items(), key=lambda kv: kv[0].startswith("_")):
            members = attributes(cls, pin)
            for wanted in (rest, name):
                if wanted in members:
                    found.setdefault(f"{cls.last}.{wanted}", (holder, cls))
                    break
    if len(found) != 1:
        return []
    (replacement, (holder, cls)), = found.items()
    why = f"the place's `{holder}` field holds a `{cls.last}`, which has `{replacement.rsplit('.', 1)[-1]}`"
    return [Suggestion(replacement, 0.75, why, cls.location)]
