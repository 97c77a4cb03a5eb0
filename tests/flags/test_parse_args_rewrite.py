"""A parser class of the tree that overrides `parse_args` (vLLM's `FlexibleArgumentParser`
rewrites `-O3` to `--optimization-level 3` before argparse sees the command line): the rewrite is
code run on argv, not a registration, so the options are listed as argparse registers them and
the override is reported as a warning where it is defined (issue 11 §5: said, not guessed)."""

from __future__ import annotations

from pathlib import Path

from flags_fixtures import line_of, write_tree

from analyzer.flags import flag_report

_PARSER = """
    import argparse


    class Parser(argparse.ArgumentParser):
        def parse_args(self, args=None, namespace=None):  # REWRITE
            args = ["--level" if a == "-L" else a for a in (args or [])]
            return super().parse_args(args, namespace)
    """

FILES: dict[str, str] = {
    "vllm/__init__.py": "",
    "vllm/utils/__init__.py": "",
    "vllm/utils/parsing.py": _PARSER,
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/cli/__init__.py": "",
    "vllm/entrypoints/cli/main.py": """
        def main():
            from vllm.utils.parsing import Parser

            parser = Parser(description="vllm")
            return parser.add_subparsers()
        """,
    "vllm/entrypoints/cli/serve.py": """
        class ServeSubcommand:
            name = "serve"

            def subparser_init(self, subparsers):
                parser = subparsers.add_parser(self.name)
                parser.add_argument("--level", type=int, default=0)
                return parser
        """,
}


def test_a_parse_args_override_is_reported_not_guessed(tmp_path: Path) -> None:
    root = write_tree(tmp_path, FILES)
    report = flag_report(root, "vllm")
    flags = {f.flag: f for f in report.flags}
    # What argparse registers, nothing the rewrite might accept besides.
    assert flags["--level"].aliases == ["--level"] and "-L" not in flags
    assert report.warnings == [
        f"{line_of(root, 'vllm/utils/parsing.py', 'REWRITE')}: Parser.parse_args rewrites the command line before "
        "argparse reads it; spellings it turns into the options listed (other forms of a flag, shorthands) are not listed"
    ]


def test_a_parser_class_without_an_override_warns_of_nothing(tmp_path: Path) -> None:
    files = {**FILES, "vllm/utils/parsing.py": "import argparse\n\n\nclass Parser(argparse.ArgumentParser):\n    pass\n"}
    assert flag_report(write_tree(tmp_path, files), "vllm").warnings == []
