"""vLLM environment variables: `vllm/envs.py` (or a `vllm/envs/` package).

The registry is the `environment_variables` dict of lambdas; anything else
the env module(s) read through os.environ / os.getenv with a `VLLM_` name is
listed too, marked `source="read"`.
"""

from __future__ import annotations

import ast
import re

from analyzer.flags.models import EnvReport, EnvVar
from analyzer.flags.source import Module, SourceTree

REGISTRY = "environment_variables"
_VLLM_NAME = re.compile(r"^VLLM_[A-Z0-9_]+$")


def env_modules(tree: SourceTree) -> list[Module]:
    single = tree.root / "vllm" / "envs.py"
    if single.is_file():
        mod = tree.module("vllm.envs")
        return [mod] if mod else []
    package = tree.root / "vllm" / "envs"
    mods: list[Module] = []
    if package.is_dir():
        for path in sorted(package.rglob("*.py")):
            dotted = path.relative_to(tree.root).with_suffix("").as_posix().replace("/", ".")
            mod = tree.module(dotted.removesuffix(".__init__"))
            if mod is not None:
                mods.append(mod)
    return mods


def _is_os_read(node: ast.Call) -> bool:
    """os.getenv(...) / os.environ.get(...) / environ.get(...) / getenv(...)."""
    func = node.func
    text = ast.unparse(func)
    return text in {"os.getenv", "os.environ.get", "environ.get", "getenv", "os.environ.setdefault"}


def _read_default(node: ast.AST, name: str, module: Module) -> str | None:
    """The default given where `name` itself is read inside `node`; None when none is."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and _is_os_read(sub) and sub.args:
            first = sub.args[0]
            if isinstance(first, ast.Constant) and first.value == name:
                if len(sub.args) > 1:
                    return module.segment(sub.args[1])
                for kw in sub.keywords:
                    if kw.arg == "default":
                        return module.segment(kw.value)
                return "None"
    return None


def _presence_default(node: ast.AST, name: str, module: Module) -> str | None:
    """`A if "X" in os.environ else B` -> B (and the mirrored `not in` form) -> A."""
    for sub in ast.walk(node):
        if not (isinstance(sub, ast.IfExp) and isinstance(sub.test, ast.Compare) and len(sub.test.ops) == 1):
            continue
        test = sub.test
        if not (isinstance(test.left, ast.Constant) and test.left.value == name):
            continue
        if ast.unparse(test.comparators[0]) not in {"os.environ", "environ"}:
            continue
        return module.segment(sub.orelse if isinstance(test.ops[0], ast.In) else sub.body)
    return None


def _registry_default(value: ast.expr, name: str, module: Module, tree: SourceTree) -> str | None:
    found = _presence_default(value, name, module) or _read_default(value, name, module)
    if found is not None:
        return found
    if isinstance(value, ast.Lambda):
        value = value.body
    if isinstance(value, ast.Call) and len(value.args) >= 2:
        first = value.args[0]
        if isinstance(first, ast.Constant) and first.value == name:  # env_with_choices("X", default, ...)
            return module.segment(value.args[1])
    target = value.func if isinstance(value, ast.Call) else value
    if isinstance(target, ast.Name):  # "VLLM_PORT": get_vllm_port
        sym = tree.resolve(module, target.id)
        if sym is not None and sym.kind == "function" and sym.node is not None:
            return _read_default(sym.node, name, sym.module)
    return None


def _registry_entries(module: Module) -> list[tuple[str, ast.expr, ast.AST]]:
    """(name, value expression, node for the line) for the dict and later item assignments."""
    out: list[tuple[str, ast.expr, ast.AST]] = []
    for stmt in ast.walk(module.tree):
        value: ast.expr | None = None
        names_registry = (
            isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == REGISTRY for t in stmt.targets)
        ) or (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == REGISTRY)
        if names_registry:
            assert isinstance(stmt, ast.Assign | ast.AnnAssign)
            value = stmt.value
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == REGISTRY
                        and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)):
                    out.append((t.slice.value, stmt.value, t))
        elif (isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute) and stmt.func.attr == "update"
              and isinstance(stmt.func.value, ast.Name) and stmt.func.value.id == REGISTRY and stmt.args):
            value = stmt.args[0]
        if isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    out.append((key.value, item, key))
    return out


def _bare_reads(module: Module) -> list[tuple[str, ast.AST]]:
    """VLLM_ names read through os.environ / os.getenv anywhere in the module."""
    found: list[tuple[str, ast.AST]] = []
    for node in ast.walk(module.tree):
        name_node: ast.expr | None = None
        if isinstance(node, ast.Call) and _is_os_read(node) and node.args:
            name_node = node.args[0]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in {"os.environ", "environ"}:
            name_node = node.slice
        elif (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)
              and ast.unparse(node.comparators[0]) in {"os.environ", "environ"}):
            name_node = node.left
        if isinstance(name_node, ast.Constant) and isinstance(name_node.value, str) and _VLLM_NAME.match(name_node.value):
            found.append((name_node.value, node))
    return found


def extract_vllm_envs(tree: SourceTree) -> EnvReport:
    mods = env_modules(tree)
    warnings: list[str] = []
    if not mods:
        return EnvReport("vllm", [], [], ["vllm/envs.py: neither vllm/envs.py nor a vllm/envs/ package found"])
    envs: dict[str, EnvVar] = {}
    for mod in mods:
        for name, value, where in _registry_entries(mod):
            if name in envs:
                continue
            envs[name] = EnvVar(name, mod.where(where), _registry_default(value, name, mod, tree))
    if not envs:
        warnings.append(f"{mods[0].path}: no `{REGISTRY}` dict with literal keys found")
    for mod in mods:
        for name, node in _bare_reads(mod):
            if name not in envs:
                envs[name] = EnvVar(name, mod.where(node), _read_default(node, name, mod), source="read")
    return EnvReport("vllm", list(envs.values()), [], warnings)
