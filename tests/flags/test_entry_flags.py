"""Parsers of entry points other than the server's, read statically (analyzer/flags/entry_flags.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from entry_fixture import write_entry_tree

from analyzer.flags.entry_flags import accepted, entry_flags
from analyzer.flags.source import SourceTree


@pytest.fixture()
def tree(tmp_path: Path) -> SourceTree:
    return SourceTree(write_entry_tree(tmp_path))


def test_generate_parser_follows_adders_closures_fstrings_and_dispatched_methods(tree: SourceTree) -> None:
    found = entry_flags(tree, "sglang.cli.generate")
    assert found is not None and found.complete
    assert accepted(found.report) == {
        "-h", "--help",
        "--config", "--num-gpus", "--ulysses-degree", "--vae-config.use-tiling",  # ServerArgs and the VAE adder
        "--perf-dump-path",  # the generate adder's own
        "--num-frames", "--taylor-order", "--taylor_order",  # through the local add_argument wrapper
        "--flux-alpha",  # classes[0].add_pipeline_cli_args(parser): every definition in sglang.mm
    }
    flags = {f.flag: f for f in found.report.flags}
    assert flags["--num-gpus"].defined_at == "sglang/mm/server_args.py:8"
    assert flags["--flux-alpha"].group == "FLUX"


def test_families_read_from_the_leftover_arguments(tree: SourceTree) -> None:
    found = entry_flags(tree, "sglang.cli.generate")
    assert found is not None
    assert found.prefixes == ["--component-paths."] and found.suffixes == ["-path"]


def test_serve_module_lists_the_parser_it_builds_not_the_servers(tree: SourceTree) -> None:
    found = entry_flags(tree, "sglang.cli.serve")
    assert found is not None
    assert "--num-gpus" in accepted(found.report) and "--perf-dump-path" not in accepted(found.report)
    assert found.by_hand == ["--help", "--model-type"]  # compared with argv words by the module itself


def test_a_script_building_its_parser_under_main(tree: SourceTree) -> None:
    found = entry_flags(tree, "sglang.tools.convert")
    assert found is not None and found.complete
    assert accepted(found.report) == {"-h", "--help", "--model-type", "--output-dir"}


def test_names_built_at_run_time_make_the_listing_incomplete(tree: SourceTree) -> None:
    found = entry_flags(tree, "sglang.tools.dynamic")
    assert found is not None and not found.complete
    assert "--fixed" in accepted(found.report)


def test_no_parser_or_no_module(tree: SourceTree) -> None:
    assert entry_flags(tree, "sglang.cli.utils") is None
    assert entry_flags(tree, "sglang.cli.missing") is None
