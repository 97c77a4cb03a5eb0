"""Which classes' methods run on a class's instances, for the state graph.

The project's hierarchy (analyzer/resolve) gives each class one MRO. A base name
may be bound to several classes in its module, though: SGLang's scheduler takes
`SchedulerMlxOverlapMixin`, a one-line stub on most platforms and the real mixin,
imported, on Apple silicon. Methods of either may run on a `Scheduler`, so here a
base counts as each class its name may be bound to at module level (class
statements and imports, in any branch; `TYPE_CHECKING` imports left out).

A *mixin* is then what the hierarchy says, not what a class is called: a class
with at least one subclass and no constructor anywhere in its project MRO (no
`__init__`, no dataclass fields), so it never sets up an instance of its own;
its methods only run on instances of the classes that inherit it, and the state
they touch is those classes' state.
"""

from __future__ import annotations

from analyzer.resolve import Project
from analyzer.resolve.project import MODULE_SCOPE, import_target


class Inheritance:
    """MROs, subclasses and mixins with a base name's alternative bindings counted;
    owned by one state-graph build."""

    def __init__(self, project: Project) -> None:
        self.p = project
        self.h = project.hierarchy
        self._alternatives = _alternatives(project)
        self._mro: dict[str, tuple[str, ...]] = {}
        self._descendants: dict[str, list[str]] = {}
        self._children: dict[str, list[str]] | None = None
        self.mixins = self._find_mixins()

    def mro(self, cls: str) -> tuple[str, ...]:
        """The hierarchy's MRO, then the MROs of alternatives to any base in it."""
        found = self._mro.get(cls)
        if found is not None:
            return found
        self._mro[cls] = (cls,)  # cycle guard
        out = list(self.h.mro(cls)) if cls in self.p.classes else [cls]
        i = 0
        while i < len(out):
            for alt in self._alternatives.get(out[i], ()):
                for c in self.h.mro(alt):
                    if c not in out:
                        out.append(c)
            i += 1
        found = self._mro[cls] = tuple(out)
        return found

    def is_subclass(self, cls: str, base: str) -> bool:
        return base in self.mro(cls)

    def children(self) -> dict[str, list[str]]:
        if self._children is None:
            kids: dict[str, list[str]] = {}
            for cls in self.p.classes:
                for base in (*self.h.bases_of(cls), *self._alternatives.get(cls, ())):
                    kids.setdefault(base, []).append(cls)
            self._children = kids
        return self._children

    def descendants(self, cls: str) -> list[str]:
        found = self._descendants.get(cls)
        if found is not None:
            return found
        out: list[str] = []
        kids = self.children()
        stack = list(kids.get(cls, ()))
        while stack:
            c = stack.pop()
            if c in out or c == cls:
                continue
            out.append(c)
            stack.extend(kids.get(c, ()))
        found = self._descendants[cls] = out
        return found

    def _find_mixins(self) -> set[str]:
        kids = self.children()
        out: set[str] = set()
        for cls in self.p.classes:
            if not kids.get(cls):
                continue
            if any(self._constructs(c) for c in self.h.mro(cls) if c in self.p.classes):
                continue
            out.add(cls)
        return out

    def _constructs(self, cls: str) -> bool:
        """The class sets up instances itself: an `__init__`, or fields a generated one sets."""
        fact = self.p.classes[cls].fact
        return f"{cls}.__init__" in self.p.functions or bool(fact.fields) or fact.is_dataclass


def _alternatives(project: Project) -> dict[str, tuple[str, ...]]:
    """class -> project classes one of its base names may also be bound to (beyond the
    one the hierarchy resolved), keyed by the subclass. Only module-level bindings of
    plain base names are read: `class A(B)` where the module both defines and imports
    `B`, or imports it in two branches."""
    by_module: dict[str, dict[str, set[str]]] = {}
    base_names: dict[str, set[str]] = {}
    for cd in project.classes.values():
        base_names.setdefault(cd.module, set()).update(b for b in cd.fact.bases if b.isidentifier())

    def bindings(module: str) -> dict[str, set[str]]:
        found = by_module.get(module)
        if found is not None:
            return found
        found = by_module[module] = {}
        facts = project.modules.get(module)
        wanted = base_names.get(module, set())
        if facts is None:
            return found
        for c in facts.classes:
            if "." not in c.qualname and c.name in wanted:
                found.setdefault(c.name, set()).add(f"{module}.{c.qualname}")
        for imp in facts.imports:
            if imp.scope != MODULE_SCOPE or imp.type_checking or imp.name is None:
                continue
            if (imp.asname or imp.name) not in wanted:
                continue  # only names some class here takes as a base
            target = import_target(imp, facts)
            if target is None:
                continue
            local, dotted = target
            sym = project.lookup_global(dotted)
            if sym is not None and sym.kind == "class":
                found.setdefault(local, set()).add(sym.name)
        return found

    out: dict[str, tuple[str, ...]] = {}
    for cls, cd in project.classes.items():
        names = [b for b in cd.fact.bases if b.isidentifier()]
        if not names:
            continue
        resolved = set(project.hierarchy.bases_of(cls))
        local = bindings(cd.module)
        extra = sorted({alt for n in names for alt in local.get(n, ()) if alt not in resolved and alt != cls})
        if extra:
            out[cls] = tuple(extra)
    return out
