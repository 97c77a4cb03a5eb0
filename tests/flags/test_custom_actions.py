"""Custom argparse actions, interpreted statically on a small vLLM-shaped tree.

The tree's parser class registers its own action in place of BooleanOptionalAction
(argparse's `register("action", ...)` indirection), the action's constructor derives
option strings (an `--on-X` / `--off-X` pair), a default and `nargs`, and the parser's
`add_argument` (and its argument group's) hides some strings from help after
registration. What argparse would do with each, worked out by hand from the standard
library's semantics, is what the tests expect. Two constructions the interpreter
cannot follow are listed as given, with a warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from flags_fixtures import line_of, write_tree

from analyzer.flags import flag_report
from analyzer.flags.models import Flag

FILES: dict[str, str] = {
    "vllm/__init__.py": "",
    "vllm/utils/__init__.py": "",
    "vllm/utils/parsing.py": """
        import argparse
        import os
        from argparse import BooleanOptionalAction, _ArgumentGroup


        class OnOffAction(BooleanOptionalAction):
            # --on-x gains --off-x (and back); argparse's own --no-on-x stays, hidden.
            _flip = {"--on-": "--off-", "--off-": "--on-"}

            def __init__(self, option_strings, dest, *args, **kwargs):
                super().__init__(option_strings, dest, *args, **kwargs)
                flipped = [
                    other + opt.removeprefix(prefix)
                    for opt in option_strings
                    for prefix, other in self._flip.items()
                    if opt.startswith(prefix)
                ]
                self.negative_option_strings = {
                    o for o in self.option_strings if o not in option_strings
                } | set(flipped)
                self.shown = [*option_strings, *flipped] if flipped else list(self.option_strings)
                self.option_strings = [*self.option_strings, *flipped]


        class LevelAction(argparse.Action):
            # Computes its default and nargs in the constructor.
            def __init__(self, option_strings, dest, **kwargs):
                kwargs["nargs"] = "?"
                kwargs.setdefault("default", "medium")
                super().__init__(option_strings, dest, **kwargs)


        class EnvAction(argparse.Action):
            def __init__(self, option_strings, dest, **kwargs):
                super().__init__(list(os.environ), dest, **kwargs)  # UNKNOWN-STRINGS


        class Foreign:
            pass


        class ForeignAction(Foreign):
            def __init__(self, option_strings, dest, **kwargs):
                self.option_strings = option_strings


        def _hide(action):
            if isinstance(action, OnOffAction):
                action.option_strings = action.shown


        class Parser(argparse.ArgumentParser):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.register("action", BooleanOptionalAction, OnOffAction)

            def add_argument(self, *args, **kwargs):
                action = super().add_argument(*args, **kwargs)
                _hide(action)
                return action

            class _Group(_ArgumentGroup):
                def add_argument(self, *args, **kwargs):
                    action = super().add_argument(*args, **kwargs)
                    _hide(action)
                    return action

            def add_argument_group(self, *args, **kwargs):
                group = self._Group(self, *args, **kwargs)
                self._action_groups.append(group)
                return group
        """,
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/cli/__init__.py": "",
    "vllm/entrypoints/cli/main.py": """
        def main():
            from vllm.utils.parsing import Parser

            parser = Parser(description="vllm")
            subparsers = parser.add_subparsers()
            return subparsers
        """,
    "vllm/entrypoints/cli/serve.py": """
        import argparse

        from vllm.utils.parsing import EnvAction, ForeignAction, LevelAction


        class ServeSubcommand:
            name = "serve"

            def subparser_init(self, subparsers):
                parser = subparsers.add_parser(self.name)
                group = parser.add_argument_group(title="Cache")
                group.add_argument("--on-cache", action=argparse.BooleanOptionalAction, default=True)  # ON
                group.add_argument("--off-sync", action=argparse.BooleanOptionalAction)  # OFF
                parser.add_argument("--verbose", action=argparse.BooleanOptionalAction, default=False)
                parser.add_argument("--level", action=LevelAction, choices=["low", "medium"])  # LEVEL
                parser.add_argument("--from-env", action=EnvAction)  # ENV
                parser.add_argument("--foreign", action=ForeignAction)  # FOREIGN
                parser.add_argument("--count", action="store_true", dest="counting")
                return parser
        """,
}


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path, FILES)


def _flags(root: Path) -> dict[str, Flag]:
    return {f.flag: f for f in flag_report(root, "vllm").flags}


def test_registered_action_derives_pairs_and_hides_what_the_parser_hides(root: Path) -> None:
    flags = _flags(root)
    on = flags["--on-cache"]
    assert on.action == "OnOffAction" and on.group == "Cache"
    assert on.aliases == ["--on-cache", "--off-cache"]  # what --help shows
    assert on.hidden_aliases == ["--no-on-cache"]  # registered first, then dropped from the action
    assert on.negative_aliases == ["--no-on-cache", "--off-cache"]
    assert (on.dest, on.default, on.nargs) == ("on_cache", "True", 0)
    off = flags["--off-sync"]
    assert (off.aliases, off.hidden_aliases, off.dest, off.default) == (
        ["--off-sync", "--on-sync"], ["--no-off-sync"], "off_sync", "None")
    # No --on-/--off- prefix: the constructor adds nothing, argparse's --no- form stays shown.
    verbose = flags["--verbose"]
    assert (verbose.aliases, verbose.hidden_aliases, verbose.negative_aliases) == (
        ["--verbose", "--no-verbose"], [], ["--no-verbose"])
    assert verbose.action == "OnOffAction" and verbose.default == "False"


def test_constructor_computes_default_and_nargs(root: Path) -> None:
    level = _flags(root)["--level"]
    assert (level.action, level.nargs, level.default, level.choices) == ("LevelAction", "?", '"medium"', ["low", "medium"])
    count = _flags(root)["--count"]
    assert (count.action, count.dest, count.default) == ("store_true", "counting", "False")


def test_unfollowable_constructions_are_listed_as_given_with_a_warning(root: Path) -> None:
    report = flag_report(root, "vllm")
    flags = {f.flag: f for f in report.flags}
    assert flags["--from-env"].aliases == ["--from-env"] and flags["--foreign"].aliases == ["--foreign"]
    serve = "vllm/entrypoints/cli/serve.py"
    assert report.warnings == [
        f"{line_of(root, serve, 'ENV')}: the option strings vllm.utils.parsing.EnvAction's constructor "
        "computes are not statically known; listed as given",
        f"{line_of(root, serve, 'FOREIGN')}: action vllm.utils.parsing.ForeignAction derives from no "
        "argparse action known statically; its option strings are listed as given",
    ]


def test_flags_are_recorded_where_the_caller_wrote_them(root: Path) -> None:
    # The parser's add_argument override calls super().add_argument in parsing.py; the
    # option is still registered at the serve.py call.
    flags = _flags(root)
    assert flags["--on-cache"].registered_at == line_of(root, "vllm/entrypoints/cli/serve.py", "ON")
    assert flags["--level"].defined_at == line_of(root, "vllm/entrypoints/cli/serve.py", "LEVEL")
