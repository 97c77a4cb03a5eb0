"""SGLang environment variables: the `Envs` registry in `sglang/srt/environ.py`.

Each class attribute `NAME = EnvBool(default, deprecated_name=...)` is one
variable. Renames listed in `_DEPRECATED_ENVS` become `deprecated_names` of
their replacement; names listed there without a replacement are `retired`
(read only to warn that they do nothing any more).
"""

from __future__ import annotations

import ast

from analyzer.flags.models import EnvReport, EnvVar
from analyzer.flags.source import Module, SourceTree

ENV_MODULE = "sglang.srt.environ"


def _call_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _registry(module: Module, warnings: list[str]) -> dict[str, EnvVar]:
    envs: dict[str, EnvVar] = {}
    cls = next((s for s in module.tree.body if isinstance(s, ast.ClassDef) and s.name == "Envs"), None)
    if cls is None:
        warnings.append(f"{module.path}: no `class Envs` registry found")
        return envs
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        else:
            continue
        kind = _call_name(value)
        if kind is None or not kind.startswith("Env"):
            if not target.startswith("_"):
                warnings.append(f"{module.where(stmt)}: Envs.{target} is not an Env* field; skipped")
            continue
        assert isinstance(value, ast.Call)
        default_node = value.args[0] if value.args else _keyword(value, "default")
        deprecated = _keyword(value, "deprecated_name")
        names = []
        if isinstance(deprecated, ast.Constant) and isinstance(deprecated.value, str):
            names.append(deprecated.value)
        elif deprecated is not None:
            warnings.append(f"{module.where(stmt)}: deprecated_name of {target} is not a literal")
        envs[target] = EnvVar(
            target, module.where(stmt), module.segment(default_node) if default_node is not None else None,
            kind=kind, deprecated_names=names,
        )
    return envs


def _deprecations(module: Module, envs: dict[str, EnvVar], warnings: list[str]) -> list[EnvVar]:
    retired: list[EnvVar] = []
    for stmt in module.tree.body:
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else stmt.targets[0] if isinstance(stmt, ast.Assign) else None
        if not (isinstance(target, ast.Name) and target.id == "_DEPRECATED_ENVS"):
            continue
        assert isinstance(stmt, ast.Assign | ast.AnnAssign)
        value = stmt.value
        if not isinstance(value, ast.Dict):
            warnings.append(f"{module.where(stmt)}: _DEPRECATED_ENVS is not a dict literal")
            continue
        for key, item in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            replacement = _keyword(item, "replacement") if isinstance(item, ast.Call) else None
            if isinstance(item, ast.Call) and replacement is None and item.args:
                replacement = item.args[0]
            new = replacement.value if isinstance(replacement, ast.Constant) else None
            if key.value in envs:
                continue  # still a live registry field (kept for legacy call sites)
            if isinstance(new, str) and new in envs:
                if key.value not in envs[new].deprecated_names:
                    envs[new].deprecated_names.append(key.value)
            else:
                retired.append(EnvVar(key.value, module.where(key), None, kind="deprecated", source="retired"))
    return retired


def extract_sglang_envs(tree: SourceTree) -> EnvReport:
    module = tree.module(ENV_MODULE)
    if module is None:
        return EnvReport("sglang", [], [], [f"{ENV_MODULE.replace('.', '/')}.py: not found"])
    warnings: list[str] = []
    envs = _registry(module, warnings)
    retired = _deprecations(module, envs, warnings)
    return EnvReport("sglang", list(envs.values()), retired, warnings)
