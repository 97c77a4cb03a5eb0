"""Symbols added, removed, moved or renamed between two indexed releases, with evidence.

Only the top-most change is listed: a removed class hides its removed methods,
a renamed file hides the symbols that moved with it. Moves are claimed only on
evidence that a reader can check: git's rename detection for files, the same
qualified name and kind for a symbol that changed module, and for a rename in
place the same parent, the same parameters and a similar length.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from analyzer.diff.models import SymbolMove
from analyzer.index import SnapshotIndex, SymbolMatch
from analyzer.index.extract import module_name
from analyzer.index.models import Function

# A renamed function must keep its length within this ratio (and its parameters).
_SIZE_RATIO = 0.6
# A renamed class must keep this share of its method names.
_METHOD_OVERLAP = 0.6
# Old and new names must share most of their words (`_preempt` -> `_preempt_request`),
# or any two same-shaped helpers in a class would pair up (`forward` -> `_compute_dtype`).
_NAME_SIMILARITY = 60
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    dotted: str
    module: str
    qualname: str  # "" for a module
    kind: str  # module | class | function | method
    path: str
    line: int
    end_line: int

    @property
    def lines(self) -> int:
        return self.end_line - self.line + 1

    @property
    def parent(self) -> str:
        return self.dotted.rpartition(".")[0]

    def match(self) -> SymbolMatch:
        return SymbolMatch(self.path, self.module, self.qualname, self.kind, self.line, self.end_line)


def symbol_table(index: SnapshotIndex) -> dict[str, SymbolInfo]:
    """Every module, class, function and method of a tree by dotted name."""
    table: dict[str, SymbolInfo] = {}
    for path, summary in index.summaries.items():
        module = module_name(path)
        table[module] = SymbolInfo(module, module, "", "module", path, 1, max(summary.lines, 1))
        for qualname, kind, line, end_line in summary.symbols:
            dotted = f"{module}.{qualname}"
            table[dotted] = SymbolInfo(dotted, module, qualname, kind, path, line, end_line)
    return table


@dataclass(slots=True)
class SymbolChanges:
    added: list[str]
    removed: list[str]
    moved: list[SymbolMove]


def compare_symbols(
    old: SnapshotIndex,
    new: SnapshotIndex,
    file_renames: list[tuple[str, str, int]] | None = None,
) -> SymbolChanges:
    """`file_renames`: (old package path, new package path, git similarity %)."""
    t_old, t_new = symbol_table(old), symbol_table(new)
    removed = set(t_old) - set(t_new)
    added = set(t_new) - set(t_old)
    moves: list[SymbolMove] = []
    moved_old: dict[str, str] = {}  # old dotted -> new dotted, including what came along

    def claim(old_name: str, new_name: str) -> None:
        """`old_name` became `new_name`: so did everything under it."""
        moved_old[old_name] = new_name
        removed.discard(old_name)
        added.discard(new_name)
        for child in [n for n in removed if n.startswith(old_name + ".")]:
            twin = new_name + child[len(old_name):]
            if twin in added:
                removed.discard(child)
                added.discard(twin)

    # 1. Files git saw renamed: the module and whatever kept its qualified name.
    for old_path, new_path, similarity in file_renames or []:
        m_old, m_new = module_name(old_path), module_name(new_path)
        # Git pairs identical tiny files (empty `__init__.py`s): only a module with
        # definitions of its own carries evidence of a move.
        if m_old in removed and m_new in added and _has_definitions(t_old, m_old):
            moves.append(SymbolMove(m_old, m_new, "module", (
                f"git rename {old_path} -> {new_path} ({similarity}% similar)",
            )))
            claim(m_old, m_new)

    # 2. A definition that changed module but kept its qualified name and kind.
    by_key_old: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_key_new: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in removed:
        info = t_old[name]
        if info.kind in ("class", "function") and info.parent not in removed:
            by_key_old[(info.qualname, info.kind)].append(name)
    for name in added:
        info = t_new[name]
        if info.kind in ("class", "function") and info.parent not in added | set(moved_old.values()):
            by_key_new[(info.qualname, info.kind)].append(name)
    for key, olds in sorted(by_key_old.items()):
        news = by_key_new.get(key, [])
        if len(olds) != 1 or len(news) != 1:
            continue  # ambiguous: several candidates on a side, claim nothing
        a, b = t_old[olds[0]], t_new[news[0]]
        evidence = [f"same qualified name {a.qualname!r} and kind ({a.kind})", f"{a.lines} -> {b.lines} lines"]
        if a.kind == "class":
            kept = _method_overlap(t_old, t_new, a.dotted, b.dotted)
            evidence.append(f"{kept[0]} of {kept[1]} methods kept")
        if a.module in t_new:
            evidence.append(f"{a.module} still exists")
        moves.append(SymbolMove(a.dotted, b.dotted, "moved", tuple(evidence)))
        claim(a.dotted, b.dotted)

    # 3. Renamed in place: same parent, same kind, same parameters / methods.
    moves.extend(_renames_in_place(old, new, t_old, t_new, removed, added, claim))

    return SymbolChanges(
        added=_top_most(added),
        removed=_top_most(removed),
        moved=sorted(moves, key=lambda m: m.old),
    )


def _has_definitions(table: dict[str, SymbolInfo], module: str) -> bool:
    return any(info.module == module and info.kind != "module" for info in table.values())


def name_similarity(a: str, b: str) -> int:
    """0-100: how many words two identifiers share (snake_case and CamelCase split)."""
    from rapidfuzz import fuzz

    words_a = " ".join(w.lower() for w in _WORD_RE.findall(a))
    words_b = " ".join(w.lower() for w in _WORD_RE.findall(b))
    return int(fuzz.token_set_ratio(words_a, words_b))


def _method_overlap(t_old: dict[str, SymbolInfo], t_new: dict[str, SymbolInfo], a: str, b: str) -> tuple[int, int]:
    old_methods = {n[len(a) + 1:] for n in t_old if n.startswith(a + ".") and "." not in n[len(a) + 1:]}
    new_methods = {n[len(b) + 1:] for n in t_new if n.startswith(b + ".") and "." not in n[len(b) + 1:]}
    return len(old_methods & new_methods), len(old_methods)


def _params(index: SnapshotIndex, info: SymbolInfo) -> tuple[str, ...] | None:
    fact = index.fact(info.match())
    if not isinstance(fact, Function):
        return None
    return tuple(p.name for p in fact.params)


def _renames_in_place(
    old: SnapshotIndex,
    new: SnapshotIndex,
    t_old: dict[str, SymbolInfo],
    t_new: dict[str, SymbolInfo],
    removed: set[str],
    added: set[str],
    claim: Callable[[str, str], None],
) -> list[SymbolMove]:
    groups_old: dict[tuple[str, str], list[str]] = defaultdict(list)
    groups_new: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in removed:
        info = t_old[name]
        if info.kind != "module" and info.parent not in removed:
            groups_old[(info.parent, info.kind)].append(name)
    for name in added:
        info = t_new[name]
        if info.kind != "module" and info.parent not in added:
            groups_new[(info.parent, info.kind)].append(name)
    moves = []
    for key, olds in sorted(groups_old.items()):
        news = groups_new.get(key)
        if not news:
            continue
        pairs: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
        for a_name in olds:
            a = t_old[a_name]
            for b_name in news:
                b = t_new[b_name]
                evidence = _rename_evidence(old, new, t_old, t_new, a, b)
                if evidence is not None:
                    pairs[a_name].append((b_name, evidence))
        taken: dict[str, int] = defaultdict(int)
        for candidates in pairs.values():
            for b_name, _ in candidates:
                taken[b_name] += 1
        for a_name, candidates in sorted(pairs.items()):
            # Claim only one-to-one pairings: two look-alikes on either side prove nothing.
            if len(candidates) == 1 and taken[candidates[0][0]] == 1:
                b_name, evidence = candidates[0]
                moves.append(SymbolMove(a_name, b_name, "renamed", tuple(evidence)))
                claim(a_name, b_name)
    return moves


def _rename_evidence(
    old: SnapshotIndex,
    new: SnapshotIndex,
    t_old: dict[str, SymbolInfo],
    t_new: dict[str, SymbolInfo],
    a: SymbolInfo,
    b: SymbolInfo,
) -> list[str] | None:
    size = min(a.lines, b.lines) / max(a.lines, b.lines)
    old_name, new_name = a.dotted.rpartition(".")[2], b.dotted.rpartition(".")[2]
    if old_name.startswith("__") or new_name.startswith("__"):
        return None  # protocol methods are not renamed, they are dropped or added
    similar = name_similarity(old_name, new_name)
    if similar < _NAME_SIMILARITY:
        return None
    naming = f"names {similar}% alike"
    if a.kind == "class":
        kept, total = _method_overlap(t_old, t_new, a.dotted, b.dotted)
        if total < 2 or kept / total < _METHOD_OVERLAP:
            return None  # one kept method proves little
        return [f"same parent {a.parent}", f"{kept} of {total} methods kept", naming, f"{a.lines} -> {b.lines} lines"]
    if size < _SIZE_RATIO:
        return None
    pa, pb = _params(old, a), _params(new, b)
    if pa is None or pa != pb:
        return None
    shown = ", ".join(pa) or "none"
    return [f"same parent {a.parent}", f"same parameters ({shown})", naming, f"{a.lines} -> {b.lines} lines"]


def _top_most(names: set[str]) -> list[str]:
    """Drop names whose parent is itself in the set (a removed class hides its methods)."""
    return sorted(n for n in names if n.rpartition(".")[0] not in names)
