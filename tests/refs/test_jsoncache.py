"""The checker's cached records: read back only whole and at their format, written atomically."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.jsoncache import read_record, write_record


def test_round_trip_at_its_format(tmp_path: Path) -> None:
    path = tmp_path / "refs" / "words" / "pin.json"
    write_record(path, 3, {"words": ["a", "b"]})
    assert read_record(path, 3) == {"format": 3, "words": ["a", "b"]}
    assert read_record(path, 4) is None  # an older format is collected again
    assert [p.name for p in path.parent.iterdir()] == ["pin.json"]  # no temporary left behind


def test_damaged_or_missing_record_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "pin.json"
    assert read_record(path, 1) is None
    path.write_text('{"format": 1, "words": [', encoding="utf-8")  # a run killed mid-write by hand
    assert read_record(path, 1) is None
    path.write_text("[1, 2]", encoding="utf-8")  # valid JSON, not a record
    assert read_record(path, 1) is None


def test_unwritable_cache_is_left_alone(tmp_path: Path) -> None:
    blocker = tmp_path / "refs"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    write_record(blocker / "words" / "pin.json", 1, {"words": []})  # no exception: best effort
    assert blocker.read_text(encoding="utf-8") == "a file where the folder should be"
