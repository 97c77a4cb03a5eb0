"""The past-release evidence the toolkit ships (`past_bundle.py`): read by `atlas check` when no past
release is named, written back byte for byte, refused with the file's name when damaged."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from analyzer.refs.config import RefsError
from analyzer.refs.lineage import DEFAULT_PAST, PastName
from analyzer.refs.models import BROKEN
from analyzer.refs.past_bundle import bundle_path, read_bundle, write_bundle
from analyzer.refs.run import run_check
from analyzer.refs.successors import Successor
from analyzer.settings import Settings

from .fakes import vllm_view

_DOC = (
    "# vLLM's engine, step by step\n\n"
    "Before serving, the worker calls profile_num_available_blocks to size the KV cache; the\n"
    "executor fans the call out with _run_workers. The forward pass then takes one step.\n"
)


@pytest.mark.parametrize("project", ["vllm", "sglang"])
def test_the_shipped_evidence_is_the_default_past_pins(project: str) -> None:
    found = read_bundle(project)
    assert found is not None
    pins, lineage, _ = found
    assert pins == sorted(p for p in DEFAULT_PAST if p.startswith(f"{project}@"))
    # Every name is the project's, at one of those releases, in the package (no tests, no kernels).
    assert all(n.release in pins and n.full.split(".", 1)[0] == project for names in lineage.values() for n in names)


def test_v0_engine_names_are_in_the_shipped_lineage() -> None:
    found = read_bundle("vllm")
    assert found is not None
    _, lineage, successors = found
    assert "vllm.worker.cache_engine.CacheEngine" in {n.full for n in lineage["CacheEngine"]}
    assert any(n.full.endswith("Worker.profile_num_available_blocks") for n in lineage["profile_num_available_blocks"])
    # Newest release first within a name, as `--past` builds it.
    releases = [n.release for n in lineage["BlockSpaceManager"]]
    assert releases[0] == "vllm@0.10.2-src"
    assert successors["--worker-use-ray"][0].new == "--distributed-executor-backend"


def test_written_then_read_back_unchanged(tmp_path: Path) -> None:
    lineage = {"CacheEngine": [PastName("vllm@0.6.6-src", "vllm.worker.cache_engine.CacheEngine", "class", "vllm/worker/cache_engine.py")]}
    successors = {"vllm.a.X": [Successor("vllm.a.X", "vllm.b.X", "vllm@0.4.3-src", "vllm@0.6.6-src", "moved", "same body")]}
    path = bundle_path("vllm", tmp_path)
    write_bundle(path, "vllm", ["vllm@0.6.6-src", "vllm@0.4.3-src"], lineage, successors)
    first = path.read_bytes()
    assert read_bundle("vllm", tmp_path) == (["vllm@0.4.3-src", "vllm@0.6.6-src"], lineage, successors)
    write_bundle(path, "vllm", ["vllm@0.4.3-src", "vllm@0.6.6-src"], lineage, successors)
    assert path.read_bytes() == first  # no time stamp: rebuilding changes nothing
    assert read_bundle("sglang", tmp_path) is None  # none shipped: no evidence, no error


# (`mtime=0` and ids: a time stamp in the bytes made the ids differ between xdist workers that
# collected them a second apart.)
@pytest.mark.parametrize(
    "damage",
    [b"not gzip", gzip.compress(b"{not json", mtime=0), gzip.compress(b'{"format": 9, "project": "vllm"}', mtime=0)],
    ids=["not-gzip", "not-json", "unknown-format"],
)
def test_a_damaged_file_is_an_error_naming_it(tmp_path: Path, damage: bytes) -> None:
    path = bundle_path("vllm", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(damage)
    with pytest.raises(RefsError, match=r"vllm\.json\.gz.*--no-past"):
        read_bundle("vllm", tmp_path)


def test_check_reads_the_shipped_evidence_unless_told_not_to(tmp_path: Path) -> None:
    doc = tmp_path / "engine.md"
    doc.write_text(_DOC, encoding="utf-8")
    view = vllm_view(tmp_path / "pin")
    settings = Settings(cache_dir=tmp_path / "cache")

    def run(**kw: bool) -> dict[str, str]:
        _, findings, _ = run_check(settings, [doc], [view.pin], None, None, lambda s, p: view, **kw)
        return {f.ref.text: f.note for f in findings if f.status == BROKEN}

    shipped = run()
    assert "was `vllm.worker.worker.Worker.profile_num_available_blocks` at vllm 0.2.7" in shipped["profile_num_available_blocks"]
    assert not {"forward", "step"} & set(shipped)  # English words stay prose
    alone = run(use_past=False)  # the pins alone: a prose word nothing vouches for is the author's
    assert "profile_num_available_blocks" not in alone
