"""What decorators do to calls: which keep the function callable as written
(`functools.wraps`-based, `lru_cache`, `torch.inference_mode`, ...), and which
functions a project decorator is applied to (so its wrapper's `func(*args)`
call can be linked to them)."""

from __future__ import annotations

import ast

from analyzer.resolve.exprs import dotted_name
from analyzer.resolve.project import MODULE_SCOPE, FuncDef, Project


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Decorators known to return the decorated callable's own behaviour (last name segment).
TRANSPARENT_DECORATORS = _words(
    "wraps lru_cache cache cached_property property staticmethod classmethod abstractmethod "
    "inference_mode no_grad enable_grad compile override final overload setter getter "
    "deleter contextmanager asynccontextmanager dataclass total_ordering "
    "singledispatch singledispatchmethod jit script ignore unused"
)


class Decorators:
    def __init__(self, project: Project) -> None:
        self.p = project
        self._transparent: dict[str, bool] = {}
        self._applied: dict[str, list[str]] | None = None

    def _resolve(self, fd: FuncDef, text: str) -> tuple[str | None, str | None]:
        """(dotted name as written, project function it names) of one decorator."""
        node = self.p.parser.parse(text)
        head = node.func if isinstance(node, ast.Call) else node
        name = dotted_name(head) if head is not None else None
        if name is None:
            return None, None
        scope = fd.fact.qualname.rpartition(".")[0] or MODULE_SCOPE
        sym = self.p.resolve_in_scope(fd.module, scope, name)
        return name, sym.name if sym is not None and sym.kind == "function" else None

    def transparent(self, func: str) -> bool:
        """True when every decorator of `func` keeps it callable as written."""
        found = self._transparent.get(func)
        if found is None:
            found = True
            fd = self.p.functions.get(func)
            for text in fd.fact.decorators if fd is not None else ():
                name, target = self._resolve(fd, text)  # type: ignore[arg-type]
                if name is not None and name.rpartition(".")[2] in TRANSPARENT_DECORATORS:
                    continue
                if target is None or not self.uses_wraps(target):
                    found = False
                    break
            self._transparent[func] = found
        return found

    def uses_wraps(self, decorator: str) -> bool:
        """A project decorator whose inner wrapper is `@functools.wraps(...)`."""
        fd = self.p.functions[decorator]
        prefix = fd.fact.qualname + "."
        return any(
            fn.qualname.startswith(prefix) and any(d.split("(")[0].rpartition(".")[2] == "wraps" for d in fn.decorators)
            for fn in self.p.modules[fd.module].functions
        )

    def applied_to(self, decorator: str) -> list[str]:
        """The project functions decorated with project function `decorator`."""
        if self._applied is None:
            applied: dict[str, list[str]] = {}
            for fd in self.p.functions.values():
                for text in fd.fact.decorators:
                    _, target = self._resolve(fd, text)
                    if target is not None:
                        applied.setdefault(target, []).append(fd.name)
            self._applied = applied
        return self._applied.get(decorator, [])
