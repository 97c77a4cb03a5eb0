"""Successors (`successors.py`): where upstream's own diff between consecutive past releases took a
name, chained forward and offered as the home of a gone name where the pin checked still has it.

Two tiny past releases are written and indexed here (no network): at "0.6.6" a V0 `Worker` and V1
`Worker` and `Executor` each define `determine_num_available_blocks`; at "0.8.5" V1 renamed both to
`determine_available_memory` while V0 kept the old name. Today's (fake) pin has only V1. And a past
release's deprecation messages, read as text, name the replacement of a flag or a field."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

from analyzer.diff.symbols import compare_symbols
from analyzer.index import SnapshotIndex
from analyzer.index.extract import extract_text
from analyzer.refs.build import symbols_and_open_classes
from analyzer.refs.check import check_references, extract_all
from analyzer.refs.lineage import Lineage, build_lineage
from analyzer.refs.models import BROKEN, Finding
from analyzer.refs.pinview import FlagEntry
from analyzer.refs.successors import (
    Successors,
    build_successors,
    cached_successors,
    deprecated_home,
    deprecations,
    follow,
    save_successors,
    successor_home,
    written_owner,
)
from analyzer.refs.symbols import SymbolEntry

from .fakes import vllm_view

_BODY = "        free = 0\n        for i in range(4):\n            free += i\n        return free\n"


def _method(name: str) -> str:
    return f"    def {name}(self, block_size):\n{_BODY}"


def _files(v1_name: str) -> dict[str, str]:
    return {
        "vllm/__init__.py": "",
        "vllm/worker/worker.py": "class Worker:\n" + _method("determine_num_available_blocks"),
        "vllm/v1/worker/gpu_worker.py": "class Worker:\n" + _method(v1_name) + _method("load_model"),
        "vllm/v1/executor/abstract.py": "class Executor:\n" + _method(v1_name) + _method("shutdown"),
        "vllm/v1/executor/gone.py": "class OldExecutor:\n" + _method("old_only"),
    }


def _index(files: dict[str, str]) -> SnapshotIndex:
    return SnapshotIndex("t", {p: extract_text(textwrap.dedent(t), p, "0" * 64) for p, t in files.items()})


OLD, NEW = _index(_files("determine_num_available_blocks")), _index(_files("determine_available_memory"))


def _symbols(index: SnapshotIndex) -> list[SymbolEntry]:
    return symbols_and_open_classes(index.modules.values())[0]


def _past() -> tuple[Lineage, Successors]:
    lineage = build_lineage("vllm", [("vllm@0.6.6-src", _symbols(OLD)), ("vllm@0.8.5-src", _symbols(NEW))])
    successors = build_successors("vllm", [("vllm@0.6.6-src", "vllm@0.8.5-src", compare_symbols(OLD, NEW).moved)])
    return lineage, successors


def _pin(tmp_path: Path, *, with_executor: bool = True):  # type: ignore[no-untyped-def]
    pin = vllm_view(tmp_path)
    today = [
        SymbolEntry("vllm.v1.worker.gpu_worker.Worker", "vllm/v1/worker/gpu_worker.py", 1, 20, "class"),
        SymbolEntry("vllm.v1.worker.gpu_worker.Worker.determine_available_memory", "vllm/v1/worker/gpu_worker.py", 2, 6, "function"),
    ]
    if with_executor:
        today += [
            SymbolEntry("vllm.v1.executor.abstract.Executor", "vllm/v1/executor/abstract.py", 1, 20, "class"),
            SymbolEntry("vllm.v1.executor.abstract.Executor.determine_available_memory", "vllm/v1/executor/abstract.py", 2, 6, "function"),
        ]
    pin = replace(pin, symbols=[*pin.symbols, *today])
    pin.words_path = str(tmp_path / "words" / f"{pin.pin}.json")
    return pin


def _findings(doc: str, tmp_path: Path, *, with_successors: bool = True, with_executor: bool = True) -> dict[str, Finding]:
    lineage, successors = _past()
    found = check_references(
        extract_all([("ch.md", doc)]), [_pin(tmp_path, with_executor=with_executor)],
        lineages={"vllm": lineage}, successors={"vllm": successors} if with_successors else None,
    )
    return {f.ref.text: f for f in found}


def test_the_diff_s_renames_are_kept_for_the_project_s_package_and_followed() -> None:
    lineage, successors = _past()
    assert {(s.old, s.new, s.kind) for moves in successors.values() for s in moves} == {
        ("vllm.v1.worker.gpu_worker.Worker.determine_num_available_blocks", "vllm.v1.worker.gpu_worker.Worker.determine_available_memory", "renamed"),
        ("vllm.v1.executor.abstract.Executor.determine_num_available_blocks", "vllm.v1.executor.abstract.Executor.determine_available_memory", "renamed"),
    }
    v1 = next(p for p in lineage["determine_num_available_blocks"] if p.full.startswith("vllm.v1.worker"))
    [step] = follow(v1, successors)
    assert (step.release, step.to) == ("vllm@0.6.6-src", "vllm@0.8.5-src")
    assert step.says.startswith("vllm 0.8.5 renamed it to `vllm.v1.worker.gpu_worker.Worker.determine_available_memory` (same parent")
    v0 = next(p for p in lineage["determine_num_available_blocks"] if p.full.startswith("vllm.worker"))
    assert follow(v0, successors) == []  # V0 kept its name to the newest past release: no move


def test_a_bare_gone_name_goes_where_the_newest_release_s_class_of_that_name_renamed_it(tmp_path: Path) -> None:
    # The newest past release defined `Worker.determine_num_available_blocks` (V0), not an Executor's.
    f = _findings("# KV cache\n\nThe worker sizes the cache in `determine_num_available_blocks`.\n", tmp_path)[
        "determine_num_available_blocks"
    ]
    assert f.status == BROKEN
    assert f.best is not None and f.best.replacement == "Worker.determine_available_memory"
    assert "vllm 0.8.5 renamed it to `vllm.v1.worker.gpu_worker.Worker.determine_available_memory`" in f.note
    assert f.best.location == "vllm/v1/worker/gpu_worker.py:2"


def test_the_owner_the_text_writes_picks_the_chain(tmp_path: Path) -> None:
    doc = "# KV cache\n\n```python\nnum_gpu_blocks = model_executor.determine_num_available_blocks()\n```\n"
    f = _findings(doc, tmp_path)["model_executor.determine_num_available_blocks"]
    assert f.best is not None and f.best.replacement == "Executor.determine_available_memory"


def test_no_home_without_the_diff_s_evidence_or_where_the_pin_lacks_the_successor(tmp_path: Path) -> None:
    doc = "# KV cache\n\n```python\nnum_gpu_blocks = model_executor.determine_num_available_blocks()\n```\n"
    plain = _findings(doc, tmp_path / "a", with_successors=False)["model_executor.determine_num_available_blocks"]
    assert all("renamed it to" not in s.reason for s in plain.suggestions)
    # The Executor's successor is not defined at the pin: no home from the chain, and not the Worker's.
    gone = _findings(doc, tmp_path / "b", with_executor=False)["model_executor.determine_num_available_blocks"]
    assert all(s.replacement != "Worker.determine_available_memory" or "renamed it to" not in s.reason for s in gone.suggestions)


def test_several_homes_nothing_tells_apart_give_none(tmp_path: Path) -> None:
    lineage, successors = _past()
    # Only V1's two definitions (no newest-release namesake): two homes, none chosen.
    past = [p for p in lineage["determine_num_available_blocks"] if p.full.startswith("vllm.v1.")]
    assert successor_home(past, successors, _pin(tmp_path)) is None
    worker = successor_home(past, successors, _pin(tmp_path), owner="driver_worker")
    assert worker is not None and worker.replacement == "Worker.determine_available_memory"


def test_the_successors_are_cached_per_set_of_past_pins(tmp_path: Path) -> None:
    _, successors = _past()
    save_successors(tmp_path, "vllm", ["vllm@0.8.5-src", "vllm@0.6.6-src"], successors)
    assert cached_successors(tmp_path, "vllm", ["vllm@0.6.6-src", "vllm@0.8.5-src"]) == successors
    assert cached_successors(tmp_path, "vllm", ["vllm@0.6.6-src"]) is None


# A past release's own deprecation messages: a flag's `help=`, a field's docstring and comment.
_DEPRECATING = {
    "vllm/engine/arg_utils.py": (
        "def add_cli_args(parser):\n"
        "    parser.add_argument(\n"
        "        '--worker-use-ray',\n"
        "        action='store_true',\n"
        "        help='Deprecated, use --distributed-executor-backend=ray.')\n"
        "    parser.add_argument('--use-v2', help='Deprecated, use async with timeout()')\n"
    ),
    "vllm/config.py": (
        "class ParallelConfig:\n"
        "    \"\"\"Configuration.\n\n"
        "    Args:\n"
        "        worker_use_ray: Deprecated, use distributed_executor_backend instead.\n"
        "    \"\"\"\n"
        "    # Deprecated, use distributed_executor_backend instead.\n"
        "    worker_use_ray: bool = False\n"
        "    distributed_executor_backend: str = 'mp'\n"
    ),
    "vllm/third_party/pynvml.py": "# DEPRECATED use nvmlDeviceGetTemperatureV instead\n",
}
_CLASSES = [("vllm.config.ParallelConfig", "vllm/config.py", 1, 8)]


def test_deprecation_messages_name_the_replacement_of_a_flag_or_a_field() -> None:
    found = {(d.old, d.new) for d in deprecations("vllm", "vllm@0.6.6-src", _DEPRECATING, _CLASSES)}
    assert found == {
        ("--worker-use-ray", "--distributed-executor-backend"),  # the flag its add_argument names above
        ("vllm.config.ParallelConfig.worker_use_ray", "vllm.config.ParallelConfig.distributed_executor_backend"),
    }  # not `--use-v2` -> `async` (a word of the message), nor a vendored third-party module's


def test_a_gone_flag_or_field_goes_where_the_deprecation_message_said(tmp_path: Path) -> None:
    said = build_successors("vllm", [], deprecations("vllm", "vllm@0.6.6-src", _DEPRECATING, _CLASSES))
    pin = vllm_view(tmp_path)
    backend = FlagEntry("--distributed-executor-backend", dest="distributed_executor_backend", defined_at="vllm/engine/arg_utils.py:40")
    config = [
        SymbolEntry("vllm.config.parallel.ParallelConfig", "vllm/config/parallel.py", 1, 90, "class"),
        SymbolEntry("vllm.config.parallel.ParallelConfig.distributed_executor_backend", "vllm/config/parallel.py", 20, 20, "attribute"),
    ]
    pin = replace(pin, flags=[*pin.flags, backend], symbols=[*pin.symbols, *config])
    flag = deprecated_home("--worker-use-ray", None, True, said, pin)
    assert flag is not None and flag.replacement == "--distributed-executor-backend"
    assert flag.reason.startswith("vllm 0.6.6 deprecates it for `--distributed-executor-backend` (`help='Deprecated, use")
    field = deprecated_home("worker_use_ray", "parallel_config", False, said, pin)
    assert field is not None and field.replacement == "ParallelConfig.distributed_executor_backend"
    assert deprecated_home("worker_use_ray", "scheduler_config", False, said, pin) is None  # another class's field
    assert deprecated_home("--worker-use-ray", None, True, said, vllm_view(tmp_path / "bare")) is None  # the pin lacks the flag
    assert written_owner("`self.parallel_config.worker_use_ray`") == "parallel_config"
    assert written_owner("self._run_workers()") is None


def test_a_deprecated_flag_replaced_by_a_value_of_another(tmp_path: Path) -> None:
    files = {
        "sglang/srt/server_args.py": (
            "def check(args):\n"
            "    if args.enable_deepep_moe:\n"
            "        print(\"NOTE: --enable-deepep-moe is deprecated. Please set `--moe-a2a-backend` to 'deepep' instead.\")\n"
            "        args.moe_a2a_backend = 'deepep'\n"
        ),
    }
    said = build_successors("sglang", [], deprecations("sglang", "sglang@0.5.2-src", files, []))
    pin = vllm_view(tmp_path)
    backend = FlagEntry("--moe-a2a-backend", dest="moe_a2a_backend", defined_at="sglang/srt/server_args.py:900", choices=("none", "deepep", "mooncake"))
    home = deprecated_home("--enable-deepep-moe", None, True, said, replace(pin, flags=[*pin.flags, backend]))
    assert home is not None and home.replacement == "--moe-a2a-backend deepep"
    # A value the pin's flag no longer takes: the flag alone.
    narrow = replace(backend, choices=("none", "mooncake"))
    home = deprecated_home("--enable-deepep-moe", None, True, said, replace(pin, flags=[*pin.flags, narrow]))
    assert home is not None and home.replacement == "--moe-a2a-backend"
