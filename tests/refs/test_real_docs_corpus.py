"""The labelled real-document corpus stays consistent: every label names text that is
on its line, every document has labels, and the measurement's matching and
home comparison behave as the benchmark assumes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from analyzer.refs.models import BROKEN, Finding, Reference

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "check_real_docs.py"
_spec = importlib.util.spec_from_file_location("check_real_docs", _BENCH)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["check_real_docs"] = bench
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("part", ["dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11", "heldout12", "heldout13", "heldout13o", "heldout13b", "heldout14", "heldout14x", "heldout15", "heldout16", "heldout17", "heldout18", "heldout19", "heldout20", "heldout21", "heldout22", "heldout23", "heldout24", "heldout25", "heldout26", "heldout27", "heldout28", "heldout29", "heldout30", "heldout31", "heldout32", "heldout33", "heldout34", "heldout35", "heldout36", "heldout37", "heldout38", "heldout39", "heldout40", "heldout41", "heldout42", "heldout43", "heldout44", "heldout45", "heldout46", "heldout47", "heldout48", "heldout49", "heldout50", "heldout51", "heldout52", "heldout53", "heldout54", "heldout55", "heldout56", "heldout57", "heldout58", "heldout59", "heldout60", "heldout61", "heldout62", "heldout63", "heldout64", "heldout65", "heldout66", "heldout67", "heldout68", "heldout69", "heldout70", "heldout71", "heldout72", "heldout73", "heldout74", "heldout75", "heldout76", "heldout77", "heldout78", "heldout79", "heldout80", "heldout81", "heldout82", "heldout83", "heldout84", "heldout85", "heldout86", "heldout87", "heldout88", "heldout89", "heldout90", "heldout91", "heldout92", "heldout93", "heldout94", "heldout95", "heldout96", "heldout97", "heldout98", "heldout99", "heldout100", "heldout101", "heldout102", "heldout103", "heldout104", "heldout105", "heldout106", "heldout107", "heldout108", "heldout109", "heldout110", "heldout111", "heldout112", "heldout113", "heldout114", "heldout115", "heldout116", "heldout117", "heldout118", "heldout119", "heldout120", "heldout121", "heldout122", "heldout123", "heldout124", "heldout125", "heldout126", "heldout127", "heldout128", "heldout129", "heldout130", "heldout131", "heldout132", "heldout133", "heldout134", "heldout135", "heldout136", "heldout137", "heldout138", "heldout139", "heldout140", "heldout141", "heldout142", "heldout143", "heldout144", "heldout145", "heldout146", "heldout147", "heldout148", "heldout149", "heldout150", "heldout151", "heldout152", "heldout153", "heldout154", "heldout155", "heldout156", "heldout157", "heldout158", "heldout159", "heldout160", "heldout161", "heldout162", "heldout163", "heldout164", "heldout165", "heldout166", "heldout167", "heldout168", "heldout169", "heldout170", "heldout171", "heldout172", "heldout173", "heldout174", "heldout175", "heldout176", "heldout177", "heldout178", "heldout179", "heldout180", "heldout181", "heldout182", "heldout183", "heldout184", "heldout185", "heldout186", "heldout187", "heldout188", "heldout189"])
def test_every_label_is_on_its_line(part: str) -> None:
    labels, docs = bench.load_corpus([part])
    assert labels and docs
    for label in labels:
        assert label.doc in docs, label
        lines = docs[label.doc].splitlines()
        assert 1 <= label.line <= len(lines), label
        # (A table cell writes a `|` as `\|`; the label writes the text the reader sees.)
        line = lines[label.line - 1]
        assert label.text.strip("`") in line or label.text.strip("`") in line.replace("\\|", "|"), f"{label.doc}:{label.line}: {label.text!r} not on the line"
        if "broken" in label.labels.values():
            assert label.home, f"{label.doc}:{label.line}: a broken label needs a home (`-` or `?` when none)"
    assert {label.doc for label in labels} == set(docs), "every document is labelled"


def test_held_out_documents_are_not_in_dev() -> None:
    names = {part: {Path(d).name for d in bench.load_corpus([part])[1]} for part in ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11", "heldout12", "heldout13", "heldout13o", "heldout13b", "heldout14", "heldout14x", "heldout15", "heldout16", "heldout17", "heldout18", "heldout19", "heldout20", "heldout21", "heldout22", "heldout23", "heldout24", "heldout25", "heldout26", "heldout27", "heldout28", "heldout29", "heldout30", "heldout31", "heldout32", "heldout33", "heldout34", "heldout35", "heldout36", "heldout37", "heldout38", "heldout39", "heldout40", "heldout41", "heldout42", "heldout43", "heldout44", "heldout45", "heldout46", "heldout47", "heldout48", "heldout49", "heldout50", "heldout51", "heldout52", "heldout53", "heldout54", "heldout55", "heldout56", "heldout57", "heldout58", "heldout59", "heldout60", "heldout61", "heldout62", "heldout63", "heldout64", "heldout65", "heldout66", "heldout67", "heldout68", "heldout69", "heldout70", "heldout71", "heldout72", "heldout73", "heldout74", "heldout75", "heldout76", "heldout77", "heldout78", "heldout79", "heldout80", "heldout81", "heldout82", "heldout83", "heldout84", "heldout85", "heldout86", "heldout87", "heldout88", "heldout89", "heldout90", "heldout91", "heldout92", "heldout93", "heldout94", "heldout95", "heldout96", "heldout97", "heldout98", "heldout99", "heldout100", "heldout101", "heldout102", "heldout103", "heldout104", "heldout105", "heldout106", "heldout107", "heldout108", "heldout109", "heldout110", "heldout111", "heldout112", "heldout113", "heldout114", "heldout115", "heldout116", "heldout117", "heldout118", "heldout119", "heldout120", "heldout121", "heldout122", "heldout123", "heldout124", "heldout125", "heldout126", "heldout127", "heldout128", "heldout129", "heldout130", "heldout131", "heldout132", "heldout133", "heldout134", "heldout135", "heldout136", "heldout137", "heldout138", "heldout139", "heldout140", "heldout141", "heldout142", "heldout143", "heldout144", "heldout145", "heldout146", "heldout147", "heldout148", "heldout149", "heldout150", "heldout151", "heldout152", "heldout153", "heldout154", "heldout155", "heldout156", "heldout157", "heldout158", "heldout159", "heldout160", "heldout161", "heldout162", "heldout163", "heldout164", "heldout165", "heldout166", "heldout167", "heldout168", "heldout169", "heldout170", "heldout171", "heldout172", "heldout173", "heldout174", "heldout175", "heldout176", "heldout177", "heldout178", "heldout179", "heldout180", "heldout181", "heldout182", "heldout183", "heldout184", "heldout185", "heldout186", "heldout187", "heldout188", "heldout189")}
    parts = sorted(names)
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            assert not names[a] & names[b], (a, b)


def test_blind_part_is_not_in_all() -> None:
    for part in ("heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11", "heldout12", "heldout13", "heldout13o", "heldout13b", "heldout14", "heldout14x", "heldout15", "heldout16", "heldout17", "heldout18", "heldout19", "heldout20", "heldout21", "heldout22", "heldout23", "heldout24", "heldout25", "heldout26", "heldout27", "heldout28", "heldout29", "heldout30", "heldout31", "heldout32", "heldout33", "heldout34", "heldout35", "heldout36", "heldout37", "heldout38", "heldout39", "heldout40", "heldout41", "heldout42", "heldout43", "heldout44", "heldout45", "heldout46", "heldout47", "heldout48", "heldout49", "heldout50", "heldout51", "heldout52", "heldout53", "heldout54", "heldout55", "heldout56", "heldout57", "heldout58", "heldout59", "heldout60", "heldout61", "heldout62", "heldout63", "heldout64", "heldout65", "heldout66", "heldout67", "heldout68", "heldout69", "heldout70", "heldout71", "heldout72", "heldout73", "heldout74", "heldout75", "heldout76", "heldout77", "heldout78", "heldout79", "heldout80", "heldout81", "heldout82", "heldout83", "heldout84", "heldout85", "heldout86", "heldout87", "heldout88", "heldout89", "heldout90", "heldout91", "heldout92", "heldout93", "heldout94", "heldout95", "heldout96", "heldout97", "heldout98", "heldout99", "heldout100", "heldout101", "heldout102", "heldout103", "heldout104", "heldout105", "heldout106", "heldout107", "heldout108", "heldout109", "heldout110", "heldout111", "heldout112", "heldout113", "heldout114", "heldout115", "heldout116", "heldout117", "heldout118", "heldout119", "heldout120", "heldout121", "heldout122", "heldout123", "heldout124", "heldout125", "heldout126", "heldout127", "heldout128", "heldout129", "heldout130", "heldout131", "heldout132", "heldout133", "heldout134", "heldout135", "heldout136", "heldout137", "heldout138", "heldout139", "heldout140", "heldout141", "heldout142", "heldout143", "heldout144", "heldout145", "heldout146", "heldout147", "heldout148", "heldout149", "heldout150", "heldout151", "heldout152", "heldout153", "heldout154", "heldout155", "heldout156", "heldout157", "heldout158", "heldout159", "heldout160", "heldout161", "heldout162", "heldout163", "heldout164", "heldout165", "heldout166", "heldout167", "heldout168", "heldout169", "heldout170", "heldout171", "heldout172", "heldout173", "heldout174", "heldout175", "heldout176", "heldout177", "heldout178", "heldout179", "heldout180", "heldout181", "heldout182", "heldout183", "heldout184", "heldout185", "heldout186", "heldout187", "heldout188", "heldout189"):
        assert part not in bench.PARTS and part in bench.BLIND_PARTS


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("none", "--model_args", "flags"),
        ("none", "-t", "flags"),
        ("none", "EXA_API_KEY=1", "env vars"),
        ("none", "torch.distributed", "symbols"),
        ("none", "browser_server.py:mcp", "paths"),
        ("none", "https://exa.ai", "links"),
        ("param", "x=1", "symbols"),
        ("env", "VLLM_USE_V1=0", "env vars"),
    ],
)
def test_category_of_a_label(kind: str, text: str, expected: str) -> None:
    assert bench.category(kind, text) == expected


def test_evaluate_counts_categories_and_calibration_bands() -> None:
    from analyzer.refs.models import Suggestion

    rows = [
        bench.Label("dev/a.md", "vllm", 3, "symbol", "Gone", {"*": "broken"}, "vllm.x.New", ""),
        bench.Label("dev/a.md", "vllm", 4, "none", "--tasks", {"*": "not-ref"}, "", ""),
        bench.Label("dev/a.md", "vllm", 5, "flag", "--old", {"*": "broken"}, "-", ""),
    ]
    gone, tasks, old = _finding(3, "Gone"), _finding(4, "--tasks"), _finding(5, "--old")
    gone.suggestions.append(Suggestion("vllm.x.New", 0.95, "moved"))
    old.suggestions.append(Suggestion("--new", 0.4, "similar name"))
    bands: bench.Counter[tuple[str, int, bool]] = bench.Counter()
    kinds, categories = bench.evaluate(rows, [gone, tasks, old], ("vllm@0.30.0", "sglang@0.5.20"), bands, "r")
    assert categories["symbols"].tp == 1 and categories["symbols"].right_homes == 1
    assert categories["flags"].tp == 1 and categories["flags"].false_alarms == 1 and categories["flags"].distractors == 1
    assert kinds["none"].false_alarms == 1
    assert bands == {("r", 4, True): 1, ("r", 1, False): 1}


def test_bad_label_row_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "labels_x.txt"
    path.write_text("[dev/a.md] project=vllm\n3 | path | a/b.py | maybe | | \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"labels_x\.txt:2: unknown label 'maybe'"):
        bench.parse_labels(path)


def _finding(line: int, text: str, status: str = BROKEN) -> Finding:
    ref = Reference("dev/a.md", line, 0, text, "symbol", text, "vllm", "", "inline")
    return Finding(ref, "vllm@0.30.0", status)


def test_matching_pairs_each_label_with_one_finding() -> None:
    rows = [
        bench.Label("dev/a.md", "vllm", 3, "symbol", "Sequence", {"*": "broken"}, "-", ""),
        bench.Label("dev/a.md", "vllm", 3, "symbol", "Sequence", {"*": "broken"}, "-", ""),
        bench.Label("dev/a.md", "vllm", 4, "env", "VLLM_X=1", {"*": "ok"}, "", ""),
    ]
    found = [_finding(3, "Sequence"), _finding(3, "Sequence"), _finding(4, "VLLM_X"), _finding(5, "Other")]
    claimed, unclaimed = bench.match(rows, found)
    assert claimed[0] is found[0] and claimed[1] is found[1] and claimed[2] is found[2]
    assert unclaimed == [found[3]]


@pytest.mark.parametrize(
    ("home", "replacement", "same"),
    [
        ("Executor.profile", "vllm.v1.executor.abstract.Executor.profile", True),
        ("Executor.profile", "AbstractExecutor.profile", False),
        ("vllm/v1/core/sched/scheduler.py", "vllm/v1/core/sched/scheduler.py", True),
        ("python/sglang/srt/utils/common.py", "https://github.com/sgl-project/sglang/blob/v0.5.20/python/sglang/srt/utils/common.py#L3", True),
        ("vllm/v1/worker/", "vllm/v1/worker/gpu_worker.py", False),
        # A gh-file:/gh-dir: link rewritten to its new path names that path.
        ("examples/features/x/run_offline.py", "gh-file:examples/features/x/run_offline.py", True),
        ("examples/features/x/run_offline.py", "gh-file:examples/other/run_offline.py", False),
        # A flag with or without the value it is set to names the flag.
        ("--moe-a2a-backend", "--moe-a2a-backend deepep", True),
        ("--moe-a2a-backend deepep", "--moe-a2a-backend", True),
        ("--moe-a2a-backend", "--moe-runner-backend deepep", False),
        ("--kv-cache-dtype fp4_mx_block16", "--kv-cache-dtype fp8_e4m3", False),
    ],
)
def test_home_comparison(home: str, replacement: str, same: bool) -> None:
    assert bench.same_home(home, replacement) is same


def test_calibration_table_prints_right_over_offered_per_band(capsys: pytest.CaptureFixture[str]) -> None:
    bands: bench.Counter[tuple[str, int, bool]] = bench.Counter({("a", 4, True): 3, ("a", 4, False): 1, ("b", 1, False): 2})
    bench.report_calibration("p", bands, ["a", "b"])
    rows = {line.split()[0] + (line.split()[1] if line.split()[0] in {"<", ">="} else ""): line for line in capsys.readouterr().out.splitlines()[2:]}
    assert "0.750 (3/4)" in rows[">=0.9"] and rows[">=0.9"].count("n/a (0/0)") == 1
    assert rows["0.3-0.5"].split()[-1] == "(0/2)" and "n/a (0/0)" in rows["<0.3"]


def test_a_repeated_text_on_a_labelled_line_is_not_an_unlabelled_alarm() -> None:
    rows = [bench.Label("dev/a.md", "vllm", 3, "symbol", "gone", {"*": "broken"}, "-", "")]
    found = [_finding(3, "gone"), _finding(3, "gone"), _finding(3, "other")]
    claimed, unclaimed = bench.match(rows, found)
    assert claimed[0] is found[0] and unclaimed == [found[2]]


def test_a_pipe_inside_a_cell_is_written_escaped(tmp_path: Path) -> None:
    path = tmp_path / "labels_x.txt"
    path.write_text("[x/a.md] project=sglang\n24 | none | <\\|grounding\\|> | not-ref | | a prompt token | of the model\n", encoding="utf-8")
    (label,) = bench.parse_labels(path)
    assert (label.text, label.labels, label.note) == ("<|grounding|>", {"*": "not-ref"}, "a prompt token | of the model")


def test_each_parts_report_is_written_whole_or_not_at_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with bench._report_to(tmp_path / "out", "heldout9"):
        print("[heldout9] both releases: ...")
    assert (tmp_path / "out" / "heldout9.txt").read_text(encoding="utf-8") == "[heldout9] both releases: ...\n"
    # A part that fails mid-report leaves no file behind (a rerun is not mistaken for a measured part).
    with pytest.raises(RuntimeError), bench._report_to(tmp_path / "out", "heldout10"):
        print("[heldout10] partial")
        raise RuntimeError("killed")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["heldout9.txt"]
    # Without a folder, the report goes to standard output as before.
    with bench._report_to(None, "dev"):
        print("[dev] both releases")
    assert capsys.readouterr().out == "[dev] both releases\n"
