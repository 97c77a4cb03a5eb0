"""A synthetic pair of releases with every kind of move the version diff must see.

1.0 -> 2.0 of a small package `app`:
- `app.utils` keeps `keep` but its planning functions move to a new `app.planning`
  (moves out of a module that still exists: a split of `app.utils`);
- `app.legacy.helper` now lives in `app.core.impl` and `app.legacy` re-exports it
  through `app.core` (a re-export: not removed at all);
- `app/cache.py` becomes the package `app/cache/` with `base` and `lru` submodules
  (a package fold; `BaseCache` is re-exported from `app.cache`);
- `app.big` is gone, its definitions spread over `app.io.read` / `app.io.write` (a split);
- `app.old_name` is gone and `app.new_name` holds all of it (a module move git did not see);
- `app.copy.clamp` is dropped for the `app.mathx.clamp` that already existed (merged);
- `app.config.load_config` is renamed in place to `load_config_file`;
and what must NOT be claimed: a namesake `main` with other parameters and length,
and a `setup` that appears in two new modules of the same shape.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from mappings.conftest import write_mapping

from analyzer.diff import version_diff
from analyzer.diff.symbols import compare_symbols
from analyzer.index import SnapshotIndex
from analyzer.index.extract import extract_text
from analyzer.mappings import load_mappings
from analyzer.pinned import tree_from_index


def _index(files: dict[str, str]) -> SnapshotIndex:
    modules = {path: extract_text(textwrap.dedent(text), path, "0" * 64) for path, text in files.items()}
    return SnapshotIndex("t", modules)


BODY = "    total = 0\n    for i in range(3):\n        total += i\n    return total\n"

OLD = {
    "app/__init__.py": "",
    "app/utils.py": f"def keep():\n{BODY}\ndef plan_a(x, y):\n{BODY}\ndef plan_b(z):\n{BODY}",
    "app/legacy.py": f"def helper(a):\n{BODY}\ndef other():\n{BODY}",
    "app/cache.py": (
        "class BaseCache:\n    def get(self, k):\n        return k\n    def put(self, k, v):\n        return v\n\n"
        "class LruCache(BaseCache):\n    def evict(self):\n        return None\n    def touch(self, k):\n        return k\n\n"
        f"def make_cache(kind):\n{BODY}"
    ),
    "app/big.py": (
        "class Reader:\n    def read(self):\n        return 1\n    def close(self):\n        return 2\n\n"
        "class Writer:\n    def write(self, b):\n        return b\n    def flush(self):\n        return 0\n\n"
        f"def parse(text):\n{BODY}"
    ),
    "app/old_name.py": f"def alpha(p):\n{BODY}\ndef beta(q):\n{BODY}",
    "app/copy.py": f"def clamp(x, lo, hi):\n{BODY}\ndef unrelated():\n{BODY}",
    "app/mathx.py": f"def clamp(x, lo, hi):\n{BODY}",
    "app/config.py": f"def load_config(path, strict):\n{BODY}",
    "app/tool_a.py": "def main(argv):\n    return argv\n",
    "app/s1.py": f"def setup(x):\n{BODY}\ndef stay():\n{BODY}",
}

NEW = {
    "app/__init__.py": "",
    "app/utils.py": f"def keep():\n{BODY}",
    "app/planning.py": f"def plan_a(x, y):\n{BODY}\ndef plan_b(z):\n{BODY}",
    "app/legacy.py": f"from app.core import helper\n\ndef other():\n{BODY}",
    "app/core/__init__.py": "from .impl import helper\n",
    "app/core/impl.py": f"def helper(a):\n{BODY}",
    "app/cache/__init__.py": f"from .base import BaseCache\n\ndef make_cache(kind):\n{BODY}",
    "app/cache/base.py": "class BaseCache:\n    def get(self, k):\n        return k\n    def put(self, k, v):\n        return v\n",
    "app/cache/lru.py": (
        "from .base import BaseCache\n\n"
        "class LruCache(BaseCache):\n    def evict(self):\n        return None\n    def touch(self, k):\n        return k\n"
    ),
    "app/io/__init__.py": "",
    "app/io/read.py": (
        "class Reader:\n    def read(self):\n        return 1\n    def close(self):\n        return 2\n\n"
        f"def parse(text):\n{BODY}"
    ),
    "app/io/write.py": "class Writer:\n    def write(self, b):\n        return b\n    def flush(self):\n        return 0\n",
    "app/new_name.py": f"def alpha(p):\n{BODY}\ndef beta(q):\n{BODY}",
    "app/copy.py": f"def unrelated():\n{BODY}",
    "app/mathx.py": f"def clamp(x, lo, hi):\n{BODY}",
    "app/config.py": f"def load_config_file(path, strict):\n{BODY}",
    "app/server.py": "def main(config, port, host):\n" + "    x = 1\n" * 12 + "    return x\n",
    "app/s1.py": f"def stay():\n{BODY}",
    "app/s2.py": f"def setup(x):\n{BODY}",
    "app/s3.py": f"def setup(x):\n{BODY}",
}


def _changes():  # type: ignore[no-untyped-def]
    return compare_symbols(_index(OLD), _index(NEW))


def test_every_kind_of_move_is_seen() -> None:
    changes = _changes()
    moves = {m.old: m for m in changes.moved}
    kinds = {old: (m.new, m.kind) for old, m in moves.items()}
    assert kinds == {
        "app.utils.plan_a": ("app.planning.plan_a", "moved"),
        "app.utils.plan_b": ("app.planning.plan_b", "moved"),
        "app.legacy.helper": ("app.core.impl.helper", "re-exported"),
        "app.cache.BaseCache": ("app.cache.base.BaseCache", "re-exported"),
        "app.cache.LruCache": ("app.cache.lru.LruCache", "moved"),
        "app.big.Reader": ("app.io.read.Reader", "moved"),
        "app.big.parse": ("app.io.read.parse", "moved"),
        "app.big.Writer": ("app.io.write.Writer", "moved"),
        "app.old_name": ("app.new_name", "module"),
        "app.old_name.alpha": ("app.new_name.alpha", "moved"),
        "app.old_name.beta": ("app.new_name.beta", "moved"),
        "app.copy.clamp": ("app.mathx.clamp", "merged"),
        "app.config.load_config": ("app.config.load_config_file", "renamed"),
    }
    # Evidence a reader can check, for each kind.
    assert moves["app.legacy.helper"].evidence[:3] == (
        "still importable from app.legacy",
        "`from app.core import helper` at app/legacy.py:1",
        "`from .impl import helper` at app/core/__init__.py:1",
    )
    assert "same parameters (x, y)" in moves["app.utils.plan_a"].evidence
    assert "app.utils still exists" in moves["app.utils.plan_a"].evidence
    assert "2 of 2 methods kept" in moves["app.big.Reader"].evidence
    assert "app.mathx.clamp already existed" in moves["app.copy.clamp"].evidence
    assert moves["app.old_name"].evidence[0].startswith("2 of its 2 top-level definitions moved")


def test_modules_split_and_folded_into_a_package() -> None:
    changes = _changes()
    by_old = {m.old: m for m in changes.modules}
    # One definition leaving a module (app.legacy, app.copy) does not split it.
    assert set(by_old) == {"app.utils", "app.cache", "app.big"}
    assert (by_old["app.big"].kind, by_old["app.big"].new) == ("split", ("app.io.read", "app.io.write"))
    assert "app.big is gone" in by_old["app.big"].evidence
    assert (by_old["app.utils"].kind, by_old["app.utils"].new) == ("split", ("app.planning",))
    assert "1 stayed in app.utils" in by_old["app.utils"].evidence
    fold = by_old["app.cache"]
    assert (fold.kind, fold.new) == ("package", ("app.cache.base", "app.cache.lru"))
    assert fold.evidence[0] == "app/cache.py -> app/cache/__init__.py"
    assert "1 still importable from app.cache" in fold.evidence


def test_nothing_that_moved_is_removed_and_look_alikes_are_not_claimed() -> None:
    changes = _changes()
    # The namesake `main` (other parameters, other length) and the `setup` with two
    # same-shaped new homes stay removed + added: no evidence singles out a destination.
    assert changes.removed == ["app.s1.setup", "app.tool_a"]
    # New modules are new (their definitions came from elsewhere and are listed as moves).
    assert changes.added == ["app.cache.base", "app.cache.lru", "app.core", "app.io", "app.planning",
                             "app.s2", "app.s3", "app.server"]


def test_concept_scoped_diff_finds_destinations_outside_the_concept(tmp_path: Path) -> None:
    write_mapping(tmp_path, "planning", """
        title = "Planning"
        summary = "Plans."

        [reference]
        status = "not-implemented"
        note = "fake"

        [vllm]
        status = "implemented"
        symbols = [{ name = "app.utils.plan_a", releases = ["1.0"] }, "app.utils.keep"]

        [sglang]
        status = "not-implemented"
        note = "fake"
    """)
    old = tree_from_index("vllm@1.0", "vllm", "1.0", _index(OLD))
    new = tree_from_index("vllm@2.0", "vllm", "2.0", _index(NEW))
    diff = version_diff(old, new, load_mappings(tmp_path), concept="planning")
    # app.planning is no module of the concept, yet the move into it is found and kept.
    assert {(m.old, m.new) for m in diff.moved} == {
        ("app.utils.plan_a", "app.planning.plan_a"), ("app.utils.plan_b", "app.planning.plan_b")}
    assert diff.removed == [] and [m.old for m in diff.modules] == ["app.utils"]
