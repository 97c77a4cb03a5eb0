"""Members of classes a call builds at import time: found through the index, not reported broken."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from analyzer.index.extract import extract_text
from analyzer.refs.build import view_from_facts
from analyzer.refs.models import Reference
from analyzer.refs.pinview import PinView
from analyzer.refs.resolve import resolve, resolve_member

TREE = {
    "pkg/__init__.py": "",
    "pkg/fields/__init__.py": "from pkg.fields.schedule import Schedule\n",
    "pkg/fields/schedule.py": """
        import msgspec

        class Schedule(msgspec.Struct):
            _NS_PATH = "schedule"
            schedule_policy: str = "fcfs"
            max_running_requests: int = 0
        """,
    "pkg/fields/model.py": """
        import msgspec

        class Model(msgspec.Struct):
            model_path: str = ""
        """,
    "pkg/server_args.py": """
        import msgspec
        from pkg.fields import Schedule
        from pkg.fields.model import Model
        from pkg.spec import load_spec

        def collect(sources): ...

        class ServerArgs:
            port: int = 30000
            def check_server_args(self): ...

        _NS = [Model, Schedule]
        _annotations, _defaults = collect(_NS)
        ServerArgs.__annotations__ = {**_annotations, **ServerArgs.__annotations__}
        ServerArgs = msgspec.defstruct(
            "ServerArgs",
            [(n, a) for n, a in ServerArgs.__annotations__.items()],
            namespace={k: v for k, v in vars(ServerArgs).items()},
        )
        TensorMetadata = namedtuple("TensorMetadata", ["device", "dtype", "size"])
        Loaded = msgspec.defstruct("Loaded", load_spec())
        """,
}


def view(tmp_path: Path) -> PinView:
    modules = [extract_text(dedent(src), path, "0" * 64) for path, src in TREE.items()]
    return view_from_facts(
        pin="pkg@1.0", project="pkg", kind="release", layout_prefix="", packages=("pkg",),
        files=frozenset(TREE), modules=modules, tree=tmp_path,
    )


def ref(text: str, **extra: object) -> Reference:
    return Reference(file="ch.md", line=1, col=0, text=text, kind="symbol", target=text, framework="pkg", framework_reason="test", origin="inline", **extra)  # type: ignore[arg-type]


def test_fields_of_collected_namespace_classes_are_members(tmp_path: Path) -> None:
    pin = view(tmp_path)
    found = resolve(ref("ServerArgs.schedule_policy"), pin)
    assert (found.status, found.resolved_at) == ("ok", "pkg/fields/schedule.py:6")  # where the field is declared
    assert resolve(ref("ServerArgs.model_path"), pin).status == "ok"
    assert resolve(ref("ServerArgs.port"), pin).status == "ok"  # the class statement's own field
    assert resolve(ref("ServerArgs.check_server_args"), pin).status == "ok"  # its methods, kept by `namespace=`
    assert resolve(ref("pkg.server_args.ServerArgs.max_running_requests"), pin).status == "ok"
    # a name no collected class declares is still broken: the field list was followed in full
    assert resolve(ref("ServerArgs.schedule_polcy"), pin).status == "broken"
    assert resolve(ref("ServerArgs._NS_PATH"), pin).status == "broken"  # a class attribute, not a field
    member = resolve_member(ref("schedule_policy", owner="ServerArgs"), pin)
    assert member.status == "ok"


def test_literal_fields_make_a_class(tmp_path: Path) -> None:
    pin = view(tmp_path)
    assert [e.kind for e in pin.find_symbol("pkg.server_args.TensorMetadata")] == ["class"]
    assert resolve(ref("TensorMetadata.dtype"), pin).status == "ok"
    assert resolve(ref("TensorMetadata.stride"), pin).status == "broken"


def test_members_of_a_class_built_from_what_cannot_be_followed_are_not_checkable(tmp_path: Path) -> None:
    pin = view(tmp_path)
    finding = resolve(ref("Loaded.anything"), pin)
    assert finding.status == "not-checkable"
    assert "load_spec(...)" in finding.note and "pkg/server_args.py" in finding.note
    assert resolve_member(ref("anything", owner="Loaded"), pin).status == "not-checkable"
    # saved and loaded with the view
    path = tmp_path / "view.sqlite"
    pin.save(path)
    assert resolve(ref("Loaded.anything"), PinView.load(path)).status == "not-checkable"
    assert resolve(ref("ServerArgs.schedule_policy"), PinView.load(path)).status == "ok"


def test_a_file_name_is_not_read_as_a_member_of_an_object_the_document_made() -> None:
    from analyzer.refs.check import extract_all

    doc = dedent(
        """\
        ```python
        server_args = ServerArgs(model_path="m")
        ```

        Set it on `server_args.port` (see `server_args.py`).
        """
    )
    found = {(r.text, r.kind, r.target) for r in extract_all([("ch.md", doc)]) if r.line == 5}
    assert ("server_args.port", "symbol", "ServerArgs.port") in found  # the object's member, through its class
    assert ("server_args.py", "path", "server_args.py") in found  # a file, not `ServerArgs.py`
