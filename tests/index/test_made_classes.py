"""Classes built by a call at import time: their field lists followed statically."""

from __future__ import annotations

from textwrap import dedent

from analyzer.index.extract import extract_text
from analyzer.index.made_classes import MadeClass, member_fields, read_made_classes
from analyzer.index.models import ModuleFacts


def facts(path: str, source: str) -> ModuleFacts:
    return extract_text(dedent(source), path, "0" * 64)


def made(path: str, source: str) -> dict[str, MadeClass]:
    return {m.name: m for m in read_made_classes(facts(path, source))}


def test_literal_field_lists_of_each_factory() -> None:
    got = made(
        "pkg/records.py",
        """
        import collections
        from collections import namedtuple
        from dataclasses import make_dataclass
        from enum import Enum
        from typing import NamedTuple
        import msgspec

        Point = namedtuple("Point", ["x", "y"])
        Pair = collections.namedtuple("Pair", "left, right")
        Spaced = namedtuple("Spaced", "a b  c")
        Typed = NamedTuple("Typed", [("name", str), ("size", int)])
        Config = make_dataclass("Config", [("path", str), ("jobs", int, 4), "verbose"], bases=(Base,))
        Record = msgspec.defstruct("Record", [("id", int)], bases=(msgspec.Struct,))
        Color = Enum("Color", "RED GREEN")
        Dyn = type("Dyn", (Base,), {"alpha": 1, "beta": 2})
        kind = type(Point)
        """,
    )
    assert set(got) == {"Point", "Pair", "Spaced", "Typed", "Config", "Record", "Color", "Dyn"}  # `type(x)` builds nothing
    assert got["Point"].fields == ("x", "y")
    assert got["Pair"].fields == ("left", "right")
    assert got["Spaced"].fields == ("a", "b", "c")
    assert got["Typed"].fields == ("name", "size")
    assert got["Config"].fields == ("path", "jobs", "verbose") and got["Config"].bases == ("Base",)
    assert got["Record"].bases == ("msgspec.Struct",) and got["Record"].factory == "msgspec.defstruct"
    assert got["Color"].fields == ("RED", "GREEN")
    assert got["Dyn"].fields == ("alpha", "beta") and got["Dyn"].bases == ("Base",)
    assert all(m.unknown is None for m in got.values())


def test_fields_collected_from_the_annotations_of_named_classes() -> None:
    # The shape of SGLang's ServerArgs (0.5.20): a class statement, its annotations extended
    # by a helper handed a list of namespace classes, then rebuilt by defstruct over them.
    got = made(
        "pkg/args.py",
        """
        import msgspec
        from pkg.fields.schedule import Schedule
        from .fields import model as m
        from .fields import collect

        class Args:
            port: int = 0
            def check(self): ...

        _NAMESPACES = [m.Model, Schedule]
        _annotations, _defaults = collect(_NAMESPACES)
        Args.__annotations__ = {**_annotations, **Args.__annotations__}
        Args = msgspec.defstruct(
            "Args",
            [(n, a, _defaults[n]) if n in _defaults else (n, a) for n, a in Args.__annotations__.items()],
            namespace={k: v for k, v in vars(Args).items() if k != "__dict__"},
        )
        """,
    )["Args"]
    assert got.unknown is None
    assert got.fields == ()
    # the namespace classes through the module's imports, and the class statement's own fields
    assert got.field_classes == ("pkg.fields.model.Model", "pkg.fields.schedule.Schedule", "pkg.args.Args")
    assert got.bases == ()  # `vars(Args)` copies the class it replaces: nothing new to inherit


def test_what_cannot_be_followed_is_kept_as_the_reason() -> None:
    got = made(
        "pkg/dyn.py",
        """
        import msgspec
        from pkg.spec import load_spec

        Loaded = msgspec.defstruct("Loaded", load_spec())
        Partly = namedtuple("Partly", ["a", *EXTRA])
        Filtered = namedtuple("Filtered", [n for n in ("a", "b") if n != "b"])
        Known = namedtuple("Known", ["a"])
        """,
    )
    assert "load_spec(...)" in (got["Loaded"].unknown or "")
    assert got["Partly"].fields == ("a",) and "EXTRA" in (got["Partly"].unknown or "")
    assert got["Filtered"].fields == ("a", "b") and "filtered" in (got["Filtered"].unknown or "")
    assert got["Known"].unknown is None


def test_member_fields_follow_reexports_and_bases() -> None:
    schedule = facts(
        "pkg/fields/schedule.py",
        """
        import msgspec
        from pkg.fields.base import Common

        class Schedule(Common):
            schedule_policy: str = "fcfs"
            max_running: int = 0
        """,
    )
    base = facts("pkg/fields/base.py", "class Common:\n    seed: int = 0\n")
    package = facts("pkg/fields/__init__.py", "from pkg.fields.schedule import Schedule\n")
    modules = {f.module: f for f in (schedule, base, package)}
    names = {name: where.path for name, where, _ in member_fields("pkg.fields.Schedule", modules) or []}
    assert names == {"schedule_policy": "pkg/fields/schedule.py", "max_running": "pkg/fields/schedule.py", "seed": "pkg/fields/base.py"}
    assert member_fields("pkg.fields.Nowhere", modules) is None
    assert member_fields("other.Thing", modules) is None
