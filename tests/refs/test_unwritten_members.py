"""Members nobody writes (analyzer/refs/generated.py): a class's constructor whatever its base,
what a record base or a dataclass decorator generates, and the builtin type's methods on a field
declared or made as a list, a dict, an `array`; another library's type makes a field's member
not checkable, a project class's makes it that class's."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from analyzer.index.extract import extract_text
from analyzer.refs.build import view_from_facts
from analyzer.refs.models import Reference
from analyzer.refs.pinview import PinView
from analyzer.refs.resolve import resolve

TREE = {
    "pkg/__init__.py": "",
    "pkg/request.py": """
        import msgspec
        from dataclasses import dataclass
        from typing import NamedTuple

        class LoraRequest(msgspec.Struct, omit_defaults=True):
            lora_name: str
            lora_int_id: int

        class TaggedRequest(LoraRequest):
            tag: str = ""

        @dataclass(frozen=True)
        class Params:
            top_k: int = 1

        class Plain:
            def __init__(self) -> None:
                self.x = 1

        class Pair(NamedTuple):
            left: int
            right: int
        """,
    "pkg/batch.py": """
        from array import array
        from collections import deque
        from typing import Optional
        import torch
        from pkg.policy import Policy

        class Req:
            def __init__(self, rid: str) -> None:
                self.output_ids = array("q")
                self.origin_input_ids: list[int] = []
                self.extra: Optional[dict[str, int]] = None
                self.queue = deque()
                self.logits: torch.Tensor = torch.empty(0)
                self.policy = Policy(rid)
                self.helper = make_helper(rid)
        """,
    "pkg/policy.py": """
        class Policy:
            def __init__(self, rid: str) -> None:
                self.rid = rid

            def calc_priority(self) -> int:
                return 0
        """,
}


def view(tmp_path: Path) -> PinView:
    for path, src in TREE.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(dedent(src), encoding="utf-8")
    modules = [extract_text(dedent(src), path, "0" * 64) for path, src in TREE.items()]
    return view_from_facts(
        pin="pkg@1.0", project="pkg", kind="release", layout_prefix="", packages=("pkg",),
        files=frozenset(TREE), modules=modules, tree=tmp_path,
    )


def ref(text: str) -> Reference:
    return Reference(file="ch.md", line=1, col=0, text=text, kind="symbol", target=text, framework="pkg", framework_reason="test", origin="inline")


def status(text: str, pin: PinView) -> str:
    return resolve(ref(text), pin).status


def test_a_constructor_nobody_writes_is_the_classs(tmp_path: Path) -> None:
    pin = view(tmp_path)
    assert status("LoraRequest.__init__", pin) == "ok"  # msgspec.Struct generates it
    assert status("TaggedRequest.__init__", pin) == "ok"  # through a base of the project's
    assert status("Params.__init__", pin) == "ok"  # a dataclass
    assert status("Plain.__init__", pin) == "ok"  # written
    assert status("Params.__repr__", pin) == "ok"
    # a class that is gone has no constructor; `__post_init__` runs only when written
    assert status("GoneRequest.__init__", pin) == "broken"
    assert status("Params.__post_init__", pin) == "broken"


def test_what_a_record_base_or_a_decorator_generates(tmp_path: Path) -> None:
    pin = view(tmp_path)
    assert status("Pair._replace", pin) == "ok"  # NamedTuple
    assert status("Pair.count", pin) == "ok"  # a tuple's
    assert status("Params.__dataclass_fields__", pin) == "ok"  # @dataclass(frozen=True)
    assert status("TaggedRequest.__struct_fields__", pin) == "ok"  # msgspec, two bases up
    # not generated there: a dataclass's fields on a class that is none, a NamedTuple's on a Struct
    assert status("Plain.__dataclass_fields__", pin) == "broken"
    assert status("LoraRequest._replace", pin) == "broken"
    assert status("Pair.lora_name", pin) == "broken"


def test_a_fields_builtin_type_owns_its_methods(tmp_path: Path) -> None:
    pin = view(tmp_path)
    for text in ("Req.output_ids.append", "Req.origin_input_ids.extend", "Req.extra.get", "Req.queue.popleft"):
        assert status(text, pin) == "ok", text
    found = resolve(ref("Req.output_ids.append"), pin)
    assert "`array`" in found.note
    # a method the builtin type does not have is still broken
    assert status("Req.origin_input_ids.push", pin) == "broken"
    assert status("Req.queue.get_nowait", pin) == "broken"


def test_a_field_of_a_project_class_or_of_another_librarys_type(tmp_path: Path) -> None:
    pin = view(tmp_path)
    assert status("Req.policy.calc_priority", pin) == "ok"  # `Policy(rid)`: Policy's method
    assert status("Req.policy.calc_prio", pin) == "broken"
    tensor = resolve(ref("Req.logits.softmax"), pin)
    assert tensor.status == "not-checkable" and "torch.Tensor" in tensor.note
    # made by a call nothing says more of: judged as before
    assert status("Req.helper.run", pin) == "broken"
