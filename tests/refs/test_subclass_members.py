"""A document's copy of a project dataclass that flattens the class and its subclasses into one
(`subclass_members.py`): the members the pin keeps on a subclass vote for the copy being the
project's class, so a member no class of the family has is broken; a copy whose names the
project's family does not hold stays the author's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView
from analyzer.refs.subclass_members import on_a_subclass
from tests.refs.fakes import source_view

_SPECS = '''
from dataclasses import dataclass


@dataclass
class PoolSpec:
    page_size: int

    def page_bytes(self) -> int:
        return self.page_size


@dataclass
class TokenPoolSpec(PoolSpec):
    heads: int
    width: int


@dataclass
class SlidingTokenPoolSpec(TokenPoolSpec):
    window: int


@dataclass
class UnrelatedSpec:
    lanes: int
'''

_DOC = """# vLLM memory pools

### PoolSpec

```python
@dataclass
class PoolSpec:
    heads: int
    head_width: int
    page_size: int
    window: int
    layer_count: int
```
"""


@pytest.fixture
def pin(tmp_path: Path) -> PinView:
    return source_view(tmp_path, {"vllm/v1/pool_spec.py": _SPECS})


def _statuses(doc: str, pin: PinView) -> dict[tuple[int, str], str]:
    return {(f.ref.line, f.ref.text): f.status for f in check_references(extract_all([("doc.md", doc)]), [pin])}


def test_a_member_of_a_subclass_is_found_up_to_the_class(pin: PinView) -> None:
    assert on_a_subclass("PoolSpec.heads", pin)  # TokenPoolSpec(PoolSpec)
    assert on_a_subclass("PoolSpec.window", pin)  # two generations down
    assert not on_a_subclass("PoolSpec.lanes", pin)  # another class's field
    assert not on_a_subclass("PoolSpec.layer_count", pin)  # nobody's
    assert not on_a_subclass("NoSuchSpec.heads", pin)


def test_a_flattened_copy_of_a_class_family_is_the_project_s_class(pin: PinView) -> None:
    got = _statuses(_DOC, pin)
    assert got[(10, "page_size")] == "ok"
    # `heads`, `window` (the subclasses') and `page_size` carry the vote: the names no class of
    # the family has are stale.
    assert got[(9, "head_width")] == "broken" and got[(12, "layer_count")] == "broken"


def test_a_copy_the_family_does_not_hold_stays_the_author_s(pin: PinView) -> None:
    doc = _DOC.replace("    heads: int\n", "    lanes: int\n").replace("    window: int\n", "    stride: int\n")
    got = _statuses(doc, pin)
    assert not any(status == "broken" for status in got.values())
