"""Compact, compressed encoding of `ModuleFacts` for the cache.

Facts are stored per content hash, so the blob leaves out what depends on where
the file sits (path, dotted module name) and the hash itself. Dataclasses become
positional lists (field order of models.py) serialised with `marshal`, after
making equal strings one object: marshal then writes each once and `loads`
shares them, which decodes about twice as fast as JSON and allocates far fewer
strings (scopes, `self`, `read` repeat thousands of times per file). marshal's
format is tied to the interpreter, hence `CODEC_VERSION` in the cache key.
"""

from __future__ import annotations

import marshal
import sys
import zlib
from dataclasses import dataclass, fields
from typing import Any

from analyzer.index.models import (
    Assignment,
    AttributeAccess,
    CallSite,
    Class,
    Flow,
    Function,
    Import,
    ModuleFacts,
    Param,
)

# Field names per type, and for list fields the dataclass of their items.
_SPEC: dict[type, tuple[tuple[str, type | None], ...]] = {}
_NESTED_ITEMS: dict[tuple[type, str], type] = {
    (ModuleFacts, "imports"): Import,
    (ModuleFacts, "classes"): Class,
    (ModuleFacts, "functions"): Function,
    (ModuleFacts, "module_attributes"): Assignment,
    (ModuleFacts, "assignments"): Assignment,
    (ModuleFacts, "calls"): CallSite,
    (ModuleFacts, "accesses"): AttributeAccess,
    (ModuleFacts, "flows"): Flow,
    (Class, "fields"): Assignment,
    (Class, "class_attributes"): Assignment,
    (Class, "instance_attributes"): Assignment,
    (Function, "params"): Param,
}
_PLACED = ("path", "module", "sha256")  # supplied by the caller, not stored

for _cls in (Import, Class, Function, Assignment, CallSite, AttributeAccess, Param, Flow, ModuleFacts):
    _SPEC[_cls] = tuple(
        (f.name, _NESTED_ITEMS.get((_cls, f.name)))
        for f in fields(_cls)
        if not (_cls is ModuleFacts and f.name in _PLACED)
    )


_FLAT = frozenset(cls for cls, spec in _SPEC.items() if not any(item for _, item in spec))


CODEC_VERSION = f"marshal2-py{sys.version_info[0]}.{sys.version_info[1]}"


def _enc(obj: Any, memo: dict[str, str]) -> list[Any]:
    row: list[Any] = []
    for name, item in _SPEC[type(obj)]:
        value = getattr(obj, name)
        if item is not None:
            value = [_enc(v, memo) for v in value]
        elif type(value) is str:
            value = memo.setdefault(value, value)
        elif type(value) is list:  # args, keywords, decorators, bases, __all__
            value = [memo.setdefault(v, v) for v in value]
        row.append(value)
    return row


def _dec_list(item: type, rows: list[list[Any]]) -> list[Any]:
    if item in _FLAT:  # the bulk (calls, accesses, assignments): one constructor call each
        return [item(*r) for r in rows]
    return [_dec(item, r) for r in rows]


def _dec(cls: type, row: list[Any]) -> Any:
    args = [
        _dec_list(item, value) if item is not None else value
        for (_, item), value in zip(_SPEC[cls], row, strict=True)
    ]
    return cls(*args)


def encode_facts(facts: ModuleFacts) -> bytes:
    return zlib.compress(marshal.dumps(_enc(facts, {})), 1)


def decode_facts(blob: bytes, path: str, module: str, sha256: str) -> ModuleFacts:
    row = marshal.loads(zlib.decompress(blob))
    kwargs: dict[str, Any] = {"path": path, "module": module, "sha256": sha256}
    for (name, item), value in zip(_SPEC[ModuleFacts], row, strict=True):
        kwargs[name] = _dec_list(item, value) if item is not None else value
    return ModuleFacts(**kwargs)


@dataclass(slots=True)
class Summary:
    """What listing and lookup need without decoding a file's full facts."""

    lines: int
    calls: int
    accesses: int
    # (qualname, kind, line, end_line); kind: "class" | "function" | "method"
    symbols: list[tuple[str, str, int, int]]

    def encode(self) -> bytes:
        return marshal.dumps([self.lines, self.calls, self.accesses, self.symbols])

    @classmethod
    def decode(cls, blob: bytes) -> Summary:
        lines, calls, accesses, symbols = marshal.loads(blob)
        return cls(lines, calls, accesses, symbols)

    @classmethod
    def of(cls, facts: ModuleFacts) -> Summary:
        symbols: list[tuple[str, str, int, int]] = [
            (c.qualname, "class", c.line, c.end_line) for c in facts.classes
        ]
        symbols += [
            (f.qualname, "method" if f.is_method else "function", f.line, f.end_line)
            for f in facts.functions
        ]
        return cls(facts.lines, len(facts.calls), len(facts.accesses), symbols)
