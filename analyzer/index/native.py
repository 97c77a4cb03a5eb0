"""Definitions in C, C++, CUDA and Rust sources, read with tree-sitter grammars.

A book about serving cites kernels (`paged_attention_v1_kernel`), their C++ entry
points and the Rust router's types as often as Python classes. This module lists
what such a file defines (namespaces, classes / structs / enums / unions, functions
and kernels, function prototypes, function-like macros; Rust modules, structs,
enums, traits, fns and the methods of `impl` blocks) with scoped names and line
spans, for the checker's symbol table. Nothing is compiled or run.

CUDA is read with the C++ grammar after blanking its qualifiers (`__global__`,
`__launch_bounds__(...)`, ...) with spaces of the same length, so every byte offset
and line stays where it was; a tree with errors still yields the definitions it could
recover. A file that is not text or not valid UTF-8 is decoded with replacement
characters (identifiers are ASCII), and one whose parse fails is reported, never fatal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

CPP_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".inl")
RUST_SUFFIXES = (".rs",)
NATIVE_SUFFIXES = CPP_SUFFIXES + RUST_SUFFIXES
# Vendored code inside a tree (CUTLASS, third-party kernels) is not the project's own:
# its thousands of generic names (`Tensor`, `copy`) would answer for the project's.
VENDORED_DIRS = frozenset({"third_party", "3rdparty", "thirdparty", "vendor", "vendored", "external", "cutlass", "deps", "target", "node_modules"})
MAX_BYTES = 2_000_000  # generated tables and amalgamated headers: not what a text cites

# CUDA qualifiers the C++ grammar does not know; `__launch_bounds__(256, 1)` with its arguments.
_CUDA_QUALIFIERS_RE = re.compile(
    rb"__(?:launch_bounds|cluster_dims)__\s*\([^()]*(?:\([^()]*\)[^()]*)*\)|\b__(?:global|device|host|forceinline|noinline|shared|constant|managed|restrict|grid_constant)__\b"
)


@dataclass(frozen=True, slots=True)
class NativeSymbol:
    qualname: str  # scope-qualified, dotted: `vllm.paged_attention_v1_kernel`, `Router.new`
    kind: str  # "class" | "function" | "declaration" | "macro" | "module"
    line: int  # 1-based
    end_line: int
    language: str  # "c++" | "cuda" | "rust"


@dataclass(frozen=True, slots=True)
class NativeFile:
    path: str
    language: str
    symbols: tuple[NativeSymbol, ...]
    error: str | None = None  # why nothing (or only part) could be read


def language_of(path: str) -> str | None:
    lower = path.lower()
    if lower.endswith(RUST_SUFFIXES):
        return "rust"
    if lower.endswith((".cu", ".cuh")):
        return "cuda"
    if lower.endswith(CPP_SUFFIXES):
        return "c++"
    return None


@cache
def _parser(language: str) -> Any:
    """A tree-sitter parser for "c++" (also CUDA and C headers) or "rust"."""
    import tree_sitter

    if language == "rust":
        import tree_sitter_rust

        grammar = tree_sitter_rust.language()
    else:
        import tree_sitter_cpp

        grammar = tree_sitter_cpp.language()
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def blank_cuda(data: bytes) -> bytes:
    """CUDA qualifiers replaced by spaces of the same length (newlines kept)."""
    return _CUDA_QUALIFIERS_RE.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), data)


def extract_native(path: str, data: bytes) -> NativeFile:
    """The definitions of one C/C++/CUDA/Rust file."""
    language = language_of(path)
    if language is None:
        return NativeFile(path, "", (), error="not a C, C++, CUDA or Rust file")
    if b"\x00" in data[:8192]:
        return NativeFile(path, language, (), error="binary content")
    if len(data) > MAX_BYTES:
        return NativeFile(path, language, (), error=f"larger than {MAX_BYTES} bytes")
    if data.startswith(b"\xef\xbb\xbf"):
        data = b"   " + data[3:]  # a BOM, blanked so offsets hold
    if language == "cuda":
        data = blank_cuda(data)
    try:
        tree = _parser("rust" if language == "rust" else "c++").parse(data)
    except Exception as exc:  # tree-sitter refuses (timeouts, internal errors): report, go on
        return NativeFile(path, language, (), error=f"{type(exc).__name__}: {exc}")
    walker = _RustWalker(data) if language == "rust" else _CppWalker(data)
    symbols = tuple(walker.walk(tree.root_node, ()))
    if tree.root_node.type == "ERROR" and isinstance(walker, _CppWalker):
        symbols += tuple(walker._recover(tree.root_node, ()))  # the whole file failed to parse as one unit
    error = "parsed with errors (definitions recovered where possible)" if tree.root_node.has_error else None
    return NativeFile(path, language, tuple(_with_language(symbols, language)), error=error)


def _with_language(symbols: Iterable[NativeSymbol], language: str) -> Iterator[NativeSymbol]:
    for s in symbols:
        yield NativeSymbol(s.qualname, s.kind, s.line, s.end_line, language)


def _span(node: Any) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


class _Walker:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def symbol(self, scope: tuple[str, ...], name: str, kind: str, node: Any) -> NativeSymbol:
        line, end = _span(node)
        return NativeSymbol(".".join((*scope, name)), kind, line, end, "")

    def walk(self, node: Any, scope: tuple[str, ...]) -> Iterator[NativeSymbol]:
        raise NotImplementedError


_IDENT_RE = re.compile(r"[A-Za-z_~][A-Za-z0-9_]*")
_CPP_CLASSES = {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}
# Declarator wrappers between a function definition and its name.
_CPP_WRAPPERS = {"pointer_declarator", "reference_declarator", "attributed_declarator", "parenthesized_declarator"}


class _CppWalker(_Walker):
    def walk(self, node: Any, scope: tuple[str, ...]) -> Iterator[NativeSymbol]:
        for child in node.named_children:
            kind = child.type
            if kind == "namespace_definition":
                name = child.child_by_field_name("name")
                inner = (*scope, *self.text(name).split("::")) if name is not None else scope
                body = child.child_by_field_name("body")
                if name is not None:
                    yield self.symbol(scope, self.text(name).replace("::", "."), "module", child)
                if body is not None:
                    yield from self.walk(body, inner)
            elif kind in _CPP_CLASSES:
                yield from self._class(child, scope)
            elif kind == "function_definition":
                yield from self._function(child, scope, "function")
            elif kind in {"declaration", "field_declaration"}:
                yield from self._prototype(child, scope)
                for sub in child.named_children:  # `struct X {...} x;`
                    if sub.type in _CPP_CLASSES:
                        yield from self._class(sub, scope)
            elif kind == "preproc_function_def":
                name = child.child_by_field_name("name")
                if name is not None:
                    yield self.symbol((), self.text(name), "macro", child)
            elif kind == "ERROR":
                yield from self._recover(child, scope)
                yield from self.walk(child, scope)
            elif kind in {"template_declaration", "linkage_specification", "declaration_list", "field_declaration_list",
                          "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "access_specifier",
                          "export_declaration"}:
                yield from self.walk(child, scope)

    def _recover(self, node: Any, scope: tuple[str, ...]) -> Iterator[NativeSymbol]:
        """Inside an ERROR node the grammar leaves a definition's pieces side by side: a
        `function_declarator` followed by a `compound_statement` is a function definition."""
        children = node.named_children
        for i, child in enumerate(children):
            if child.type != "function_declarator":
                continue
            parts = self._declarator_name(child)
            if parts is None:
                continue
            body = children[i + 1] if i + 1 < len(children) and children[i + 1].type == "compound_statement" else None
            line, end = child.start_point[0] + 1, (body or child).end_point[0] + 1
            name = ".".join((*scope, *parts))
            yield NativeSymbol(name, "function" if body is not None else "declaration", line, end, "")

    def _class(self, node: Any, scope: tuple[str, ...]) -> Iterator[NativeSymbol]:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None or body is None:  # a forward declaration or an anonymous type
            if body is not None:
                yield from self.walk(body, scope)
            return
        parts = tuple(p for p in _IDENT_RE.findall(self.text(name).split("<", 1)[0]))
        if not parts:
            return
        yield self.symbol((*scope, *parts[:-1]), parts[-1], "class", node)
        if node.type == "enum_specifier":
            for item in body.named_children:
                enumerator = item.child_by_field_name("name")
                if item.type == "enumerator" and enumerator is not None:
                    yield self.symbol((*scope, *parts), self.text(enumerator), "attribute", item)
            return
        yield from self.walk(body, (*scope, *parts))

    def _declarator_name(self, node: Any) -> tuple[str, ...] | None:
        """Scoped name of a function declarator (`Foo::run`, `operator()`, `~Foo`)."""
        decl = node
        while decl is not None and decl.type != "function_declarator":
            if decl.type in _CPP_WRAPPERS or decl.type in {"init_declarator"}:
                decl = decl.child_by_field_name("declarator") or (decl.named_children[-1] if decl.named_children else None)
            else:
                return None
        if decl is None:
            return None
        target = decl.child_by_field_name("declarator")
        if target is None:
            return None
        raw = self.text(target)
        raw = re.sub(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>", "", raw)  # template arguments of a specialisation
        if "operator" in raw:
            return None  # operators are not cited by name
        parts = tuple(_IDENT_RE.findall(raw.replace("::", " ")))
        return parts or None

    def _function(self, node: Any, scope: tuple[str, ...], kind: str) -> Iterator[NativeSymbol]:
        declarator = node.child_by_field_name("declarator")
        parts = self._declarator_name(declarator) if declarator is not None else None
        if parts is None:
            # `TORCH_LIBRARY(_C, m) {...}` reads as a function named by a macro: not a definition to cite
            return
        yield self.symbol((*scope, *parts[:-1]), parts[-1], kind, node)

    def _prototype(self, node: Any, scope: tuple[str, ...]) -> Iterator[NativeSymbol]:
        declarator = node.child_by_field_name("declarator")
        if declarator is None:
            return
        parts = self._declarator_name(declarator)
        if parts is not None:
            yield self.symbol((*scope, *parts[:-1]), parts[-1], "declaration", node)


_RUST_TYPES = {"struct_item": "class", "enum_item": "class", "union_item": "class", "trait_item": "class", "type_item": "class"}


class _RustWalker(_Walker):
    def walk(self, node: Any, scope: tuple[str, ...]) -> Iterator[NativeSymbol]:
        for child in node.named_children:
            kind = child.type
            name = child.child_by_field_name("name")
            if kind == "function_item" or kind == "function_signature_item":
                if name is not None:
                    yield self.symbol(scope, self.text(name), "function", child)
            elif kind in _RUST_TYPES and name is not None:
                yield self.symbol(scope, self.text(name), _RUST_TYPES[kind], child)
                body = child.child_by_field_name("body")
                if kind == "trait_item" and body is not None:
                    yield from self.walk(body, (*scope, self.text(name)))
                elif kind == "enum_item" and body is not None:
                    for variant in body.named_children:
                        vname = variant.child_by_field_name("name")
                        if variant.type == "enum_variant" and vname is not None:
                            yield self.symbol((*scope, self.text(name)), self.text(vname), "attribute", variant)
                elif kind == "struct_item" and body is not None and body.type == "field_declaration_list":
                    for item in body.named_children:
                        fname = item.child_by_field_name("name")
                        if item.type == "field_declaration" and fname is not None:
                            yield self.symbol((*scope, self.text(name)), self.text(fname), "attribute", item)
            elif kind == "impl_item":
                target = child.child_by_field_name("type")
                body = child.child_by_field_name("body")
                if target is not None and body is not None:
                    # `impl<T> Trait for Router<T>`: the methods belong to `Router`.
                    type_name = re.sub(r"<.*", "", self.text(target), flags=re.S).rsplit("::", 1)[-1].strip()
                    if type_name.isidentifier():
                        yield from self.walk(body, (*scope, type_name))
            elif kind == "mod_item" and name is not None:
                yield self.symbol(scope, self.text(name), "module", child)
                body = child.child_by_field_name("body")
                if body is not None:
                    yield from self.walk(body, (*scope, self.text(name)))
            elif kind in {"const_item", "static_item"} and name is not None:
                yield self.symbol(scope, self.text(name), "attribute", child)
            elif kind == "macro_definition" and name is not None:
                yield self.symbol((), self.text(name), "macro", child)
            elif kind in {"declaration_list", "ERROR"}:
                yield from self.walk(child, scope)


def native_files(root: Path) -> Iterator[str]:
    """Root-relative paths of the C/C++/CUDA/Rust files under `root`, vendored folders left out."""
    for path in sorted(root.rglob("*")):
        if not path.name.lower().endswith(NATIVE_SUFFIXES) or path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root)
        if any(part in VENDORED_DIRS or part.startswith(".") for part in rel.parts[:-1]):
            continue
        yield rel.as_posix()


def index_native(root: Path, paths: Iterable[str] | None = None) -> list[NativeFile]:
    """Every native file's definitions; unreadable files come back with their error."""
    out = []
    for rel in paths if paths is not None else native_files(root):
        try:
            data = (root / rel).read_bytes()
        except OSError as exc:
            out.append(NativeFile(rel, language_of(rel) or "", (), error=f"{type(exc).__name__}: {exc}"))
            continue
        out.append(extract_native(rel, data))
    return out
