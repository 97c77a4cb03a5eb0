"""The loader: strict schema, every fault reported with its file, and the committed catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest
from mappings.conftest import write_mapping

from analyzer.mappings import REFERENCE, MappingError, load_mappings

GOOD = """
    title = "Scheduler"
    summary = "Who runs next."
    related = []

    [reference]
    status = "implemented"
    symbols = ["reference_engine.scheduler.Scheduler"]

    [vllm]
    status = "partial"
    note = "async variant not mapped"
    symbols = [
      "vllm.core.sched.Scheduler",
      { name = "vllm.core.sched.Scheduler._preempt", role = "evict", releases = ["1.0"] },
    ]
    flags = ["--max-num-seqs", { name = "--block-size", releases = ["1.0"] }]
    envs = ["VLLM_FOO"]
    bridges = [{ name = "api-to-core", source = "vllm.a.send", target = "vllm.b.recv", transport = "zmq" }]
"""


_STEP = ('title = "x"\nsummary = "y"\n[reference]\nstatus = "implemented"\nsymbols = ["a.b"]\n'
         '[vllm]\nstatus = "unmapped"\n[[steps]]\ntitle = "t"\nexplain = "e"\n')


def _problems(folder: Path) -> list[str]:
    with pytest.raises(MappingError) as info:
        load_mappings(folder)
    return info.value.problems


def test_good_file_loads_into_dataclasses(tmp_path: Path) -> None:
    write_mapping(tmp_path, "scheduler", GOOD)
    [concept] = load_mappings(tmp_path)
    assert concept.id == "scheduler"
    assert concept.reference.project == REFERENCE
    vllm = concept.side("vllm")
    assert vllm.status == "partial"
    assert [s.name for s in vllm.symbols_for("2.0")] == ["vllm.core.sched.Scheduler"]
    assert len(vllm.symbols_for("1.0")) == 2
    assert vllm.symbols[1].role == "evict" and vllm.symbols[1].releases == ("1.0",)
    assert [k.name for k in vllm.knobs_for("2.0")] == ["--max-num-seqs", "VLLM_FOO"]
    assert vllm.bridges[0].transport == "zmq"
    # A side the file does not mention is an explicit gap, not an error.
    assert concept.side("sglang").status == "unmapped"
    assert concept.to_dict()["upstream"]["sglang"]["status"] == "unmapped"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('title = "x"\nsummary = "y"\n', "missing [reference] table"),
        ('title = "x"\nsummary = "y"\n[reference]\nstatus = "done"\n', "status 'done' is not one of"),
        ('title = "x"\nsummary = "y"\n[reference]\nstatus = "implemented"\n', "needs at least one symbol"),
        ('title = "x"\nsummary = "y"\n[reference]\nstatus = "not-implemented"\n', "needs a note"),
        (
            'title = "x"\nsummary = "y"\n[reference]\nstatus = "unmapped"\nsymbols = ["a.b"]\n',
            "cannot list symbols",
        ),
        ('title = "x"\nsummary = "y"\nsymbol = 1\n[reference]\nstatus = "unmapped"\n', "unknown key 'symbol'"),
        ('title = "x"\n[reference]\nstatus = "unmapped"\n', "missing summary"),
        (
            'title = "x"\nsummary = "y"\n[reference]\nstatus = "unmapped"\n[vllm]\nstatus = "implemented"\n'
            'symbols = ["vllm.a.B"]\nflags = ["block size"]\n',
            "does not look like a flag",
        ),
        (
            'title = "x"\nsummary = "y"\n[reference]\nstatus = "unmapped"\n[vllm]\nstatus = "implemented"\n'
            'symbols = ["vllm.a.B()"]\n',
            "is not a dotted qualified name",
        ),
        (
            'title = "x"\nsummary = "y"\n[reference]\nstatus = "unmapped"\n[vllm]\nstatus = "implemented"\n'
            'symbols = [{ name = "vllm.a.B", releases = ["vllm@1.0"] }]\n',
            "must be a bare version",
        ),
        ('title = "x"\nsummary = "y"\nrelated = ["nowhere"]\n[reference]\nstatus = "unmapped"\n', "'nowhere' has no mapping file"),
        ("title = [", "not valid TOML"),
        (_STEP + 'reference = ["a.b"]\nvllm = { none = "x", symbols = ["c.d"] }\n', "not both"),
        (_STEP + 'reference = { process = "main" }\n', "say why there is no counterpart"),
        (_STEP + 'vllm = ["c.d"]\n', "[vllm]: the side's status is 'unmapped'"),
        (_STEP + 'reference = ["a.b()"]\n', "is not a dotted qualified name"),
        (_STEP + 'reference = ["a.b"]\nwho = 1\n', "step 1: unknown key 'who'"),
        (_STEP.replace('explain = "e"\n', ""), "step 1: missing explain"),
        ('title = "x"\nsummary = "y"\nsteps = 3\n[reference]\nstatus = "unmapped"\n', "array of tables"),
    ],
)
def test_malformed_files_say_what_and_where(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "broken.toml").write_text(text)
    problems = _problems(tmp_path)
    assert any(expected in p and p.startswith("broken.toml") for p in problems), problems


def test_every_fault_of_every_file_is_reported_at_once(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('title = "x"\nsummary = "y"\n[reference]\nstatus = "bogus"\n')
    (tmp_path / "b.toml").write_text('summary = "y"\n[reference]\nstatus = "unmapped"\nextra = 1\n')
    problems = _problems(tmp_path)
    assert any(p.startswith("a.toml") and "bogus" in p for p in problems)
    assert any(p.startswith("b.toml") and "missing title" in p for p in problems)
    assert any(p.startswith("b.toml") and "unknown key 'extra'" in p for p in problems)


def test_yaml_is_refused_not_ignored(tmp_path: Path) -> None:
    (tmp_path / "scheduler.yaml").write_text("title: x\n")
    assert any("YAML mappings are not supported" in p for p in _problems(tmp_path))


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    assert "no such mappings directory" in _problems(tmp_path / "nope")[0]


# The book's chapters (issue 7): each must have a concept file, implemented or not.
BOOK_CONCEPTS = {
    "request-lifecycle", "paged-kv", "varlen-batching", "scheduler", "prefix-cache", "sampling",
    "detokenizer", "api-server", "cuda-graphs", "tensor-parallel", "pipeline-parallel",
    "expert-parallel", "context-parallel", "pd-disaggregation", "hierarchical-kv",
    "speculative-decoding", "structured-output", "multi-lora", "quantization",
    "long-context-sparse-attention", "multimodal", "deterministic-inference", "metrics",
    "overlap-scheduling", "mla", "linear-attention-hybrid", "rl-weight-updates", "routing",
}


def test_committed_catalogue_loads_and_covers_the_book() -> None:
    concepts = {c.id: c for c in load_mappings()}
    missing = BOOK_CONCEPTS - set(concepts)
    assert not missing, f"no mapping file for {sorted(missing)}"
    for concept in concepts.values():
        # Gaps are explicit: a side is either mapped with symbols or says why not.
        for side in ("reference", "vllm", "sglang"):
            mapped = concept.side(side)
            assert mapped.symbols or mapped.status in ("not-implemented", "unmapped"), (concept.id, side)


def test_steps_load_in_order_with_findings(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(_STEP + 'reference = ["a.b"]\nvllm = { none = "a design difference" }\n'
                                     '[[steps]]\ntitle = "u"\nexplain = "v"\nreference = { symbols = ["a.c"], process = "engine thread" }\n')
    (concept,) = load_mappings(tmp_path)
    first, second = concept.steps
    assert first.title == "t" and first.side("reference").symbols[0].name == "a.b"
    assert first.side("vllm").none == "a design difference" and not first.side("sglang").written
    assert second.side("reference").process == "engine thread"
    assert concept.to_dict()["steps"][1]["sides"]["reference"]["symbols"][0]["name"] == "a.c"


def test_a_step_focus_loads_as_text_with_optional_releases_and_needs_symbols(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(
        _STEP + 'reference = { symbols = ["a.b"], focus = ["x = min(", { text = "if y:", releases = ["1.0"] }] }\n')
    (concept,) = load_mappings(tmp_path)
    part = concept.steps[0].side("reference")
    assert [f.text for f in part.focus] == ["x = min(", "if y:"]
    assert part.focus_for("2.0") == ["x = min("] and part.focus_for("1.0") == ["x = min(", "if y:"]
    assert concept.to_dict()["steps"][0]["sides"]["reference"]["focus"][1] == {"text": "if y:", "releases": ["1.0"]}
    (tmp_path / "c.toml").write_text(_STEP + 'reference = { none = "n", focus = ["x"] }\n'
                                     '[[steps]]\ntitle = "u"\nexplain = "v"\nreference = { symbols = ["a.b"], focus = [3, { txt = "x" }] }\n')
    problems = _problems(tmp_path)
    assert any("focus names lines of the step's symbols; this side names none" in p for p in problems), problems
    assert any("focus[0]: must be a string or a table with text" in p for p in problems), problems
    assert any("focus[1]: unknown key 'txt'" in p for p in problems), problems
    assert any("focus[1]: missing text" in p for p in problems), problems
