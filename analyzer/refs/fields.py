"""Fields and parameters: a lower-case name that a document passes to the project's code.

A `snake_case` word alone says nothing (it may be a variable, a config key, English); its place
says what it names. A key of the `extra_body` dict the OpenAI client sends, or of the JSON body
an HTTP call sends (`requests.post(url, json=...)`, `curl -d '{...}'`), is a field of the
server's request classes (of the request class its route's handler takes, where the pin's
sources say); a keyword of a call to the project's class is one of that class's
fields or `__init__` parameters; a parameter of a document's copy of a project method is one of
that method's. Each is judged against what the pin defines there, read from its index and, for
a signature, from the source file (parsed, never run).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

from analyzer.refs.document import dotted
from analyzer.refs.generated import decorated_dataclass
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK, REQUEST, Finding, Reference
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.resolve import find_symbol
from analyzer.refs.routes import BODY_FIELD

# How far base classes (and `**kwargs` handed on to another class) are followed.
_MAX_DEPTH = 4
# Bases whose subclasses take their declared fields as keywords (pydantic, msgspec, typing).
_RECORD_BASES = frozenset({"BaseModel", "Struct", "object", "NamedTuple", "TypedDict", "Generic"})
# More same-named classes or functions than this: the name does not say which one is meant.
_MAX_CANDIDATES = 3


@dataclass(frozen=True, slots=True)
class Signature:
    names: frozenset[str]  # parameters a caller may pass by keyword
    # Where `**kwargs` goes: the dotted callables it is handed on to (`EngineArgs(..., **kwargs)`),
    # None when it goes somewhere this module cannot follow; () when there is no `**kwargs`.
    forwarded: tuple[str, ...] | None


def _function_node(lines: list[str], entry: SymbolEntry) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    text = textwrap.dedent("\n".join(lines[entry.line - 1 : entry.end_line]))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def signature(entry: SymbolEntry, pin: PinView) -> Signature | None:
    """The keyword parameters of a function the pin defines, from its source; None when the
    source is not on disk or does not parse."""
    lines = pin.read_lines(entry.path)
    fn = _function_node(lines, entry) if lines else None
    if fn is None:
        return None
    args = fn.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - {"self", "cls"}
    if args.kwarg is None:
        return Signature(frozenset(names), ())
    kwarg = args.kwarg.arg
    owner = entry.parent.rsplit(".", 1)[-1]
    forwarded: list[str] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwarg for k in node.keywords):
            name = dotted(node.func)
            if name is None:
                return Signature(frozenset(names), None)  # `super().__init__(**kwargs)`, `f()(**kwargs)`
            root, _, rest = name.partition(".")
            if root in {"cls", "self"}:
                name = f"{owner}.{rest}" if rest else owner  # `cls(**kwargs)`, `cls.from_x(**kwargs)`
            forwarded.append(name)
    # `**kwargs` read by key (`kwargs.get("x")`) or stored: nothing says which names it takes.
    return Signature(frozenset(names), tuple(forwarded) if forwarded else None)


def _verdict(results: list[bool | None]) -> bool | None:
    """Taken by one of several candidates: True if any takes it, False if none can."""
    if any(r is True for r in results):
        return True
    return False if results and all(r is False for r in results) else None


def accepts(callee: str, name: str, pin: PinView, depth: int = 0) -> bool | None:
    """Whether the pin's `callee` (a class or a function, by its dotted name) takes `name` by
    keyword: True, False, or None when it cannot tell (not found, opaque `**kwargs`, too deep)."""
    if depth > _MAX_DEPTH:
        return None
    entries = find_symbol(callee, pin)[0]
    parts = callee.split(".")
    if not [e for e in entries if e.kind in {"class", "function"}] and len(parts) > 2 and parts[-2][:1].isupper():
        # `vllm.a.b.Cls.method` of a copy whose file moved: the class's method, by the class's name.
        entries = find_symbol(".".join(parts[-2:]), pin)[0]
    if not [e for e in entries if e.kind in {"class", "function"}] and "." in callee:
        if parts[-2][:1].isupper():
            return None  # `BatchDecodeWithPagedKVCacheWrapper.begin_forward`: a class the pin lacks, not its method's namesake
        entries = find_symbol(parts[-1], pin)[0]  # `vllm.LLM`: a re-export
    classes = [e for e in entries if e.kind == "class"]
    functions = [e for e in entries if e.kind == "function"]
    if classes:
        return _verdict([_class_takes(c, name, pin, depth) for c in classes[:_MAX_CANDIDATES]])
    if functions and len(functions) <= _MAX_CANDIDATES:
        return _verdict([_takes(f, name, pin, depth) for f in functions])
    return None


def _class_takes(cls: SymbolEntry, name: str, pin: PinView, depth: int) -> bool | None:
    fields = _attributes(cls, pin)
    # The class's own `__init__`, else one a base writes; not that of another class of the same
    # name (a test's stand-in `class DenoisingStage` with `def __init__(self)`).
    found = [e for e in find_symbol(f"{cls.last}.__init__", pin)[0] if e.kind == "function"]
    inits = [e for e in found if e.parent == cls.full] or [e for e in found if e.parent.rsplit(".", 1)[-1] in _base_names(cls)]
    own_init = bool(inits) and inits[0].parent == cls.full
    # An `__init__` a base writes is the class's constructor too (`LRUCacheWorkerLoRAManager`
    # takes what `WorkerLoRAManager.__init__` does, not the attributes that sets), unless the
    # class is a dataclass, whose decorator writes one over its fields.
    if name in fields and (not inits or (not own_init and decorated_dataclass(cls, pin))):
        return True  # a dataclass, pydantic or msgspec field, or a class attribute
    if inits:
        # The class's own `__init__` says what it takes: an attribute it sets later
        # (`WorkerWrapperBase.vllm_config`, set by `init_worker`) is no keyword of its constructor.
        took = _takes(inits[0], name, pin, depth)
        return True if took is None and name in fields else took
    # No `__init__` the project writes: a record takes its fields and nothing else; a class on
    # another library's base (`nn.Module`, `Thread`) takes whatever that base's `__init__` does.
    return False if fields and _record(cls, pin) else None


def _record(cls: SymbolEntry, pin: PinView, depth: int = 0) -> bool:
    """Whether every base of the class, up to the top, is the project's or a record base."""
    for base in _base_names(cls):
        if base in _RECORD_BASES:
            continue
        parents = [e for e in pin.table.ending_with(base) if e.kind == "class" and e.full != cls.full]
        if not parents or depth >= _MAX_DEPTH or not _record(parents[0], pin, depth + 1):
            return False
    return True


def _base_names(cls: SymbolEntry) -> set[str]:
    return {b.split("[", 1)[0].rsplit(".", 1)[-1] for b in cls.bases}


def _takes(fn: SymbolEntry, name: str, pin: PinView, depth: int) -> bool | None:
    sig = signature(fn, pin)
    if sig is None:
        return None
    if name in sig.names:
        return True
    if sig.forwarded is None:
        return None
    if not sig.forwarded:
        return False
    return _verdict([accepts(target, name, pin, depth + 1) for target in sig.forwarded])


def _attributes(cls: SymbolEntry, pin: PinView, depth: int = 0) -> set[str]:
    """Attribute names of a class and of its bases the pin defines (by name)."""
    names = {e.last for e in pin.table.members(cls.full) if e.kind == "attribute"}
    if depth < _MAX_DEPTH:
        for base in cls.bases:
            short = base.split("[", 1)[0].rsplit(".", 1)[-1]
            for parent in (e for e in pin.table.ending_with(short) if e.kind == "class" and e.full != cls.full):
                names |= _attributes(parent, pin, depth + 1)
                break
    return names


# Request model classes by name ending, and the file each project keeps them in.
_REQUEST_CLASSES = {"Request": "protocol.py", "ReqInput": "io_struct.py"}


def request_fields(pin: PinView) -> dict[str, str]:
    """Field name -> the request class declaring it, over the server's request models, with
    their bases' fields: classes named `...Request` in a `protocol` module (both projects keep
    their OpenAI-compatible schemas there) and SGLang's native `...ReqInput` in `io_struct.py`
    (the body of `/generate`), then the classes any route's handler takes wherever they live
    (vLLM's `GenerativeScoringRequest` beside its handler). Built once per pin."""
    cache = pin.memo
    if "request fields" not in cache:
        classes = [
            cls
            for suffix, module in _REQUEST_CLASSES.items()
            for name in sorted({n for n in pin.table.defined_names() if n.endswith(suffix)})
            for cls in pin.table.ending_with(name)
            if cls.kind == "class" and cls.path.rsplit("/", 1)[-1] == module
        ]
        taken = sorted({name for names in route_classes(pin).values() for name in names})
        classes += [cls for name in taken for cls in pin.table.ending_with(name) if cls.kind == "class" and cls not in classes]
        fields = _fields_of(classes, pin)
        # (And the parameters a handler reads from the body: `/v1/set_lora`'s `lora_nickname`.)
        for route, names in sorted(pin.routes.items()):
            for name in names:
                if name.startswith(BODY_FIELD):
                    fields.setdefault(name.removeprefix(BODY_FIELD), f"{route}'s handler")
        cache["request fields"] = fields
    return dict(cache["request fields"])


def route_classes(pin: PinView) -> dict[str, tuple[str, ...]]:
    """Route -> the project's classes its handlers take as parameters, from the routes the view
    read off the sources at build time (`PinView.routes`, `routes.module_routes`): names the
    pin defines as classes only; () where every handler of the route reads the raw body."""
    cache = pin.memo
    if "routes" not in cache:
        cache["routes"] = {path: tuple(c for c in names if _is_class(c, pin)) for path, names in pin.routes.items()}
    result: dict[str, tuple[str, ...]] = cache["routes"]
    return result


def _is_class(name: str, pin: PinView) -> bool:
    return any(e.kind == "class" for e in pin.table.ending_with(name))


def _fields_of(classes: Iterable[SymbolEntry], pin: PinView) -> dict[str, str]:
    """Field name -> the first of `classes` that declares it (with its bases' fields)."""
    fields: dict[str, str] = {}
    for cls in classes:
        for field in sorted(_attributes(cls, pin)):
            fields.setdefault(field, cls.last)
    return fields


def judge_field(ref: Reference, pin: PinView) -> Finding | None:
    """A name in a field's place (`Reference.field_of`) against the pin; None when the place
    is not the pin's (the callee is gone: its own reference carries that)."""
    assert ref.field_of is not None
    name = ref.target
    if ref.field_of == REQUEST:
        routes = route_classes(pin)
        if ref.endpoint is not None and ref.endpoint in routes:
            # The body of a route the pin serves: its handler's request classes or body parameters
            # (`lora_nickname = Body(..., embed=True)`), or nothing to judge where the handler reads
            # the raw body (`/collective_rpc`'s `raw_request.json()`).
            body = [n.removeprefix(BODY_FIELD) for n in pin.routes.get(ref.endpoint, ()) if n.startswith(BODY_FIELD)]
            if name in body:
                return Finding(ref, pin.pin, OK, note=f"a body parameter of `{ref.endpoint}`'s handler")
            if not routes[ref.endpoint] and body:
                return Finding(ref, pin.pin, BROKEN, note=f"`{ref.endpoint}`'s handler takes no `{name}` in {pin.pin} (it takes {', '.join(body)})")
            if not routes[ref.endpoint]:
                return None
            fields = _fields_of((e for name in routes[ref.endpoint] for e in pin.table.ending_with(name) if e.kind == "class"), pin)
            if name in fields:
                return Finding(ref, pin.pin, OK, note=f"a field of `{fields[name]}`, which `{ref.endpoint}` takes")
            taken = " / ".join(f"`{c}`" for c in routes[ref.endpoint])
            return Finding(ref, pin.pin, BROKEN, note=f"`{name}` is not a field of {taken}, which `{ref.endpoint}` takes in {pin.pin}")
        fields = request_fields(pin)
        if not fields:
            return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"{pin.pin} defines no request classes of an OpenAI-compatible server")
        if name in fields:
            return Finding(ref, pin.pin, OK, note=f"a field of `{fields[name]}`")
        return Finding(ref, pin.pin, BROKEN, note=f"`{name}` is not a field of the server's request classes in {pin.pin}")
    took = accepts(ref.field_of, name, pin)
    short = ref.field_of.rsplit(".", 1)[-1]
    if not short[:1].isupper():
        short = ".".join(ref.field_of.rsplit(".", 2)[-2:])  # `LLM.__init__`, `LLM.generate`
    if took is None:
        return None
    if took:
        return Finding(ref, pin.pin, OK, note=f"taken by `{short}`")
    return Finding(ref, pin.pin, BROKEN, note=f"`{short}` takes no `{name}` in {pin.pin}")
