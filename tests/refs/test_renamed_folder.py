"""A file whose folder was renamed (issue 12 §3, the same name in the nearest surviving package):
`srt/openai_api/protocol.py` gone, `srt/` still there; of the `protocol.py` files under `srt/`,
the one in a folder named with the gone folder's words (`entrypoints/openai/`), the nearest of
them, is where it went, not the closest spelling (`weight_cache/protocol.py`)."""

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
