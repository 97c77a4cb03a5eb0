"""A small abstract interpreter for argparse parser construction.

It walks the functions that build a parser (`make_arg_parser`, `add_cli_args`,
...) statement by statement, keeping literal values it can compute (strings,
lists, dicts of kwargs) and `Opaque` source text for everything else. Calls
that receive a parser, or a kwargs dict being customised, are followed into
their definitions; `add_argument` records a flag. Nothing upstream is imported
or executed. What cannot be resolved becomes a warning, never a silent drop.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analyzer.flags.actions import as_kwargs, registry_key, stdlib_base, stdlib_init
from analyzer.flags.fields import FieldInfo, TypeReader
from analyzer.flags.models import Flag, Positional
from analyzer.flags.options import build_flag, build_positional
from analyzer.flags.pyops import (
    builtin_call,
    dict_method,
    is_known_text,
    list_method,
    set_method,
    str_method,
)
from analyzer.flags.render import render
from analyzer.flags.source import Module, SourceSymbol, SourceTree
from analyzer.flags.values import (
    ActionV,
    BoundMethod,
    Builtin,
    ClassV,
    FieldKwargs,
    FuncV,
    InstanceV,
    ModuleV,
    Opaque,
    ParserV,
    StdlibInit,
    SubparsersV,
    SuperV,
    is_known,
)

MAX_DEPTH = 24
HELP_TEXT = "show this help message and exit"
_BUILTINS = {
    "list", "tuple", "set", "sorted", "dict", "len", "str", "int", "float", "bool",
    "frozenset", "reversed", "enumerate", "zip", "range", "print", "isinstance",
    "getattr", "hasattr", "any", "all", "min", "max", "repr", "super", "type", "object",
}


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass(slots=True)
class Frame:
    module: Module
    locals: dict[str, Any] = field(default_factory=dict)
    defining_class: ClassV | None = None  # for zero-argument super()


# A hook gets (interp, call node, frame, args, kwargs) and returns a value, or None to decline.
Hook = Callable[["Interpreter", ast.Call, Frame, list[Any], dict[str, Any]], Any]


class Interpreter:
    def __init__(self, tree: SourceTree, hooks: dict[str, Hook] | None = None) -> None:
        self.tree = tree
        self.hooks = hooks or {}
        self.flags: list[Flag] = []
        self.positionals: list[Positional] = []
        self.warnings: list[str] = []
        self._conditions: list[str] = []
        self._depth = 0
        self._globals: dict[tuple[str, str], Any] = {}
        # The add_argument call sites whose parser overrides add_argument: the override's
        # own `super().add_argument(...)` is recorded as made there.
        self._call_sites: list[tuple[ast.Call, Module, dict[str, Any]]] = []
        # Calls handed a parser whose callee is not statically known (`classes[0].add_x(parser)`),
        # with their evaluated arguments: a caller may look for the callee's definitions itself.
        self.unresolved_calls: list[tuple[Module, ast.Call, list[Any]]] = []
        # In-tree parser classes instantiated (`FlexibleArgumentParser`): their own methods may
        # read options from argv by hand before argparse sees them (`--config`).
        self.parser_classes: list[ClassV] = []

    # ----------------------------------------------------------------- helpers
    def warn(self, module: Module, node: ast.AST, message: str) -> None:
        text = f"{module.where(node)}: {message}"
        if text not in self.warnings:
            self.warnings.append(text)

    def symbol_value(self, sym: SourceSymbol) -> Any:
        if sym.kind == "class":
            return ClassV(sym)
        if sym.kind == "function":
            return FuncV(sym)
        if sym.kind == "module":
            return ModuleV(sym)
        key = (sym.module.name, sym.name)
        if key in self._globals:
            return self._globals[key]
        self._globals[key] = Opaque(sym.name)  # guards self-reference while evaluating
        assert isinstance(sym.node, ast.expr)
        value = self.eval(sym.node, Frame(sym.module))
        self._globals[key] = value
        return value

    def new_parser(self, module: Module, node: ast.AST, add_help: bool = True, *, cls: ClassV | None = None,
                   args: list[Any] | None = None, kwargs: dict[str, Any] | None = None,
                   list_help: bool = True) -> ParserV:
        # argparse adds -h/--help to every parser unless add_help=False, and the
        # servers do accept it, so it is listed (defined where the parser is made).
        parser = ParserV(group=None, cls=cls)
        if cls is not None and cls not in self.parser_classes:
            self.parser_classes.append(cls)
        if cls is not None:
            # A parser class of the tree: its __init__ may register actions (`self.register`).
            init = self._class_attr(cls, "__init__", bound=parser)
            if isinstance(init, FuncV):
                self.call_function(init, list(args or []), dict(kwargs or {}))
            for name in ("parse_args", "parse_known_args"):
                # Code run on the command line before argparse reads it (vLLM's `-O3` for
                # `--optimization-level 3`): what it rewrites into the listed options is not
                # statically followed, so it is said rather than guessed.
                own = self._class_attr(cls, name, bound=parser)
                if isinstance(own, FuncV) and isinstance(own.sym.node, ast.FunctionDef | ast.AsyncFunctionDef):
                    self.warn(own.sym.module, own.sym.node, f"{cls.sym.name}.{name} rewrites the command line before argparse reads it; "
                              "spellings it turns into the options listed (other forms of a flag, shorthands) are not listed")
        if add_help and list_help:
            where = module.where(node)
            self.flags.append(
                Flag(
                    flag="--help", aliases=["-h", "--help"], dest="help", defined_at=where,
                    default="==SUPPRESS==", help=HELP_TEXT, action="help", registered_at=where,
                )
            )
        return parser

    # -------------------------------------------------------------- functions
    def call_function(self, fn: FuncV, args: list[Any], kwargs: dict[str, Any]) -> Any:
        node = fn.sym.node
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if self._depth >= MAX_DEPTH:
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            closed = [v for k, v in (fn.closure or {}).items() if k in used]
            if _may_hold_parser([fn.bound, *args, *kwargs.values(), *closed]):
                self.warnings.append(f"{fn.sym.module.where(node)}: call depth limit reached in {node.name}")
            else:
                # A recursive helper handed no parser (`recursive_dict_update(a, b)` inside a
                # parser's parse_args) cannot register options: cutting it loses none.
                self.warnings.append(f"{fn.sym.module.where(node)}: recursion cut in {node.name} (no parser handed to it)")
            return Opaque(f"{node.name}(...)")
        frame = Frame(fn.sym.module, defining_class=fn.owner)
        if fn.closure:
            frame.locals.update(fn.closure)
        if fn.bound is not None:
            args = [fn.bound, *args]
        self._bind(node.args, frame, args, kwargs)
        self._depth += 1
        try:
            self.exec_block(node.body, frame)
        except _Return as ret:
            return ret.value
        except (RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            # Code shapes this interpreter does not model must not abort the whole listing.
            self.warn(fn.sym.module, node, f"could not follow {node.name}: {type(exc).__name__}: {exc}")
            return Opaque(f"{node.name}(...)")
        finally:
            self._depth -= 1
        return None

    def _bind(self, spec: ast.arguments, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> None:
        params = [*spec.posonlyargs, *spec.args]
        defaults = [None] * (len(params) - len(spec.defaults)) + list(spec.defaults)
        for i, param in enumerate(params):
            if i < len(args):
                frame.locals[param.arg] = args[i]
            elif param.arg in kwargs:
                frame.locals[param.arg] = kwargs.pop(param.arg)
            elif defaults[i] is not None:
                frame.locals[param.arg] = self.eval(defaults[i], frame)
            else:
                frame.locals[param.arg] = Opaque(param.arg)
        for param, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
            if param.arg in kwargs:
                frame.locals[param.arg] = kwargs.pop(param.arg)
            else:
                frame.locals[param.arg] = self.eval(default, frame) if default else Opaque(param.arg)
        if spec.vararg:
            frame.locals[spec.vararg.arg] = list(args[len(params):])
        if spec.kwarg:
            frame.locals[spec.kwarg.arg] = dict(kwargs)

    # ------------------------------------------------------------- statements
    def exec_block(self, stmts: list[ast.stmt], frame: Frame) -> None:
        for stmt in stmts:
            self.exec_stmt(stmt, frame)

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        if isinstance(stmt, ast.Expr):
            self.eval(stmt.value, frame)
        elif isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value, frame)
            for target in stmt.targets:
                self.assign(target, value, frame)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value, frame), frame)
        elif isinstance(stmt, ast.AugAssign):
            self._aug_assign(stmt, frame)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Subscript):
                    container = self.eval(target.value, frame)
                    key = self.eval(target.slice, frame)
                    if isinstance(container, dict) and is_known(key):
                        container.pop(key, None)
        elif isinstance(stmt, ast.If):
            self._exec_if(stmt, frame)
        elif isinstance(stmt, ast.For):
            self._exec_for(stmt, frame)
        elif isinstance(stmt, ast.Return):
            raise _Return(self.eval(stmt.value, frame) if stmt.value else None)
        elif isinstance(stmt, ast.ImportFrom):
            base = self.tree.absolute(frame.module, stmt.level, stmt.module)
            for alias in stmt.names:
                sym = self.tree.resolve_qualified(base, alias.name)
                frame.locals[alias.asname or alias.name] = (
                    self.symbol_value(sym) if sym else Opaque(alias.name)
                )
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                frame.locals[bound] = Opaque(bound)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            self.exec_block(stmt.body, frame)
        elif isinstance(stmt, ast.Try):
            self.exec_block(stmt.body, frame)
            self.exec_block(stmt.orelse, frame)
            self.exec_block(stmt.finalbody, frame)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            frame.locals[stmt.name] = FuncV(SourceSymbol("function", frame.module, stmt, stmt.name), closure=frame.locals)
        elif isinstance(stmt, ast.While):
            self._conditional(frame.module.segment(stmt.test), stmt.body, frame)

    def _aug_assign(self, stmt: ast.AugAssign, frame: Frame) -> None:
        current = self.eval(stmt.target, frame)
        value = self.eval(stmt.value, frame)
        if isinstance(stmt.op, ast.Add) and isinstance(current, list) and isinstance(value, list | tuple):
            current.extend(value)  # in place, as list += does
            return
        result = self._binop(stmt.op, current, value, frame.module, stmt)
        if isinstance(result, Opaque) and is_known_text(current):
            # Keep what is known: `[...literal choices...] + <dynamic part>`.
            op = {ast.Add: "+", ast.BitOr: "|"}.get(type(stmt.op), "?")
            result = Opaque(f"{render(current)} {op} {frame.module.segment(stmt.value)}")
        self.assign(stmt.target, result, frame)

    def assign(self, target: ast.expr, value: Any, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            frame.locals[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            items = list(value) if isinstance(value, list | tuple) else None
            for i, elt in enumerate(target.elts):
                item = items[i] if items is not None and i < len(items) else Opaque(ast.unparse(elt))
                self.assign(elt, item, frame)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, frame)
            key = self.eval(target.slice, frame)
            if (isinstance(container, dict) and is_known(key)) or (isinstance(container, list) and isinstance(key, int) and -len(container) <= key < len(container)):
                container[key] = value
        elif isinstance(target, ast.Attribute):
            owner = self.eval(target.value, frame)
            if isinstance(owner, ActionV):  # `self.option_strings = ...` in a custom action
                owner.attrs[target.attr] = value
                if owner.flag is not None and target.attr == "option_strings":
                    _reshow(owner, value)
        # Other attribute targets (`parser.epilog = ...`) change nothing a flag list shows.

    def _exec_if(self, stmt: ast.If, frame: Frame) -> None:
        test = self.truth(self.eval(stmt.test, frame))
        if test is True:
            self.exec_block(stmt.body, frame)
        elif test is False:
            self.exec_block(stmt.orelse, frame)
        else:
            # Unknown at analysis time: both branches may run; flags remember the condition.
            text = frame.module.segment(stmt.test)
            returned = [
                self._conditional(text, stmt.body, frame),
                self._conditional(f"not ({text})", stmt.orelse, frame) if stmt.orelse else None,
            ]
            if all(r is not None for r in returned):
                raise returned[1]  # type: ignore[misc]

    def _conditional(self, text: str, body: list[ast.stmt], frame: Frame) -> _Return | None:
        self._conditions.append(text)
        try:
            self.exec_block(body, frame)
        except _Return as ret:
            return ret
        finally:
            self._conditions.pop()
        return None

    def _exec_for(self, stmt: ast.For, frame: Frame) -> None:
        iterable = self.eval(stmt.iter, frame)
        if isinstance(iterable, dict):
            iterable = list(iterable)
        if isinstance(iterable, list | tuple | set | frozenset):
            for item in list(iterable):
                self.assign(stmt.target, item, frame)
                self.exec_block(stmt.body, frame)
            return
        self.warn(frame.module, stmt, f"loop over non-literal {frame.module.segment(stmt.iter)!r}: body followed once")
        self.assign(stmt.target, Opaque(ast.unparse(stmt.target)), frame)
        self._conditional(f"for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)}", stmt.body, frame)

    # ------------------------------------------------------------ expressions
    def truth(self, value: Any) -> bool | None:
        if isinstance(value, Opaque):
            return None
        if isinstance(value, str | int | float | bool | list | tuple | dict | set | type(None)):
            return bool(value)
        return True

    def eval(self, node: ast.expr | None, frame: Frame) -> Any:
        if node is None:
            return None
        method = getattr(self, f"_eval_{type(node).__name__}", None)
        if method is None:
            return Opaque(frame.module.segment(node))
        return method(node, frame)

    def _eval_Constant(self, node: ast.Constant, frame: Frame) -> Any:
        return node.value

    def _eval_JoinedStr(self, node: ast.JoinedStr, frame: Frame) -> Any:
        parts: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            assert isinstance(value, ast.FormattedValue)
            inner = self.eval(value.value, frame)
            if value.format_spec is not None or value.conversion not in (-1, 115):
                return Opaque(frame.module.segment(node))
            if isinstance(inner, str | int | float | bool) or inner is None:
                parts.append(str(inner))
            else:
                return Opaque(frame.module.segment(node))
        return "".join(parts)

    def _eval_Name(self, node: ast.Name, frame: Frame) -> Any:
        if node.id in frame.locals:
            return frame.locals[node.id]
        sym = self.tree.resolve(frame.module, node.id)
        if sym is not None:
            return self.symbol_value(sym)
        if node.id in _BUILTINS:
            return Builtin(node.id)
        return Opaque(node.id)

    def _eval_Attribute(self, node: ast.Attribute, frame: Frame) -> Any:
        owner = self.eval(node.value, frame)
        value = self.attribute(owner, node.attr)
        return Opaque(frame.module.segment(node)) if value is None else value

    def attribute(self, owner: Any, attr: str) -> Any:
        if isinstance(owner, ModuleV):
            sym = self.tree.resolve_qualified(owner.sym.name, attr)
            return self.symbol_value(sym) if sym else None
        if isinstance(owner, ClassV):
            return self._class_attr(owner, attr, bound=None)
        if isinstance(owner, InstanceV):
            return self._class_attr(owner.cls, attr, bound=owner)
        if isinstance(owner, ActionV):
            if attr in owner.attrs:
                return owner.attrs[attr]
            return self._class_attr(owner.cls, attr, bound=owner) if owner.cls is not None else None
        if isinstance(owner, SuperV):
            mro = self.mro(owner.instance_cls)
            names = [c.key for c in mro]
            start = names.index(owner.after.key) + 1 if owner.after.key in names else len(mro)
            for cls in mro[start:]:
                found = self._own_attr(cls, attr, owner.bound)
                if found is not None:
                    return found
            if isinstance(owner.bound, ActionV) and attr == "__init__":
                return StdlibInit(owner.bound)  # past the tree's classes: argparse's constructor
            if isinstance(owner.bound, ParserV):
                return BoundMethod(owner.bound, attr)  # argparse's own parser / group method
            return None
        if isinstance(owner, BoundMethod) and isinstance(owner.obj, ParserV):
            return BoundMethod(owner, attr)  # argparse's bookkeeping (`self._action_groups.append`)
        if isinstance(owner, ParserV) and owner.cls is not None:
            found = self._class_attr(owner.cls, attr, bound=owner)
            if found is not None:
                return found  # the parser class's own method (an override of argparse's)
        if isinstance(owner, str | dict | list | set | ParserV | SubparsersV):
            return BoundMethod(owner, attr)
        return None

    def mro(self, cls: ClassV) -> list[ClassV]:
        """Depth-first, left-to-right, duplicates kept last: C3 for the hierarchies seen here."""
        out: list[ClassV] = []

        def walk(c: ClassV, depth: int) -> None:
            if depth > 16:
                return
            out.append(c)
            node = c.sym.node
            assert isinstance(node, ast.ClassDef)
            for base in node.bases:
                value = self.eval(base, Frame(c.sym.module))
                if isinstance(value, ClassV):
                    walk(value, depth + 1)

        walk(cls, 0)
        seen: set[str] = set()
        result: list[ClassV] = []
        for c in reversed(out):
            if c.key not in seen:
                seen.add(c.key)
                result.append(c)
        return list(reversed(result))

    def _class_attr(self, cls: ClassV, attr: str, bound: Any) -> Any:
        if attr == "__name__":
            node = cls.sym.node
            return node.name if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) else cls.sym.name
        if attr == "__doc__":
            node = cls.sym.node
            assert isinstance(node, ast.ClassDef)
            return ast.get_docstring(node, clean=False)
        for c in self.mro(cls):
            found = self._own_attr(c, attr, bound, actual=cls)
            if found is not None:
                return found
        return None

    def _own_attr(self, cls: ClassV, attr: str, bound: Any, actual: ClassV | None = None) -> Any:
        node = cls.sym.node
        assert isinstance(node, ast.ClassDef)
        for stmt in node.body:
            if isinstance(stmt, ast.ClassDef) and stmt.name == attr:
                return ClassV(SourceSymbol("class", cls.sym.module, stmt, attr))
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == attr:
                decorators = {ast.unparse(d) for d in stmt.decorator_list}
                sym = SourceSymbol("function", cls.sym.module, stmt, attr)
                if "staticmethod" in decorators:
                    return FuncV(sym, owner=cls)
                if "classmethod" in decorators:
                    target = bound.cls if isinstance(bound, InstanceV) else bound
                    return FuncV(sym, owner=cls, bound=target if target is not None else (actual or cls))
                return FuncV(sym, owner=cls, bound=bound)
            targets: list[ast.expr] = []
            assigned: ast.expr | None = None
            if isinstance(stmt, ast.Assign):
                targets, assigned = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, assigned = [stmt.target], stmt.value
            if assigned is not None and any(isinstance(t, ast.Name) and t.id == attr for t in targets):
                return self.eval(assigned, Frame(cls.sym.module))
        return None

    def _eval_Subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        container = self.eval(node.value, frame)
        if isinstance(node.slice, ast.Slice):
            if isinstance(container, list | tuple | str):
                lo, hi = self.eval(node.slice.lower, frame), self.eval(node.slice.upper, frame)
                if (lo is None or isinstance(lo, int)) and (hi is None or isinstance(hi, int)):
                    return container[lo:hi]
            return Opaque(frame.module.segment(node))
        key = self.eval(node.slice, frame)
        try:
            if isinstance(container, dict) and is_known(key) and key in container:
                return container[key]
            if isinstance(container, list | tuple | str) and isinstance(key, int):
                return container[key]
        except (IndexError, TypeError):
            pass
        return Opaque(frame.module.segment(node))

    def _eval_Dict(self, node: ast.Dict, frame: Frame) -> Any:
        out: dict[Any, Any] = {}
        origin: FieldInfo | None = None
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            value = self.eval(value_node, frame)
            if key_node is None:
                if isinstance(value, FieldKwargs):
                    origin = value.field_info
                if isinstance(value, dict):
                    out.update(value)
                else:
                    return Opaque(frame.module.segment(node))
                continue
            key = self.eval(key_node, frame)
            if not is_known(key):
                return Opaque(frame.module.segment(node))
            out[key] = value
        return FieldKwargs(out, field_info=origin) if origin is not None else out

    def _eval_List(self, node: ast.List, frame: Frame) -> Any:
        return self._sequence(node.elts, frame, node)

    def _eval_Tuple(self, node: ast.Tuple, frame: Frame) -> Any:
        items = self._sequence(node.elts, frame, node)
        return tuple(items) if isinstance(items, list) else items

    def _eval_Set(self, node: ast.Set, frame: Frame) -> Any:
        items = self._sequence(node.elts, frame, node)
        if isinstance(items, list) and all(is_known(i) for i in items):
            return set(items)
        return items

    def _sequence(self, elts: list[ast.expr], frame: Frame, node: ast.expr) -> Any:
        out: list[Any] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                value = self.eval(elt.value, frame)
                if isinstance(value, list | tuple | set):
                    out.extend(value)
                    continue
                return Opaque(frame.module.segment(node))
            out.append(self.eval(elt, frame))
        return out

    def _eval_BinOp(self, node: ast.BinOp, frame: Frame) -> Any:
        left, right = self.eval(node.left, frame), self.eval(node.right, frame)
        return self._binop(node.op, left, right, frame.module, node)

    def _binop(self, op: ast.operator, left: Any, right: Any, module: Module, node: ast.AST) -> Any:
        if isinstance(op, ast.Add):
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            if isinstance(left, tuple) and isinstance(right, tuple):
                return left + right
        if isinstance(op, ast.Mod) and isinstance(left, str) and is_known(right):
            try:
                return left % right
            except (TypeError, ValueError):
                pass
        if isinstance(op, ast.BitOr) and isinstance(left, dict) and isinstance(right, dict):
            return {**left, **right}
        if isinstance(op, ast.BitOr | ast.Sub | ast.BitAnd) and isinstance(left, set) and isinstance(right, set):
            return left | right if isinstance(op, ast.BitOr) else left - right if isinstance(op, ast.Sub) else left & right
        return Opaque(module.segment(node))

    def _eval_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Any:
        unknown = False
        result: Any = None
        for value_node in node.values:
            result = self.eval(value_node, frame)
            truth = self.truth(result)
            if truth is None:
                unknown = True
            elif (isinstance(node.op, ast.And) and truth is False) or (isinstance(node.op, ast.Or) and truth is True):
                return result
        return Opaque(frame.module.segment(node)) if unknown else result

    def _eval_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Any:
        value = self.eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            truth = self.truth(value)
            return Opaque(frame.module.segment(node)) if truth is None else not truth
        if isinstance(node.op, ast.USub) and isinstance(value, int | float):
            return -value
        return Opaque(frame.module.segment(node))

    def _eval_Compare(self, node: ast.Compare, frame: Frame) -> Any:
        if len(node.ops) != 1:
            return Opaque(frame.module.segment(node))
        left, right = self.eval(node.left, frame), self.eval(node.comparators[0], frame)
        op = node.ops[0]
        if isinstance(op, ast.In | ast.NotIn) and is_known(left) and isinstance(right, dict | list | tuple | set | str):
            try:
                found = left in right
            except TypeError:
                return Opaque(frame.module.segment(node))
            return found if isinstance(op, ast.In) else not found
        if isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot) and is_known(left) and is_known(right):
            same = left == right
            return same if isinstance(op, ast.Eq | ast.Is) else not same
        return Opaque(frame.module.segment(node))

    def _eval_IfExp(self, node: ast.IfExp, frame: Frame) -> Any:
        truth = self.truth(self.eval(node.test, frame))
        if truth is None:
            return Opaque(frame.module.segment(node))
        return self.eval(node.body if truth else node.orelse, frame)

    def _eval_ListComp(self, node: ast.ListComp, frame: Frame) -> Any:
        return self._comprehension(node, frame)

    def _eval_SetComp(self, node: ast.SetComp, frame: Frame) -> Any:
        items = self._comprehension(node, frame)
        if isinstance(items, list) and all(is_known(i) for i in items):
            return set(items)
        return Opaque(frame.module.segment(node))

    def _comprehension(self, node: ast.ListComp | ast.SetComp, frame: Frame) -> Any:
        """Nested generators and their `if`s over literal iterables; Opaque when a test is unknown."""
        inner = Frame(frame.module, dict(frame.locals), frame.defining_class)
        out: list[Any] = []

        def walk(level: int) -> bool:
            if level == len(node.generators):
                out.append(self.eval(node.elt, inner))
                return True
            gen = node.generators[level]
            iterable = self.eval(gen.iter, inner)
            if isinstance(iterable, dict):
                iterable = list(iterable)
            if not isinstance(iterable, list | tuple | set | frozenset):
                return False
            for item in list(iterable):
                self.assign(gen.target, item, inner)
                tests = [self.truth(self.eval(test, inner)) for test in gen.ifs]
                if None in tests:
                    return False
                if all(tests) and not walk(level + 1):
                    return False
            return True

        return out if walk(0) else Opaque(frame.module.segment(node))

    # ------------------------------------------------------------------ calls
    def _eval_Call(self, node: ast.Call, frame: Frame) -> Any:
        callee = self.eval(node.func, frame)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                value = self.eval(arg.value, frame)
                if isinstance(value, list | tuple):
                    args.extend(value)
                else:
                    args.append(Opaque(f"*{frame.module.segment(arg.value)}"))
                continue
            args.append(self.eval(arg, frame))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            value = self.eval(kw.value, frame)
            if kw.arg is not None:
                kwargs[kw.arg] = value
            elif isinstance(value, dict):
                kwargs.update(value)
                if isinstance(value, FieldKwargs) and value.field_info is not None:
                    kwargs["__field__"] = value.field_info
            else:
                kwargs["__unknown_kwargs__"] = frame.module.segment(kw.value)
        return self.call(callee, node, frame, args, kwargs)

    def call(self, callee: Any, node: ast.Call, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        name = _callee_name(callee, node)
        hook = self.hooks.get(name or "")
        if hook is not None:
            result = hook(self, node, frame, args, kwargs)
            if result is not None:
                return result
        if isinstance(callee, BoundMethod):
            return self._call_method(callee, node, frame, args, kwargs)
        if isinstance(callee, Builtin) and callee.name == "isinstance" and len(args) == 2 and isinstance(args[0], ActionV):
            return self._action_isinstance(args[0], args[1], frame, node)
        if isinstance(callee, Builtin):
            return _call_builtin(callee.name, args, frame, node)
        if isinstance(callee, FuncV) and isinstance(callee.bound, ParserV) and callee.sym.name == "add_argument":
            # A parser class overriding add_argument (vLLM's FlexibleArgumentParser): run the
            # override; its `super().add_argument` registers the option as made here.
            self._call_sites.append((node, frame.module, dict(kwargs)))
            try:
                kwargs.pop("__field__", None)
                kwargs.pop("__unknown_kwargs__", None)
                return self.call_function(callee, args, kwargs)
            finally:
                self._call_sites.pop()
        if isinstance(callee, ClassV) and self._argparse_base(callee) in ("_ArgumentGroup", "_MutuallyExclusiveGroup"):
            container = args[0] if args and isinstance(args[0], ParserV) else None
            title = kwargs.get("title", args[1] if len(args) > 1 else None)
            group = title if isinstance(title, str) else render(title) if title is not None else None
            if container is not None:
                return ParserV(group=group if group is not None else container.group,
                               registry=container.registry, cls=callee)
        if isinstance(callee, StdlibInit):
            stdlib_init(callee.action, args, kwargs)
            return None
        if (name and name.endswith("ArgumentParser")) or (isinstance(callee, ClassV) and self.is_parser_class(callee)):
            add_help = kwargs.get("add_help", True)
            cls = callee if isinstance(callee, ClassV) else None
            return self.new_parser(frame.module, node, add_help is not False, cls=cls, args=args, kwargs=kwargs)
        if name in {"deepcopy", "copy"} and args and not isinstance(callee, FuncV | ClassV):
            return copy.deepcopy(args[0])
        if name == "cast" and len(args) == 2:
            return args[1]
        kwargs.pop("__field__", None)
        kwargs.pop("__unknown_kwargs__", None)
        if isinstance(callee, FuncV) and self._worth_following(callee, args, kwargs):
            return self.call_function(callee, args, kwargs)
        if isinstance(callee, ClassV):
            return InstanceV(callee)
        if _mentions_parser([*args, *kwargs.values()]):
            self.unresolved_calls.append((frame.module, node, list(args)))
            self.warn(
                frame.module, node,
                f"parser passed to {frame.module.segment(node.func)}(...), which is not statically "
                "resolvable; options it might add are not listed",
            )
        return Opaque(frame.module.segment(node))

    @staticmethod
    def _worth_following(fn: FuncV, args: list[Any], kwargs: dict[str, Any]) -> bool:
        """Follow calls that can change the parser or a kwargs dict; the rest can't add flags."""
        values = [*args, *kwargs.values()]
        if fn.bound is not None and not isinstance(fn.bound, ClassV | InstanceV):
            values.append(fn.bound)
        if fn.closure:
            values.extend(fn.closure.values())
        return _mentions_parser(values) or any(isinstance(v, dict) for v in values)

    def is_parser_class(self, cls: ClassV) -> bool:
        """A class of the tree deriving from argparse's ArgumentParser (under any name)."""
        return (self._argparse_base(cls) or "").endswith("ArgumentParser")

    def _argparse_base(self, cls: ClassV) -> str | None:
        """The last name of the first base in `cls`'s MRO that is not a class of the tree."""
        for c in self.mro(cls):
            node = c.sym.node
            assert isinstance(node, ast.ClassDef)
            for expr in node.bases:
                value = self.eval(expr, Frame(c.sym.module))
                if isinstance(value, Opaque):
                    return value.src.rsplit(".", 1)[-1]
        return None

    def _action_isinstance(self, action: ActionV, classes: Any, frame: Frame, node: ast.Call) -> Any:
        targets = list(classes) if isinstance(classes, tuple) else [classes]
        keys = {c.key for c in self.mro(action.cls)} if action.cls is not None else set()
        if all(isinstance(t, ClassV) for t in targets):
            return any(t.key in keys for t in targets)
        return Opaque(frame.module.segment(node))

    def _call_method(self, method: BoundMethod, node: ast.Call, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        obj, name = method.obj, method.name
        if isinstance(obj, SubparsersV) and name == "add_parser":
            # argparse makes the subparser an instance of the parent parser's class.
            cls = obj.parent.cls if obj.parent is not None else None
            parser = self.new_parser(frame.module, node, kwargs.get("add_help", True) is not False, cls=cls)
            if cls is None and obj.parent is not None:
                parser.registry.update(obj.parent.registry)
            return parser
        if isinstance(obj, ParserV):
            return self._parser_method(obj, name, node, frame, args, kwargs)
        kwargs.pop("__field__", None)
        if isinstance(obj, dict):
            return dict_method(obj, name, args, Opaque(frame.module.segment(node)))
        if isinstance(obj, list):
            return list_method(obj, name, args, Opaque(frame.module.segment(node)))
        if isinstance(obj, set):
            return set_method(obj, name, args, Opaque(frame.module.segment(node)))
        if isinstance(obj, str):
            return str_method(obj, name, args, Opaque(frame.module.segment(node)))
        return Opaque(frame.module.segment(node))

    def _parser_method(self, parser: ParserV, name: str, node: ast.Call, frame: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if name == "add_argument":
            return self.add_argument(parser, node, frame, args, kwargs) or Opaque("<action>")
        if name == "add_argument_group":
            title = kwargs.get("title", args[0] if args else None)
            group = title if isinstance(title, str) else render(title) if title is not None else None
            return ParserV(group=group, registry=parser.registry, cls=parser.cls)  # groups share registries
        if name == "add_mutually_exclusive_group":
            return ParserV(group=parser.group, registry=parser.registry, cls=parser.cls)
        if name == "add_subparsers":
            return SubparsersV(parent=parser)
        if name == "register" and len(args) == 3 and args[0] == "action":
            key = registry_key(args[1])
            if key is not None:
                parser.registry[key] = args[2]
            return None
        return Opaque(frame.module.segment(node))

    # ------------------------------------------------------------ add_argument
    def add_argument(self, parser: ParserV, node: ast.Call, frame: Frame, args: list[Any],
                     kwargs: dict[str, Any]) -> ActionV | None:
        module = frame.module
        if self._call_sites:
            # Inside a parser's add_argument override: the option is the outer call's. The
            # override may pop `deprecated` (to warn itself on older Pythons): keep it.
            node, module, outer = self._call_sites.pop()
            self._call_sites.append((node, module, {}))
            for key in ("__field__", "__unknown_kwargs__", "deprecated"):
                if key in outer and key not in kwargs:
                    kwargs[key] = outer[key]
        field_info: FieldInfo | None = kwargs.pop("__field__", None)
        unknown_kwargs = kwargs.pop("__unknown_kwargs__", None)
        names: list[str] = []
        for value in args:
            if isinstance(value, str):
                names.append(value)
            else:
                self.warn(module, node, f"option name not statically known: {render(value)}")
        if not names:
            self.warn(module, node, "add_argument with no static option name: skipped")
            return None
        if unknown_kwargs:
            self.warn(module, node, f"keyword arguments not statically known: **{unknown_kwargs}")
        registered = module.where(node)
        spelled_here = _names_spelled_literally(node)
        defined = registered if spelled_here or field_info is None else field_info.where
        handle = self.record_option(parser, names, kwargs, defined_at=defined, registered_at=registered,
                                    field_at=field_info.where if field_info else None)
        if field_info is not None and handle.flag is not None and handle.flag.choices is None:
            handle.flag.typed_values = TypeReader(self.tree).checking_literal(field_info)
        return handle

    def record_option(self, parser: ParserV, names: list[str], kwargs: dict[str, Any], *,
                      defined_at: str, registered_at: str, field_at: str | None) -> ActionV:
        """One argparse action from its option strings and (evaluated) keyword arguments;
        returns the action as `add_argument` returns it to its caller."""
        if not names[0].startswith("-"):
            self.positionals.append(build_positional(names[0], kwargs, defined_at))
            return ActionV(None, "store", {"option_strings": [], "dest": names[0]})
        condition = " and ".join(f"({c})" for c in self._conditions) or None
        negatives: list[str] | None = None
        built: ActionV | None = None
        action = kwargs.get("action")
        key = registry_key(action)
        if key is not None and key in parser.registry:
            action = parser.registry[key]  # argparse looks `action=` up in the registry first
            kwargs = {**kwargs, "action": action}
        if isinstance(action, ClassV):
            built = self.construct_action(action, names, kwargs, registered_at)
            if built is not None:
                negatives = _negatives(built, names)
                names, kwargs = list(built.attrs["option_strings"]), as_kwargs(built)
        flag = build_flag(names, kwargs, group=parser.group, defined_at=defined_at,
                          registered_at=registered_at, field_at=field_at, condition=condition,
                          negatives=negatives)
        self.flags.append(flag)
        handle = built or ActionV(None, str(flag.action or "store"), {"option_strings": list(flag.aliases),
                                                                      "dest": flag.dest})
        handle.flag, handle.registered = flag, list(flag.aliases)
        return handle

    def construct_action(self, cls: ClassV, names: list[str], kwargs: dict[str, Any], where: str) -> ActionV | None:
        """`cls(option_strings=names, dest=..., **kwargs)` run statically; None (with a
        warning) when the class does not derive from an argparse action the model knows
        or its constructor leaves option strings that are not statically known."""
        base = None
        for c in self.mro(cls):
            node = c.sym.node
            assert isinstance(node, ast.ClassDef)
            for expr in node.bases:
                base = base or stdlib_base(self.eval(expr, Frame(c.sym.module)))
        if base is None:
            self.warnings.append(f"{where}: action {cls.key} derives from no argparse action known "
                                 "statically; its option strings are listed as given")
            return None
        built = ActionV(cls, base)
        primary = next((n for n in names if n.startswith("--")), names[0])
        dest = kwargs.get("dest")
        call_kwargs = {k: v for k, v in kwargs.items() if k != "action"}
        call_kwargs.update(option_strings=list(names), dest=dest if isinstance(dest, str) else primary.lstrip("-").replace("-", "_"))
        init = self._class_attr(cls, "__init__", bound=built)
        if isinstance(init, FuncV):
            self.call_function(init, [], call_kwargs)
        else:
            stdlib_init(built, [], call_kwargs)
        strings = built.attrs.get("option_strings")
        if not (isinstance(strings, list) and strings and all(isinstance(o, str) for o in strings)):
            self.warnings.append(f"{where}: the option strings {cls.key}'s constructor computes are not "
                                 "statically known; listed as given")
            return None
        return built


# ---------------------------------------------------------------- module helpers
def _callee_name(callee: Any, node: ast.Call) -> str | None:
    if isinstance(callee, FuncV):
        return callee.sym.name
    if isinstance(callee, ClassV):
        return callee.sym.name
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _mentions_parser(values: list[Any]) -> bool:
    for v in values:
        if isinstance(v, ParserV | SubparsersV | ActionV):
            return True
        if isinstance(v, list | tuple) and _mentions_parser(list(v)):
            return True
    return False


def _reshow(action: ActionV, strings: Any) -> None:
    """A parser that replaced a registered action's option strings (to hide some from
    help): those it dropped stay accepted by the parser, listed as hidden."""
    flag = action.flag
    if not (isinstance(strings, list | tuple) and all(isinstance(o, str) for o in strings)):
        return
    shown = [o for o in strings if o in action.registered]
    if not shown:
        return
    flag.aliases = shown
    flag.hidden_aliases = [o for o in action.registered if o not in shown]


def _negatives(action: ActionV, given: list[str]) -> list[str]:
    """Option strings that switch the flag off: the action's own `negative_option_strings`
    when it keeps such a set, else the `--no-` forms argparse's BooleanOptionalAction adds."""
    strings = action.attrs["option_strings"]
    declared = action.attrs.get("negative_option_strings")
    if isinstance(declared, set | list | tuple) and all(isinstance(o, str) for o in declared):
        return [o for o in strings if o in declared]
    if action.base == "BooleanOptionalAction":
        return [o for o in strings if o not in given and o.startswith("--no-")]
    return []


def _names_spelled_literally(node: ast.Call) -> bool:
    strings = [a for a in node.args if not isinstance(a, ast.Starred)]
    return bool(strings) and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in strings)


def _call_builtin(name: str, args: list[Any], frame: Frame, node: ast.Call) -> Any:
    opaque = Opaque(frame.module.segment(node))
    if name == "super":
        if frame.defining_class is None:
            return opaque
        first = next(iter(frame.locals.values()), None)
        if isinstance(first, ActionV) and first.cls is not None:
            return SuperV(frame.defining_class, first.cls, first)
        if isinstance(first, ParserV) and first.cls is not None:
            return SuperV(frame.defining_class, first.cls, first)
        if isinstance(first, InstanceV):
            return SuperV(frame.defining_class, first.cls, first)
        if isinstance(first, ClassV):
            return SuperV(frame.defining_class, first, first)
        return opaque
    return builtin_call(name, args, opaque)


def _may_hold_parser(values: list[Any], depth: int = 0) -> bool:
    """Whether a parser may be reached from these values: a parser, subparsers or action, an
    object (its attributes may hold one), a method bound to one, or a container of such."""
    for value in values:
        if isinstance(value, ParserV | SubparsersV | ActionV | InstanceV | SuperV):
            return True
        if isinstance(value, BoundMethod) and _may_hold_parser([value.obj], depth + 1):
            return True
        if isinstance(value, FuncV) and value.bound is not None and _may_hold_parser([value.bound], depth + 1):
            return True
        if depth < 3 and isinstance(value, list | tuple | set | frozenset) and _may_hold_parser(list(value), depth + 1):
            return True
        if depth < 3 and isinstance(value, dict) and _may_hold_parser([*value.keys(), *value.values()], depth + 1):
            return True
    return False
