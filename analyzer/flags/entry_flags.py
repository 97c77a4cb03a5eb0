"""The parser of another entry point (`sglang generate`, a diffusion `sglang serve`, a benchmark
script): every function of the command's module that makes an `ArgumentParser`, run by the
same static interpreter as the servers' parsers.

Such functions hand the fresh parser to adders in other modules (`add_multimodal_gen_generate_args
(parser)`, which calls `ServerArgs.add_cli_args(parser)` and `SamplingParams.add_cli_args(parser)`);
the interpreter follows every call that is handed the parser, so options spelled with f-strings
(`f"--{prefix}.use-tiling"`) are known too. Branches the command takes at run time (a diffusion
model or not) are all followed: the report lists what any of them accepts. A module that builds
its parser at import time (`if __name__ == "__main__":`) is read the same way, and a module that
makes none hands a fresh parser to its functions whose first parameter is `parser` (a
benchmark's `add_cli_args(parser)`, whose parser the CLI running it makes).

Options a command reads itself from what `parse_known_args` left over are families, not names:
`key.startswith("--component-paths.")`, `alias_suffix="-path"` (`--transformer-path`). Every
string literal of the modules the parser was built from that starts with `--` and ends with `.`
is such a prefix, and a literal given as a `*suffix*` keyword argument such a suffix.

An option the command's own module reads from argv by hand, before any parser sees it
(`if arg == "--model-type"`, `arg.startswith("--model-type=")`, as `sglang serve` picks its
backend), is accepted too.

A parser handed to a method picked at run time (`classes[0].add_pipeline_cli_args(parser)`, one
per model's config class) is handed to every definition of that method in the caller's
subpackage: what any model adds is accepted.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from analyzer.flags.interp import Frame, Hook, Interpreter
from analyzer.flags.models import Flag, FlagReport
from analyzer.flags.sglang_flags import from_dataclass_hook
from analyzer.flags.source import Module, SourceSymbol, SourceTree
from analyzer.flags.values import ClassV, FuncV, Opaque
from analyzer.flags.vllm_flags import get_kwargs_hook

# How each project turns a config dataclass into options, modelled as for its server's parser.
_HOOKS: dict[str, dict[str, Hook]] = {
    "sglang": {"add_cli_args_from_dataclass": from_dataclass_hook},
    "vllm": {"get_kwargs": get_kwargs_hook, "_compute_kwargs": get_kwargs_hook},
}
_FAMILY_RE = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*\.")
_SUFFIX_RE = re.compile(r"-[a-z][a-z0-9-]*")
_OPTION_RE = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*=?")
# Warnings that mean an option name, or the options of some adder, are not known statically
# (a parser handed to an unknown callee is counted by `_follow_dispatch`).
_INCOMPLETE = ("option name not statically known", "add_argument with no static option name", "could not follow",
               "call depth limit")


@dataclass(slots=True)
class EntryFlags:
    report: FlagReport
    complete: bool  # every option the parsers can register is in the report
    prefixes: list[str]  # `--component-paths.`: option families read from the leftover arguments
    suffixes: list[str]  # `-path`: `--<anything>-path` read from the leftover arguments
    by_hand: list[str]  # options the command's module compares argv words with itself


def _makes_parser(module: Module, node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and module.segment(n.func).rsplit(".", 1)[-1].endswith("ArgumentParser")
        for n in ast.walk(node)
    )


def _builders(module: Module, function: str | None) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions of `module` that make a parser; only `function` when given."""
    return [
        stmt for stmt in module.tree.body
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
        and (function is None or stmt.name == function)
        and _makes_parser(module, stmt)
    ]


def _adders(module: Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions whose first parameter is the parser (`def add_cli_args(parser)`): a
    benchmark module's options, when the parser itself is made by the CLI that runs it."""
    return [
        stmt for stmt in module.tree.body
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
        and [a.arg for a in (*stmt.args.posonlyargs, *stmt.args.args)][:1] == ["parser"]
    ]


def _main_guard(module: Module) -> list[ast.stmt]:
    """The body of `if __name__ == "__main__":`, where scripts often build their parser."""
    for stmt in module.tree.body:
        if isinstance(stmt, ast.If) and "__name__" in module.segment(stmt.test) and _makes_parser(module, stmt):
            return stmt.body
    return []


def _call(interp: Interpreter, module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef, args: list[object]) -> None:
    fn = FuncV(SourceSymbol("function", module, node, node.name))
    interp.call_function(fn, list(args), {})


def _definitions(tree: SourceTree, package: str, name: str) -> list[tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function or method called `name` in the modules under `package`."""
    base = tree.root / package.replace(".", "/")
    needle = f"def {name}("
    out: list[tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for path in sorted(base.rglob("*.py")) if base.is_dir() else []:
        try:
            if needle not in path.read_text(encoding="utf-8", errors="replace"):
                continue
        except OSError:
            continue
        rel = path.relative_to(tree.root).with_suffix("")
        dotted = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        module = tree.module(dotted)
        if module is None:
            continue
        for stmt in module.tree.body:
            members = stmt.body if isinstance(stmt, ast.ClassDef) else [stmt]
            out.extend((module, m) for m in members if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and m.name == name)
    return out


def _encloses(definition: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST) -> bool:
    """Whether `node` is inside `definition`'s body."""
    return any(n is node for n in ast.walk(definition))


def _follow_dispatch(interp: Interpreter, tree: SourceTree) -> bool:
    """Hand each parser passed to a run-time-picked method to that method's definitions;
    True when every such call was followed."""
    followed_all = True
    done: set[int] = set()
    # A call site is handed on once: a definition it reaches may make the same call again (the
    # module's own `add_cli_args(parser)` calling `EngineArgs.add_cli_args(parser)`, with
    # `EngineArgs` outside the tree), which would otherwise be followed for ever.
    sites: set[tuple[str, int, int]] = set()
    while len(done) < len(interp.unresolved_calls):
        for i, (module, node, args) in enumerate(list(interp.unresolved_calls)):
            if i in done:
                continue
            done.add(i)
            site_key = (module.name, node.lineno, node.col_offset)
            if site_key in sites:
                continue
            sites.add(site_key)
            func = node.func
            # The caller's subpackage first (a model's adder beside its config class); where it
            # defines none, the project's (`current_platform.pre_register_and_update(parser)`).
            targets: list[tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef]] = []
            for package in (".".join(module.name.split(".")[:2]), module.name.split(".")[0]):
                if isinstance(func, ast.Attribute) and not targets:
                    # (Not the function making the call: `EngineArgs.add_cli_args(parser)` inside
                    # an `add_cli_args` of its own is another class's method, outside the tree.)
                    targets = [t for t in _definitions(tree, package, func.attr) if not _encloses(t[1], node)]
            if not targets:
                followed_all = False
                continue
            # Followed after all: say where, instead of "not statically resolvable".
            site = module.where(node)
            interp.warnings = [
                f"{site}: parser passed to {module.segment(func)}(...), picked at run time: handed to its "
                f"{len(targets)} definition(s) in {package}" if w.startswith(f"{site}: parser passed to") else w
                for w in interp.warnings
            ]
            for where, definition in targets:
                owner = next((ClassV(SourceSymbol("class", where, c, c.name)) for c in where.tree.body
                              if isinstance(c, ast.ClassDef) and definition in c.body), None)
                static = any(getattr(d, "id", None) == "staticmethod" for d in definition.decorator_list)
                fn = FuncV(SourceSymbol("function", where, definition, definition.name), owner=owner,
                           bound=None if static or owner is None else owner)
                interp.call_function(fn, list(args), {})
    return followed_all


def entry_flags(tree: SourceTree, module_name: str, function: str | None = None) -> EntryFlags | None:
    """Options the parsers made in `module_name` (in `function` only, when given) accept;
    None when the module is not in the tree or makes no parser."""
    module = tree.module(module_name)
    if module is None:
        return None
    builders = _builders(module, function)
    guard = _main_guard(module) if function is None else []
    adders = _adders(module) if not builders and not guard and function is None else []
    if not builders and not guard and not adders:
        return None
    project = module_name.split(".", 1)[0]
    interp = Interpreter(tree, hooks=_HOOKS.get(project, {}))
    for node in builders:
        params = [p.arg for p in (*node.args.posonlyargs, *node.args.args)]
        _call(interp, module, node, [Opaque(p) for p in params])
    if adders:
        parser = interp.new_parser(module, adders[0])
        for node in adders:
            _call(interp, module, node, [parser])
    if guard:
        frame = Frame(module)
        try:
            interp.exec_block(guard, frame)
        except (RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            # A script shape the interpreter does not model must not lose what was read.
            interp.warn(module, guard[0], f"could not follow the main block: {type(exc).__name__}: {exc}")
    dispatched = _follow_dispatch(interp, tree)
    complete = dispatched and not any(m in w for w in interp.warnings for m in _INCOMPLETE)
    report = FlagReport(project, _unique(interp.flags), interp.positionals, interp.warnings)
    prefixes, suffixes = _families(tree)
    by_hand = set(_read_by_hand(module.tree))
    for cls in interp.parser_classes:  # a parser class's parse_args may take `--config` itself
        if cls.sym.node is not None:
            by_hand.update(_read_by_hand(cls.sym.node))
    return EntryFlags(report, complete, prefixes, suffixes, sorted(by_hand))


def _read_by_hand(tree: ast.AST) -> list[str]:
    """`--x` literals the code compares argv words with (`==`, `in`, `.startswith("--x=")`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        literals: list[ast.expr] = []
        if isinstance(node, ast.Compare) and all(isinstance(op, ast.Eq | ast.In) for op in node.ops):
            for side in (node.left, *node.comparators):
                literals.extend(side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
            literals.extend(node.args)
        for lit in literals:
            if isinstance(lit, ast.Constant) and isinstance(lit.value, str) and _OPTION_RE.fullmatch(lit.value):
                found.add(lit.value.removesuffix("="))
    return sorted(found)


def _families(tree: SourceTree) -> tuple[list[str], list[str]]:
    """Option prefixes and suffixes spelled in the modules the interpreter read."""
    prefixes: set[str] = set()
    suffixes: set[str] = set()
    for module in tree.parsed_modules():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                if _FAMILY_RE.fullmatch(text) and text.endswith("."):
                    prefixes.add(text)
            elif isinstance(node, ast.keyword) and node.arg and "suffix" in node.arg:
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str) and _SUFFIX_RE.fullmatch(value.value):
                    suffixes.add(value.value)
    return sorted(prefixes), sorted(suffixes)


def _unique(flags: list[Flag]) -> list[Flag]:
    """One flag per option string: two branches that build the same parser list it once."""
    seen: set[str] = set()
    out: list[Flag] = []
    for f in flags:
        if f.flag in seen:
            continue
        seen.add(f.flag)
        out.append(f)
    return out


def accepted(report: FlagReport) -> set[str]:
    """Every option string the report's parsers accept (help, negative and hidden forms)."""
    names: set[str] = set()
    for f in report.flags:
        names.update((f.flag, *f.aliases, *f.negative_aliases, *f.hidden_aliases))
    return names
