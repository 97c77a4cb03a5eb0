"""Which bindings keep a moved name importable from its old module, and which do not."""

from __future__ import annotations

import textwrap

from analyzer.diff.symbols import compare_symbols
from analyzer.index import SnapshotIndex
from analyzer.index.extract import extract_text


def _index(files: dict[str, str]) -> SnapshotIndex:
    modules = {path: extract_text(textwrap.dedent(text), path, "0" * 64) for path, text in files.items()}
    return SnapshotIndex("t", modules)


OLD = {
    "p/__init__.py": "",
    "p/old.py": """
        def star_fn(x):
            return x

        def _private_fn(x):
            return x

        class Renamed:
            def run(self):
                return 1

        def typing_only(x):
            return x

        def outside(x):
            return x
        """,
}
NEW = {
    "p/__init__.py": "",
    "p/old.py": """
        from typing import TYPE_CHECKING

        from p.stars import *
        from p.shapes import Shape
        from numpy import outside

        if TYPE_CHECKING:
            from p.hints import typing_only

        Renamed = Shape
        """,
    "p/stars.py": """
        def star_fn(x):
            return x

        def _private_fn(x):
            return x
        """,
    "p/shapes.py": """
        class Shape:
            def run(self):
                return 1
        """,
    "p/hints.py": """
        def typing_only(x):
            return x
        """,
}


def test_star_imports_aliases_and_outside_packages() -> None:
    changes = compare_symbols(_index(OLD), _index(NEW))
    moves = {m.old: (m.new, m.kind) for m in changes.moved}
    # `from p.stars import *` brings public names (no __all__): a re-export.
    assert moves["p.old.star_fn"] == ("p.stars.star_fn", "re-exported")
    # `Renamed = Shape` keeps the old name bound to the class it became.
    assert moves["p.old.Renamed"] == ("p.shapes.Shape", "re-exported")
    # Imported from outside the tree: still importable, nothing to point at in it.
    assert moves["p.old.outside"] == ("numpy.outside", "re-exported")
    evidence = next(m.evidence for m in changes.moved if m.old == "p.old.outside")
    assert "numpy.outside is not defined in this release's tree (an outside package?)" in evidence
    # A star import skips underscored names, and TYPE_CHECKING imports bind nothing at run
    # time: those two moved (same name, one new home) but are not importable from p.old.
    assert moves["p.old._private_fn"] == ("p.stars._private_fn", "moved")
    assert moves["p.old.typing_only"] == ("p.hints.typing_only", "moved")
    assert changes.removed == []
