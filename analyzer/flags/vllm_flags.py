"""vLLM: the `vllm serve` parser, followed from the serve subcommand's `subparser_init`.

Flags generated from config dataclasses go through `get_kwargs(ConfigClass)`,
which we model statically with the same type rules vLLM applies at runtime
(bool -> BooleanOptionalAction, Literal -> choices, list -> nargs, nested
config dataclass -> JSON, Optional -> optional_type).

What is listed is what argparse itself registers. Not listed, because they are
rewrites `FlexibleArgumentParser.parse_args` applies before argparse sees the
command line: underscores for dashes (`--max_model_len`), `-O3` / `-O 3` for
`--optimization-level 3`, `--model X` moved to the positional `model_tag`,
`--help=<group>` searches and dotted JSON keys (`--compilation-config.level`).
`--model` itself is registered only when argv lacks a bare `--help`, so it is
listed with that condition (`--help=all` does list it).
"""

from __future__ import annotations

import ast
from typing import Any

from analyzer.flags.fields import Atom, FieldInfo, TypeReader, class_fields
from analyzer.flags.interp import Frame, Interpreter
from analyzer.flags.models import FlagReport
from analyzer.flags.source import SourceSymbol, SourceTree
from analyzer.flags.values import ClassV, FieldKwargs, InstanceV, Opaque, ParserV, SubparsersV

SERVE_MODULE = "vllm.entrypoints.cli.serve"
MAIN_MODULE = "vllm.entrypoints.cli.main"


def field_kwargs(field: FieldInfo, atoms: set[Atom], reader: TypeReader | None = None) -> tuple[FieldKwargs, str | None]:
    """argparse kwargs vLLM's `_compute_kwargs` builds for one field; (kwargs, problem)."""
    kinds = {a.kind for a in atoms}
    default = field.default_source()
    kw: dict[str, Any] = {
        "default": Opaque(default) if default is not None else Opaque("MISSING"),
        "help": field.doc or "",
    }
    problem = None
    builtin_kinds = {"bool", "int", "float", "str", "list", "dict", "set", "tuple", "none", "literal", "bytes"}
    non_builtin = any(k not in builtin_kinds for k in kinds)
    if "dataclass" in kinds:
        name = next(a.detail[0] for a in atoms if a.kind == "dataclass")
        kw["type"] = Opaque(f"parse_dataclass[{name}]")
    elif kinds == {"bool", "str", "none"}:
        kw.update(type=Opaque("str"), nargs="?", const=True)
    elif "bool" in kinds:
        kw["action"] = Opaque("argparse.BooleanOptionalAction")
    elif "literal" in kinds:
        options = next(a.detail for a in atoms if a.kind == "literal")
        option_type = type(options[0]).__name__ if options else "str"
        key = "metavar" if "str" in kinds else "choices"
        ordered = _sorted(options)
        kw.update({"type": Opaque(option_type), key: ordered if key == "choices" else "{" + ",".join(map(str, ordered)) + "}"})
    elif kinds & {"tuple", "list", "set"}:
        kind = next(k for k in ("tuple", "list", "set") if k in kinds)
        detail = next(a.detail for a in atoms if a.kind == kind)
        elem = str(detail[0]) if detail else "str"
        elem = "str" if "|" in elem or elem.startswith(("Union", "Optional")) else elem
        fixed = kind == "tuple" and detail and "..." not in detail
        kw.update(type=Opaque(elem), nargs=len(detail) if fixed else "+")
        literal = _literal_elem(elem, field, reader)
        if literal is not None:  # a sequence of Literal: vLLM turns the element type into choices
            kw.update(type=Opaque(type(literal[0]).__name__ if literal else "str"), choices=_sorted(literal))
    elif "int" in kinds:
        kw["type"] = Opaque("int")
    elif "float" in kinds:
        kw["type"] = Opaque("float")
    elif "dict" in kinds and ("str" in kinds or non_builtin):
        kw["type"] = Opaque("union_dict_and_str")
    elif "dict" in kinds:
        kw["type"] = Opaque("json.loads")
    elif "str" in kinds or non_builtin:
        kw["type"] = Opaque("str")
    else:
        problem = f"unsupported type {sorted(kinds)} for field {field.name}"
    if "none" in kinds and "bool" not in kinds and "type" in kw:
        kw["type"] = Opaque(f"optional_type({kw['type'].src})")
        if kw.get("choices"):
            kw["choices"] = [*kw["choices"], "None"]
    return FieldKwargs(kw, field_info=field), problem


def _sorted(values: tuple[object, ...] | list[object]) -> list[Any]:
    try:
        return sorted(values)
    except TypeError:
        return list(values)


def _literal_elem(elem: str, field: FieldInfo, reader: TypeReader | None) -> tuple[object, ...] | None:
    if reader is None:
        return None
    try:
        node = ast.parse(elem, mode="eval").body
    except SyntaxError:
        return None
    atoms = reader.atoms(node, field.module)
    literal = [a for a in atoms if a.kind == "literal"]
    return literal[0].detail if len(atoms) == 1 and literal else None


def get_kwargs_hook(interp: Interpreter, node: ast.Call, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if not args or not isinstance(args[0], ClassV):
        interp.warn(frame.module, node, f"get_kwargs on a class not statically resolvable: {frame.module.segment(node)}")
        return Opaque(frame.module.segment(node))
    cls: ClassV = args[0]
    reader = TypeReader(interp.tree)
    out: dict[str, FieldKwargs] = {}
    for f in class_fields(interp.tree, cls.sym):
        kw, problem = field_kwargs(f, reader.atoms(f.annotation, f.module), reader)
        if problem:
            interp.warn(f.module, ast.Name(id=f.name, lineno=f.line), problem)
        out[f.name] = kw
    return out


def _find_serve_subcommand(tree: SourceTree) -> SourceSymbol | None:
    module = tree.module(SERVE_MODULE)
    if module is None:
        return None
    for stmt in module.tree.body:
        if not isinstance(stmt, ast.ClassDef):
            continue
        has_init = any(isinstance(s, ast.FunctionDef) and s.name == "subparser_init" for s in stmt.body)
        named_serve = any(
            isinstance(s, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "name" for t in s.targets)
            and isinstance(s.value, ast.Constant)
            and s.value.value == "serve"
            for s in stmt.body
        )
        if has_init and named_serve:
            return SourceSymbol("class", module, stmt, stmt.name)
    return None


def _top_parser(interp: Interpreter) -> ParserV | None:
    """The `vllm` command's own parser (`FlexibleArgumentParser` in cli/main.py): `serve`'s
    parser is made by its subparsers action, so it is of that class and registers what
    that class's __init__ registers (0.33.0: BooleanOptionalAction -> EnableDisableAction)."""
    module = interp.tree.module(MAIN_MODULE)
    if module is None:
        return None
    for node in ast.walk(module.tree):  # imported inside main() in the pinned releases
        if isinstance(node, ast.ImportFrom):
            base = interp.tree.absolute(module, node.level, node.module)
            for alias in node.names:
                sym = interp.tree.resolve_qualified(base, alias.name)
                if sym is not None and sym.kind == "class" and interp.is_parser_class(ClassV(sym)):
                    return interp.new_parser(module, node, cls=ClassV(sym), list_help=False)
    return None


def extract_vllm_flags(tree: SourceTree) -> FlagReport:
    interp = Interpreter(tree, hooks={"get_kwargs": get_kwargs_hook, "_compute_kwargs": get_kwargs_hook})
    sub = _find_serve_subcommand(tree)
    if sub is None:
        interp.warnings.append(f"{SERVE_MODULE}: no subcommand class with name = 'serve' and subparser_init")
        return FlagReport("vllm", [], [], interp.warnings)
    cls = ClassV(sub)
    init = interp.attribute(InstanceV(cls), "subparser_init")
    interp.call_function(init, [SubparsersV(parent=_top_parser(interp))], {})
    return FlagReport("vllm", interp.flags, interp.positionals, interp.warnings)
