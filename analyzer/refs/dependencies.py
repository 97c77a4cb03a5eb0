"""What a pin takes from other packages: the import roots of its dependencies, and the names its
sources import from them.

A name in code font that resolves nowhere in the pin is broken unless there is positive evidence
that it is not the project's. One kind of evidence is the pin itself: its wheel's METADATA
declares its dependencies (`Requires-Dist: flashinfer_python`), and its sources say where a name
comes from (`from cache_dit import BlockAdapterRegister`). Both are read from the snapshot as text,
once per pin (never imported), and cached beside the pin's view.
"""

from __future__ import annotations

import ast
import collections
import functools
import importlib.util
import keyword
import os
import re
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.refs.jsoncache import read_record, write_record

FORMAT = 3

# `from flashinfer.decode import (A, B as C)`, `import cache_dit.caching as cd, zmq`.
_FROM_RE = re.compile(r"^[ \t]*from[ \t]+(?P<module>[A-Za-z_][\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n#;]*)", re.MULTILINE)
_MODULE = r"[A-Za-z_][\w.]*(?:[ \t]+as[ \t]+[A-Za-z_]\w*)?"
# The whole line is the statement (`import there is` in a docstring is prose).
_IMPORT_RE = re.compile(rf"^[ \t]*import[ \t]+(?P<modules>{_MODULE}(?:[ \t]*,[ \t]*{_MODULE})*)[ \t]*(?:#.*)?$", re.MULTILINE)
_NAME_RE = re.compile(r"[A-Za-z_]\w*")
_REQUIRES_RE = re.compile(r"^Requires-Dist:\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)", re.MULTILINE)

# Python's own library, as this interpreter knows it (ours, not upstream's: nothing is imported
# from the snapshot). `typing.Sequence` written bare is `Sequence`.
STDLIB_MODULES = frozenset(m for m in sys.stdlib_module_names if not m.startswith("_"))
TYPING_NAMES = frozenset(n for n in dir(typing) if not n.startswith("_") and n[0].isupper())
# The standard library's modules a serving loop takes classes from (`PriorityQueue()`,
# `ThreadPoolExecutor(...)`, `OrderedDict()`), read as this interpreter's source text.
_CLASS_MODULES = ("queue", "threading", "collections", "concurrent.futures", "asyncio", "multiprocessing", "enum", "contextlib", "weakref")


def _module_trees(module: str) -> list[ast.Module]:
    """The parsed source files of one standard-library module (every file of a package), read
    as text from this interpreter's library, never imported; unreadable files are left out."""
    spec = importlib.util.find_spec(module)
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    if origin is None:
        return []
    trees = []
    for file in sorted(origin.parent.glob("*.py")) if origin.name == "__init__.py" else [origin]:
        try:
            trees.append(ast.parse(file.read_text(encoding="utf-8")))
        except (OSError, SyntaxError, ValueError):
            continue
    return trees


@functools.cache
def stdlib_classes() -> dict[str, str]:
    """Public class name (or capitalised function's) -> the standard-library module that defines
    it, from the modules above (parsed, never imported); the first module wins (`Queue` is
    `queue`'s before `asyncio`'s)."""
    out: dict[str, str] = {}
    for module in _CLASS_MODULES:
        for tree in _module_trees(module):
            # (Also under a top-level `if`: `multiprocessing.connection.Pipe` is per platform.)
            for node in [*tree.body, *(n for top in tree.body if isinstance(top, ast.If) for n in [*top.body, *top.orelse])]:
                # (`multiprocessing.Pipe`, a function named like a class, is written like one.)
                if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name[:1].isupper():
                    out.setdefault(node.name, module)
    return out


# Classes whose methods a serving loop calls by name (`loop.run_in_executor(...)`,
# `self.cache.move_to_end(key)`): module -> class, read from this interpreter's sources.
_METHOD_CLASSES = {
    "asyncio.events": ("AbstractEventLoop",),
    "collections": ("OrderedDict", "Counter"),
    "queue": ("Queue",),
    "threading": ("Thread", "Event", "Condition"),
    "concurrent.futures._base": ("Future", "Executor"),
}


# Methods of the built-in containers an attribute may hold (`self.models.update(...)`).
CONTAINER_METHODS = frozenset(n for kind in (dict, list, set) for n in dir(kind) if not n.startswith("_"))


@functools.cache
def stdlib_methods() -> dict[str, str]:
    """Public method name -> `module.Class` of the standard library (and of the built-in
    containers) that defines it; the text's bare `move_to_end()` is `OrderedDict`'s where the pin
    never defines such a name."""
    out: dict[str, str] = {}
    for kind in (dict, list, set, str, bytes, collections.deque):
        out.update((n, kind.__name__) for n in dir(kind) if not n.startswith("_"))
    for module, classes in _METHOD_CLASSES.items():
        for tree in _module_trees(module):
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.name in classes:
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not item.name.startswith("_"):
                            out.setdefault(item.name, f"{module.split('.')[0]}.{node.name}")
    return out


@dataclass(frozen=True, slots=True)
class Dependencies:
    """Import roots of a pin's dependencies, and each name its sources import from one."""

    roots: frozenset[str]  # `flashinfer`, `cache_dit`, `zmq`: never the project's own packages
    imported: dict[str, str]  # `TransferManagerOnRemote` -> `flexkv.transfer_manager` (the module it comes from)
    declared: frozenset[str]  # normalised Requires-Dist names (`flashinfer_python`)
    # A name the sources reach only as a member of a dependency's module or of a value it makes
    # (`xgr.GrammarMatcher(...)`, `self.matcher.accept_token(...)` for `matcher: xgr.GrammarMatcher`)
    # -> that dependency's module (`xgrammar`).
    reached: dict[str, str] = field(default_factory=dict)


def _normalise(dist: str) -> str:
    return re.sub(r"[-_.]+", "_", dist).lower()


def collect(root: Path, own_packages: set[str]) -> Dependencies:
    """Read the dist-info METADATA beside the package and every Python source under `root`."""
    declared: set[str] = set()
    for meta in root.glob("*.dist-info/METADATA"):
        try:
            declared.update(_normalise(m.group("name")) for m in _REQUIRES_RE.finditer(meta.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    roots: set[str] = set()
    imported: dict[str, str] = {}
    reached: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in {".git", "__pycache__"} and not d.endswith(".dist-info")]
        # A script importing a module beside it (`import dumper`) imports the pin's own file.
        local = own_packages | set(dirs) | {n.rsplit(".", 1)[0] for n in files}
        for name in files:
            if not name.endswith((".py", ".pyi")):
                continue
            try:
                text = (Path(folder) / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "import" in text:
                _scan(text, local, roots, imported, reached)
    roots = {r for r in roots if not keyword.iskeyword(r)}
    return Dependencies(
        frozenset(roots),
        {n: m for n, m in imported.items() if m.split(".", 1)[0] in roots},
        frozenset(declared),
        {n: m for n, m in reached.items() if m.split(".", 1)[0] in roots},
    )


def _scan(text: str, own: set[str], roots: set[str], imported: dict[str, str], reached: dict[str, str]) -> None:
    bound: dict[str, str] = {}  # the names this file binds to a dependency's module or object
    for m in _IMPORT_RE.finditer(text):
        for part in m.group("modules").split(","):
            words = part.split()
            module = words[0] if words else ""
            top = module.split(".", 1)[0]
            if top and top not in own:
                roots.add(top)
                bound[words[-1] if len(words) == 3 else module] = module  # `import a.b as c` binds `c`
    for m in _FROM_RE.finditer(text):
        module = m.group("module")
        top = module.split(".", 1)[0]
        if top in own:
            continue
        roots.add(top)
        for item in m.group("names").strip("()").split(","):
            words = _NAME_RE.findall(item.split("#", 1)[0])
            if words and words[0] != "import":
                imported.setdefault(words[0], module)  # `A as B`: the dependency's name is `A`
                bound[words[-1]] = module
    bound = {b: m for b, m in bound.items() if m.split(".", 1)[0] not in STDLIB_MODULES}
    if bound:
        _reach(text, bound, reached)


def _reach(text: str, bound: dict[str, str], reached: dict[str, str]) -> None:
    """Members this file reaches through a dependency (`bound`: `xgr` -> `xgrammar`): `xgr.X`, and
    `v.Y` where `v` (or `self.v`) is annotated with or assigned from one (`v: xgr.T`, `v = xgr.f(...)`,
    `v = T(...)` for an imported `T`). A member's own members are not followed: `torch.ops.x.y`
    names an op the project may register itself."""
    names = "|".join(re.escape(b) for b in sorted(bound, key=len, reverse=True))
    typed: dict[str, str] = {}
    for m in re.finditer(rf"(?<![\w.])(?P<base>{names})\.(?P<member>[A-Za-z_]\w*)", text):
        reached.setdefault(m.group("member"), bound[m.group("base")])
    for m in re.finditer(
        rf"(?<![\w.])(?:self\.)?(?P<var>[A-Za-z_]\w*)\s*(?::\s*[\"']?(?:Optional\[)?(?P<ann>{names})\b|=\s*(?P<call>{names})\s*(?:\.\s*[A-Za-z_]\w*\s*)?\()",
        text,
    ):
        typed.setdefault(m.group("var"), bound[m.group("ann") or m.group("call")])
    typed = {v: module for v, module in typed.items() if v not in bound and v != "self"}
    if typed:
        variables = "|".join(re.escape(v) for v in sorted(typed, key=len, reverse=True))
        for m in re.finditer(rf"(?<![\w.])(?:self\.)?(?P<var>{variables})\.(?P<member>[A-Za-z_]\w*)", text):
            reached.setdefault(m.group("member"), typed[m.group("var")])


def load_or_collect(cache: Path, root: Path, own_packages: set[str]) -> Dependencies | None:
    """The cached record at `cache`, else collected from `root` and saved; None without a tree."""
    data = read_record(cache, FORMAT)
    if data is not None:
        try:
            return Dependencies(frozenset(data["roots"]), dict(data["imported"]), frozenset(data["declared"]), dict(data["reached"]))
        except (KeyError, TypeError, ValueError):
            pass  # damaged: collect again
    if not root.is_dir():
        return None
    found = collect(root, own_packages)
    write_record(cache, FORMAT, {
        "roots": sorted(found.roots), "imported": dict(sorted(found.imported.items())), "declared": sorted(found.declared),
        "reached": dict(sorted(found.reached.items())),
    })
    return found
