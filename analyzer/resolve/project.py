"""The whole snapshot's symbol table: modules, definitions, imports, re-exports.

Global names are `module + "." + qualname` (`vllm.v1.core.sched.scheduler.Scheduler.schedule`).
Lookups are memoised on the instance; a Project is built once per graph build.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from analyzer.index.models import Assignment, Class, Function, Import, ModuleFacts
from analyzer.resolve.exprs import ExprParser
from analyzer.resolve.hierarchy import Hierarchy
from analyzer.resolve.models import immutable

MODULE_SCOPE = "<module>"
BUILTIN_NAMES = frozenset(dir(builtins))
_MAX_DEPTH = 24


@immutable
class Symbol:
    """A resolved global name. kind: "function" | "class" | "module" | "variable" | "external"."""

    kind: str
    name: str
    module: str = ""


_UNSEEN = Symbol("<not looked up>", "")  # a memo's "not there yet" (None is an answer)


@dataclass(slots=True)
class Scope:
    """Names bound directly in one function body (or the module body)."""

    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    star: list[str] = field(default_factory=list)  # modules star-imported here
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)


# Shared by every scope that binds nothing; never mutated (scopes are only filled
# while their module's table is built, before anyone can hold this object).
_EMPTY_SCOPE = Scope()


@dataclass(slots=True)
class FuncDef:
    module: str
    fact: Function
    path: str
    name: str  # `module.qualname`, stored: it is read hundreds of thousands of times a build


@dataclass(slots=True)
class ClassDef:
    module: str
    fact: Class
    path: str

    @property
    def name(self) -> str:
        return f"{self.module}.{self.fact.qualname}"


def scope_chain(scope: str) -> list[str]:
    """`A.f.g` -> [`A.f.g`, `A.f`, `A`, `<module>`]."""
    if scope == MODULE_SCOPE or not scope:
        return [MODULE_SCOPE]
    parts = scope.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)] + [MODULE_SCOPE]


def _package_of(facts: ModuleFacts) -> str:
    if facts.path.endswith("__init__.py"):
        return facts.module
    return facts.module.rpartition(".")[0]


def import_target(imp: Import, facts: ModuleFacts) -> tuple[str, str] | None:
    """(bound local name, dotted target) for one import; None for `*`."""
    if imp.level:
        base = _package_of(facts)
        for _ in range(imp.level - 1):
            base = base.rpartition(".")[0]
        module = f"{base}.{imp.module}".strip(".") if imp.module else base
    else:
        module = imp.module
    if imp.name is None:
        if imp.asname:
            return imp.asname, module
        head = module.split(".")[0]
        return head, head
    if imp.name == "*":
        return None
    return imp.asname or imp.name, f"{module}.{imp.name}" if module else imp.name


class Project:
    def __init__(self, modules: Mapping[str, ModuleFacts] | Iterable[ModuleFacts]) -> None:
        facts_list = list(modules.values()) if isinstance(modules, Mapping) else list(modules)
        self.parser = ExprParser()
        self.modules: dict[str, ModuleFacts] = {}
        self.functions: dict[str, FuncDef] = {}
        self.classes: dict[str, ClassDef] = {}
        self.methods_by_name: dict[str, list[str]] = {}
        for facts in sorted(facts_list, key=lambda f: f.path):
            # Two files claiming one module (e.g. a stray copy): the first path wins.
            if facts.module in self.modules:
                continue
            self.modules[facts.module] = facts
            for cls in facts.classes:
                self.classes[f"{facts.module}.{cls.qualname}"] = ClassDef(facts.module, cls, facts.path)
            for fn in facts.functions:
                name = f"{facts.module}.{fn.qualname}"
                self.functions[name] = FuncDef(facts.module, fn, facts.path, name)
        # Names some class keeps as plain state: reading one of these proves nothing
        # about a getter running, so getter guesses skip them.
        self.plain_attr_names: set[str] = {
            a.target.rpartition(".")[2]
            for cd in self.classes.values()
            for a in (*cd.fact.fields, *cd.fact.class_attributes, *cd.fact.instance_attributes)
        }
        self.properties_by_name: dict[str, list[str]] = {}
        for fd in self.functions.values():
            parent = fd.name.rpartition(".")[0]
            if parent in self.classes:
                self.methods_by_name.setdefault(fd.fact.name, []).append(fd.name)
                if fd.fact.is_property:
                    self.properties_by_name.setdefault(fd.fact.name, []).append(fd.name)
        self.roots = {m.split(".")[0] for m in self.modules}
        self.hierarchy = Hierarchy(self)
        self._scopes: dict[tuple[str, str], Scope] = {}
        self._built: set[str] = set()
        self._chains: dict[str, list[str]] = {}
        self._module_attrs: dict[str, dict[str, list[Assignment]]] = {}
        self._global_memo: dict[str, Symbol | None] = {}
        self._member_memo: dict[tuple[str, str], Symbol | None] = {}
        self._module_name_memo: dict[tuple[str, str], Symbol | None] = {}

    # -- scopes -------------------------------------------------------------

    def scope(self, module: str, scope: str) -> Scope:
        key = (module, scope)
        found = self._scopes.get(key)
        if found is not None:
            return found
        if module not in self._built:
            self._build_scopes(module)
        return self._scopes.setdefault(key, _EMPTY_SCOPE)

    def chain(self, scope: str) -> list[str]:
        """Memoised `scope_chain`."""
        found = self._chains.get(scope)
        if found is None:
            found = self._chains[scope] = scope_chain(scope)
        return found

    def _build_scopes(self, module: str) -> None:
        self._built.add(module)
        facts = self.modules[module]
        scopes = self._scopes

        def scope_of(name: str) -> Scope:
            # (not `setdefault(key, Scope())`: that builds a Scope per import and assignment)
            found = scopes.get((module, name))
            if found is None:
                found = scopes[(module, name)] = Scope()
            return found

        scope_of(MODULE_SCOPE)
        # (the memo read inline first: a call per import and assignment of the tree saved)
        for imp in facts.imports:
            sc = scopes.get((module, imp.scope)) or scope_of(imp.scope)
            bound = import_target(imp, facts)
            if bound is None:
                base = import_target(
                    Import(imp.module, "_", None, imp.level, imp.line, imp.scope), facts
                )
                if base is not None:
                    sc.star.append(base[1].rpartition(".")[0])
                continue
            # A later import of the same name wins, except a TYPE_CHECKING one
            # never hides a runtime import.
            if imp.type_checking and bound[0] in sc.imports:
                continue
            sc.imports[bound[0]] = bound[1]
        for asg in facts.assignments:
            sc = scopes.get((module, asg.scope)) or scope_of(asg.scope)
            sc.assignments.setdefault(asg.target, []).append(asg)
        attrs: dict[str, list[Assignment]] = {}
        for asg in facts.module_attributes:
            attrs.setdefault(asg.target, []).append(asg)
        self._module_attrs[module] = attrs

    def module_attrs(self, module: str) -> dict[str, list[Assignment]]:
        if module not in self._built:
            self._build_scopes(module)
        return self._module_attrs[module]

    # -- global names -------------------------------------------------------

    def lookup_global(self, dotted: str, depth: int = 0) -> Symbol | None:
        """Resolve a fully dotted name (`pkg.mod.Class.method`) through imports and re-exports."""
        if dotted in self._global_memo:
            return self._global_memo[dotted]
        if depth > _MAX_DEPTH:
            return None
        self._global_memo[dotted] = None  # cycle guard
        result = self._lookup_global(dotted, depth)
        self._global_memo[dotted] = result
        return result

    def _lookup_global(self, dotted: str, depth: int) -> Symbol | None:
        if dotted in self.functions:
            return Symbol("function", dotted, self.functions[dotted].module)
        if dotted in self.classes:
            return Symbol("class", dotted, self.classes[dotted].module)
        if dotted in self.modules:
            return Symbol("module", dotted, dotted)
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = ".".join(parts[:i])
            if mod not in self.modules:
                continue
            sym = self.lookup_in_module(mod, parts[i], depth + 1)
            for attr in parts[i + 1 :]:
                if sym is None:
                    return None
                sym = self.member(sym, attr, depth + 1)
            return sym
        if parts[0] in self.roots:
            return None  # inside the project but not defined: a real miss, not an external
        return Symbol("external", dotted)

    def lookup_import(self, target: str, depth: int = 0) -> Symbol | None:
        """What an import binds. `from pkg import name` (and `import pkg.name as n`)
        read the package's attribute first, so a name that `pkg/__init__.py`
        rebinds (`from .block import block`) hides the submodule of that name."""
        if target in self.modules:
            parent, _, last = target.rpartition(".")
            if parent in self.modules and depth <= _MAX_DEPTH:
                bound = self.scope(parent, MODULE_SCOPE).imports.get(last)
                if bound is not None and bound != target:
                    sym = self.lookup_global(bound, depth + 1)
                    if sym is not None:
                        return sym
        return self.lookup_global(target, depth)

    def lookup_in_module(self, module: str, name: str, depth: int = 0) -> Symbol | None:
        """A name as seen at the top level of `module`. Memoised for the outermost
        calls (depth 0: not inside another lookup, whose cycle guards could cut it)."""
        if depth:
            return self._lookup_in_module(module, name, depth)
        key = (module, name)
        found = self._module_name_memo.get(key, _UNSEEN)
        if found is _UNSEEN:
            found = self._module_name_memo[key] = self._lookup_in_module(module, name, 0)
        return found

    def _lookup_in_module(self, module: str, name: str, depth: int) -> Symbol | None:
        qual = f"{module}.{name}"
        if qual in self.functions:
            return Symbol("function", qual, module)
        if qual in self.classes:
            return Symbol("class", qual, module)
        sc = self.scope(module, MODULE_SCOPE)
        target = sc.imports.get(name)
        if target is not None and target != qual:
            sym = self.lookup_import(target, depth + 1)
            if sym is not None:
                return sym
        if name in self.module_attrs(module):
            return Symbol("variable", qual, module)
        if qual in self.modules:
            return Symbol("module", qual, qual)
        # Each `from m import *` rebinds the names it brings: the last one wins.
        for star in reversed(sc.star):
            facts = self.modules.get(star)
            if facts is None:
                continue
            if facts.all_names is not None and name not in facts.all_names:
                continue
            if facts.all_names is None and name.startswith("_"):
                continue
            sym = self.lookup_in_module(star, name, depth + 1) if depth < _MAX_DEPTH else None
            if sym is not None:
                return sym
        return None

    def member(self, sym: Symbol, attr: str, depth: int = 0) -> Symbol | None:
        """`attr` of a module or class symbol (through the MRO for classes)."""
        if sym.kind == "module":
            return self.lookup_in_module(sym.name, attr, depth)
        if sym.kind == "external":
            return Symbol("external", f"{sym.name}.{attr}")
        if sym.kind == "class":
            key = (sym.name, attr)
            if key not in self._member_memo:
                self._member_memo[key] = self._class_member(sym.name, attr)
            return self._member_memo[key]
        return None

    def _class_member(self, cls: str, attr: str) -> Symbol | None:
        for owner in self.hierarchy.mro(cls):
            if owner not in self.classes:
                continue
            qual = f"{owner}.{attr}"
            if qual in self.functions:
                return Symbol("function", qual, self.functions[qual].module)
            if qual in self.classes:
                return Symbol("class", qual, self.classes[qual].module)
        return None

    def resolve_in_scope(self, module: str, scope: str, dotted: str) -> Symbol | None:
        """A dotted name as written inside `scope` of `module`: local imports and
        nested definitions of enclosing functions first, then the module, then builtins."""
        head, _, rest = dotted.partition(".")
        sym = self._name_in_scope(module, scope, head)
        for attr in rest.split(".") if rest else ():
            if sym is None:
                return None
            sym = self.member(sym, attr)
        return sym

    def _name_in_scope(self, module: str, scope: str, name: str) -> Symbol | None:
        for sc in self.chain(scope):
            if sc == MODULE_SCOPE:
                break
            qual = f"{module}.{sc}.{name}"
            if qual in self.functions:
                return Symbol("function", qual, module)
            if qual in self.classes:
                return Symbol("class", qual, module)
            target = self.scope(module, sc).imports.get(name)
            if target is not None:
                return self.lookup_import(target)
        sym = self.lookup_in_module(module, name)
        if sym is None and name in BUILTIN_NAMES:
            return Symbol("external", f"builtins.{name}")
        return sym

    # -- helpers ------------------------------------------------------------

    def enclosing_class(self, func: str) -> str | None:
        """The class a method belongs to (`pkg.m.A.f` -> `pkg.m.A`)."""
        fd = self.functions.get(func)
        if fd is None or not fd.fact.is_method:
            return None
        parent = func.rpartition(".")[0]
        return parent if parent in self.classes else None

    def member_function(self, cls: str, attr: str) -> bool:
        sym = self.member(Symbol("class", cls), attr)
        return sym is not None and sym.kind == "function"

    def is_builtin(self, name: str) -> bool:
        return name in BUILTIN_NAMES
