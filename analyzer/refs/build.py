"""Build a `PinView` from the index's per-file facts and the flag/env extraction."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.refs.pinview import EnvEntry, FlagEntry, PinView, SymbolEntry
from analyzer.refs.routes import module_routes

_CONSTRUCTED_RE = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*\.)*(_*[A-Z][A-Za-z0-9_]*)\(")

if TYPE_CHECKING:  # importing analyzer.index pulls in libcst; only the types are needed here
    from analyzer.index.made_classes import MadeClass
    from analyzer.index.models import ModuleFacts
    from analyzer.index.native import NativeFile


def symbols_from_facts(modules: Iterable[ModuleFacts]) -> list[SymbolEntry]:
    """Modules, classes, functions, class/instance attributes and module-level re-exports."""
    return symbols_and_open_classes(modules)[0]


def symbols_and_open_classes(modules: Iterable[ModuleFacts]) -> tuple[list[SymbolEntry], dict[str, str]]:
    """`symbols_from_facts`, and the classes whose members cannot all be known statically
    (a class a call builds from a field list the index cannot follow), with the reason."""
    # Imported here: analyzer.index pulls in libcst, which a warm check never needs.
    from analyzer.index.made_classes import read_made_classes

    out: list[SymbolEntry] = []
    by_module: dict[str, ModuleFacts] = {}
    built: list[tuple[ModuleFacts, MadeClass]] = []
    for facts in modules:
        mod = facts.module
        path = facts.path
        by_module[mod] = facts
        seen: set[str] = set()

        def add(
            full: str, line: int, end: int, kind: str, bases: tuple[str, ...] = (),
            _seen: set[str] = seen, _path: str = path,
        ) -> None:
            if full not in _seen:
                _seen.add(full)
                out.append(SymbolEntry(full, _path, line, end, kind, bases))

        add(mod, 1, max(1, facts.lines), "module")
        for cls in facts.classes:
            add(f"{mod}.{cls.qualname}", cls.line, cls.end_line, "class", tuple(cls.bases))
        for fn in facts.functions:
            add(f"{mod}.{fn.qualname}", fn.line, fn.end_line, "function")
        for cls in facts.classes:
            for attr in (*cls.fields, *cls.class_attributes, *cls.instance_attributes):
                name = attr.target.removeprefix("self.")
                if name.isidentifier():
                    add(f"{mod}.{cls.qualname}.{name}", attr.line, attr.line, "attribute")
        for cls_made in read_made_classes(facts):
            # `X = msgspec.defstruct("X", ...)`: a class (its fields are added below, once every
            # module is known); a class statement of the same name stays the entry.
            built.append((facts, cls_made))
            add(f"{mod}.{cls_made.name}", cls_made.line, cls_made.line, "class", cls_made.bases)
        for attr in facts.module_attributes:
            if attr.target.isidentifier():
                # `ModelRegistry = _ModelRegistry(...)`: the object's class, so that
                # `ModelRegistry.register_model` resolves through `_ModelRegistry`.
                made = _CONSTRUCTED_RE.match(attr.value or "")
                add(f"{mod}.{attr.target}", attr.line, attr.line, "attribute", (made.group(1),) if made else ())
        for imp in facts.imports:
            # Module-level names a file re-exports (`from vllm import LLM` works through them).
            if imp.scope != "<module>" or imp.name in (None, "*") or not path.endswith("__init__.py"):
                continue  # only packages' re-exports: `from vllm import LLM` style citations
            if imp.level == 0 and imp.module.split(".", 1)[0] != mod.split(".", 1)[0]:
                continue  # `from typing import Sequence` in an __init__ is not the project's `Sequence`
            name = imp.asname or imp.name
            if name:
                add(f"{mod}.{name}", imp.line, imp.line, "import")
        for name in facts.all_names or ():
            add(f"{mod}.{name}", 1, 1, "import")
    open_classes = _made_members(built, by_module, out) if built else {}
    return out, open_classes


def _made_members(
    made: list[tuple[ModuleFacts, MadeClass]], by_module: dict[str, ModuleFacts], out: list[SymbolEntry]
) -> dict[str, str]:
    """Add the fields of classes built by a call (`MadeClass`) to `out`: the names its field
    list spells (at the call) and the annotated fields of the classes it collects (where they
    are declared). Returns {class: why its members are not all known} for the rest."""
    from analyzer.index.made_classes import member_fields

    known = {e.full for e in out}
    open_classes: dict[str, str] = {}
    for facts, cls in made:
        full = f"{facts.module}.{cls.name}"
        members: list[tuple[str, str, int]] = [(name, facts.path, cls.line) for name in cls.fields]
        missing = []
        for source in cls.field_classes:
            declared = member_fields(source, by_module)
            if declared is None:
                missing.append(source)
                continue
            members += [(name, where.path, line) for name, where, line in declared]
        for name, path, line in members:
            if name.isidentifier() and f"{full}.{name}" not in known:
                known.add(f"{full}.{name}")
                out.append(SymbolEntry(f"{full}.{name}", path, line, line, "attribute"))
        if cls.unknown or missing:
            reason = cls.unknown or f"its fields come from `{missing[0]}`, which the index does not define"
            open_classes[full] = f"`{cls.factory}(...)` at {facts.path}:{cls.line} builds it; {reason}"
    return open_classes


def native_module(path: str) -> str:
    """The dotted prefix of a C/C++/CUDA/Rust file's symbols: its path with dots, extension kept
    (`csrc/attention/paged_attention_v1.cu` -> `csrc.attention.paged_attention_v1.cu`), so a
    native name never shadows a Python module's and `short_name` strips it like a module's."""
    return path.replace("/", ".")


def symbols_from_native(files: Iterable[NativeFile]) -> list[SymbolEntry]:
    """Definitions tree-sitter found in native sources, under their file's dotted path."""
    out: list[SymbolEntry] = []
    for native in files:
        prefix = native_module(native.path)
        seen: set[str] = set()
        for sym in native.symbols:
            full = f"{prefix}.{sym.qualname}"
            key = f"{full}\x00{sym.kind}"
            if key in seen:
                continue  # overloads and specialisations: the first definition stands for all
            seen.add(key)
            out.append(SymbolEntry(full, native.path, sym.line, sym.end_line, sym.kind))
    return out


# `"ArceeForCausalLM": ("transformers", "TransformersForCausalLM"),` in vLLM's model registry.
_REGISTRY_ENTRY_RE = re.compile(r'^\s*"(?P<arch>[A-Za-z_][A-Za-z0-9_]*)"\s*:\s*\(\s*"[A-Za-z0-9_.]+"\s*,\s*"(?P<cls>[A-Za-z_][A-Za-z0-9_]*)"', re.M)


def registry_architectures(package_root: Path, packages: Iterable[str]) -> list[SymbolEntry]:
    """Architecture names a model registry maps to an implementation (read as text, never
    imported): `ArceeForCausalLM` stays a supported architecture after its own class is gone
    and the registry serves it with `TransformersForCausalLM`."""
    out: list[SymbolEntry] = []
    for package in packages:
        path = package_root / package / "model_executor" / "models" / "registry.py"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rel = path.relative_to(package_root).as_posix()
        module = rel.removesuffix(".py").replace("/", ".")
        seen: set[str] = set()
        for m in _REGISTRY_ENTRY_RE.finditer(text):
            arch = m.group("arch")
            if arch not in seen:
                seen.add(arch)
                line = text.count("\n", 0, m.start("arch")) + 1
                out.append(SymbolEntry(f"{module}.{arch}", rel, line, line, "attribute"))
    return out


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


def flags_from(items: Iterable[Any]) -> list[FlagEntry]:
    out = []
    for f in items:
        aliases = tuple(a for a in (_get(f, "aliases") or ()) if a != _get(f, "flag"))
        aliases += tuple(a for a in (_get(f, "negative_aliases") or ()) if a not in aliases)
        # Only choices the flag index could read as literal values (not an expression it kept as text).
        listed = _get(f, "choices")
        choices = tuple(str(c) for c in listed) if isinstance(listed, list | tuple) else ()
        typed = tuple(str(v) for v in _get(f, "typed_values") or ())
        out.append(FlagEntry(_get(f, "flag"), aliases, _get(f, "dest"), _get(f, "defined_at"), choices, typed))
    return out


def envs_from(items: Iterable[Any]) -> list[EnvEntry]:
    return [EnvEntry(_get(e, "name"), _get(e, "defined_at"), tuple(_get(e, "deprecated_names") or ())) for e in items]


_ENV_LITERAL_RE = re.compile(r"""["']((?:VLLM|SGLANG|SGL)_[A-Z0-9_]*[A-Z0-9])["']""")


def env_literals(package_root: Path, packages: Iterable[str] = ()) -> frozenset[str]:
    """Env var names the project's own sources spell as string literals (read statically, never
    imported). With `packages`, only their folders count: a git pin's CI scripts, tests and
    examples (`.buildkite/`, `tests/`) set variables the project itself may no longer read."""
    return source_literals(package_root, packages).envs


# `op_name="unified_attention_with_output"` (vLLM's and SGLang's `direct_register_custom_op`),
# `torch.library.custom_op("vllm::x")` / `Library("sglang", ...)` spellings of an op's name.
_OP_NAME_RE = re.compile(r"""\bop_name\s*=\s*["']([A-Za-z_]\w*)["']|\bcustom_op\(\s*["'](?:vllm|sglang)::([A-Za-z_]\w*)["']""")


def custom_ops(package_root: Path, packages: Iterable[str] = ()) -> dict[str, str]:
    """Ops the project's sources register with torch, name -> `path:line` (read statically): a
    document writes them as `vllm.unified_attention` (a `splitting_ops` entry) or through
    `torch.ops.vllm.x`, names no Python definition stands for."""
    return source_literals(package_root, packages).ops


# `"FP8_PB_WO"`, `'MXFP8'`: a name in capitals written as a string, a value the code compares with.
_CAPS_VALUE_RE = re.compile(r"""["']([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)["']""")


@dataclass(frozen=True)
class SourceLiterals:
    """What a pin view reads off the sources' text besides the index, in one pass."""

    envs: frozenset[str]  # `env_literals`
    ops: dict[str, str]  # `custom_ops`
    routes: dict[str, tuple[str, ...]]  # route -> names its handlers take (`routes.module_routes`)
    values: frozenset[str]  # quoted names in capitals (`"FP8_PB_WO"`): values the code knows


def source_literals(package_root: Path, packages: Iterable[str] = ()) -> SourceLiterals:
    """`env_literals`, `custom_ops` and the HTTP routes in one pass over the packages' Python
    files: a pin view reads a tree of thousands of files once, not once per kind of literal."""
    packages = tuple(packages)
    envs: set[str] = set()
    ops: dict[str, str] = {}
    routes: dict[str, tuple[str, ...]] = {}
    values: set[str] = set()
    roots = [package_root / p for p in packages if (package_root / p).is_dir()] or [package_root]
    for path in sorted(f for root in roots for f in root.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "VLLM_" in text or "SGL" in text:
            envs.update(_ENV_LITERAL_RE.findall(text))
        if "op_name" in text or "custom_op(" in text:
            for m in _OP_NAME_RE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                ops.setdefault(m.group(1) or m.group(2), f"{path.relative_to(package_root).as_posix()}:{line}")
        values.update(_CAPS_VALUE_RE.findall(text))
        for route, names in module_routes(text, packages).items():
            known = routes.get(route, ())
            routes[route] = (*known, *(n for n in names if n not in known))
    return SourceLiterals(frozenset(envs), ops, routes, frozenset(values))


def list_files(package_root: Path) -> frozenset[str]:
    """Package-relative paths of every file under the package root (not only Python)."""
    files: set[str] = set()
    for path in package_root.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            files.add(path.relative_to(package_root).as_posix())
    return frozenset(files)


def view_from_facts(
    *,
    pin: str,
    project: str,
    kind: str,
    layout_prefix: str,
    packages: tuple[str, ...],
    files: frozenset[str],
    modules: Iterable[ModuleFacts],
    flags: Iterable[Any] = (),
    envs: Iterable[Any] = (),
    upstream_commit: str | None = None,
    store_commit: str | None = None,
    tree: Path | None = None,
) -> PinView:
    symbols, open_classes = symbols_and_open_classes(modules)
    return PinView(
        pin=pin,
        project=project,
        kind=kind,
        layout_prefix=layout_prefix,
        packages=packages,
        files=files,
        symbols=symbols,
        open_classes=open_classes,
        flags=flags_from(flags),
        envs=envs_from(envs),
        upstream_commit=upstream_commit,
        store_commit=store_commit,
        tree=str(tree) if tree else None,
    )
