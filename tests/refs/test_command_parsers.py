"""A flag is judged against the parser of the command the passage runs: `sglang generate` and the
diffusion side of `sglang serve` (found through the console script's dispatch), and a flag written
alone, with no command, against any of the project's commands."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.commandflags import command_flags
from analyzer.refs.commandindex import FORMAT, other_commands, registered_options, subcommands
from analyzer.refs.models import BROKEN, OK, Finding
from analyzer.refs.pinview import FlagEntry, PinView

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "flags"))  # the fixture tree is shared with tests/flags
from entry_fixture import ENTRY_FILES, write_entry_tree


@pytest.fixture()
def view(tmp_path: Path) -> PinView:
    root = write_entry_tree(tmp_path)
    flags = [FlagEntry("--model-path", (), "model_path", "sglang/srt/server_args.py:10"),
             FlagEntry("--tp-size", (), "tp_size", "sglang/srt/server_args.py:11")]
    return PinView(
        pin="sglang@9.9", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset(ENTRY_FILES), symbols=[], flags=flags, envs=[], tree=str(root),
    )


def _check(doc: str, view: PinView) -> dict[tuple[int, str], Finding]:
    findings = check_references(extract_all([("docs/diffusion.md", doc)]), [view])
    return {(f.ref.line, f.ref.text): f for f in findings if f.ref.kind == "flag"}


def test_subcommands_come_from_the_console_scripts_dispatch(view: PinView) -> None:
    assert subcommands(view) == {"sglang serve": "sglang.cli.serve", "sglang generate": "sglang.cli.generate"}
    assert other_commands(view) == ["sglang serve", "sglang generate"]
    generate = command_flags(view, "sglang generate")
    assert generate is not None and generate.complete and "--num-frames" in generate.flags


def test_generate_flags_are_judged_against_the_generate_parser(view: PinView) -> None:
    doc = "# Diffusion\n\n```bash\nsglang generate --model-path m --num-frames 8 --vae-config.use-tiling --num-framez 2\n```\n"
    found = _check(doc, view)
    assert found[(4, "--num-frames")].status == OK and "sglang generate" in found[(4, "--num-frames")].note
    assert found[(4, "--vae-config.use-tiling")].status == OK
    assert found[(4, "--num-framez")].status == BROKEN  # generate's parser is complete: a typo is broken


def test_serve_of_a_diffusion_model_takes_the_diffusion_servers_flags(view: PinView) -> None:
    doc = "# Serving\n\n```bash\nsglang serve --model-path m --num-gpus 2 --ulysses-degree 2 --transformer-path t --bogus-flag\n```\n"
    found = _check(doc, view)
    assert found[(4, "--model-path")].status == OK  # the LLM server's parser
    assert found[(4, "--num-gpus")].status == OK and found[(4, "--ulysses-degree")].status == OK
    assert found[(4, "--transformer-path")].status == OK  # `--<component>-path`, read from the leftovers
    assert found[(4, "--bogus-flag")].status == BROKEN
    # generate's own options are not serve's
    assert _check("# S\n\n```bash\nsglang serve --model-path m --num-frames 8\n```\n", view)[(4, "--num-frames")].status == BROKEN


def test_a_flag_written_alone_may_be_any_commands(view: PinView) -> None:
    doc = (
        "# Tuning\n\nPin `--num-gpus` and `--ulysses-degree`; use `--perf-dump-path` to save metrics,\n"
        "`--component-paths.transformer_2` for a second backbone, and never `--no-such-option` or `--path`.\n"
    )
    found = {text: f for (_, text), f in _check(doc, view).items()}
    for ok in ("--num-gpus", "--ulysses-degree", "--perf-dump-path", "--component-paths.transformer_2"):
        assert found[ok].status == OK, ok
    assert found["--no-such-option"].status == BROKEN
    assert found["--path"].status == BROKEN  # a suffix family needs a component name before it


def test_a_flag_written_alone_may_be_a_project_scripts(view: PinView) -> None:
    doc = "# Quantize\n\nWrite to `--output-dir out`.\n\n```bash\nsglang serve --model-path m --model-type flux1\n```\n"
    found = _check(doc, view)
    alone = found[(3, "--output-dir")]
    assert alone.status == OK and alone.resolved_at == "sglang/tools/convert.py"  # registered by the tool
    # given to `sglang serve`, it is the option serve reads from argv itself to pick a backend
    assert found[(6, "--model-type")].status == OK and "sglang serve" in found[(6, "--model-type")].note
    # given to a command whose parser is known, it is that parser's or nothing
    generate = _check("# G\n\n```bash\nsglang generate --model-path m --model-type flux1\n```\n", view)
    assert generate[(4, "--model-type")].status == BROKEN


def test_a_script_run_by_its_repository_path_is_judged_by_its_own_parser(view: PinView) -> None:
    doc = "# Convert\n\n```bash\npython python/sglang/tools/convert.py --model-type auto --output-dirr out\n```\n"
    found = _check(doc, view)
    assert found[(4, "--model-type")].status == OK and "convert.py" in found[(4, "--model-type")].note
    assert found[(4, "--output-dirr")].status == BROKEN  # the script's parser is read whole: a typo is broken


def test_the_command_index_is_read_once_and_kept_beside_the_words(view: PinView, tmp_path: Path) -> None:
    import shutil

    view.words_path = str(tmp_path / "cache" / "refs" / "words" / "sglang@9.9.dddddddddddd.w5.json")
    assert "--num-frames" in command_flags(view, "sglang generate").flags  # type: ignore[union-attr]
    saved = tmp_path / "cache" / "refs" / "commands" / f"sglang@9.9.dddddddddddd.c{FORMAT}.json"
    assert saved.is_file()
    # A fresh view of the same pin answers from the file, without the sources.
    shutil.rmtree(tmp_path / "sglang")
    fresh = PinView(
        pin=view.pin, project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=view.files, symbols=[], flags=view.flags, envs=[], tree=view.tree, words_path=view.words_path,
    )
    generate = command_flags(fresh, "sglang generate")
    assert generate is not None and "--flux-alpha" in generate.flags and generate.suffixes == ("-path",)
    assert subcommands(fresh)["sglang serve"] == "sglang.cli.serve"
    assert registered_options(fresh)["--output-dir"] == "sglang/tools/convert.py"


def test_serve_of_a_diffusion_model_takes_prefixes_and_suggests_from_both_parsers(view: PinView) -> None:
    from analyzer.refs.suggest import suggest

    doc = "# S\n\n```bash\nsglang serve --model-path m --ulysses-deg 2 --ulyses-degree 2\n```\n"
    found = _check(doc, view)
    assert found[(4, "--ulysses-deg")].status == OK  # argparse's unique prefix, in the diffusion parser
    typo = found[(4, "--ulyses-degree")]
    assert typo.status == BROKEN
    assert suggest(typo.ref, view)[0].replacement == "--ulysses-degree"


def test_a_command_with_its_own_parser_never_borrows_the_servers_flag(view: PinView) -> None:
    # `sglang generate` builds its own parser (the diffusion CLI's, no server flags in it): the LLM
    # server's `--tp-size`, and the server's choices for a flag of the same name, are not its.
    doc = "# Diffusion\n\n```bash\nsglang generate --num-frames 8 --tp-size 2 -h\n```\n"
    found = _check(doc, view)
    assert found[(4, "--num-frames")].status == OK and found[(4, "-h")].status == OK  # argparse's own
    assert found[(4, "--tp-size")].status == BROKEN and "sglang generate" in found[(4, "--tp-size")].note


def test_a_subcommand_the_cli_lacks_is_broken(view: PinView) -> None:
    """`sglang generat` run in a shell block: no such subcommand (the closest one is suggested);
    `sglang serve` and `sglang generate` are the CLI's."""
    doc = "# Diffusion\n\n```bash\nsglang serve --model-path m\nsglang generate --model-path m\nsglang generat --model-path m\n```\n"
    findings = check_references(extract_all([("docs/diffusion.md", doc)]), [view])
    found = {f.ref.text: f for f in findings if f.ref.kind == "symbol" and f.ref.text.startswith("sglang ")}
    assert found["sglang serve"].status == OK and found["sglang generate"].status == OK
    assert found["sglang generat"].status == BROKEN
    assert [s.replacement for s in found["sglang generat"].suggestions] == ["sglang generate"]
