"""SGLang-shaped fixture: ServerArgs fields annotated A[T, ...] and an Envs registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from flags_fixtures import SGLANG_FILES, line_of, write_tree

from analyzer.flags import env_report, extract_flags, flag_report
from analyzer.flags.models import Flag

SA = "sglang/srt/server_args.py"
ENV = "sglang/srt/environ.py"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path, SGLANG_FILES)


def by_flag(flags: list[Flag]) -> dict[str, Flag]:
    return {f.flag: f for f in flags}


def test_exact_flag_set(root: Path) -> None:
    flags = by_flag(extract_flags(root, "sglang"))
    assert {name: f.aliases for name, f in flags.items()} == {
        "--help": ["-h", "--help"],
        "--model-path": ["--model-path", "--model"],
        "--tensor-parallel-size": ["--tensor-parallel-size", "--tp-size"],
        "--chunked-prefill-size": ["--chunked-prefill-size"],
        "--schedule-policy": ["--schedule-policy"],
        "--enable-x": ["--enable-x"],
        "--lora-paths": ["--lora-paths"],
        "--config": ["--config"],
        "--policy-alias": ["--policy-alias"],
        "--cuda-graph-decode": ["--cuda-graph-decode"],
        "--cuda-graph-prefill": ["--cuda-graph-prefill"],
    }


def test_field_rules(root: Path) -> None:
    flags = by_flag(extract_flags(root, "sglang"))
    assert flags["--model-path"].required and flags["--model-path"].default == "None"
    assert flags["--tensor-parallel-size"].dest == "tp_size"  # anchored to the field name
    assert flags["--tensor-parallel-size"].default == "1" and flags["--tensor-parallel-size"].type == "int"
    assert flags["--chunked-prefill-size"].type == "int" and flags["--chunked-prefill-size"].default == "None"
    assert flags["--chunked-prefill-size"].help == "Chunk size."
    assert flags["--schedule-policy"].choices == ["lpm", "fcfs"]
    assert flags["--enable-x"].action == "store_true" and flags["--enable-x"].default == "False"
    assert flags["--lora-paths"].nargs == "+"
    assert flags["--policy-alias"].choices == ["lpm", "fcfs"]  # module-level list followed
    assert flags["--cuda-graph-prefill"].action == "store_true"


def test_defined_at(root: Path) -> None:
    flags = by_flag(extract_flags(root, "sglang"))
    assert flags["--chunked-prefill-size"].defined_at == line_of(root, SA, "FIELD chunked")
    assert flags["--chunked-prefill-size"].registered_at == line_of(root, SA, "CALL from_dataclass")
    assert flags["--tensor-parallel-size"].defined_at == line_of(root, SA, "FIELD tp")
    assert flags["--config"].defined_at == line_of(root, SA, "CALL config")
    assert flags["--help"].defined_at == line_of(root, SA, "CALL root")
    assert flag_report(root, "sglang").warnings == []


def test_envs_with_deprecated_names(root: Path) -> None:
    report = env_report(root, "sglang")
    envs = {e.name: e for e in report.envs}
    assert list(envs) == ["SGLANG_FOO", "SGLANG_BAR"]
    assert envs["SGLANG_FOO"].default == "False" and envs["SGLANG_FOO"].kind == "EnvBool"
    assert envs["SGLANG_FOO"].deprecated_names == ["SGLANG_OLDER_FOO"]
    assert envs["SGLANG_BAR"].deprecated_names == ["SGLANG_OLD_BAR"]
    assert envs["SGLANG_BAR"].defined_at == line_of(root, ENV, "ENV bar")
    assert [(e.name, e.defined_at) for e in report.retired] == [("SGLANG_GONE", line_of(root, ENV, "ENV gone"))]
