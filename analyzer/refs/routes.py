"""An HTTP server's routes and the classes their handlers take, read from a module's source.

`@router.post("/v1/chat/completions")` over `async def create_chat_completion(request:
ChatCompletionRequest, raw_request: Request)`: the route's body is a `ChatCompletionRequest`
(starlette's `Request`, imported from outside the project, is not). Parsed, never imported; read
by `build.source_literals` in its one pass over a pin's sources, judged by `fields.judge_field`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

# `@router.post(`, `@app.api_route(`: a module that declares routes.
ROUTE_DECORATOR_RE = re.compile(r"^\s*@\w+\.(?:post|put|patch|api_route)\(", re.M)
# Route decorators of FastAPI apps and routers (`@router.post("/v1/...")`, `@app.api_route(...)`).
_ROUTE_METHODS = frozenset({"post", "put", "patch", "api_route"})


def module_routes(text: str, packages: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Route -> the capitalised names its handlers' parameters are annotated with or that they build
    from the raw body (`GenerativeScoringRequest(**raw_body)`, where no parameter names one), less those the module imports from
    outside `packages`; () where every handler reads the raw body alone. {} for a
    module that declares no route or does not parse."""
    if not ROUTE_DECORATOR_RE.search(text):
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    foreign = _foreign_imports(tree, frozenset(packages))
    prefixes = _router_prefixes(tree)
    routes: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            taken = [c for c in _annotated_classes(node) if c not in foreign]
            # (Only where the parameters name no model of the project's: a handler may build others.)
            taken = taken or [c for c in _built_classes(node) if c not in foreign]
            taken += [f"{BODY_FIELD}{name}" for name in _body_parameters(node)]
            for path in _decorated_routes(node, prefixes):
                known = routes.get(path, ())
                routes[path] = (*known, *(c for c in taken if c not in known))
    return routes


# A route's entry for a field its handler takes as a parameter of the body (`lora_nickname:
# str = Body(..., embed=True)`), beside the classes it takes.
BODY_FIELD = "="


def _router_prefixes(tree: ast.Module) -> dict[str, str]:
    """`router = APIRouter(prefix="/v1")`: the prefix of each router the module makes."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            for kw in node.value.keywords:
                if kw.arg == "prefix" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    out[node.targets[0].id] = kw.value.value.rstrip("/")
    return out


def _body_parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The handler's parameters FastAPI reads from the JSON body: those defaulting to `Body(...)`."""
    args = [*fn.args.posonlyargs, *fn.args.args]
    defaults = dict(zip([a.arg for a in args[len(args) - len(fn.args.defaults) :]], fn.args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True) if d is not None})
    return [name for name, value in defaults.items() if isinstance(value, ast.Call) and _called(value) == "Body"]


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _foreign_imports(tree: ast.Module, packages: frozenset[str]) -> set[str]:
    """Names a module imports from outside the project (`from fastapi import Request`)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".", 1)[0] not in packages:
            out.update(a.asname or a.name for a in node.names)
    return out


def _decorated_routes(fn: ast.FunctionDef | ast.AsyncFunctionDef, prefixes: dict[str, str]) -> list[str]:
    out = []
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr in _ROUTE_METHODS and dec.args:
            first = dec.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("/"):
                owner = dec.func.value.id if isinstance(dec.func.value, ast.Name) else ""
                out.append((prefixes.get(owner, "") + first.value).rstrip("/") or "/")
    return out


def _annotated_classes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The class names a handler's parameters are annotated with (`A | B`, `Union[A, B]` each)."""
    out: list[str] = []
    for arg in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
        for node in ast.walk(arg.annotation) if arg.annotation is not None else ():
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name and name[:1].isupper() and name not in out:
                out.append(name)
    return out


# Pydantic's constructors from a mapping or a JSON text (`X.model_validate(body)`).
_VALIDATORS = frozenset({"model_validate", "model_validate_json", "parse_obj", "parse_raw"})


def _built_classes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The classes a handler builds from the request's JSON body: `X(**raw_body)` or
    `X.model_validate(raw_body)` where `raw_body = await raw_request.json()` (or the call itself
    in place of the name): the body's model, where the parameters say only `Request`."""
    bodies = {
        target.id
        for node in ast.walk(fn)
        if isinstance(node, ast.Assign) and _is_json_body(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    def is_body(value: ast.expr) -> bool:
        return (isinstance(value, ast.Name) and value.id in bodies) or _is_json_body(value)

    out: list[str] = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and any(k.arg is None and is_body(k.value) for k in node.keywords):
            name = func.id
        elif isinstance(func, ast.Attribute) and func.attr in _VALIDATORS and isinstance(func.value, ast.Name) and node.args and is_body(node.args[0]):
            name = func.value.id
        else:
            continue
        if name[:1].isupper() and name not in out:
            out.append(name)
    return out


def _is_json_body(value: ast.expr) -> bool:
    """`await raw_request.json()` or `raw_request.json()`."""
    call = value.value if isinstance(value, ast.Await) else value
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "json" and not call.args
