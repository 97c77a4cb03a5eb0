"""SGLang: `ServerArgs.add_cli_args`, as `python -m sglang.launch_server` builds it.

Most flags come from `add_cli_args_from_dataclass(parser, ServerArgs)`, which
turns every field annotated `A[T, "help"]` / `A[T, Arg(...)]` into an option;
we apply the same rules statically. Releases that assemble `ServerArgs` from
namespace classes (`collect_input_fields([...])`) are followed to those classes.
"""

from __future__ import annotations

import ast
from typing import Any

from analyzer.flags.fields import FieldInfo, TypeReader, class_fields
from analyzer.flags.interp import Frame, Interpreter
from analyzer.flags.models import FlagReport
from analyzer.flags.render import render
from analyzer.flags.source import Module, SourceTree
from analyzer.flags.values import ClassV, Opaque, ParserV

SERVER_ARGS_MODULE = "sglang.srt.server_args"
_META_NAMES = {"A", "Annotated"}


def _record_fields(interp: Interpreter, cls: ClassV) -> list[FieldInfo]:
    """ServerArgs's own fields plus those of classes handed to `collect_input_fields(...)`."""
    module = cls.sym.module
    collected: list[FieldInfo] = []
    for stmt in module.tree.body:
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if not (isinstance(value, ast.Call) and getattr(value.func, "id", None) == "collect_input_fields"):
            continue
        sources = interp.eval(value.args[0], Frame(module)) if value.args else None
        if not isinstance(sources, list):
            interp.warn(module, stmt, "collect_input_fields over a non-literal list: its fields are not listed")
            continue
        for source in sources:
            if isinstance(source, ClassV):
                collected.extend(class_fields(interp.tree, source.sym))
            else:
                interp.warn(module, stmt, f"namespace {render(source)} not resolvable: its fields are not listed")
    own = class_fields(interp.tree, cls.sym)
    names = {f.name for f in own}
    return [f for f in collected if f.name not in names] + own


def _metadata(interp: Interpreter, f: FieldInfo) -> tuple[ast.expr | None, dict[str, Any] | None]:
    """(inner type, Arg keyword values) of `A[T, meta, ...]`; (None, None) when not annotated."""
    ann = f.annotation
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None, None
    if not (isinstance(ann, ast.Subscript) and getattr(ann.value, "id", getattr(ann.value, "attr", None)) in _META_NAMES):
        return None, None
    parts = list(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    frame = Frame(f.module)
    for meta in parts[1:]:
        if isinstance(meta, ast.Call) and getattr(meta.func, "id", getattr(meta.func, "attr", None)) == "Arg":
            kwargs: dict[str, Any] = {}
            for kw in meta.keywords:
                if kw.arg is not None:
                    kwargs[kw.arg] = interp.eval(kw.value, frame)
            if meta.args:
                kwargs.setdefault("help", interp.eval(meta.args[0], frame))
            return parts[0], kwargs
        if isinstance(meta, ast.Call):
            continue  # NS(...) and other markers
        value = interp.eval(meta, frame)
        if isinstance(value, str):
            return parts[0], {"help": value}
        if isinstance(value, Opaque):
            interp.warn(f.module, meta, f"field {f.name}: metadata {value.src} not statically known; assumed help text")
            return parts[0], {"help": value}
    return parts[0], None


def _field_option(interp: Interpreter, f: FieldInfo, inner: ast.expr, meta: dict[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """Option strings and argparse kwargs `add_cli_args_from_dataclass` would register."""
    if meta.get("no_cli") is True:
        return None
    cli_name = meta.get("cli_name")
    cli_name = cli_name if isinstance(cli_name, str) else "--" + f.name.replace("_", "-")
    aliases = meta.get("aliases") or []
    if not isinstance(aliases, list | tuple):
        interp.warn(f.module, ast.Name(id=f.name, lineno=f.line), f"field {f.name}: aliases {render(aliases)} not static")
        aliases = []
    names = [cli_name, *[a for a in aliases if isinstance(a, str)]]
    kw: dict[str, Any] = {"help": meta.get("help", "")}
    if cli_name.lstrip("-").replace("-", "_") != f.name:
        kw["dest"] = f.name
    default_src = f.default_source()
    if default_src is not None:
        kw["default"] = Opaque(default_src)
    if meta.get("action") is not None:
        kw["action"] = meta["action"]
        extra = meta.get("action_kwargs")
        if isinstance(extra, dict):
            kw.update(extra)
        return names, kw
    atoms = TypeReader(interp.tree).atoms(inner, f.module)
    non_none = {a for a in atoms if a.kind != "none"}
    single = next(iter(non_none)) if len(non_none) == 1 else None
    type_parser = meta.get("type_parser")
    for key in ("nargs", "const"):
        if meta.get(key) is not None:
            kw[key] = meta[key]
    if single is not None and single.kind == "literal":
        values = list(single.detail)
        kw["choices"] = meta.get("choices") or values
        kw["type"] = type_parser or Opaque(type(values[0]).__name__ if values else "str")
        kw.pop("nargs", None)
        return names, kw
    if single is not None and single.kind == "list" and type_parser is None:
        elem = single.detail[0] if single.detail else "str"
        kw["type"] = Opaque(elem if elem in {"str", "int", "float"} else "str")
        kw["nargs"] = meta.get("nargs") or "+"
        if meta.get("choices"):
            kw["choices"] = meta["choices"]
        return names, kw
    if single is not None and single.kind == "bool":
        kw.pop("nargs", None)
        kw.pop("const", None)
        kw["action"] = "store_true"
        return names, kw
    kind = single.kind if single is not None else "str"
    kw["type"] = type_parser or Opaque(kind if kind in {"str", "int", "float"} else "str")
    if meta.get("choices"):
        kw["choices"] = meta["choices"]
    required = meta.get("required")
    if required is True or (required is None and default_src is None):
        kw["required"] = True
    return names, kw


def from_dataclass_hook(interp: Interpreter, node: ast.Call, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if len(args) < 2 or not isinstance(args[0], ParserV) or not isinstance(args[1], ClassV):
        interp.warn(frame.module, node, f"{frame.module.segment(node)}: parser or class not resolvable")
        return Opaque(frame.module.segment(node))
    parser, cls = args[0], args[1]
    only = kwargs.get("fields")
    for f in _record_fields(interp, cls):
        if isinstance(only, list) and f.name not in only:
            continue
        inner, meta = _metadata(interp, f)
        if inner is None or meta is None:
            continue  # argparse never sees a field without Arg metadata
        option = _field_option(interp, f, inner, meta)
        if option is None:
            continue
        names, kw = option
        interp.record_option(parser, names, kw, defined_at=f.where, registered_at=frame.module.where(node), field_at=f.where)
    return Opaque("None")


def _root_parser(interp: Interpreter, module: Module) -> ParserV:
    """The `argparse.ArgumentParser(...)` in `prepare_server_args` (it adds -h/--help)."""
    for stmt in module.tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "prepare_server_args":
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and module.segment(node.func).endswith("ArgumentParser"):
                    add_help = not any(
                        kw.arg == "add_help" and isinstance(kw.value, ast.Constant) and kw.value.value is False
                        for kw in node.keywords
                    )
                    return interp.new_parser(module, node, add_help)
    interp.warnings.append(f"{module.path}: prepare_server_args has no ArgumentParser(...); -h/--help assumed")
    return interp.new_parser(module, module.tree)


def extract_sglang_flags(tree: SourceTree) -> FlagReport:
    interp = Interpreter(tree, hooks={"add_cli_args_from_dataclass": from_dataclass_hook})
    module = tree.module(SERVER_ARGS_MODULE)
    sym = tree.resolve(module, "ServerArgs") if module is not None else None
    if module is None or sym is None or sym.kind != "class":
        interp.warnings.append(f"{SERVER_ARGS_MODULE}: no ServerArgs class found")
        return FlagReport("sglang", [], [], interp.warnings)
    parser = _root_parser(interp, module)
    add_cli_args = interp.attribute(ClassV(sym), "add_cli_args")
    if add_cli_args is None:
        interp.warnings.append(f"{module.path}: ServerArgs.add_cli_args not found")
    else:
        interp.call_function(add_cli_args, [parser], {})
    return FlagReport("sglang", interp.flags, interp.positionals, interp.warnings)
