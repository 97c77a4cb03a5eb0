"""Objects a snippet never binds, named the way the project names its instances:
`server_args.piecewise_cuda_graph_tokens`, `self.scheduler_config.is_multi_step`. Read like the
project's code, `server_args` is a `ServerArgs` and `scheduler_config` a `SchedulerConfig`: the
attribute is that class's member, judged against it at each pin (`check._named_object_findings`),
where the pin has a class of exactly that name.

Plain AST in, plain data out: which names the whole document binds, and which classes a pin
defines, are for the caller."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# `req`, `batch`: one lower-case word; `x`, `df`, `cls` say nothing of a class.
_WORD_RE = re.compile(r"[a-z][a-z0-9]{2,}")
_NOT_OBJECTS = frozenset({"cls", "args", "kwargs", "obj", "tmp", "out", "ret", "res"})


def single_word_object(obj: str) -> bool:
    """`req`, `batch`: an object named by one lower-case word of three letters or more."""
    return obj not in _NOT_OBJECTS and bool(_WORD_RE.fullmatch(obj))


@dataclass(frozen=True, slots=True)
class NamedAttribute:
    """`server_args.tp_size` (or `self.server_args.tp_size`) at (lineno, col) of the snippet."""

    lineno: int
    col: int
    text: str  # as written, without a call's parentheses
    obj: str  # `server_args`
    member: str  # `tp_size`


def loop_variables(tree: ast.AST) -> set[int]:
    """The ids of the names a loop binds: `for req in ...`, and each name of `for i, req in
    enumerate(batch.reqs)` (a comprehension's too)."""
    targets = [n.target for n in ast.walk(tree) if isinstance(n, ast.For | ast.AsyncFor | ast.comprehension)]
    return {id(t) for t in targets if isinstance(t, ast.Name)} | {id(e) for t in targets if isinstance(t, ast.Tuple) for e in t.elts if isinstance(e, ast.Name)}


def _bound(tree: ast.Module) -> set[str]:
    """Names the snippet binds itself: assigned, imported, defined, or a parameter it declares a
    type for (a typed parameter's class is `receivers.py`'s to say); not a loop's variable, nor
    a name only ever assigned what `self` holds (`request = self.waiting.peek_request()`,
    `request = self.running[i]`), which is the project's object as a loop's is."""
    out: set[str] = set()
    # `for req in self.waiting_queue:` names the loop's object and says nothing more of its class.
    looped = loop_variables(tree)
    held = {id(n.targets[0]) for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and from_self(n.value)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and (id(node) in looped or id(node) in held):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            out.add(node.id)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            out.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
    return out


def from_self(value: ast.expr) -> bool:
    """`self.waiting.peek_request()`, `self.running[i]`, `self.requests.get(rid)`: a value read
    out of what `self` holds (no other object's call or constructor on the way). Not what a
    method of `self` itself returns (`input_batch = self._prepare_inputs(...)`): a quoted class's
    helper may return anything, under any name."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) and value.func.value.id == "self":
        return False
    while True:
        if isinstance(value, ast.Call):
            value = value.func
        elif isinstance(value, ast.Attribute | ast.Subscript):
            value = value.value
        else:
            return isinstance(value, ast.Name) and value.id == "self"


def named_attributes(tree: ast.Module) -> list[NamedAttribute]:
    """Each `obj.member` (read, stored or called) where `obj` is a name the snippet does not bind,
    or `self.obj`; its owner's name is `obj`: more than one word (`server_args`), or one word of
    three letters or more (`req`), which only a class of exactly that name (`Req`) makes a citation
    (`check._named_object_findings`)."""
    bound = _bound(tree)
    # (`def attach(self, req):` then `req.http_worker_ipcs`: the function's own parameter, which
    # one word does not type; `server_args` there still names its class.)
    params = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    elements = _loop_elements(tree)
    out: list[NamedAttribute] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.attr.startswith("__"):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in elements and value.id not in bound:
            obj, text = elements[value.id], f"{value.id}.{node.attr}"
        elif isinstance(value, ast.Name) and value.id != "self" and value.id not in bound:
            obj, text = value.id, f"{value.id}.{node.attr}"
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
            obj, text = value.attr, f"self.{value.attr}.{node.attr}"
        else:
            continue
        # (`self.executor.x`: one word under `self` is the quoted class's attribute, judged there.)
        if obj.isupper() or ("_" not in obj.strip("_") and (text.startswith("self.") or obj in params or not single_word_object(obj))):
            continue
        out.append(NamedAttribute(node.lineno, node.col_offset, text, obj, node.attr))
    return sorted(out, key=lambda a: (a.lineno, a.col))


# `reqs`, `seqs`: a collection named by a plural of one lower-case word.
_PLURAL_RE = re.compile(r"([a-z][a-z0-9]{2,})s")


def _loop_elements(tree: ast.Module) -> dict[str, str]:
    """`for r in batch.reqs:`: a loop variable too short to name a class (`r`) walking a collection
    named by a plural (`reqs`) is one of its elements, named as the project names one (`req`).
    Only a variable no other loop of the snippet walks something else with."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) or not isinstance(node.target, ast.Name):
            continue
        walked = node.iter.attr if isinstance(node.iter, ast.Attribute) else node.iter.id if isinstance(node.iter, ast.Name) else ""
        m = _PLURAL_RE.fullmatch(walked)
        name = node.target.id
        found.setdefault(name, set()).add(m.group(1) if m and not single_word_object(name) and "_" not in name else "")
    return {name: next(iter(words)) for name, words in found.items() if len(words) == 1 and "" not in words}
