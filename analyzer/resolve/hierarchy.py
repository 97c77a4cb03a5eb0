"""Class hierarchies across modules: base resolution, C3 MRO, subclasses."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from analyzer.resolve.exprs import dotted_name

if TYPE_CHECKING:
    from analyzer.resolve.project import Project

class Hierarchy:
    """Bases / MRO / subclasses, memoised; owned by one Project."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.bases: dict[str, list[str]] = {}
        self.mros: dict[str, list[str]] = {}
        self._children: dict[str, list[str]] | None = None
        self._descendants: dict[str, list[str]] = {}

    def bases_of(self, cls: str) -> list[str]:
        """Project class names, or external dotted names, of the direct bases."""
        if cls in self.bases:
            return self.bases[cls]
        self.bases[cls] = []  # cycle guard (class A(A) via re-import shadows)
        cd = self.project.classes[cls]
        scope = cd.fact.qualname.rpartition(".")[0] or "<module>"
        out: list[str] = []
        for text in cd.fact.bases:
            node = self.project.parser.parse(text)
            if node is None:
                continue
            # `Generic[T]`, `Base[int]`: the subscripted head is the base.
            while isinstance(node, ast.Subscript):
                node = node.value
            name = dotted_name(node)
            if name is None:
                continue
            sym = self.project.resolve_in_scope(cd.module, scope, name)
            if sym is None:
                continue
            if (sym.kind == "class" and sym.name != cls) or sym.kind == "external":
                out.append(sym.name)
        self.bases[cls] = out
        return out

    def mro(self, cls: str) -> list[str]:
        found = self.mros.get(cls)
        if found is not None:
            return found
        self.mros[cls] = [cls]  # cycle guard
        seqs = [self.mro(b) if b in self.project.classes else [b] for b in self.bases_of(cls)]
        seqs.append(list(self.bases_of(cls)))
        merged = _c3_merge([list(s) for s in seqs])
        if merged is None:  # inconsistent hierarchy: fall back to depth-first, first seen wins
            merged = []
            for seq in seqs:
                merged.extend(c for c in seq if c not in merged)
        result = [cls, *merged]
        self.mros[cls] = result
        return result

    def children(self) -> dict[str, list[str]]:
        if self._children is None:
            kids: dict[str, list[str]] = {}
            for cls in self.project.classes:
                for base in self.bases_of(cls):
                    kids.setdefault(base, []).append(cls)
            self._children = kids
        return self._children

    def descendants(self, cls: str) -> list[str]:
        found = self._descendants.get(cls)
        if found is not None:
            return found
        out: list[str] = []
        stack = list(self.children().get(cls, ()))
        while stack:
            c = stack.pop()
            if c in out or c == cls:
                continue
            out.append(c)
            stack.extend(self.children().get(c, ()))
        self._descendants[cls] = out
        return out

    def is_subclass(self, cls: str, base: str) -> bool:
        return base in self.mro(cls)


def _c3_merge(seqs: list[list[str]]) -> list[str] | None:
    out: list[str] = []
    seqs = [s for s in seqs if s]
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head in s[1:] for s in seqs):
                break
        else:
            return None
        out.append(head)
        seqs = [[c for c in s if c != head] for s in seqs]
        seqs = [s for s in seqs if s]
    return out
