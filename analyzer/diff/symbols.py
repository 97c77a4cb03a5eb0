"""Symbols added, removed, moved or renamed between two indexed releases, with evidence.

Only the top-most change is listed: a removed class hides its removed methods,
a renamed file hides the symbols that moved with it. Moves are claimed only on
evidence that a reader can check: git's rename detection for files; a binding
that keeps the name importable from its old module (a re-export, which is no
removal); the same qualified name and kind for a symbol that changed module,
with the same shape (parameters, methods) where several copies compete; for a
rename in place the same parent, the same parameters and a similar length. The
moves of a module's definitions then say what became of the module: moved,
split into several, merged into one, or folded into a package.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from analyzer.diff.models import ModuleChange, SymbolMove
from analyzer.diff.reexports import reexport
from analyzer.index import SnapshotIndex, SymbolMatch
from analyzer.index.extract import module_name
from analyzer.index.models import Class, Function

# A renamed function must keep its length within this ratio (and its parameters).
_SIZE_RATIO = 0.6
# A renamed class must keep this share of its method names.
_METHOD_OVERLAP = 0.6
# Old and new names must share most of their words (`_preempt` -> `_preempt_request`),
# or any two same-shaped helpers in a class would pair up (`forward` -> `_compute_dtype`).
_NAME_SIMILARITY = 60
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def name_words(name: str) -> list[str]:
    """The lowercase words of a CamelCase or snake_case name (`KVCacheManager` -> kv, cache, manager)."""
    return [w.lower() for w in _WORD_RE.findall(name)]


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
    modules: list[ModuleChange] = field(default_factory=list)


@dataclass(slots=True)
class _Pairing:
    """What the passes of compare_symbols share: both releases' indexes and symbol tables,
    the names not paired yet on each side, and `claim` to pair two of them."""

    old: SnapshotIndex
    new: SnapshotIndex
    t_old: dict[str, SymbolInfo]
    t_new: dict[str, SymbolInfo]
    removed: set[str]
    added: set[str]

    def claim(self, old_name: str, new_name: str) -> None:
        """`old_name` became `new_name`: so did everything under it that has a twin there."""
        self.removed.discard(old_name)
        self.added.discard(new_name)
        for child in [n for n in self.removed if n.startswith(old_name + ".")]:
            twin = new_name + child[len(old_name):]
            if twin in self.t_new:
                self.removed.discard(child)
                self.added.discard(twin)


def compare_symbols(
    old: SnapshotIndex,
    new: SnapshotIndex,
    file_renames: list[tuple[str, str, int]] | None = None,
) -> SymbolChanges:
    """`file_renames`: (old package path, new package path, git similarity %)."""
    t_old, t_new = symbol_table(old), symbol_table(new)
    p = _Pairing(old, new, t_old, t_new, set(t_old) - set(t_new), set(t_new) - set(t_old))
    removed, added, claim = p.removed, p.added, p.claim
    moves: list[SymbolMove] = []

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

    # 2. Still importable from the old module (a re-export): not removed at all.
    moves.extend(_reexports(p))

    # 3. A definition that changed module but kept its qualified name and kind.
    moves.extend(_cross_module_moves(p))

    # 4. Renamed in place: same parent, same kind, same parameters / methods.
    moves.extend(_renames_in_place(p))

    # 5. What the moves say about whole modules: moved, split, merged, folded into a package.
    module_moves, module_changes = _module_changes(p, moves)
    moves.extend(module_moves)

    return SymbolChanges(
        added=_top_most(added),
        removed=_top_most(removed),
        moved=sorted(moves, key=lambda m: m.old),
        modules=sorted(module_changes, key=lambda m: m.old),
    )


def _is_top_level(table: dict[str, SymbolInfo], info: SymbolInfo) -> bool:
    parent = table.get(info.parent)
    return parent is not None and parent.kind == "module"


def _reexports(p: _Pairing) -> list[SymbolMove]:
    new, t_old, t_new, removed, claim = p.new, p.t_old, p.t_new, p.removed, p.claim
    defined = {n for n, i in t_new.items() if i.kind in ("class", "function")}
    moves = []
    for name in sorted(removed):
        info = t_old[name]
        if name not in removed or info.kind not in ("class", "function") or not _is_top_level(t_old, info):
            continue
        if info.module not in t_new:
            continue  # the old module is gone: nothing is importable from it
        found = reexport(new, info.module, info.qualname, defined)
        if found is None:
            continue
        where = (f"defined at {found.target}" if found.defined
                 else f"{found.target} is not defined in this release's tree (an outside package?)")
        moves.append(SymbolMove(name, found.target, "re-exported",
                                (f"still importable from {info.module}", *found.hops, where)))
        if found.defined:
            claim(name, found.target)
        else:
            for child in [n for n in removed if n == name or n.startswith(name + ".")]:
                removed.discard(child)
    return moves


def _cross_module_moves(p: _Pairing) -> list[SymbolMove]:
    """Same qualified name and kind in another module. One candidate each side is a move;
    several copies folding into one, or one of several new copies, need the same shape
    (parameters, methods) besides; a copy dropped for one that already existed is "merged"."""
    t_old, t_new, removed, added, claim = p.t_old, p.t_new, p.removed, p.added, p.claim
    by_key_old: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_key_new: dict[tuple[str, str], list[str]] = defaultdict(list)
    existing: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in removed:
        info = t_old[name]
        if info.kind in ("class", "function") and (_is_top_level(t_old, info) or info.parent not in removed):
            by_key_old[(info.qualname, info.kind)].append(name)
    for name, info in t_new.items():
        if info.kind not in ("class", "function"):
            continue
        if name in added and (_is_top_level(t_new, info) or info.parent not in added):
            by_key_new[(info.qualname, info.kind)].append(name)
        elif name not in added and _is_top_level(t_new, info):
            existing[(info.qualname, info.kind)].append(name)
    moves = []
    for key, olds in sorted(by_key_old.items()):
        news = sorted(by_key_new.get(key, []))
        olds = sorted(olds)
        pairs: list[tuple[str, str, str, list[str]]]
        if len(news) == 1 and len(olds) == 1:
            related = _related(p, t_old[olds[0]], t_new[news[0]])
            pairs = [(olds[0], news[0], "moved", [])] if related else []
        elif len(news) == 1:
            pairs = [(a, news[0], "moved", [f"one of {len(olds)} removed copies"]) for a in olds
                     if _same_shape(p, t_old[a], t_new[news[0]])]
        elif len(olds) == 1 and news:
            alike = [b for b in news if _same_shape(p, t_old[olds[0]], t_new[b])]
            pairs = [(olds[0], alike[0], "moved", [f"the only one of {len(news)} new copies of the same shape"])] if len(alike) == 1 else []
        elif not news and len(existing.get(key, [])) == 1:
            into = existing[key][0]
            pairs = [(a, into, "merged", [f"{into} already existed"]) for a in olds
                     if t_old[a].module != t_new[into].module and _same_shape(p, t_old[a], t_new[into], 0.6)]
        else:
            pairs = []  # ambiguous: several candidates on each side, claim nothing
        for a_name, b_name, kind, extra in pairs:
            a, b = t_old[a_name], t_new[b_name]
            evidence = [f"same qualified name {a.qualname!r} and kind ({a.kind})", *extra,
                        *_shape_evidence(p, a, b), f"{a.lines} -> {b.lines} lines",
                        f"{a.module} still exists" if a.module in t_new else f"{a.module} is gone"]
            moves.append(SymbolMove(a.dotted, b.dotted, kind, tuple(evidence)))
            claim(a.dotted, b.dotted)
    return moves


def _related(p: _Pairing, a: SymbolInfo, b: SymbolInfo) -> bool:
    """The one removed and the one added definition of a name: a move unless, for functions,
    they share neither half their parameters nor their length (a namesake, not the same code)."""
    if a.kind != "function":
        return True
    pa, pb = _params(p.old, a), _params(p.new, b)
    if pa is None or pb is None:
        return True
    union = set(pa) | set(pb)
    shared = len(set(pa) & set(pb)) / len(union) if union else 1.0
    return shared >= 0.5 or min(a.lines, b.lines) / max(a.lines, b.lines) >= 0.8


def _same_shape(p: _Pairing, a: SymbolInfo, b: SymbolInfo, min_size: float = 0.5) -> bool:
    """Functions: the same parameters and a comparable length. Classes: most methods
    kept, or (no methods) the same bases and fields."""
    if a.kind == "class":
        kept, total = _method_overlap(p.t_old, p.t_new, a.dotted, b.dotted)
        if total:
            return kept / total >= _METHOD_OVERLAP
        return _class_shape(p.old, a) == _class_shape(p.new, b) != ((), ())
    pa, pb = _params(p.old, a), _params(p.new, b)
    return pa is not None and pa == pb and min(a.lines, b.lines) / max(a.lines, b.lines) >= min_size


def _shape_evidence(p: _Pairing, a: SymbolInfo, b: SymbolInfo) -> list[str]:
    if a.kind == "class":
        kept, total = _method_overlap(p.t_old, p.t_new, a.dotted, b.dotted)
        return [f"{kept} of {total} methods kept"] if total else []
    pa, pb = _params(p.old, a), _params(p.new, b)
    if pa is None or pb is None:
        return []
    if pa == pb:
        return [f"same parameters ({', '.join(pa) or 'none'})"]
    return [f"parameters ({', '.join(pa)}) -> ({', '.join(pb)})"]


def _class_shape(index: SnapshotIndex, info: SymbolInfo) -> tuple[tuple[str, ...], tuple[str, ...]]:
    fact = index.fact(info.match())
    if not isinstance(fact, Class):
        return (), ()
    return tuple(fact.bases), tuple(f.target for f in (*fact.fields, *fact.class_attributes))


def _module_changes(p: _Pairing, moves: list[SymbolMove]) -> tuple[list[SymbolMove], list[ModuleChange]]:
    """Group the moves of top-level definitions by the module they left. A module that is
    gone and whose definitions went to one new module moved (git may have seen too little
    of the file to call it a rename); to several, it was split; to one that existed, merged.
    A module that became a package (`x.py` -> `x/__init__.py`) is a fold; one that stays but
    lost several definitions (two at least, and three or half of them) was split too."""
    t_old, t_new, removed, added, claim = p.t_old, p.t_new, p.removed, p.added, p.claim
    out: dict[str, Counter[str]] = defaultdict(Counter)
    reexported: Counter[str] = Counter()
    for m in moves:
        info = t_old.get(m.old)
        if info is None or m.kind == "module" or not _is_top_level(t_old, info):
            continue
        home = t_new[m.new].module if m.new in t_new else None
        if home is not None and home != info.module:
            out[info.module][home] += 1
        if m.kind == "re-exported":
            reexported[info.module] += 1
    module_moves: list[SymbolMove] = []
    changes: list[ModuleChange] = []
    for module, homes in sorted(out.items()):
        old_info = t_old[module]
        total = sum(1 for i in t_old.values() if i.module == module and i.kind != "module" and _is_top_level(t_old, i))
        moved = sum(homes.values())
        dests = tuple(h for h, _ in sorted(homes.items(), key=lambda kv: (-kv[1], kv[0])))
        spread = ", ".join(f"{n} to {h}" for h, n in sorted(homes.items(), key=lambda kv: (-kv[1], kv[0])))
        share = f"{moved} of its {total} top-level definitions moved ({spread})"
        new_info = t_new.get(module)
        if new_info is not None and not old_info.path.endswith("__init__.py") and new_info.path.endswith("__init__.py"):
            changes.append(ModuleChange(module, dests, "package", (
                f"{old_info.path} -> {new_info.path}", share,
                f"{reexported[module]} still importable from {module}")))
        elif module in removed and moved * 2 >= total:
            if len(dests) == 1 and dests[0] in added:
                module_moves.append(SymbolMove(module, dests[0], "module", (share, f"{module} is gone, {dests[0]} is new")))
                claim(module, dests[0])
                continue
            kind = "split" if len(dests) > 1 else "merged"
            changes.append(ModuleChange(module, dests, kind, (share, f"{module} is gone")))
            removed.discard(module)
        elif module in t_new and moved >= 2 and (moved >= 3 or moved * 2 >= total):
            changes.append(ModuleChange(module, dests, "split", (share, f"{total - moved} stayed in {module}")))
    return module_moves, changes


def _has_definitions(table: dict[str, SymbolInfo], module: str) -> bool:
    return any(info.module == module and info.kind != "module" for info in table.values())


def name_similarity(a: str, b: str) -> int:
    """0-100: how many words two identifiers share (snake_case and CamelCase split)."""
    from rapidfuzz import fuzz

    words_a = " ".join(name_words(a))
    words_b = " ".join(name_words(b))
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


def _renames_in_place(p: _Pairing) -> list[SymbolMove]:
    t_old, t_new, removed, added, claim = p.t_old, p.t_new, p.removed, p.added, p.claim
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
                evidence = _rename_evidence(p, a, b)
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


def _rename_evidence(p: _Pairing, a: SymbolInfo, b: SymbolInfo) -> list[str] | None:
    size = min(a.lines, b.lines) / max(a.lines, b.lines)
    old_name, new_name = a.dotted.rpartition(".")[2], b.dotted.rpartition(".")[2]
    if old_name.startswith("__") or new_name.startswith("__"):
        return None  # protocol methods are not renamed, they are dropped or added
    similar = name_similarity(old_name, new_name)
    if similar < _NAME_SIMILARITY:
        return None
    naming = f"names {similar}% alike"
    if a.kind == "class":
        kept, total = _method_overlap(p.t_old, p.t_new, a.dotted, b.dotted)
        if total < 2 or kept / total < _METHOD_OVERLAP:
            return None  # one kept method proves little
        return [f"same parent {a.parent}", f"{kept} of {total} methods kept", naming, f"{a.lines} -> {b.lines} lines"]
    if size < _SIZE_RATIO:
        return None
    pa, pb = _params(p.old, a), _params(p.new, b)
    if pa is None or pa != pb:
        return None
    shown = ", ".join(pa) or "none"
    return [f"same parent {a.parent}", f"same parameters ({shown})", naming, f"{a.lines} -> {b.lines} lines"]


def _top_most(names: set[str]) -> list[str]:
    """Drop names whose parent is itself in the set (a removed class hides its methods)."""
    return sorted(n for n in names if n.rpartition(".")[0] not in names)
