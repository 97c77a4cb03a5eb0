r"""The folder a bare file or folder name is written under: an entry of a directory tree drawn in a
text block (`entrypoints/` / `├── openai/` / `│   ├── api_server.py`), or a row of a file table or
the lead of a list item in a section whose heading names a folder (`### Executor - \`vllm/v1/executor/\``),
itself within the folder of the heading it is nested under (`#### Memory (\`core/\`)` under
`### Package (\`/vllm/vllm/\`)`: `vllm/core/`). A reader takes
`api_server.py` there as that folder's file, not as any file of that name in the package, so the
reference's target becomes the written folder joined with the name. A bare file name the same
document also writes with its folders (`toy_proxy_server.py` after
`tests/v1/kv_connector/nixl_integration/toy_proxy_server.py`) carries that path, for when the pin
has no file of the name (`resolve`). Plain strings in, plain values out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from analyzer.refs.models import PATH, Reference

# A tree's entry line: the drawing (`│   ├── `, `|-- `, `` `-- ``), then the entry's name.
_ENTRY_RE = re.compile(r"^(?P<lead>[\s│|]*(?:[├└]──|\|--|`--)[─\s]*)(?P<name>[^\s#]+)")
# A line of the drawing alone (`│`, `│   │`): the tree goes on past it.
_CONNECTOR_RE = re.compile(r"[\s│|]*")
# The tree's root line: one folder name, maybe a comment (`vllm/`, `entrypoints/   # entry points`).
_ROOT_RE = re.compile(r"^\s*(?P<root>[\w.-]+(?:/[\w.-]+)*/)\s*(?:#.*)?$")
_FENCE_RE = re.compile(r"^\s*(?:```|~~~)")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s")
_SPAN_RE = re.compile(r"`([^`\n]+)`")
# A folder as a heading writes it: path segments ending in `/` (`vllm/v1/kv_offload/`, `entrypoints/`).
_FOLDER_RE = re.compile(r"(?:[\w.-]+/)+")
# A name written with no folder before it: `cpu.py`, `backends/`.
_BARE_RE = re.compile(r"[\w.-]+/?")


def _is_folder(name: str) -> bool:
    return name.endswith("/") or "." not in name


def _tree_folder(lines: list[str], index: int, name: str, heading: str | None) -> str | None:
    """The folder the tree entry on `lines[index]` lies in: its parents' names up to the tree's
    root line (or the section heading's folder when the tree draws no root); None when the line
    is not a tree entry named `name`, or a parent is a file."""
    m = _ENTRY_RE.match(lines[index])
    if m is None or m.group("name").strip("`") != name:
        return None
    col = m.start("name")
    chain: list[str] = []
    root: str | None = None
    for i in range(index - 1, -1, -1):
        line = lines[i]
        if _FENCE_RE.match(line):
            break
        entry = _ENTRY_RE.match(line)
        if entry is None:
            if _CONNECTOR_RE.fullmatch(line):
                continue  # a blank or a line of the drawing alone: the same tree goes on
            top = _ROOT_RE.match(line)
            root = top.group("root") if top else None
            if top is None:
                return None  # prose or code above the drawing: not a tree this module reads
            if _checkout_root(lines, i, root):
                # The repository's own root: its entries are paths from there (`tile_spec/` beside
                # `python/` is a folder of the repository, not of the package).
                return "/".join(reversed(chain)) or "."
            break
        at = entry.start("name")
        if at < col:
            parent = entry.group("name").strip("`")
            if not _is_folder(parent):
                return None
            chain.append(parent.rstrip("/"))
            col = at
    if root is None:
        root = heading
    parts = [root.strip("/")] if root else []
    parts += reversed(chain)
    return "/".join(p for p in parts if p) or None


def _checkout_root(lines: list[str], at: int, root: str | None) -> bool:
    """Whether the tree's root line (`lines[at]`) names a checkout of the repository: one of its
    first-level entries is the package's source folder (`python/`, `python/sglang/srt/`) or a
    folder named as the root (`vllm/` under `vllm/`), so the root is not the package."""
    if root is None:
        return False
    name = root.strip("/").rsplit("/", 1)[-1]
    entries: list[tuple[int, str]] = []
    for line in lines[at + 1 :]:
        if _FENCE_RE.match(line):
            break
        entry = _ENTRY_RE.match(line)
        if entry is None:
            if _CONNECTOR_RE.fullmatch(line):
                continue
            break
        entries.append((entry.start("name"), entry.group("name").strip("`").strip("/")))
    if not entries:
        return False
    first = min(col for col, _ in entries)
    tops = [entry for col, entry in entries if col == first]
    return any(top == name or top == "python" or top.startswith("python/") for top in tops)


def _heading_folder(heading: str) -> str | None:
    """The one folder a heading names in code font (`vllm/v1/kv_offload/`), or None."""
    spans = [s for s in _SPAN_RE.findall(heading) if _FOLDER_RE.fullmatch(s.removeprefix("/"))]
    return spans[0] if len(spans) == 1 else None


def _sections(lines: list[str]) -> list[str | None]:
    """Per line, the folder its section's heading names (headings inside fences are code). A
    heading's folder written without its parents (`#### Memory (`core/`)`) lies in the folder of
    the heading it is nested under (`### Package (`/vllm/vllm/`)`): `vllm/core/`."""
    out: list[str | None] = []
    folder: str | None = None
    open_folders: list[tuple[int, str | None]] = []  # (heading level, its folder), outermost first
    fenced = False
    for line in lines:
        if _FENCE_RE.match(line):
            fenced = not fenced
        elif not fenced and _HEADING_RE.match(line):
            level = len(line.lstrip()) - len(line.lstrip().lstrip("#"))
            while open_folders and open_folders[-1][0] >= level:
                open_folders.pop()
            folder = _heading_folder(line)
            parent = next((f for _, f in reversed(open_folders) if f), None)
            if folder is not None:
                folder = _checkout_folder(folder)
                if parent is not None and not folder.startswith(_PACKAGE_TOPS):
                    folder = f"{parent.rstrip('/')}/{folder}"
            open_folders.append((level, folder))
        out.append(folder)
    return out


# Where a project's code starts: a folder under a heading is its package's only from there.
_PACKAGE_TOPS = ("vllm/", "sglang/", "python/")


def _checkout_folder(folder: str) -> str:
    """`/vllm/vllm/` (a checkout named after its package, from its root): the package, `vllm/`."""
    parts = [p for p in folder.split("/") if p]
    if folder.startswith("/") and len(parts) >= 2 and parts[0] == parts[1]:
        parts = parts[1:]
    return "/".join(parts) + "/"


# A list item whose lead is a name in code font, maybe bold: `- **`llm_engine.py`** - Main ...`.
_ITEM_LEAD_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\*\*|__)?`(?P<name>[^`\n]+)`")


def _leads_item(line: str, name: str) -> bool:
    """Whether `name` is what the list item on `line` is about (its first word, in code font)."""
    m = _ITEM_LEAD_RE.match(line)
    return m is not None and m.group("name") == name


# Any list item, and how far it is indented.
_ITEM_RE = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d+[.)])\s")


def _parent_items(lines: list[str], index: int) -> list[str]:
    """The folders of the list items the item on `lines[index]` is nested under, outermost
    first (`v1` for `  - `core/`` under `- `v1/``); none when an enclosing item is not led by a
    folder (a list of topics, not a tree)."""
    m = _ITEM_RE.match(lines[index])
    if m is None:
        return []
    indent = len(m.group("indent"))
    chain: list[str] = []
    for line in reversed(lines[:index]):
        if indent == 0 or _HEADING_RE.match(line) or _FENCE_RE.match(line):
            break
        item = _ITEM_RE.match(line)
        if item is None:
            if line.strip() and not line[:1].isspace():
                break  # a paragraph at the margin: the list ended
            continue  # a blank, or an item's continuation line
        if len(item.group("indent")) < indent:
            lead = _ITEM_LEAD_RE.match(line)
            name = lead.group("name").strip("/") if lead is not None and lead.group("name").endswith("/") else ""
            if not _FOLDER_RE.fullmatch(name + "/"):
                return []
            chain.append(name)
            indent = len(item.group("indent"))
    return list(reversed(chain))


def _spelled_out(refs: list[Reference]) -> dict[str, str]:
    """File name -> the one path the document writes it under (`a/b/x.py`), for names written
    under a single path only."""
    paths: dict[str, set[str]] = {}
    for ref in refs:
        target = ref.target.strip("/")
        if ref.kind == PATH and not ref.bare_file and not ref.docs_page and "/" in target and not target.endswith("/"):
            paths.setdefault(target.rsplit("/", 1)[1], set()).add(target)
    return {name: next(iter(found)) for name, found in paths.items() if len(found) == 1}


def place(source: str, refs: Iterable[Reference]) -> list[Reference]:
    """`refs` of one document, each bare file or folder name of a directory tree or of a file
    table under a folder heading given the folder it is written under (its target becomes
    `folder/name`, no longer looked up by name alone), and each other bare file name the
    document also writes with its folders given that path (`Reference.written_at`)."""
    refs = list(refs)
    spelled = _spelled_out(refs)
    lines = source.splitlines()
    sections: list[str | None] | None = None
    out: list[Reference] = []
    for ref in refs:
        if ref.kind != PATH or ref.origin == "link" or not _BARE_RE.fullmatch(ref.text) or not 0 < ref.line <= len(lines):
            out.append(ref)
            continue
        if sections is None:
            sections = _sections(lines)
        heading = sections[ref.line - 1]
        line = lines[ref.line - 1]
        if _ENTRY_RE.match(line):
            folder = _tree_folder(lines, ref.line - 1, ref.text, heading)
        elif _leads_item(line, ref.text) and (parents := _parent_items(lines, ref.line - 1)):
            # an item nested under items led by folders (`- `v1/`` / `  - `core/``): inside them
            folder = "/".join(p for p in (heading.strip("/") if heading else "", *parents) if p)
        elif line.lstrip().startswith("|") or _leads_item(line, ref.text):
            folder = heading  # a file table's row or list's item, in a section headed by its folder
        elif _HEADING_RE.match(line) and heading and heading.rstrip("/").endswith(f"/{ref.text.rstrip('/')}"):
            # the heading's own folder, written without the parents it is nested under
            out.append(replace(ref, target=heading.rstrip("/") + "/", bare_file=False))
            continue
        else:
            folder = None
        if folder is None:
            full = spelled.get(ref.target) if ref.bare_file else None
            out.append(replace(ref, written_at=full) if full else ref)
            continue
        # (`.`: the root of a drawn checkout, where the name is a path from the repository's root.)
        target = ref.text if folder == "." else f"{folder.strip('/')}/{ref.text}"
        out.append(replace(ref, target=target, bare_file=False, under=folder.strip("/") or "."))
    return _drawn_in_full(out)


def _drawn_in_full(refs: list[Reference]) -> list[Reference]:
    """`tile_spec/core.py` in a table, where the document's tree draws one file whose path ends so
    (`python/sglang/srt/speculative/tile_spec/core.py`): that path (`Reference.written_at`), for
    when the short one is not the package's."""
    drawn = {r.target.strip("/") for r in refs if r.kind == PATH and r.origin != "link" and r.under is not None and not r.bare_file}
    out = []
    for ref in refs:
        tail = ref.target.strip("/")
        if ref.kind == PATH and ref.origin != "link" and not ref.bare_file and not ref.written_at and ref.under is None and "/" in tail:
            full = [d for d in drawn if d.endswith("/" + tail)]
            if len(full) == 1:
                ref = replace(ref, written_at=full[0])
        out.append(ref)
    return out
