"""Subcommands registered as classes (the shape of vLLM's CLI: `cmd_init()` returns instances of
`CLISubcommand` subclasses, groups add one nested parser per subclass of their own base) are read
statically, and a flag is judged against the parser of the subcommand the passage runs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from analyzer.flags.cli_classes import CliCommand, class_subcommands
from analyzer.flags.entry_points import command_module, subcommand_modules
from analyzer.refs.check import check_references, extract_all
from analyzer.refs.commandindex import subcommands
from analyzer.refs.models import BROKEN, OK, Finding
from analyzer.refs.pinview import FlagEntry, PinView

FILES = {
    "vllm/__init__.py": "",
    "vllm-9.9.dist-info/entry_points.txt": "[console_scripts]\nvllm = vllm.entrypoints.cli.main:main\n",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/cli/__init__.py": "",
    "vllm/entrypoints/cli/types.py": """
        class CLISubcommand:
            name: str

            def subparser_init(self, subparsers):
                raise NotImplementedError
    """,
    "vllm/entrypoints/cli/main.py": """
        def main():
            import vllm.entrypoints.cli.bench.main
            import vllm.entrypoints.cli.batch
            import vllm.entrypoints.cli.client
            for module in [vllm.entrypoints.cli.batch, vllm.entrypoints.cli.client, vllm.entrypoints.cli.bench.main]:
                for cmd in module.cmd_init():
                    cmd.subparser_init(subparsers)
    """,
    "vllm/entrypoints/cli/batch.py": """
        from vllm.entrypoints.cli.types import CLISubcommand

        class BatchCommand(CLISubcommand):
            name = "run-batch"

            def subparser_init(self, subparsers):
                from vllm.entrypoints.batch_runner import make_parser
                return make_parser(subparsers.add_parser(self.name))

        def cmd_init():
            return [BatchCommand()]
    """,
    "vllm/entrypoints/batch_runner.py": """
        import argparse

        def make_parser(parser):
            parser.add_argument("-i", "--input-file", required=True)
            parser.add_argument("--output-file")
            return parser

        def parse_args():
            return make_parser(argparse.ArgumentParser()).parse_args()
    """,
    "vllm/entrypoints/cli/client.py": """
        from vllm.entrypoints.cli.types import CLISubcommand

        def _query_options(parser):
            parser.add_argument("--url")

        class TalkCommand(CLISubcommand):
            name = "talk"

            @staticmethod
            def add_cli_args(parser):
                _query_options(parser)
                parser.add_argument("--once", action="store_true")
                return parser

            def subparser_init(self, subparsers):
                return TalkCommand.add_cli_args(subparsers.add_parser(self.name))

        class EchoCommand(CLISubcommand):
            name = "echo"

            def subparser_init(self, subparsers):
                parser = subparsers.add_parser(self.name)
                _query_options(parser)
                parser.add_argument("--times", type=int)
                return parser

        def cmd_init():
            return [TalkCommand(), EchoCommand()]
    """,
    "vllm/entrypoints/cli/bench/__init__.py": "",
    "vllm/entrypoints/cli/bench/base.py": """
        from vllm.entrypoints.cli.types import CLISubcommand

        class BenchBase(CLISubcommand):
            @classmethod
            def add_cli_args(cls, parser):
                raise NotImplementedError
    """,
    "vllm/entrypoints/cli/bench/main.py": """
        from vllm.entrypoints.cli.bench.base import BenchBase
        from vllm.entrypoints.cli.types import CLISubcommand

        class BenchCommand(CLISubcommand):
            name = "bench"

            def subparser_init(self, subparsers):
                group = subparsers.add_parser(self.name).add_subparsers()
                for cls in BenchBase.__subclasses__():
                    cls.add_cli_args(group.add_parser(cls.name))

        def cmd_init():
            return [BenchCommand()]
    """,
    "vllm/entrypoints/cli/bench/load.py": """
        from vllm.benchmarks.load import add_cli_args
        from vllm.entrypoints.cli.bench.base import BenchBase

        class LoadBench(BenchBase):
            name = "load"

            @classmethod
            def add_cli_args(cls, parser):
                add_cli_args(parser)
    """,
    "vllm/benchmarks/__init__.py": "",
    "vllm/benchmarks/load.py": """
        def add_cli_args(parser):
            parser.add_argument("--num-prompts", type=int, default=10)
            parser.add_argument("--request-rate", type=float)
    """,
}


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return tmp_path


def test_commands_groups_and_their_parser_modules_are_read_from_the_classes(root: Path) -> None:
    found = class_subcommands(root, "vllm.entrypoints.cli.main:main", "vllm")
    assert found == {
        "vllm bench load": CliCommand("vllm.benchmarks.load", in_class=False),  # the group's nested command
        "vllm run-batch": CliCommand("vllm.entrypoints.batch_runner", in_class=False),  # imported inside the method
        "vllm talk": CliCommand("vllm.entrypoints.cli.client", in_class=True),
        "vllm echo": CliCommand("vllm.entrypoints.cli.client", in_class=True),
    }
    assert "vllm bench" not in found  # a group has no options of its own here
    assert subcommand_modules(root, "vllm")["vllm bench load"] == "vllm.benchmarks.load"
    assert command_module(root, "vllm  bench load") == "vllm.benchmarks.load"


def test_a_tree_without_dist_info_is_read_at_the_cli_package(root: Path) -> None:
    (root / "vllm-9.9.dist-info" / "entry_points.txt").unlink()
    assert "vllm run-batch" in subcommand_modules(root, "vllm")


def test_a_broken_cli_module_loses_only_its_own_commands(root: Path) -> None:
    (root / "vllm/entrypoints/cli/client.py").write_text("class TalkCommand(:\n", encoding="utf-8")
    found = class_subcommands(root, "vllm.entrypoints.cli.main:main", "vllm")
    assert set(found) == {"vllm bench load", "vllm run-batch"}


@pytest.fixture()
def view(root: Path) -> PinView:
    flags = [FlagEntry("--model", (), "model", "vllm/engine/arg_utils.py:10")]
    return PinView(
        pin="vllm@9.9", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset(p for p in FILES if p.endswith(".py")), symbols=[], flags=flags, envs=[], tree=str(root),
    )


def _check(doc: str, view: PinView) -> dict[str, Finding]:
    findings = check_references(extract_all([("docs/cli.md", doc)]), [view])
    return {f.ref.text: f for f in findings if f.ref.kind == "flag"}


def test_flags_are_judged_against_the_parser_of_the_subcommand(view: PinView) -> None:
    assert subcommands(view)["vllm run-batch"] == "vllm.entrypoints.batch_runner"
    doc = (
        "# CLI\n\n```bash\n"
        "vllm run-batch -i in.jsonl --output-file out.jsonl --outptu-file x\n"
        "vllm bench load --num-prompts 5 --max-concurrency 2\n"
        "vllm talk --url http://x --once --bogus\n"
        "```\n"
    )
    found = _check(doc, view)
    assert found["-i"].status == OK and found["--output-file"].status == OK
    assert found["--outptu-file"].status == BROKEN and "vllm run-batch" in found["--outptu-file"].note
    assert found["--num-prompts"].status == OK and "vllm bench load" in found["--num-prompts"].note
    assert found["--max-concurrency"].status == BROKEN  # not the load benchmark's
    # The class's own methods add `--once`; the module is read for its literal names (both commands').
    assert found["--url"].status == OK and found["--once"].status == OK
    assert found["--bogus"].status == BROKEN


def test_a_config_dataclass_and_a_platform_hook_are_followed_for_a_vllm_command(root: Path, view: PinView) -> None:
    """`vllm run-batch`'s parser adds the options of a config dataclass through `get_kwargs`
    (modelled as for the server) and hands the parser to `current_platform.pre_register_and_update`,
    a method picked at run time that its own subpackage does not define: both are followed, so the
    parser stays complete and a typo is broken, not "not checkable"."""
    (root / "vllm/entrypoints/batch_runner.py").write_text(textwrap.dedent("""
        import argparse
        from dataclasses import dataclass

        from vllm.engine.arg_utils import get_kwargs
        from vllm.platforms import current_platform

        @dataclass
        class BatchArgs:
            output_tmp_dir: str | None = None
            \"\"\"Where partial results go.\"\"\"

        def make_parser(parser):
            parser.add_argument("-i", "--input-file", required=True)
            for name, kwargs in get_kwargs(BatchArgs).items():
                parser.add_argument("--" + name.replace("_", "-"), **kwargs)
            current_platform.pre_register_and_update(parser)
            return parser

        def parse_args():
            return make_parser(argparse.ArgumentParser()).parse_args()
    """), encoding="utf-8")
    (root / "vllm/engine").mkdir()
    (root / "vllm/engine/arg_utils.py").write_text("def get_kwargs(cls):\n    return {}\n", encoding="utf-8")
    (root / "vllm/platforms").mkdir()
    (root / "vllm/platforms/__init__.py").write_text(textwrap.dedent("""
        class Platform:
            def pre_register_and_update(self, parser=None):
                pass

        class TpuPlatform(Platform):
            def pre_register_and_update(self, parser=None):
                parser.add_argument("--tpu-topology")

        def __getattr__(name):
            # Chosen when first used, from the hardware found: nothing a reader can follow.
            if name == "current_platform":
                return _detect()()
            raise AttributeError(name)
    """), encoding="utf-8")
    doc = "# CLI\n\n```bash\nvllm run-batch -i in.jsonl --output-tmp-dir /t --tpu-topology 2x2 --output-tmp-dri /t\n```\n"
    found = _check(doc, view)
    assert found["--output-tmp-dir"].status == OK  # from the dataclass
    assert found["--tpu-topology"].status == OK  # what some platform adds is accepted
    assert found["--output-tmp-dri"].status == BROKEN


def test_a_parser_class_that_reads_argv_by_hand_accepts_what_it_reads(root: Path, view: PinView) -> None:
    """A parser class of another module whose parse_args takes `--config` from argv by hand (as
    vLLM's FlexibleArgumentParser does) accepts it."""
    (root / "vllm/utils").mkdir()
    (root / "vllm/utils/__init__.py").write_text("", encoding="utf-8")
    (root / "vllm/utils/flexparse.py").write_text(textwrap.dedent("""
        import argparse
        import json

        class LenientArgumentParser(argparse.ArgumentParser):
            def parse_args(self, args=None, namespace=None):
                def merge(a, b):
                    for k, v in b.items():
                        if isinstance(v, dict):
                            merge(a.setdefault(k, {}), v)
                        else:
                            a[k] = v
                    return a
                if args and "--config" in args:
                    merge({}, json.loads(args[-1]))
                return super().parse_args(args, namespace)
    """), encoding="utf-8")
    (root / "vllm/entrypoints/batch_runner.py").write_text(textwrap.dedent("""
        from vllm.utils.flexparse import LenientArgumentParser

        def make_parser(parser):
            parser.add_argument("-i", "--input-file", required=True)
            return parser

        def parse_args():
            return make_parser(LenientArgumentParser()).parse_args()
    """), encoding="utf-8")
    doc = "# CLI\n\n```bash\nvllm run-batch -i in.jsonl --config c.yaml --input-fiel x\n```\n"
    found = _check(doc, view)
    assert found["--config"].status == OK
    assert found["--input-fiel"].status == BROKEN


def test_a_recursive_helper_handed_no_parser_does_not_make_the_parser_incomplete(tmp_path: Path) -> None:
    from analyzer.flags.entry_flags import entry_flags
    from analyzer.flags.source import SourceTree

    (tmp_path / "tool").mkdir()
    (tmp_path / "tool/__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "tool/cli.py").write_text(textwrap.dedent("""
        import argparse
        import json

        def build(text):
            parser = argparse.ArgumentParser()
            parser.add_argument("--depth")

            def walk(tree):  # closes over the parser's frame, never uses the parser
                for value in tree.values():  # not known statically: followed once, recursing
                    walk(value)

            walk(json.loads(text))
            return parser

        def build_deep(text):
            parser = argparse.ArgumentParser()
            descend(parser, json.loads(text))
            return parser

        def descend(parser, tree):
            parser.add_argument("--level")
            for value in tree.values():
                descend(parser, value)
    """), encoding="utf-8")
    tree = SourceTree(tmp_path)
    plain = entry_flags(tree, "tool.cli", "build")
    assert plain is not None and plain.complete  # `walk` was cut, but it could add no option
    assert any("recursion cut in walk" in w for w in plain.report.warnings)
    deep = entry_flags(tree, "tool.cli", "build_deep")
    assert deep is not None and not deep.complete  # cut while holding the parser: options may be missing

