"""A class's members written out one a line: an outline in a text block (`RadixCache:` then
indented `reset: what it does` lines), a field listing under a heading about the class
(`fill_ids: List[int]  # comment`), or an enumeration's members quoted alone under one
(`DECODE = 2  # comment`). Each listed name is a member of that class: lines in, plain tuples
out."""

from __future__ import annotations

import re
from dataclasses import dataclass

# `TreeNode:`, `HiRadixCache ( RadixCache):`: a class (two humps or more, or with a base) and a colon.
_HEADER_RE = re.compile(r"^(?P<indent>\s*)(?P<name>_*[A-Z][A-Za-z0-9_]*)\s*(?:\(\s*(?P<base>[A-Za-z_][\w.]*)\s*\))?\s*[:：]\s*$")
# `XFormersBackend`: a class name of two words or more.
HUMPS_RE = re.compile(r"_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*")
# `  reset: what it does`, `  get_height(): ...`: an indented member and its description.
_MEMBER_RE = re.compile(r"^(?P<indent>\s+)(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\(\))?\s*[:：]")
# A line of the outline that only titles the next items (`helpers:`, `辅助函数:`), not a class.
_SUBTITLE_RE = re.compile(r"^\S[^:：]{0,40}[:：]\s*$")
# `fill_ids: List[int]  # comment`: a field, its type, an optional comment.
_FIELD_RE = re.compile(r"^\s*(?P<name>[a-z_][a-z0-9_]*)\s*:\s*(?P<type>[A-Za-z_][\w.]*(?:\[[^#]*\])?(?:\s*\|\s*[A-Za-z_][\w.]*)*)\s*(?:#.*)?$")
# `DRAFT_EXTEND = 6   # comment`: a constant in capitals set to a literal.
_CONSTANT_RE = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)\s*=\s*(?:-?\d+|\"[^\"]*\"|'[^']*'|auto\(\))\s*(?:#.*)?$")
_BUILTIN_TYPES = {"int", "str", "float", "bool", "bytes", "list", "dict", "tuple", "set", "object"}


@dataclass(frozen=True, slots=True)
class Listed:
    """A name an outline or listing gives (index: its line in the block; col: where it starts)."""

    index: int
    col: int
    name: str
    owner: str | None  # the class it is listed under; None for an outline's class itself
    base: bool = False  # the base class written on an outline's header


def class_outline(lines: list[str]) -> list[Listed]:
    """Classes written as outline headers and the members indented under each. A header counts
    only with at least two members under it; a subtitle line (`helpers:`) keeps the class."""
    out: list[Listed] = []
    owner: tuple[int, str, int, str | None] | None = None  # header index, class, indent, base
    members: list[Listed] = []

    def close() -> None:
        if owner is not None and len(members) >= 2:
            index, name, _, base = owner
            out.append(Listed(index, lines[index].index(name), name, None))
            if base is not None:
                out.append(Listed(index, lines[index].index(base, lines[index].index(name) + len(name)), base, None, base=True))
            out.extend(members)

    for i, line in enumerate(lines):
        if not line.strip():
            continue
        header = _HEADER_RE.match(line)
        if header and (header.group("base") or HUMPS_RE.fullmatch(header.group("name"))):
            close()
            owner, members = (i, header.group("name"), len(header.group("indent")), header.group("base")), []
            continue
        if owner is None:
            continue
        member = _MEMBER_RE.match(line)
        if member and len(member.group("indent")) > owner[2]:
            if not member.group("name").startswith("__"):
                members.append(Listed(i, len(member.group("indent")), member.group("name"), owner[1]))
        elif not _SUBTITLE_RE.match(line):
            close()
            owner, members = None, []
    close()
    return sorted(out, key=lambda x: (x.index, x.col))


# `----| prepare_for_verify`, `│   ├── schedule()`, `|-- TreeNode`: one name on a line of a drawn
# tree; how far in the name starts is its depth.
_TREE_ITEM_RE = re.compile(r"^(?P<prefix>[\s│|`├└─-]*(?:[├└]──|[|`]--|-+\|)\s*)(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\(\))?\s*(?:#.*)?$")


def tree_outline(lines: list[str]) -> list[Listed]:
    """The members a drawn tree nests under a class (`--| EagleVerifyInput` over `----| verify`):
    each snake_case item one level under a class item, at least two under it. A line that is not
    a tree item (the file the tree is about) starts a new tree."""
    out: list[Listed] = []
    stack: list[tuple[int, str]] = []  # (depth, name) of the open items
    members: dict[tuple[int, str], list[Listed]] = {}

    def close(upto: int) -> None:
        while stack and stack[-1][0] >= upto:
            key = stack.pop()
            listed = members.pop(key, [])
            if len(listed) >= 2:
                out.extend(listed)

    for i, line in enumerate(lines):
        m = _TREE_ITEM_RE.match(line)
        if m is None:
            if line.strip():
                close(0)
            continue
        depth, name = len(m.group("prefix")), m.group("name")
        close(depth)
        if stack and HUMPS_RE.fullmatch(stack[-1][1]) and name[:1].islower():
            members.setdefault(stack[-1], []).append(Listed(i, m.start("name"), name, stack[-1][1]))
        stack.append((depth, name))
    close(0)
    return sorted(out, key=lambda x: (x.index, x.col))


def _type_shaped(text: str) -> bool:
    head = re.split(r"[\[|\s]", text, maxsplit=1)[0]
    return "[" in text or head in _BUILTIN_TYPES or head[:1].isupper() or "." in head


def field_listing(lines: list[str]) -> list[tuple[int, int, str]]:
    """(index, col, name) of each field when every line of the block declares one (`name: Type`,
    a comment allowed): at least two, all typed like Python (`int`, `List[Req]`, `ForwardMode`),
    so that `key: value` configuration (`enabled: true`) is not taken for one."""
    out: list[tuple[int, int, str]] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        m = _FIELD_RE.match(line)
        if m is None or not _type_shaped(m.group("type")):
            return []
        out.append((i, m.start("name"), m.group("name")))
    return out if len(out) >= 2 else []


def constant_listing(lines: list[str]) -> list[tuple[int, int, str]]:
    """(index, col, name) of each member when a Python snippet is nothing but constants in
    capitals set to literals at its top level (`EXTEND = 1`), at least two: an enumeration's
    members quoted without their `class` line."""
    out: list[tuple[int, int, str]] = []
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _CONSTANT_RE.match(line)
        if m is None:
            return []
        out.append((i, 0, m.group("name")))
    return out if len(out) >= 2 else []
