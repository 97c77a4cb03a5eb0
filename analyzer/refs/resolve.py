"""Resolve one reference against one pin: ok, broken or not-checkable, and where."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from analyzer.index.extract import module_name
from analyzer.refs.classify import REPO_ONLY_DIRS, REPO_ROOT_FILES
from analyzer.refs.commandflags import command_flags
from analyzer.refs.commandindex import other_commands, registered_options, subcommands
from analyzer.refs.generated import (
    builtin_member,
    builtin_type,
    class_generated,
    field_type,
    foreign_type,
)
from analyzer.refs.links import check_anchor_names, resolve_docs_page
from analyzer.refs.models import (
    BROKEN,
    ENV,
    FLAG,
    METRIC,
    NOT_CHECKABLE,
    OK,
    PATH,
    SYMBOL,
    WARNING,
    Finding,
    Reference,
    Suggestion,
)
from analyzer.refs.pinview import FlagEntry, PinView, SymbolEntry
from analyzer.refs.qualify import Qualifier
from analyzer.refs.reexports import owner_reexports, reexport_targets
from analyzer.refs.shell import SERVER_COMMANDS
from analyzer.refs.subclass_members import on_a_subclass
from analyzer.refs.words import SourceWords

_MAX_BASE_DEPTH = 4
_MAX_REEXPORT_DEPTH = 3  # `pkg.X` -> `pkg.sub.X` -> `pkg.sub.impl.X`
# pytest's default test-module names (`python_files = test_*.py *_test.py`).
_TEST_MODULE_RE = re.compile(r"test_\w+\.py|\w+_test\.py")
_DECORATOR_SLACK = 3


def package_path(ref_path: str, pin: PinView) -> str | None:
    """The package-relative path a written path means in this pin, or None when it lies
    outside the package (a repository-only folder such as `csrc/`)."""
    path = ref_path.strip("/")
    if pin.layout_prefix and path.startswith(pin.layout_prefix):
        path = path[len(pin.layout_prefix):]
    first = path.split("/", 1)[0]
    if first in pin.packages:
        return path
    if pin.has_path(path):
        return path
    # `srt/managers/scheduler.py`: a path written relative to the package.
    for package in pin.packages:
        candidate = f"{package}/{path}"
        if pin.has_path(candidate):
            return candidate
    return None


def resolve(ref: Reference, pin: PinView) -> Finding:
    if ref.kind == PATH:
        return _resolve_path(ref, pin)
    if ref.kind == SYMBOL:
        return _resolve_symbol(ref, pin)
    if ref.kind == FLAG:
        return _resolve_flag(ref, pin)
    if ref.kind == ENV:
        return _resolve_env(ref, pin)
    if ref.kind == METRIC:
        return _resolve_metric(ref, pin)
    return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"unknown kind {ref.kind}")


# ----- paths ---------------------------------------------------------------
def _repo_only(ref: Reference, pin: PinView) -> bool:
    """`csrc/...`, or `vllm/examples/...` written with the repository's folder name first."""
    dirs = REPO_ONLY_DIRS.get(pin.project, ())
    parts = ref.target.lstrip("/").removeprefix(pin.layout_prefix).split("/")
    if pin.kind == "git" and pin.has_path(parts[0]):
        return False  # a git pin holds the whole repository: `csrc/` is there to check
    return parts[0] in dirs or (len(parts) > 1 and parts[0] == pin.project and parts[1] in dirs and not pin.has_path("/".join(parts[:2])))


def _repo_only_path(path: str, pin: PinView) -> bool:
    return path.split("/", 1)[0] in REPO_ONLY_DIRS.get(pin.project, ())


def suffix_matches(path: str, pin: PinView) -> list[str]:
    """Package paths ending with a path written without its top folders
    (`v1/core/sched/scheduler.py`, `scheduler_components/batch_result_processor.py`)."""
    tail = "/" + path.strip("/")
    return sorted(p for p in (*pin.files, *pin.dirs) if p.endswith(tail))


def folders_written(segments: list[str], pin: PinView) -> list[str]:
    """The pin's folders a folder path written without (or with) its top folders means."""
    path = package_path("/".join(segments), pin)
    if path is not None:
        return [path] if path in pin.dirs else []
    return [d for d in suffix_matches("/".join(segments), pin) if d in pin.dirs]


def _resolve_bare_file(ref: Reference, pin: PinView) -> Finding:
    name = ref.target
    named = pin.files_named(name)
    if named:
        if ref.link_symbol:
            holders = [f for f in named if _defines(pin, f, ref.link_symbol)]
            if not holders:
                return Finding(ref, pin.pin, BROKEN, resolved_at=named[0], note=f"`{ref.link_symbol}` is not defined in any file named {name}")
            named = holders
        elsewhere = _platform_only(named, ref)
        if elsewhere:
            # `attention_kernels.cuh` in a text on CUDA kernels, found only under `csrc/rocm/`:
            # another platform's file of the same name, not the one the text means.
            return Finding(ref, pin.pin, BROKEN, note=f"the only file named {name} is {elsewhere}'s ({named[0]}), and the text never speaks of {elsewhere}")
        note = f"{len(named)} files named {name}" if len(named) > 1 else ""
        return Finding(ref, pin.pin, OK, resolved_at=named[0], note=note)
    if ref.written_at:
        # The document names the file in full elsewhere: judged as written there (a repository
        # script under `tests/` is not in a wheel, rather than missing).
        there = _resolve_written_path(replace(ref, target=ref.written_at, bare_file=False), pin)
        there.ref = ref
        there.note = "; ".join(x for x in (f"the document writes it as {ref.written_at}", there.note) if x)
        return there
    if name in REPO_ROOT_FILES:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a file at the repository's root; {pin.pin} holds the package only")
    if not name.endswith((".py", ".pyi")) and pin.kind == "release":
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"C++/CUDA/Rust sources are not in the wheel {pin.pin}")
    if pin.kind == "release" and _TEST_MODULE_RE.fullmatch(name):
        # Named as pytest collects test modules: the repository's suites sit outside the package
        # (`tests/`, `test/`), and a wheel holds the package only, so its absence says nothing.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a test module; the project's test suites lie outside the package, and the wheel {pin.pin} holds the package only (a git pin does)")
    if pin.kind == "release" and "-" in name.rsplit(".", 1)[0] and name.endswith(".py"):
        # `compare-json-results.py`: no module can be imported under a name with `-`, so no
        # package holds one (none of the pinned wheels does); a script of the repository.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a script's name (`-` cannot be in a module's name); the wheel {pin.pin} holds the package only (a git pin does)")
    if pin.kind == "release" and ref.scripts_section:
        # A script of a section on the repository's examples or benchmarks
        # (`cpu_offload_lmcache_v1.py` under "LMCache Examples"): those folders are no wheel's.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a script of a section on the repository's examples or benchmarks; the wheel {pin.pin} holds the package only (a git pin does)")
    return Finding(ref, pin.pin, BROKEN, note=f"no file named {name} in {pin.pin}")


# Folders that hold one platform's variant of a file, and the words a text about it would use.
_PLATFORM_DIRS = {
    "rocm": ("rocm", "amd", "hip", "mi300", "mi300x", "mi250", "aiter"), "xpu": ("xpu", "intel"), "tpu": ("tpu", "tpus", "xla"),
    "hpu": ("hpu", "gaudi"), "neuron": ("neuron", "inferentia", "trainium"), "npu": ("npu", "ascend"), "musa": ("musa",),
}


def _platform_only(named: list[str], ref: Reference) -> str | None:
    """The platform whose folders hold every file named like the reference, when the document
    never speaks of that platform; None otherwise (or when the document's words are unknown)."""
    if not ref.context:
        return None
    platforms = set()
    for path in named:
        folders = path.split("/")[:-1]
        hit = next((p for p in _PLATFORM_DIRS if p in folders), None)
        if hit is None:
            return None
        platforms.add(hit)
    if len(platforms) != 1:
        return None
    platform = platforms.pop()
    return None if set(_PLATFORM_DIRS[platform]) & ref.context else platform


def _defines(pin: PinView, path: str, symbol: str) -> bool:
    suffix = "." + symbol
    module = module_name(path)
    if any(e.full == symbol or e.full.endswith(suffix) for e in pin.definitions_in(path)) or pin.table.named(f"{module}.{symbol}"):
        return True
    # A class's attribute (`cache.py:DEFAULT_BLOCK_SIZE`, a `ClassVar` of `CacheConfig`): the
    # file defines it too, though not at its top level.
    return any(e.kind == "attribute" and e.path == path and e.full.endswith(suffix) for e in pin.find_symbol(symbol.rsplit(".", 1)[-1]))


def _resolve_path(ref: Reference, pin: PinView) -> Finding:
    if ref.bare_file:
        return _resolve_bare_file(ref, pin)
    if ref.docs_page:
        return resolve_docs_page(ref, pin)
    finding = _resolve_written_path(ref, pin)
    name = ref.target.rstrip("/").rsplit("/", 1)[-1]
    if ref.under and finding.status == BROKEN and pin.kind == "release" and _TEST_MODULE_RE.fullmatch(name):
        # A tree's test module (`test_x.py` beside the code): a wheel leaves tests out.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a test module; the wheel {pin.pin} may leave it out (a git pin holds it)")
    return finding


def _resolve_written_path(ref: Reference, pin: PinView) -> Finding:
    if _repo_only(ref, pin):
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a repository folder; {pin.pin} is a wheel snapshot" if pin.kind == "release" else "a repository folder")
    path = package_path(ref.target, pin)
    if path is None and ref.written_at and not ref.bare_file:
        # `tile_spec/core.py` where the document's tree draws it in full: judged as drawn there.
        there = _resolve_written_path(replace(ref, target=ref.written_at, written_at=None), pin)
        there.ref = ref
        there.note = "; ".join(x for x in (f"the document draws it as {ref.written_at}", there.note) if x)
        return there
    if path is None:
        tails = suffix_matches(ref.target, pin) if "/" in ref.target else []
        if tails:
            note = f"written without its top folders; {len(tails)} matches" if len(tails) > 1 else "written without its top folders"
            return Finding(ref, pin.pin, OK, resolved_at=tails[0], note=note)
    if path is None and (inner := _inside_checkout(ref.target, pin)) is not None:
        # `target/vllm/vllm/x.py`, `third_party/vllm/vllm/distributed/`: under some folder of the
        # author's, a checkout; judged there before any of its folders is looked for by name
        # (`third_party/` is also a folder of vLLM's package).
        return _in_checkout(ref, inner, pin)
    if path is None and ref.target.endswith(".py") and "/" in ref.target:
        # `ops/triton_flash_attention.py`: written from inside the package (its top folders left
        # out); the folder is there, the module is not.
        folder, name = ref.target.strip("/").rsplit("/", 1)
        folders = [d for d in suffix_matches(folder, pin) if d in pin.dirs and not _repo_only_path(d, pin)]
        if folders:
            where = f"{folders[0]}/" if len(folders) == 1 else f"any of {len(folders)} folders ending in {folder}/"
            return Finding(ref, pin.pin, BROKEN, note=f"no {name} in {where}")
    if path is None and ref.under:
        # A tree's or a file table's entry: the deepest of its written folders the pin has is
        # where the rest of the path should be (`v1/` is there, `v1/engine/x.py` is not).
        written = ref.target.strip("/").split("/")
        for k in range(len(written) - 1, 0, -1):
            folders = [d for d in folders_written(written[:k], pin) if not _repo_only_path(d, pin)]
            if folders:
                rest = "/".join(written[k:]) + ("/" if ref.target.endswith("/") else "")
                where = f"{folders[0]}/" if len(folders) == 1 else f"any of {len(folders)} folders ending in {'/'.join(written[:k])}/"
                return Finding(ref, pin.pin, BROKEN, note=f"no {rest} in {where} (the entry of a tree or file table under {ref.under}/)")
    if path is None and pin.kind == "git" and pin.has_path(ref.target.strip("/").split("/", 1)[0]):
        # `csrc/...`, `sgl-router/src/...`: the pin holds that folder, not this file.
        return Finding(ref, pin.pin, BROKEN, note=f"no such file or folder in {pin.pin}")
    if path is None:
        first = ref.target.lstrip("/").removeprefix(pin.layout_prefix).split("/", 1)[0]
        in_repo_only = first in REPO_ONLY_DIRS.get(pin.project, ()) or ref.target.split("/", 1)[0] in REPO_ONLY_DIRS.get(pin.project, ())
        if in_repo_only or pin.kind == "release":
            # A wheel holds only the package: the repository's other folders can't be checked.
            where = "a repository folder" if in_repo_only else "outside the package"
            return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"{where}; {pin.pin} is a wheel snapshot")
        return Finding(ref, pin.pin, NOT_CHECKABLE, note="outside the package tree the snapshot indexes")
    if not pin.has_path(path) and (inner := _inside_checkout(ref.target, pin)) is not None:
        # `vllm/vllm/entrypoints/cli/main.py`, `vllm/pyproject.toml`: the path from the root of a
        # checkout, its folder written in front; judged as the repository path it names.
        return _in_checkout(ref, inner, pin)
    if not pin.has_path(path):
        return Finding(ref, pin.pin, BROKEN, note=f"no such file or folder in {pin.pin}")
    finding = Finding(ref, pin.pin, OK, resolved_at=path)
    is_file = path in pin.files or path in pin.outside_files
    if ref.line_range is not None and is_file:
        _check_lines(finding, path, pin)
        if ref.anchor_names and not ref.link_symbol:
            check_anchor_names(finding, path, pin)
    elif ref.link_symbol and ref.origin != "link" and is_file and not _defines(pin, path, ref.link_symbol):
        # `path.py:Class.method`: the file is there, the name is not.
        finding.status = BROKEN
        finding.note = f"`{ref.link_symbol}` is not defined in {path}"
    if ref.commit and not _same_revision(ref.commit, pin):
        # The link itself may be fine at its own commit; what matters to the book is the pin.
        finding.note = "; ".join(x for x in (finding.note, f"link names {ref.commit}, checked against {pin.pin}") if x)
    return finding


def _in_checkout(ref: Reference, inner: str, pin: PinView) -> Finding:
    """The repository path `inner` a checkout-prefixed path names, judged; the finding keeps it as
    its target, so its homes are looked for from there (`suggest._write_path` puts the folders back)."""
    there = _resolve_written_path(replace(ref, target=inner), pin)
    there.note = "; ".join(x for x in (f"written with the checkout's folder `{pin.project}/` in front", there.note) if x)
    return there


def _inside_checkout(target: str, pin: PinView) -> str | None:
    """The repository path under a checkout's folder (`vllm/` + `vllm/entrypoints/...`, `pyproject.toml`,
    `tests/...`; `sglang/` + `python/sglang/...`): what follows the folder named after the project is
    itself written from the repository's root (its package, a root file, a repository-only folder)."""
    parts = target.strip("/").split("/")
    # (Under folders of the author's too, `target/vllm/vllm/...`, where what follows is the package;
    # not the package's own layout, `python/sglang/benchmark/...`.)
    for i, first in enumerate(parts[:-1]):
        if first != pin.project or (i and "/".join(parts[:i]) + "/" == pin.layout_prefix):
            continue
        rest = "/".join(parts[i + 1 :])
        in_package = rest.startswith(pin.layout_prefix) and rest.removeprefix(pin.layout_prefix).split("/", 1)[0] in pin.packages
        if in_package or (i == 0 and (rest in REPO_ROOT_FILES or rest.split("/", 1)[0] in REPO_ONLY_DIRS.get(pin.project, ()))):
            return rest
    return None


def _same_revision(commit: str, pin: PinView) -> bool:
    version = pin.pin.partition("@")[2]
    if commit in {version, f"v{version}"}:
        return True
    upstream = pin.upstream_commit or ""
    return bool(upstream) and len(commit) >= 7 and upstream.startswith(commit.lower())


def enclosing(defs: list[SymbolEntry], line: int) -> SymbolEntry | None:
    """Innermost class or function whose span holds `line`."""
    best = None
    for entry in defs:
        if entry.line <= line <= entry.end_line and (best is None or entry.line >= best.line):
            best = entry
    return best


def short_name(entry: SymbolEntry, pin: PinView) -> str:
    """`vllm.v1.core.kv_cache_manager.KVCacheManager.allocate_slots` -> `KVCacheManager.allocate_slots`."""
    module = module_name(entry.path)
    return entry.full.removeprefix(module + ".")


def _check_lines(finding: Finding, path: str, pin: PinView) -> None:
    ref = finding.ref
    assert ref.line_range is not None
    start, end = ref.line_range
    defs = pin.definitions_in(path)
    lines = pin.read_lines(path)
    if lines is not None and end > len(lines) and not ref.link_symbol:
        finding.status = WARNING
        finding.note = f"L{start}-L{end} runs past the end of the file ({len(lines)} lines)"
        return
    if ref.link_symbol:
        suffix = "." + ref.link_symbol
        # (Written in full, `vllm.a.b.X`, or as the file's own name for it, `X`, `X.m`.)
        named = [d for d in defs if d.full == ref.link_symbol or d.full.endswith(suffix) or short_name(d, pin) == ref.link_symbol]
        # Written in full, a module-level name of the file that is not a def (`LLMEngine = V1LLMEngine`).
        named = named or [e for e in pin.table.named(ref.link_symbol) if e.path == path]
        if not named:
            last = ref.link_symbol.rsplit(".", 1)[-1]
            elsewhere = [d for d in pin.find_symbol(ref.link_symbol) if d.path != path]
            if elsewhere and lines is not None and any(re.search(rf"\b{re.escape(last)}\b", text) for text in lines):
                # The file imports or aliases the name (`UniProcExecutor = _UniProcExecutor`) that is
                # defined elsewhere: the link still lands on the name, not on its definition.
                finding.status = WARNING
                finding.note = f"`{ref.link_symbol}` is defined in {elsewhere[0].path}; {path} only imports or aliases it"
                return
            # The file is there and the anchor lands on other code, as when lines moved; whether
            # the name itself is gone is its own reference's finding (the link text's).
            finding.status = WARNING
            finding.note = f"`{ref.link_symbol}` is not defined in {path}"
            return
        # The anchor must start at the definition (a few lines of slack for decorators)
        # or inside its body; merely overlapping its tail means it points at something else.
        hit = [d for d in named if d.line - _DECORATOR_SLACK <= start <= d.end_line]
        if hit:
            finding.resolved_at = f"{path}:{hit[0].line}"
            return
        at = enclosing(defs, start)
        held = f"`{short_name(at, pin)}`" if at else "no definition"
        finding.status = WARNING  # the file is fine; the lines moved with the code
        finding.resolved_at = f"{path}:{named[0].line}"
        finding.note = f"L{start}-L{end} holds {held}; `{ref.link_symbol}` is at L{named[0].line}-L{named[0].end_line}"
        return
    at = enclosing(defs, start)
    finding.resolved_at = f"{path}:{start}"
    if at is not None:
        finding.note = f"L{start} is in `{short_name(at, pin)}`"


# ----- symbols ---------------------------------------------------------------
def find_symbol(target: str, pin: PinView, depth: int = 0) -> tuple[list[SymbolEntry], str]:
    """Entries for a symbol, following base classes for inherited members."""
    found = pin.find_symbol(target)
    if found:
        return found, ""
    parts = target.split(".")
    if len(parts) < 2:
        return [], ""
    owner, member = ".".join(parts[:-1]), parts[-1]
    seen: set[str] = set()
    owners = pin.find_symbol(owner)
    if depth < _MAX_REEXPORT_DEPTH:
        for package in (e for e in owners if e.kind == "module"):
            for full in reexport_targets(package, member, pin.tree):
                hits, _ = find_symbol(full, pin, depth + 1)
                if hits:
                    return hits, f"re-exported by `{owner}`"
    if depth < _MAX_REEXPORT_DEPTH and "." in owner and not any(e.kind == "class" for e in owners):
        # `vllm.LLM.generate` (an mkdocs autoref): the owner is itself a name its package
        # re-exports (`vllm.LLM` -> `vllm.entrypoints.llm.LLM`); the member is the real class's.
        for full in owner_reexports(owner, pin):
            hits, _ = find_symbol(f"{full}.{member}", pin, depth + 1)
            if hits:
                return hits, f"`{owner}` is re-exported from `{full}`"
    frontier = [e for e in owners if e.kind == "class"]
    # `ModelRegistry.register_model`: a module-level object, looked up through its class.
    for obj in (e for e in owners if e.kind == "attribute" and e.bases):
        module = obj.full.rsplit(".", 1)[0]
        made = [c for c in pin.find_symbol(obj.bases[0]) if c.kind == "class"]
        made.sort(key=lambda c: not c.full.startswith(module + "."))  # the class in the same module first
        for cls in made[:1]:
            hits = pin.find_symbol(f"{cls.full}.{member}")
            if hits:
                return hits, f"`{owner}` is a `{cls.last}` object"
            frontier.append(cls)
    if depth < _MAX_REEXPORT_DEPTH:
        # `AsyncLLMEngine = AsyncLLM`: a module-level alias of a class; its members are the class's.
        for alias in (e for e in owners if e.kind == "attribute" and not e.bases):
            aliased = alias_of(alias, pin)
            if aliased is not None:
                hits, _ = find_symbol(f"{aliased}.{member}", pin, depth + 1)
                if hits:
                    return hits, f"`{alias.last}` is an alias of `{aliased}`"
    for _ in range(_MAX_BASE_DEPTH):
        next_frontier: list[SymbolEntry] = []
        for cls in frontier:
            for base in cls.bases:
                base_name = base.split("[", 1)[0].rsplit(".", 1)[-1]
                if base_name in seen:
                    continue
                seen.add(base_name)
                hits = pin.find_symbol(f"{base_name}.{member}")
                if hits:
                    return hits, f"inherited from `{base_name}`"
                next_frontier.extend(e for e in pin.find_symbol(base_name) if e.kind == "class")
        frontier = next_frontier
    for cls in (e for e in owners if e.kind == "class"):
        why = class_generated(cls, member, pin)
        if why is not None:
            return [cls], why
    if depth < _MAX_REEXPORT_DEPTH:
        for field in (e for e in owners if e.kind == "attribute"):
            # `Req.output_ids.append`: the member of the type the field is declared or made with.
            kind = field_type(field, pin)
            if kind is None:
                continue
            builtin = builtin_member(kind, member)
            if builtin:
                return [field], f"`{field.last}` is a `{kind}`; `{member}` is the builtin type's"
            made = [c for c in pin.find_symbol(kind) if c.kind == "class"] if builtin is None else []
            for cls in made[:1]:
                hits, how = find_symbol(f"{cls.full}.{member}", pin, depth + 1)
                if hits:
                    return hits, f"`{field.last}` is a `{cls.last}`" + (f"; {how}" if how else "")
    return [], ""


def foreign_field_member(target: str, pin: PinView) -> str | None:
    """Why `X.field.member` cannot be judged here: the field holds another library's object
    (`torch.Tensor`, `asyncio.Queue`), whose members are that library's; else None."""
    owner = target.rsplit(".", 1)[0] if target.count(".") >= 2 else ""
    return _foreign_field(owner, pin, every=False) if owner else None


def _foreign_field(name: str, pin: PinView, every: bool, member: str | None = None) -> str | None:
    """Why the members of the field `name` are another library's: one of the pin's fields so
    named (or, with `every`, each of them, when the text gives no class) is declared or made with
    another library's type; else None. With `every`, a field of Python's own type counts too
    (`can_run_list: List[Req]`: a list, whatever classes are named like a list), as long as one of
    the types can have `member` (another library's, or a builtin that has it)."""
    fields = [e for e in pin.find_symbol(name) if e.kind == "attribute"]
    outside: list[tuple[SymbolEntry, str]] = []
    for field in fields:
        kind = field_type(field, pin)
        if kind is not None and (foreign_type(kind) or (every and builtin_type(kind))):
            outside.append((field, kind))
            if not every:
                break
        elif every:
            return None
    # Another library's type says more than a scalar's; a builtin only where it has the member.
    able = [(f, k) for f, k in outside if not builtin_type(k)] + [(f, k) for f, k in outside if builtin_type(k) and builtin_member(k.split("[", 1)[0], member or "")]
    if not able:
        return None
    field, kind = able[0]
    return f"`{field.last}` is a `{kind.split('[', 1)[0]}`, not a class of the project: its members are that type's"


def alias_of(entry: SymbolEntry, pin: PinView) -> str | None:
    """The class a module-level name is bound to by a plain assignment (`X = Y`, `X: TypeAlias =
    Y`, read from the pin's source line), when `Y` is a class the pin defines; else None."""
    lines = pin.read_lines(entry.path)
    if not lines or not 0 < entry.line <= len(lines):
        return None
    m = re.match(rf"\s*{re.escape(entry.last)}\s*(?::[^=]*)?=\s*(?P<name>[A-Za-z_][\w.]*)\s*(?:#.*)?$", lines[entry.line - 1])
    if m is None or m.group("name") == entry.last:
        return None
    name = m.group("name")
    return name if any(e.kind == "class" for e in pin.find_symbol(name)) else None


def _function_local_owner(target: str, pin: PinView) -> SymbolEntry | None:
    """`Layer.forward()` in a diagram, where a source pin's only `Layer`s are classes a test
    defines inside its function body: nothing outside that function can name such a class (and
    its missing member is often inherited from a dependency, `nn.Module.forward`), so the
    document cannot mean it. Returns one such class when every class of the owner's name is
    function-local, else None."""
    owner = target.rsplit(".", 1)[0] if "." in target else ""
    classes = [e for e in pin.find_symbol(owner) if e.kind == "class"] if owner else []
    for cls in classes:
        parent = cls.full.rsplit(".", 1)[0]
        if not any(e.full == parent and e.kind == "function" for e in pin.find_symbol(parent)):
            return None
    return classes[0] if classes else None


def open_members(owner: str, pin: PinView) -> str | None:
    """Why `owner`'s members cannot all be known statically (a class a call builds from a field
    list the index could not follow: `analyzer.index.made_classes`), or None."""
    if not owner or not pin.open_classes:
        return None
    for cls in (e for e in pin.find_symbol(owner) if e.kind == "class"):
        reason = pin.open_classes.get(cls.full)
        if reason:
            return f"`{cls.last}`'s members are built at import time: {reason}"
    return None


def _resolve_symbol(ref: Reference, pin: PinView) -> Finding:
    if not len(pin.table):
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"no symbol index for {pin.pin}")
    found, how = find_symbol(ref.target, pin)
    if not found and "::" in ref.text and pin.kind == "release":
        # A C++/Rust name: a wheel holds few native sources (no csrc/, no Rust crates).
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a C++/Rust name; the wheel {pin.pin} holds no such sources (a git pin does)")
    if not found:
        local = _function_local_owner(ref.target, pin)
        if local is not None:
            owner = ref.target.rsplit(".", 1)[0]
            note = f"`{owner}` is only a class defined inside a function ({local.location}), which no reader can name"
            return Finding(ref, pin.pin, NOT_CHECKABLE, note=note)
        built = open_members(ref.target.rsplit(".", 1)[0] if "." in ref.target else "", pin) or foreign_field_member(ref.target, pin)
        if built is not None:
            return Finding(ref, pin.pin, NOT_CHECKABLE, note=built)
        beside = _beside_the_index(ref, pin)
        if beside is not None:
            return beside
        words = pin.source_words() if "." in ref.target and ref.target.split(".", 1)[0] in pin.packages else None
        if words is not None and ref.target in words.quoted:
            # `vllm.general_plugins`: an entry-point group, a registry's or a logger's key, which
            # the sources spell whole as a string and define nowhere as a module.
            return Finding(ref, pin.pin, OK, note=f"a name {pin.pin}'s sources spell whole as a string (an entry-point group or a key)")
        return Finding(ref, pin.pin, BROKEN, note=f"`{ref.target}` is not defined in {pin.pin}")
    notes = [how] if how else []
    if len(found) > 1:
        notes.append(f"{len(found)} definitions")
    return Finding(ref, pin.pin, OK, resolved_at=found[0].location, note="; ".join(notes))


def _beside_the_index(ref: Reference, pin: PinView) -> Finding | None:
    """Names no definition of the index stands for, that are still the pin's (or no one's to
    judge): a custom op the project registers with torch (`vllm.unified_attention_with_output`,
    run as `torch.ops.vllm.unified_attention_with_output`), an enum member's `.value` / `.name`
    (Python's `Enum` attributes), and a test's name, which a release does not ship."""
    parts = ref.target.split(".")
    if len(parts) == 2 and parts[0] in pin.packages and parts[1] in pin.custom_ops:
        return Finding(ref, pin.pin, OK, resolved_at=pin.custom_ops[parts[1]], note=f"a custom op {pin.pin} registers (`torch.ops.{parts[0]}.{parts[1]}`)")
    if len(parts) >= 3 and parts[-1] in {"value", "name"} and parts[-2].isupper():
        found, _ = find_symbol(".".join(parts[:-1]), pin)
        if found:
            return Finding(ref, pin.pin, OK, resolved_at=found[0].location, note=f"`.{parts[-1]}` of the enum member `{parts[-2]}`")
    if is_unshipped_test(parts[-1], pin):
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"`{parts[-1]}` is a test's name; the release {pin.pin} ships no tests")
    return None


def is_unshipped_test(name: str, pin: PinView) -> bool:
    """`test_hicache_kernel_...`: a test's name at a release pin, whose wheel ships no tests."""
    return name.startswith("test_") and pin.kind == "release"


_INSTANCE_CALL_RE = re.compile(r"^(?:self\.)?(?:[a-z_][a-z0-9_]*\.)*(?P<instance>[a-z][a-z0-9_]*)\.(?P<member>[a-z_][a-z0-9_]*)$")
_MAX_INSTANCE_CLASSES = 20
# Class names of each pin, lower-cased (keyed by the pin's name pool, kept alive with it).
_CLASS_NAMES: dict[int, tuple[object, list[tuple[str, str]]]] = {}


_CAMEL_WORDS_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def _class_names(pin: PinView) -> list[tuple[str, str]]:
    """(` engine core client `, `EngineCoreClient`): each capitalised name with its CamelCase words
    lower-cased between spaces, so that a key matches whole words only."""
    pool = pin.defined_names()
    entry = _CLASS_NAMES.get(id(pool))
    if entry is None or entry[0] is not pool:
        names = [(" " + " ".join(w.lower() for w in _CAMEL_WORDS_RE.findall(n)) + " ", n) for n in pool._all() if n[:1].isupper()]
        entry = (pool, names)
        _CLASS_NAMES[id(pool)] = entry
    return entry[1]


def _spaced_key(instance: str) -> str:
    """`server_args` -> ` server args `: an object's words as `_class_names` spaces a class's."""
    return " " + " ".join(w for w in instance.lower().split("_") if w) + " "


def classes_named_like(instance: str, pin: PinView) -> list[str]:
    """The pin's classes whose CamelCase words are exactly an object's words (`server_args` ->
    `ServerArgs`, `vllm_config` -> `VllmConfig`), not classes that merely contain them."""
    key = _spaced_key(instance)
    names = [n for spaced, n in _class_names(pin) if spaced == key]
    return [n for n in dict.fromkeys(names) if any(e.kind == "class" for e in pin.find_symbol(n))]


def held_otherwise(instance: str, member: str, cls: str, pin: PinView) -> str | None:
    """Why `instance.member` may hold though `cls`, the class the object is named after, lacks
    the member: a subclass of it has it (`EngineClient`, a protocol `AsyncLLM` implements), a
    class named with more words has it (`engine_core` is an `EngineCoreClient` in the front end),
    or the pin declares or makes its `instance` fields with a class that has it. None if none."""
    if on_a_subclass(f"{cls}.{member}", pin):
        return f"a subclass of `{cls}` has `{member}`"
    key = _spaced_key(instance)
    # (One word, `req`, names its class only: `ReqKvInfo` is another thing than a `Req`.)
    longer = [n for spaced, n in _class_names(pin) if key in spaced and n != cls] if "_" in instance.strip("_") else []
    for name in longer[:_MAX_INSTANCE_CLASSES]:
        if find_symbol(f"{name}.{member}", pin)[0] or on_a_subclass(f"{name}.{member}", pin):
            return f"`{instance}` may be a `{name}` (or a subclass), which has `{member}`"
    declared = _declared_class(instance, member, pin)
    if declared:
        return f"the pin's `{instance}` is a `{declared}`, which has `{member}`"
    mapping = _mapping_attribute(instance, pin, every=False) if member in _MAPPING_METHODS else None
    # `self.encoder_cache.pop(h)`: a class of the pin declares its `encoder_cache` a dict.
    return f"the pin declares `{mapping}` a mapping, which has `{member}`" if mapping else None


_MAPPING_METHODS = frozenset(dir(dict))


# An annotation that declares a mapping (`dict[str, Any]`, `Optional[Dict[str, Any]]`).
_MAPPING_ANNOTATION_RE = re.compile(r":\s*(?:(?:typing\.|t\.)?Optional\[)?(?:typing\.|t\.)?(?:dict|Dict|Mapping|MutableMapping)\b")


def _mapping_attribute(name: str, pin: PinView, every: bool = True) -> str | None:
    """`KVTransferConfig.kv_connector_extra_config` when every class attribute of that name the
    pin declares with a type is declared a mapping (`kv_connector_extra_config: dict[str, Any]`);
    with `every` False, when one is; None otherwise."""
    found: list[str] = []
    for e in pin.find_symbol(name):
        if e.kind != "attribute" or not e.parent:
            continue
        lines = pin.read_lines(e.path)
        line = lines[e.line - 1] if lines and 0 < e.line <= len(lines) else ""
        head = line.strip()
        if not head.startswith((f"{name}:", f"self.{name}:")):
            continue  # assigned without a type: says nothing
        if not _MAPPING_ANNOTATION_RE.match(head[head.index(name) + len(name):]):
            if every:
                return None
            continue
        found.append(short_name(e, pin))
    return found[0] if found else None


def _outside_class(words: list[str], pin: PinView) -> str | None:
    """`NixlWrapper` for the words of `nixl_wrapper`: the object's name in CamelCase, when the
    pin's sources spell it but define no class of it; else None."""
    camel = "".join(w[:1].upper() + w[1:] for w in words)
    if pin.mentions(camel) and not any(e.kind == "class" for e in pin.find_symbol(camel)):
        return camel
    return None


def _declared_class(field: str, member: str, pin: PinView) -> str | None:
    """The class one of the pin's fields named `field` is declared or made with (`self.x:
    Buffer`, `self.x = Buffer(...)`), when that class has `member`; else None."""
    for entry in pin.find_symbol(field):
        kind = field_type(entry, pin) if entry.kind == "attribute" else None
        name = kind.split("[", 1)[0].rsplit(".", 1)[-1] if kind else ""
        if name[:1].isupper() and (find_symbol(f"{name}.{member}", pin)[0] or on_a_subclass(f"{name}.{member}", pin)):
            return name
    return None


def through_instance(finding: Finding, pin: PinView) -> Finding:
    """`model_executor.initialize_cache()`: a method written on an object whose name says what
    it is. The name is ok only when a class named like the object has the method (its own or
    inherited): `engine_core` -> `EngineCoreClient`, else by the object's last word,
    `model_executor` -> `...Executor`. A method of that name on unrelated classes (torch.compile's
    `CompilerManager.initialize_cache`) does not make it current. Unchanged when no class is
    named like the object (a local variable, another program's object)."""
    ref = finding.ref
    written = ref.text.strip("`").split("(", 1)[0].strip()
    m = _INSTANCE_CALL_RE.match(written)
    if finding.status != OK or m is None or ref.target != m.group("member") or ref.owner or ref.spelled or ref.fragment_of:
        return finding
    parts = written.split(".")
    if len(parts) > 2 and parts[0] != "self":
        # `forward_batch.token_to_kv_pool.set_kv_buffer()`: the chain holds only if its first
        # hop does (`ForwardBatch` has no `token_to_kv_pool`), whatever has the last name.
        head = through_instance(Finding(replace(ref, text=".".join(parts[:2]), target=parts[1]), pin.pin, OK), pin)
        if head.status == BROKEN:
            return Finding(ref, pin.pin, BROKEN, note=head.note)
    instance, member = m.group("instance"), m.group("member")
    # Only an object the project itself names so (an attribute `model_executor` of its classes),
    # of two words or more: a lone word (`batch`, `plugin`) or a module (`sgl_kernel`) says too
    # little about its type.
    if "_" not in instance.strip("_") or not any(e.kind == "attribute" for e in pin.find_symbol(instance)):
        return finding
    mapping = _mapping_attribute(instance, pin)
    if mapping is not None:
        # `kv_connector_extra_config.backends`: the object is a dict the project declares so, and
        # what follows its name is a key of it (read from a JSON value), not a Python attribute.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"`{mapping}` is a dict: `{member}` is a key of its value, not an attribute")
    defs = [e for e in pin.find_symbol(member) if e.kind in {"function", "attribute"} and "." in e.parent]
    words = [w for w in instance.split("_") if w]
    tried: list[str] = []
    for key in dict.fromkeys((" ".join(words), words[-1])):
        if len(key) < 3:
            continue
        own = [e for e in defs if key.replace(" ", "") in e.parent.rsplit(".", 1)[-1].lower()]
        if own:
            return finding  # a class named like the object defines it
        classes = [n for spaced, n in _class_names(pin) if f" {key} " in spaced]
        if not classes:
            continue
        for name in classes[:_MAX_INSTANCE_CLASSES]:
            found, how = find_symbol(f"{name}.{member}", pin)
            if found:
                return Finding(ref, pin.pin, OK, resolved_at=found[0].location, note=f"`{instance}` is a `{name}`; {how}" if how else "")
            if on_a_subclass(f"{name}.{member}", pin):
                # `finished_reason.matched`: the object is one of `BaseFinishReason`'s subclasses,
                # and `FINISH_MATCHED_STR` has it.
                return Finding(ref, pin.pin, OK, note=f"`{instance}` is a `{name}`, and a subclass of it has `{member}`")
        # None of the classes named by all the object's words has it (`tree_cache`: the
        # `TreeCacheBuildContext` of a builder): the object may still be one of the classes its
        # last word names (`RadixCache`), tried next.
        tried.extend(classes[:3])
    if tried and (foreign := _foreign_field(instance, pin, every=True, member=member)) is not None:
        # `input_queue.get()` where every `input_queue` of the pin is a `queue.Queue`: the method
        # is the library's, whatever the project's classes named like a queue define.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=foreign)
    if tried and (outside := _outside_class(words, pin)) is not None:
        # `nixl_wrapper.transfer()`: the pin spells `NixlWrapper` but defines no class of that
        # name (it binds NIXL's agent to it): the object is that library's, as are its members.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"`{instance}` is a `{outside}`, a name {pin.pin} uses but defines no class of (another library's): its members are that library's")
    if tried and (declared := _declared_class(instance, member, pin)) is not None:
        # `all_token_ids.gpu`: the pin makes its `all_token_ids` a `StagedWriteTensor`, which has
        # `gpu`; what the object is called does not outweigh what the code makes it.
        return Finding(ref, pin.pin, OK, note=f"the pin's `{instance}` is a `{declared}`, which has `{member}`")
    if tried and member in _MODULE_PARAMETERS:
        # `qkv_proj.weight`: the layer's parameter, which torch registers when the layer is built
        # (`nn.Linear.weight`, a `QKVParallelLinear`'s `create_weights`), not a name the index sees.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"`{member}` of `{instance}` is a parameter a torch module registers at run time, which static analysis does not see")
    if tried:
        where = ", ".join(f"`{short_name(e, pin)}`" for e in defs[:2]) or "elsewhere"
        shown = ", ".join(f"`{n}`" for n in dict.fromkeys(tried))
        return Finding(ref, pin.pin, BROKEN, note=f"no class named like `{instance}` ({shown}, ...) has `{member}` in {pin.pin} (only {where})")
    return finding


# The parameters every torch layer registers at run time (`register_parameter`).
_MODULE_PARAMETERS = frozenset({"weight", "bias"})


def resolve_member(ref: Reference, pin: PinView) -> Finding:
    """A bare name the text gives an owner (the fields listed after "`Req` has:")."""
    assert ref.owner is not None
    plain = resolve(ref, pin)
    owners = [e for e in pin.find_symbol(ref.owner) if e.kind == "class"]
    if not owners and ref.owner_section:
        return plain  # the section's class is gone: its members say nothing more than their names
    if not owners:
        if plain.status == OK and ref.owner_strict:
            # The text lists these as the class's members and the class is gone: a same-named
            # definition elsewhere is not the one listed (its unique siblings are broken too).
            return Finding(ref, pin.pin, BROKEN, note=f"listed as a member of `{ref.owner}`, which is not defined in {pin.pin} (a `{ref.target}` elsewhere, at {plain.resolved_at}, is not that class's)")
        if plain.status == OK:
            plain.note = "; ".join(x for x in (plain.note, f"its class `{ref.owner}` is not defined in {pin.pin}") if x)
            return plain
        return Finding(ref, pin.pin, BROKEN, note=f"listed as a member of `{ref.owner}`, which is not defined in {pin.pin}")
    found, how = find_symbol(f"{ref.owner}.{ref.target}", pin)
    if found:
        return Finding(ref, pin.pin, OK, resolved_at=found[0].location, note=how or f"member of `{ref.owner}`")
    built = open_members(ref.owner, pin)
    if built is not None:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=built)
    packages = {o.full.rsplit(".", 2)[0] for o in owners if o.full.count(".") >= 2}
    for e in pin.table.ending_with(ref.target):
        # A module-level function of the class's own package listed with its methods (a drawn
        # tree of a file, `eagle_utils.py` > `EagleVerifyInput` > `build_tree_kernel_efficient`).
        module = e.parent
        if e.kind == "function" and module.rsplit(".", 1)[0] in packages and any(k.kind == "module" for k in pin.table.named(module)):
            return Finding(ref, pin.pin, OK, resolved_at=e.location, note=f"a function of `{module}`, beside `{ref.owner}`")
    if plain.status == OK and (ref.owner_strict or ref.owner_interface or ref.owner_section):
        # The text lists these as the class's fields (or methods); a field of the same name elsewhere
        # (another class, another subsystem) does not make it one.
        return Finding(ref, pin.pin, BROKEN, note=f"`{ref.owner}` has no member `{ref.target}` in {pin.pin} (one is defined at {plain.resolved_at})")
    if plain.status == OK:
        # Defined, but not on the class the text names: say so, without calling it broken
        # (the list may describe keyword arguments rather than fields).
        plain.note = "; ".join(x for x in (plain.note, f"not a member of `{ref.owner}`") if x)
        return plain
    return Finding(ref, pin.pin, BROKEN, note=f"`{ref.owner}` has no member `{ref.target}` in {pin.pin}")


def _spells(lines: list[str] | None, name: str) -> bool:
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    return lines is not None and any(word.search(line) for line in lines)


# A name the text gives to the wrong file, defined in exactly one other: that file, as a suggestion.
_DEFINING_FILE_CONFIDENCE = 0.7


def resolve_qualified(finding: Finding, qual: Qualifier, pin: PinView) -> Finding:
    """A bare name the prose gives to a file or a class ("`paged_attn.py` 的 `get_kv_cache_shape()`",
    "`forward()` of `LlamaModel`"), found defined somewhere in the pin: it stands only when that
    file or class (or a base) defines it or at least spells it; a same-named method of an
    unrelated class does not make it current. Unchanged when the pin has no such file or class
    (the qualifier is then judged as a reference of its own)."""
    ref = finding.ref
    name = ref.target
    if qual.kind == "file":
        path = qual.name.strip("/")
        if "/" in path:
            pkg = package_path(path, pin)
            files = [pkg] if pkg is not None and pkg in pin.files else [p for p in suffix_matches(path, pin) if p in pin.files]
        else:
            files = pin.files_named(path)
        if not files:
            return finding
        for f in files:
            if _defines(pin, f, name):
                return Finding(ref, pin.pin, OK, resolved_at=f, note=f"defined in {f}, the file the text names")
        if any(_spells(pin.read_lines(f), name) for f in files):
            return finding
        where = files[0] if len(files) == 1 else f"any of {len(files)} files named {path.rsplit('/', 1)[-1]}"
        moved = Finding(ref, pin.pin, BROKEN, note=f"the text gives `{name}` to {qual.name}; {where} has no `{name}` in {pin.pin} (one is defined at {finding.resolved_at})")
        homes = {e.path for e in pin.find_symbol(name)}
        if len(homes) == 1:
            # The one file that defines it: where a reader following the text should look now.
            moved.suggestions = [Suggestion(next(iter(homes)), _DEFINING_FILE_CONFIDENCE, f"the one file of {pin.pin} that defines `{name}`")]
        return moved
    classes = [e for e in pin.find_symbol(qual.name) if e.kind == "class"]
    if not classes:
        return finding
    found, how = find_symbol(f"{qual.name}.{name}", pin)
    if found:
        return Finding(ref, pin.pin, OK, resolved_at=found[0].location, note=how or f"member of `{qual.name}`, the class the text names")
    if open_members(qual.name, pin) is not None:
        return finding
    if any(_spells(pin.read_lines(c.path), name) for c in classes):
        return finding
    return Finding(ref, pin.pin, BROKEN, note=f"the text gives `{name}` to `{qual.name}`, which has no `{name}` in {pin.pin} (one is defined at {finding.resolved_at})")


# ----- flags and env vars -----------------------------------------------------
def _runs_its_own_parser(ref: Reference, pin: PinView) -> bool:
    """The flag's command line runs an entry point with a parser of its own, read in full and
    without the server's flags (`sglang generate`, `python -m sglang.bench_serving`). A file a
    sentence names beside the flag ("the allocator in paged.py hands out pages of `--page-size`
    tokens") is no command line: the server's parser is tried first, as for a flag alone."""
    command = ref.command
    if not command or command in SERVER_COMMANDS or "/" in command or command.endswith((".py", ".sh")):
        return False
    own = command_flags(pin, command)
    return own is not None and own.complete and not own.server


# `-O3`, `-O=3`: a one-letter option and its value, written as one word.
_ATTACHED_RE = re.compile(r"(?P<option>-[A-Za-z])=?(?P<value>[A-Za-z0-9_.]+)")


def _resolve_flag(ref: Reference, pin: PinView) -> Finding:
    flag = ref.target
    if _runs_its_own_parser(ref, pin):
        # `sglang generate --attention-backend fa`: the diffusion CLI's own parser decides, not
        # the server's flag of that name (whose choices are the LLM server's).
        return _resolve_command_flag(ref, pin)
    entry = pin.flag_map.get(flag)
    note = ""
    if entry is None and "." in flag:
        # `--compilation-config.level=3`: one field of a JSON config flag.
        entry = pin.flag_map.get(flag.split(".", 1)[0])
        note = "a field of a config flag"
    if entry is None and flag.startswith("--no-"):
        # argparse BooleanOptionalAction: `--no-x` exists wherever `--x` does.
        entry = pin.flag_map.get("--" + flag[5:])
        note = "negative form of a boolean flag"
    if entry is None and "_" in flag and pin.project == "vllm":
        # vLLM's parser accepts underscores for dashes.
        entry = pin.flag_map.get(flag.replace("_", "-"))
        note = "underscore spelling accepted by vLLM's parser"
    if entry is None and (not ref.command or ref.command in SERVER_COMMANDS) and (m := _ATTACHED_RE.fullmatch(flag)) is not None:
        # `-O3`: argparse takes a one-letter option's value written against it; vLLM's parser also
        # rewrites `-O<n>` / `-O=<n>` to `--optimization-level <n>` before argparse sees it.
        entry = pin.flag_map.get(m.group("option"))
        note = "a one-letter option with its value attached"
        if entry is None and m.group("option") == "-O" and pin.project == "vllm":
            entry = pin.flag_map.get("--optimization-level")
            note = "vLLM's parser rewrites `-O<n>` to `--optimization-level <n>`"
    if entry is not None:
        return _with_value(Finding(ref, pin.pin, OK, resolved_at=entry.defined_at, note=note), entry, pin)
    if ref.command and ref.command not in SERVER_COMMANDS:
        return _resolve_command_flag(ref, pin)
    other = _other_parser_flag(ref, pin)
    if other is not None:
        return other
    if flag.startswith("--") and "." not in flag and pin.flags:
        full, prefixed = abbreviation_of(flag, pin.flag_map)
        if full is not None:
            return Finding(ref, pin.pin, OK, resolved_at=pin.flag_map[full].defined_at, note=f"argparse takes it as `{full}` (a unique prefix)")
        if len(prefixed) > 1 and all(p.startswith(flag + "-") and p[len(flag) + 1 :].count("-") == 0 for p in prefixed):
            shown = ", ".join(prefixed[:4])
            return Finding(ref, pin.pin, BROKEN, note=f"an ambiguous prefix at {pin.pin} ({shown}): argparse refuses it")
    if not pin.flags:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"no flags extracted for {pin.pin}")
    return Finding(ref, pin.pin, BROKEN, note=f"no flag {flag} in {pin.pin}")


# What a shorthand may leave out: `--tp` for `--tp-size`, `--model` for `--model-path`,
# `--nccl-init` for `--nccl-init-addr`: the last word, when it only says what kind of value the
# option takes. A prefix that drops more (`--lora` for `--lora-modules`) names another option by
# accident, and is not taken as an abbreviation.
_SHORTHAND_RE = re.compile(r"-(?:size|path|name|mode|type|dir|file|len|addr|address|url)")


def abbreviation_of(flag: str, names: Iterable[str]) -> tuple[str | None, list[str]]:
    """(the one option argparse would take `flag` for, every option it prefixes). A word cut
    short (`--correct` for `--correctness-test`) or a known shorthand (`--tp`) counts."""
    prefixed = sorted({n for n in names if n.startswith(flag) and n != flag})
    if len(prefixed) == 1:
        rest = prefixed[0][len(flag):]
        if not rest.startswith("-") or _SHORTHAND_RE.fullmatch(rest):
            return prefixed[0], prefixed
    return None, prefixed


def _other_parser_flag(ref: Reference, pin: PinView) -> Finding | None:
    """A server command with a second parser (`sglang serve` of a diffusion model runs the
    diffusion server's), or a flag written alone, with no command: a reader cannot tell which
    of the project's commands it is for, so any command's parser that takes it makes it ok."""
    if ref.command is None:
        commands = other_commands(pin)
    elif ref.command in subcommands(pin):
        commands = [ref.command]
    else:
        return None
    flag = ref.target
    spellings = {flag, flag.split(".", 1)[0]}
    if flag.startswith("--no-"):
        spellings.add("--" + flag[5:])
    for command in commands:
        parser = command_flags(pin, command)
        if parser is None:
            continue
        where = parser.module.replace(".", "/") + ".py"
        if parser.takes(spellings):
            return Finding(ref, pin.pin, OK, resolved_at=where, note=f"a flag of `{command}`")
        full, _ = abbreviation_of(flag, parser.flags) if ref.command else (None, [])
        if full is not None:
            return Finding(ref, pin.pin, OK, resolved_at=where, note=f"`{command}` takes it as `{full}` (a unique prefix)")
    if ref.command is None:
        # Written alone, it may also belong to a script or tool of the project (a guide's
        # `--quality-bcg-matrix` of the benchmark helper it ships beside itself).
        registered = registered_options(pin)
        script = next((registered[s] for s in sorted(spellings) if s in registered), None)
        if script is not None:
            return Finding(ref, pin.pin, OK, resolved_at=script, note=f"an option of {script}, one of the project's scripts")
    return None


def _with_value(found: Finding, entry: FlagEntry, pin: PinView) -> Finding:
    """`--kv-cache-dtype fp4_e2m1` where the pin's parser lists the flag's choices and the value is
    none of them (in any case: some parsers lower-case first): broken. So is a value of a flag that
    takes any string where the config checks it against a list (`--quantization lut_b_moe`,
    `Flag.typed_values`) and no string literal of the sources is that value (so no plugin of the
    project's own registers it: `turboquant` named only as a module and a prefix is none). A
    value the reader fills in (`$DTYPE`, `<dtype>`, `{...}`) is not judged."""
    value = (found.ref.flag_value or "").strip("'\"")
    listed = entry.choices or entry.typed_values
    if not listed or not value or value[0] in "$<{[(" or "${" in value:
        return found
    if value.lower() in {c.lower() for c in listed}:
        return found
    if entry.choices:
        found.note = f"`{value}` is not one of the choices of {entry.flag} at {found.pin}"
    elif pin.quotes(value) is False:
        found.note = f"`{value}` is none of the {len(listed)} values {entry.flag} is checked against at {found.pin}, and no string of its sources is `{value}`"
    else:
        return found
    found.status = BROKEN
    return found


# The engine's entry classes, whose keywords are the server's options by their `dest`.
_ENGINE_CALLEE_RE = re.compile(r"(?:^|\.)(?:LLM|AsyncLLM|LLMEngine|EngineArgs|AsyncEngineArgs|Engine|ServerArgs)(?:\.__init__|\.from_engine_args)?$")


def engine_keyword_value(found: Finding, pin: PinView) -> Finding:
    """`LLM(quantization="turboquant")`, `sgl.Engine(load_format="x")`: a keyword of the engine
    that is an option of its server, with a value; judged as the option's value is on a
    command line (`_with_value`)."""
    ref = found.ref
    if found.status != OK or not ref.flag_value or not ref.callee or not _ENGINE_CALLEE_RE.search(ref.callee):
        return found
    entry = next((f for f in pin.flags if f.dest == ref.text and (f.choices or f.typed_values)), None)
    return found if entry is None else _with_value(found, entry, pin)


def _resolve_command_flag(ref: Reference, pin: PinView) -> Finding:
    """A flag of a benchmark or script (`vllm bench serve --num-prompts`): its own parser decides."""
    assert ref.command is not None
    parser = command_flags(pin, ref.command)
    if parser is None:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"flags of `{ref.command}` are not indexed for {pin.pin}")
    flag = ref.target.split(".", 1)[0]
    spellings = {flag, flag.replace("_", "-")} if pin.project == "vllm" else {flag}
    if flag.startswith("--no-"):
        spellings.add("--" + flag[5:])
    where = parser.module.replace(".", "/") + ".py"
    if flag in {"-h", "--help"}:
        return Finding(ref, pin.pin, OK, resolved_at=where, note=f"argparse's own help option of `{ref.command}`")
    if parser.takes(spellings):
        return Finding(ref, pin.pin, OK, resolved_at=where, note=f"a flag of `{ref.command}`")
    full, _ = abbreviation_of(flag, parser.flags)
    if full is not None:
        return Finding(ref, pin.pin, OK, resolved_at=where, note=f"argparse takes it as `{full}` (a unique prefix)")
    if not parser.complete:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"`{ref.command}` builds some flag names at run time")
    return Finding(ref, pin.pin, BROKEN, note=f"no flag {flag} in `{ref.command}` ({parser.module}) at {pin.pin}")


def _resolve_env(ref: Reference, pin: PinView) -> Finding:
    name = ref.target
    entry = pin.env_map.get(name)
    if entry is not None:
        return Finding(ref, pin.pin, OK, resolved_at=entry.defined_at)
    renamed = pin.deprecated_env.get(name)
    if renamed is not None:
        return Finding(
            ref, pin.pin, OK, resolved_at=renamed.defined_at,
            note=f"deprecated name of {renamed.name}",
        )
    if name in pin.env_literals:
        words = pin.source_words()
        if words is not None and name in words.retired_env:
            return Finding(ref, pin.pin, BROKEN, note=f"{pin.pin}'s sources read {name} only to say it was removed")
        return Finding(ref, pin.pin, OK, note="read in the sources by name (not in the env var index)")
    if not pin.envs:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"no env vars extracted for {pin.pin}")
    if ref.origin == "fence" and pin.mentions(name):
        # `VLLM_VERSION` in a snippet: a name the sources define or import as code, not an env var.
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"{pin.pin}'s sources spell `{name}` as code, not as an env var they read")
    return Finding(ref, pin.pin, BROKEN, note=f"no env var {name} in {pin.pin}")


# What Prometheus adds to a metric's name when it exports it.
METRIC_SUFFIXES = ("_total", "_bucket", "_sum", "_count", "_created")


def _resolve_metric(ref: Reference, pin: PinView) -> Finding:
    words = pin.source_words()
    if words is None:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"the sources of {pin.pin} are not readable here")
    name = ref.target
    if ":" not in name:
        return _underscored_metric(ref, pin, words)
    spellings = {name} | {name.removesuffix(s) for s in METRIC_SUFFIXES if name.endswith(s)}
    if spellings & words.metrics:
        return Finding(ref, pin.pin, OK, note="a metric the sources name")
    if _maybe_built(name, words.metrics_built_in):
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"{pin.pin} builds some metric names at run time")
    if not words.metrics:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"no metric names found in {pin.pin}")
    return Finding(ref, pin.pin, BROKEN, note=f"no metric {name} in {pin.pin}")


# Words of a path that say nothing of what a file's metrics are about.
_GENERIC_PATH_WORDS = frozenset({"vllm", "sglang", "srt", "v1", "py", "manager", "metrics", "metric", "stats", "utils", "init", "layers"})


def _maybe_built(name: str, built_in: frozenset[str]) -> bool:
    """Whether a metric the sources never spell may be one built at run time: it shares a word
    with the path of a file that builds names (`vllm:kvcr_transfer_bytes` beside
    vllm/v1/kv_offload/tiering/kvcr/manager.py, whose `f"vllm:{name}"` takes another library's
    constants), where `vllm:gpu_cache_usage_perc` shares none and is simply not exported."""
    words = set(name.split(":", 1)[-1].split("_"))
    return bool(words & (built_in - _GENERIC_PATH_WORDS))


def _underscored_metric(ref: Reference, pin: PinView, words: SourceWords) -> Finding:
    """`sglang_prompt_tokens` in a list of metrics: the project's metrics are named `sglang:...`,
    so the name as written is scraped from no server; broken, with the colon's spelling as its
    home where the sources name that metric. A name the sources spell (`vllm_config`) is theirs."""
    name = ref.target
    if pin.mentions(name):
        return _resolve_symbol(replace(ref, kind=SYMBOL), pin)
    colon = name.replace("_", ":", 1)
    spelled = next((c for c in (colon, *(colon.removesuffix(s) for s in METRIC_SUFFIXES if colon.endswith(s))) if c in words.metrics), None)
    if spelled is not None:
        home = Suggestion(colon, 0.9, f"the sources name the metric `{spelled}`: Prometheus keeps the colon")
        return Finding(ref, pin.pin, BROKEN, note=f"no metric `{name}` in {pin.pin}; it exports `{colon}`", suggestions=[home])
    if not words.metrics and not words.metrics_built_in:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"no metric names found in {pin.pin}")
    # (Names built at run time are `vllm:`-prefixed too: none is spelled with `_`.)
    return Finding(ref, pin.pin, BROKEN, note=f"no metric `{name}` in {pin.pin}: its metrics are all named `{colon.split(':', 1)[0]}:...`")


def metric_ending(name: str, pin: PinView) -> str | None:
    """`save_outcomes_total` on a metrics page: the one metric the sources name in full whose
    name ends with these words (`vllm:simple_kv_offload_save_outcomes_total`), Prometheus's
    suffixes aside; None when none or several do."""
    words = pin.source_words()
    if words is None or "_" not in name.strip("_"):
        return None
    tails = {name} | {name.removesuffix(s) for s in METRIC_SUFFIXES if name.endswith(s)}
    hits = sorted(m for m in words.metrics if any(m.split(":", 1)[-1].endswith("_" + t) for t in tails))
    return hits[0] if len(hits) == 1 else None
