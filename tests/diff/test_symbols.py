"""Move / rename detection on in-memory indexes: claims need evidence, look-alikes claim nothing."""

from __future__ import annotations

import textwrap

from analyzer.diff.symbols import compare_symbols, name_similarity
from analyzer.index import SnapshotIndex
from analyzer.index.extract import extract_text


def _index(files: dict[str, str]) -> SnapshotIndex:
    modules = {path: extract_text(textwrap.dedent(text), path, "0" * 64) for path, text in files.items()}
    return SnapshotIndex("t", modules)


OLD = {
    "pkg/__init__.py": "",
    "pkg/a.py": """
        class Runner:
            def forward(self, x):
                return x + 1

            def _prepare(self, batch, size):
                return batch[:size]

            def __iter__(self):
                return iter(())
        """,
}
NEW = {
    "pkg/__init__.py": "",
    "pkg/common/__init__.py": "",
    "pkg/a.py": """
        class Runner:
            def _compute_dtype(self, x):
                return x + 1

            def _prepare_inputs(self, batch, size):
                return batch[:size]

            def iter_all(self):
                return iter(())
        """,
}


def test_rename_needs_similar_names_and_same_parameters() -> None:
    changes = compare_symbols(_index(OLD), _index(NEW), [("pkg/__init__.py", "pkg/common/__init__.py", 100)])
    assert [(m.old, m.new) for m in changes.moved] == [("pkg.a.Runner._prepare", "pkg.a.Runner._prepare_inputs")]
    assert "same parameters (self, batch, size)" in changes.moved[0].evidence
    # Same shape but unrelated names, and protocol methods: reported as removed + added.
    assert "pkg.a.Runner.forward" in changes.removed and "pkg.a.Runner._compute_dtype" in changes.added
    assert "pkg.a.Runner.__iter__" in changes.removed and "pkg.a.Runner.iter_all" in changes.added
    # Git pairing two empty __init__ files is no evidence of a package move.
    assert "pkg.common" in changes.added


def test_two_look_alike_candidates_claim_nothing() -> None:
    old = {"m.py": "def load_a(path):\n    return path\n"}
    new = {"m.py": "def load_a_fast(path):\n    return path\n\ndef load_a_slow(path):\n    return path\n"}
    changes = compare_symbols(_index(old), _index(new))
    assert changes.moved == []
    assert changes.removed == ["m.load_a"] and changes.added == ["m.load_a_fast", "m.load_a_slow"]


def test_cross_module_move_keeps_qualified_name() -> None:
    old = {"p/x.py": "class Pool:\n    def get(self):\n        pass\n    def put(self, b):\n        pass\n", "p/y.py": ""}
    new = {"p/x.py": "", "p/y.py": "class Pool:\n    def get(self):\n        pass\n    def put(self, b):\n        pass\n"}
    [move] = compare_symbols(_index(old), _index(new)).moved
    assert (move.old, move.new, move.kind) == ("p.x.Pool", "p.y.Pool", "moved")
    assert "2 of 2 methods kept" in move.evidence


def test_name_similarity_splits_snake_and_camel_case() -> None:
    assert name_similarity("_preempt", "_preempt_request") == 100
    assert name_similarity("HiRadixCache", "RadixCache") == 100
    assert name_similarity("forward", "_compute_dtype") < 60
