"""Small hand-written pin views standing in for real snapshots (shapes follow vLLM 0.30/0.33
and SGLang 0.5.20/0.5.23: the same files, names and renames, far fewer of them)."""

from __future__ import annotations

import ast
from pathlib import Path

from analyzer.pinned import directory_tree
from analyzer.refs.build import symbols_and_open_classes
from analyzer.refs.check import check_references, extract_all
from analyzer.refs.lineage import Lineage, build_lineage
from analyzer.refs.models import Finding
from analyzer.refs.pinview import EnvEntry, FlagEntry, PinView, SymbolEntry
from analyzer.settings import Settings


def _write_tree(root: Path, files: dict[str, int]) -> None:
    for rel, lines in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"# line {i}\n" for i in range(1, lines + 1)), encoding="utf-8")


def _sym(full: str, path: str, line: int, end: int, kind: str = "function", bases: tuple[str, ...] = ()) -> SymbolEntry:
    return SymbolEntry(full, path, line, end, kind, bases)


SCHED = "vllm/v1/core/sched/scheduler.py"
KVM = "vllm/v1/core/kv_cache_manager.py"
IFACE = "vllm/v1/core/sched/interface.py"


def vllm_view(root: Path, version: str = "0.30.0") -> PinView:
    new = version != "0.30.0"
    chat = "vllm/renderers/chat_utils/chat_message.py" if new else "vllm/entrypoints/chat_utils.py"
    chat_mod = chat.removesuffix(".py").replace("/", ".")
    alloc = (40, 70) if new else (30, 60)
    files = {
        "vllm/__init__.py": 20,
        SCHED: 300,
        IFACE: 40,
        KVM: 120,
        "vllm/v1/core/block_pool.py": 80,
        "vllm/envs.py": 50,
        "vllm/engine/arg_utils.py": 200,
        chat: 100,
        "vllm/py.typed": 0,
    }
    tree = root / f"vllm-{version}"
    _write_tree(tree, files)
    symbols = [
        _sym("vllm", "vllm/__init__.py", 1, 20, "module"),
        _sym("vllm.LLM", "vllm/__init__.py", 5, 5, "import"),
        _sym("vllm.SamplingParams", "vllm/__init__.py", 6, 6, "import"),
        _sym("vllm.v1.core.sched.interface", IFACE, 1, 40, "module"),
        _sym("vllm.v1.core.sched.interface.SchedulerInterface", IFACE, 5, 40, "class"),
        _sym("vllm.v1.core.sched.interface.SchedulerInterface.has_requests", IFACE, 20, 25),
        _sym("vllm.v1.core.sched.scheduler", SCHED, 1, 300, "module"),
        _sym("vllm.v1.core.sched.scheduler.Scheduler", SCHED, 10, 290, "class", ("SchedulerInterface",)),
        _sym("vllm.v1.core.sched.scheduler.Scheduler.schedule", SCHED, 50, 120),
        _sym("vllm.v1.core.sched.scheduler.Scheduler._preempt_request", SCHED, 130, 150),
        _sym("vllm.v1.core.sched.scheduler.Scheduler.waiting", SCHED, 20, 20, "attribute"),
        _sym("vllm.v1.core.kv_cache_manager", KVM, 1, 120, "module"),
        _sym("vllm.v1.core.kv_cache_manager.KVCacheManager", KVM, 20, 110, "class"),
        _sym("vllm.v1.core.kv_cache_manager.KVCacheManager.allocate_slots", KVM, *alloc),
        _sym("vllm.v1.core.kv_cache_manager.KVCacheManager.get_computed_blocks", KVM, 80, 100),
        _sym("vllm.v1.core.block_pool.BlockPool", "vllm/v1/core/block_pool.py", 10, 80, "class"),
        _sym("vllm.v1.core.block_pool.BlockPool.get_new_blocks", "vllm/v1/core/block_pool.py", 40, 60),
        _sym(chat_mod, chat, 1, 100, "module"),
        _sym(f"{chat_mod}.parse_chat_messages", chat, 30, 60),
        _sym(f"{chat_mod}.ChatTemplateResolutionError", chat, 10, 12, "class"),
        _sym("vllm.v1.core.kv_cache_utils.hash_block_tokens", "vllm/v1/core/kv_cache_utils.py", 5, 20),
    ]
    if not new:
        symbols.append(_sym("vllm.v1.core.kv_cache_utils.legacy_block_hash", "vllm/v1/core/kv_cache_utils.py", 25, 30))
    flags = [
        FlagEntry("--enable-prefix-caching", ("--no-enable-prefix-caching",), "enable_prefix_caching", "vllm/engine/arg_utils.py:40"),
        FlagEntry("--max-num-seqs", (), "max_num_seqs", "vllm/engine/arg_utils.py:41"),
        FlagEntry("--gpu-memory-utilization", (), "gpu_memory_utilization", "vllm/engine/arg_utils.py:42"),
    ]
    if new:
        flags.append(FlagEntry("--enable-log-requests", ("--no-enable-log-requests",), "enable_log_requests", "vllm/engine/arg_utils.py:60"))
        flags.append(FlagEntry("--max-seqs-per-step", (), "max_num_batched_tokens", "vllm/engine/arg_utils.py:61"))
    else:
        flags.append(FlagEntry("--disable-log-requests", (), "disable_log_requests", "vllm/engine/arg_utils.py:60"))
        flags.append(FlagEntry("--max-num-batched-tokens", (), "max_num_batched_tokens", "vllm/engine/arg_utils.py:61"))
    envs = [EnvEntry("VLLM_LOGGING_LEVEL", "vllm/envs.py:10")]
    if not new:
        envs.append(EnvEntry("VLLM_ENGINE_ITERATION_TIMEOUT_S", "vllm/envs.py:11"))
    return PinView(
        pin=f"vllm@{version}", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(files) | {"vllm/v1/core/kv_cache_utils.py"}, symbols=symbols, flags=flags, envs=envs,
        upstream_commit="a" * 40, store_commit="b" * 40, tree=str(tree),
    )


RADIX = "sglang/srt/mem_cache/radix_cache.py"
SG_SCHED = "sglang/srt/managers/scheduler.py"


def sglang_view(root: Path, version: str = "0.5.20") -> PinView:
    new = version != "0.5.20"
    files = {"sglang/__init__.py": 10, SG_SCHED: 500, RADIX: 200, "sglang/srt/environ.py": 100, "sglang/launch_server.py": 30}
    tree = root / f"sglang-{version}"
    _write_tree(tree, files)
    symbols = [
        _sym("sglang.launch_server", "sglang/launch_server.py", 1, 30, "module"),
        _sym("sglang.srt.managers.scheduler.Scheduler", SG_SCHED, 20, 480, "class"),
        _sym("sglang.srt.managers.scheduler.Scheduler.get_next_batch_to_run", SG_SCHED, 100, 160),
        _sym("sglang.srt.managers.scheduler.Scheduler.event_loop_overlap", SG_SCHED, 40, 80),
        _sym("sglang.srt.mem_cache.radix_cache.RadixCache", RADIX, 30, 190, "class"),
        _sym("sglang.srt.mem_cache.radix_cache.RadixCache.match_prefix", RADIX, 60, 90),
        _sym("sglang.srt.mem_cache.radix_cache.TreeNode", RADIX, 5, 25, "class"),
    ]
    flags = [
        FlagEntry("--model-path", ("--model",), "model_path", "sglang/srt/server_args.py:10"),
        FlagEntry("--chunked-prefill-size", (), "chunked_prefill_size", "sglang/srt/server_args.py:11"),
        FlagEntry("--disable-radix-cache", (), "disable_radix_cache", "sglang/srt/server_args.py:12"),
    ]
    if new:
        envs = [
            EnvEntry("SGLANG_OPT_RELEASE_PREFILL_SWA", "sglang/srt/environ.py:40", ("SGLANG_OPT_SWA_RELEASE_LEAF_LOCK_AFTER_WINDOW",)),
            EnvEntry("SGLANG_ENABLE_JIT_DEEPGEMM", "sglang/srt/environ.py:41"),
        ]
    else:
        envs = [
            EnvEntry("SGLANG_OPT_SWA_RELEASE_LEAF_LOCK_AFTER_WINDOW", "sglang/srt/environ.py:40"),
            EnvEntry("SGLANG_ENABLE_JIT_DEEPGEMM", "sglang/srt/environ.py:41"),
        ]
    return PinView(
        pin=f"sglang@{version}", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset(files), symbols=symbols, flags=flags, envs=envs,
        upstream_commit="c" * 40, store_commit="d" * 40, tree=str(tree),
    )


def statuses(doc: str, *pins: PinView, name: str = "ch.md") -> dict[str, list[str]]:
    """The statuses `atlas check` gives each reference text of `doc` against `pins`."""
    out: dict[str, list[str]] = {}
    for f in check_references(extract_all([(name, doc)]), list(pins)):
        out.setdefault(f.ref.text, []).append(f.status)
    return out


def source_view(root: Path, sources: dict[str, str], pin: str = "vllm@0.30.0") -> PinView:
    """A pin whose files are the given Python sources on disk (signatures and words are read from
    them) beside the package's `__init__.py`, indexed as the real index is: modules, top-level
    functions, classes and names assigned, methods, the attributes a class body declares and those its methods
    assign on `self`."""
    project = pin.partition("@")[0]
    tree = root / pin.replace("@", "-")
    init = f"{project}/__init__.py"
    symbols = []
    for rel, text in sources.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
        module = rel.removesuffix(".py").replace("/", ".")
        symbols.append(_sym(module, rel, 1, len(text.splitlines()), "module"))
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                symbols.append(_sym(f"{module}.{node.name}", rel, node.lineno, node.end_lineno or node.lineno))
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                symbols.append(_sym(f"{module}.{node.targets[0].id}", rel, node.lineno, node.lineno, "attribute"))
            if not isinstance(node, ast.ClassDef):
                continue
            cls = f"{module}.{node.name}"
            symbols.append(_sym(cls, rel, node.lineno, node.end_lineno or node.lineno, "class", tuple(ast.unparse(b) for b in node.bases)))
            for item in node.body:
                if isinstance(item, ast.AnnAssign | ast.Assign):
                    target = item.target if isinstance(item, ast.AnnAssign) else item.targets[0]
                    if isinstance(target, ast.Name):
                        symbols.append(_sym(f"{cls}.{target.id}", rel, item.lineno, item.lineno, "attribute"))
                elif isinstance(item, ast.FunctionDef):
                    symbols.append(_sym(f"{cls}.{item.name}", rel, item.lineno, item.end_lineno or item.lineno))
                    for sub in ast.walk(item):
                        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                            symbols.append(_sym(f"{cls}.{sub.attr}", rel, sub.lineno, sub.lineno, "attribute"))
    view = PinView(
        pin=pin, project=project, kind="release", layout_prefix="", packages=(project,),
        files=frozenset([*sources, init]), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(root / f"{pin}.words.json")
    return view


def past_lineage(root: Path, files: dict[str, str], pin: str) -> Lineage:
    """The lineage of one past release (`vllm@0.10.2-src`) whose files are written under `root`
    and indexed as any tree is (read, never imported)."""
    project = pin.partition("@")[0]
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    tree = directory_tree(Settings(cache_dir=root.parent / "cache"), root / project, project, read_knobs=False)
    tree.jobs = 1
    return build_lineage(project, [(pin, symbols_and_open_classes(tree.index.modules.values())[0])])


def findings_by_place(doc: str, pin: PinView, lineages: dict[str, Lineage] | None = None) -> dict[tuple[int, str], list[Finding]]:
    """Every finding of a one-document check at `pin`, by (line, text)."""
    out: dict[tuple[int, str], list[Finding]] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin], lineages=lineages):
        out.setdefault((f.ref.line, f.ref.text), []).append(f)
    return out


def statuses_at(found: dict[tuple[int, str], list[Finding]], line: int, text: str) -> list[str]:
    return [f.status for f in found.get((line, text), [])]

