"""A file whose folder was renamed, or that became a package elsewhere (issue 12 §3, the same name in
the nearest surviving package):
`srt/openai_api/protocol.py` gone, `srt/` still there; of the `protocol.py` files under `srt/`,
the one in a folder named with the gone folder's words (`entrypoints/openai/`), the nearest of
them, is where it went, not the closest spelling (`weight_cache/protocol.py`). A module of two
words or more gone from a folder that is still there, with one package of its name elsewhere,
became that package."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import Reference
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.suggest import suggest

_FILES = (
    "sglang/srt/entrypoints/openai/protocol.py",
    "sglang/srt/entrypoints/openai/realtime/protocol.py",
    "sglang/srt/weight_cache/protocol.py",
    "sglang/srt/managers/io_struct.py",
)


def _view(tmp_path: Path, files: tuple[str, ...] = _FILES) -> PinView:
    return PinView(
        pin="sglang@0.5.23", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset(files), flags=[], envs=[], tree=str(tmp_path),
        symbols=[SymbolEntry("sglang", "sglang/__init__.py", 1, 1, "module")],
    )


def _path(text: str) -> Reference:
    return Reference("ch.md", 1, 0, text, "path", text, "sglang", "test", "inline")


def test_the_file_under_a_folder_named_with_the_gone_folders_words(tmp_path: Path) -> None:
    best = suggest(_path("python/sglang/srt/openai_api/protocol.py"), _view(tmp_path))[0]
    assert best.replacement == "python/sglang/srt/entrypoints/openai/protocol.py" and best.confidence == 0.7


def test_no_folder_named_so_or_two_as_near_is_no_home(tmp_path: Path) -> None:
    # No surviving file's folders share a word with `legacy_api`: only spelling guesses.
    assert all(s.confidence < 0.5 for s in suggest(_path("python/sglang/srt/legacy_api/protocol.py"), _view(tmp_path)))
    # Two as near (`openai/` and `openai_v2/`): the text does not say which.
    twins = (*_FILES, "sglang/srt/entrypoints/openai_v2/protocol.py")
    assert all(s.confidence < 0.5 for s in suggest(_path("python/sglang/srt/openai_api/protocol.py"), _view(tmp_path, twins)))


def test_a_module_that_became_a_package_elsewhere(tmp_path: Path) -> None:
    # `managers/` is still there; the module is now the package `parsers/chat_template/`.
    files = (*_FILES, "sglang/srt/parsers/chat_template/__init__.py", "sglang/srt/parsers/chat_template/jinja.py", "sglang/srt/utils/__init__.py")
    best = suggest(_path("python/sglang/srt/managers/chat_template.py"), _view(tmp_path, files))[0]
    assert (best.replacement, best.confidence) == ("python/sglang/srt/parsers/chat_template/", 0.6)
    # A one-word module (`utils.py`) names no package in particular.
    assert all(s.confidence < 0.5 for s in suggest(_path("python/sglang/srt/managers/utils.py"), _view(tmp_path, files)))
