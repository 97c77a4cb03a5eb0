"""Forms real authors write (issue 12), each checked against the fake pins: what is found,
how it is judged, and what is left alone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.commandflags import command_flags
from analyzer.refs.extract import extract_references
from analyzer.refs.pinview import FlagEntry, PinView
from analyzer.refs.prose_code import prose_names
from analyzer.refs.resolve import abbreviation_of, resolve
from analyzer.refs.shell import shell_refs
from analyzer.refs.symbols import SymbolEntry as Entry

from .fakes import statuses
from .test_resolve import ref


def _check(doc: str, *pins: PinView) -> dict[str, list[str]]:
    return statuses(doc, *pins)


def test_text_block_names_and_diagram_class_names_cited_in_prose(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\nThe `BlockSpaceManager` allocated blocks.\n\n"
        "```\n"
        "1. Scheduler.schedule()   # v1/core/sched/scheduler.py:50\n"
        "   └── BlockSpaceManager allocates; ModelRunnerOutput goes back\n"
        "2. AbstractScheduler.step()\n"
        "```\n"
    )
    got = _check(doc, vllm30)
    assert got["Scheduler.schedule"] == ["ok"]
    assert got["v1/core/sched/scheduler.py:50"] == ["ok"]  # a path without its top package
    assert got["BlockSpaceManager"] == ["broken", "broken"]  # prose and diagram
    assert got["AbstractScheduler.step"] == ["broken"]
    assert "ModelRunnerOutput" not in got  # a class-like word the prose never cites: not reported


def test_python_snippet_mirrors_are_checked_the_authors_own_code_is_not(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\n```python\n"
        "class Scheduler(SchedulerInterface):\n"
        "    def schedule(self):\n"
        "        seq = SequenceGroup(x)\n"
        "        out: SchedulerOutputs = make()\n"
        "class PriorityQueue:\n"
        "    def __init__(self):\n"
        "        self.model = LightweightRNN()\n"
        "        self.q = Queue(maxsize=2)\n"
        "```\n"
    )
    got = _check(doc, vllm30)
    assert got["SchedulerInterface"] == ["ok"]
    assert got["Scheduler"] == ["ok"]  # a class statement mirroring the project's class
    assert got["SequenceGroup"] == ["broken"] and got["SchedulerOutputs"] == ["broken"]
    assert "PriorityQueue" not in got and "LightweightRNN" not in got and "Queue" not in got


def test_names_the_document_defines_or_introduces_are_not_broken(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\nDefine a new `MyScheduler` class, then pass `target_token` per request.\n"
        "We subclass it as `DummyLogitsProcessor`.\n\n"
        "```python\nclass DummyLogitsProcessor:\n    pass\n"
        "llm.generate(p, SamplingParams(extra_args={\"target_token\": 67}))\n```\n"
    )
    got = _check(doc, vllm30)
    assert "broken" not in got.get("MyScheduler", [])
    assert "DummyLogitsProcessor" not in got and "target_token" not in got


def test_bare_file_names_suffix_paths_and_symbols_in_files(vllm30: PinView, sglang20: PinView) -> None:
    doc = (
        "# SGLang\n\nSee `radix_cache.py`, `radix_cache.py::RadixCache`, `radix_cache.py::NoSuchThing`, "
        "`mem_cache/radix_cache.py`, `gone_module.py` and `custom_all_reduce.cu`.\n"
    )
    got = _check(doc, vllm30, sglang20)
    assert got["radix_cache.py"] == ["ok"]
    assert got["radix_cache.py::RadixCache"] == ["ok"]
    assert got["radix_cache.py::NoSuchThing"] == ["broken"]
    assert got["mem_cache/radix_cache.py"] == ["ok"]
    assert got["gone_module.py"] == ["broken"]
    assert got["custom_all_reduce.cu"] == ["not-checkable"]  # CUDA sources are not in a wheel


def test_repository_folder_written_with_the_project_name_first(vllm30: PinView) -> None:
    assert resolve(ref("vllm/examples/offline.py", "path"), vllm30).status == "not-checkable"
    assert resolve(ref("vllm/tests/", "path"), vllm30).status == "not-checkable"


def test_admonition_bodies_are_markdown() -> None:
    doc = "# vLLM\n\n!!! note\n    Call `Scheduler.schedule` and see [x](https://github.com/vllm-project/vllm/blob/main/vllm/envs.py).\n"
    refs = extract_references("ch.md", doc)
    lines = doc.splitlines()
    texts = {r.text for r in refs}
    assert "Scheduler.schedule" in texts and any(r.origin == "link" for r in refs)
    for r in refs:  # columns still point into the original, indented text
        assert lines[r.line - 1][r.col : r.col + len(r.text)] == r.text


def test_relative_links_and_autorefs_resolve_from_the_documents_place(vllm30: PinView) -> None:
    doc = (
        "<!-- atlas: repo=vllm-project/vllm path=docs/features/x.md -->\n# vLLM\n\n"
        "See [the env](../../vllm/envs.py), [gone](../../vllm/nope.py), [docs](../design/y.md) "
        "and [Scheduler][vllm.v1.core.sched.scheduler.Scheduler].\n\n"
        "[vllm.v1.core.sched.scheduler.Scheduler]: vllm.v1.core.sched.scheduler.Scheduler\n"
    )
    got = _check(doc, vllm30)
    assert got["../../vllm/envs.py"] == ["ok"]
    assert got["../../vllm/nope.py"] == ["broken"]
    assert got["../design/y.md"] == ["not-checkable"]
    assert got["vllm.v1.core.sched.scheduler.Scheduler"] == ["ok"]


def test_shell_wrappers_short_flags_comment_flags_and_fragments() -> None:
    refs = shell_refs("nsys profile -o out --trace cuda vllm serve m -tp 2 --max-num-seqs 8")
    flags = [(r.text, r.command) for r in refs if r.kind == "flag"]
    assert flags == [("-tp", "vllm serve"), ("--max-num-seqs", "vllm serve")]
    refs = shell_refs("# add --enable-prefix-caching to reuse prefixes\nvllm serve m\n")
    assert [(r.text, r.command, r.line) for r in refs if r.kind == "flag"] == [("--enable-prefix-caching", "vllm serve", 0)]
    refs = shell_refs("--profiler-config '{}'", default=("vllm serve", "vllm"))
    assert [(r.text, r.command, r.server_flag) for r in refs] == [("--profiler-config", "vllm serve", True)]
    refs = shell_refs("CUDA_VISIBLE_DEVICES=0 torchrun --nproc-per-node 2 -m sglang.launch_server --model-path m")
    assert [r.text for r in refs] == ["sglang.launch_server", "--model-path"]


def test_option_fragment_is_judged_against_the_passages_server(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\n```bash\nvllm serve m --max-num-seqs 4\n```\n\n"
        "```bash\nvllm bench serve --num-prompts 4\n```\n\n"
        "```bash\n--no-such-option '{}'\n```\n"
    )
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [vllm30])}
    assert got["--no-such-option"].status == "broken" and got["--no-such-option"].ref.command == "vllm serve"
    assert got["--num-prompts"].status == "not-checkable"  # a benchmark's flag is never judged by the server's parser


def test_members_listed_after_their_class(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\nThe `KVCacheManager` has these members:\n\n"
        "- `allocate_slots`: allocation\n- `free_everything`: gone\n\n"
        "The `SchedulerOutputs` object (V0) contains:\n\n- `scheduled_seq_groups`: the batch\n"
    )
    got = _check(doc, vllm30)
    assert got["allocate_slots"] == ["ok"]
    assert got["free_everything"] == ["broken"]
    assert got["scheduled_seq_groups"] == ["broken"]  # its class is gone


def test_module_level_object_member_through_its_class(vllm30: PinView) -> None:
    table = vllm30.table
    extra = [
        Entry("vllm.registry.ModelRegistry", "vllm/registry.py", 90, 90, "attribute", ("_ModelRegistry",)),
        Entry("vllm.registry._ModelRegistry", "vllm/registry.py", 10, 80, "class"),
        Entry("vllm.registry._ModelRegistry.register_model", "vllm/registry.py", 20, 30, "function"),
    ]
    pin = replace(vllm30, symbols=[*table, *extra])
    found = resolve(ref("ModelRegistry.register_model", "symbol"), pin)
    assert found.status == "ok" and "`_ModelRegistry` object" in found.note
    assert resolve(ref("ModelRegistry.unregister", "symbol"), pin).status == "broken"


def test_project_vocabulary_beats_an_earlier_mention(vllm30: PinView, sglang20: PinView) -> None:
    doc = "# Porting\n\nReplace vLLM's `Attention` with `RadixCache` in the port.\n"
    refs = extract_all([("ch.md", doc)])
    radix = next(r for r in refs if r.text == "RadixCache")
    assert radix.framework == "sglang"


def test_document_project_decides_when_the_paragraph_does_not() -> None:
    doc = "# Notes\n\nvLLM, vLLM and vLLM again.\n\n## Flags\n\nUse `--max-num-seqs` here.\n"
    flag = next(r for r in extract_references("ch.md", doc) if r.text == "--max-num-seqs")
    assert flag.framework == "vllm" and "document" in flag.framework_reason


def _bench_pin(tmp_path: Path, source: str) -> PinView:
    root = tmp_path / "tree"
    (root / "vllm" / "benchmarks").mkdir(parents=True)
    (root / "vllm" / "benchmarks" / "latency.py").write_text(source, encoding="utf-8")
    (root / "vllm" / "benchmarks" / "common.py").write_text(
        "def add_common(parser):\n    parser.add_argument('--num-iters', type=int)\n", encoding="utf-8"
    )
    (root / "vllm" / "engine").mkdir(parents=True)
    (root / "vllm" / "engine" / "arg_utils.py").write_text(  # the engine's flags, which the benchmark adds
        "class EngineArgs:\n    @staticmethod\n    def add_cli_args(parser):\n        parser.add_argument('--model')\n        return parser\n",
        encoding="utf-8",
    )
    # `vllm bench latency` registered the way vLLM's CLI registers it: a class per subcommand.
    cli = {
        "main.py": "def main():\n    import vllm.entrypoints.cli.bench\n",
        "types.py": "class CLISubcommand:\n    name: str\n",
        "bench.py": (
            "from vllm.entrypoints.cli.types import CLISubcommand\n"
            "class BenchBase(CLISubcommand):\n    pass\n"
            "class Bench(CLISubcommand):\n    name = 'bench'\n"
            "    def subparser_init(self, subparsers):\n        for cls in BenchBase.__subclasses__():\n            cls.add_cli_args(subparsers)\n"
            "class Latency(BenchBase):\n    name = 'latency'\n"
            "    @classmethod\n    def add_cli_args(cls, parser):\n"
            "        from vllm.benchmarks.latency import add_cli_args\n        add_cli_args(parser)\n"
            "def cmd_init():\n    return [Bench()]\n"
        ),
    }
    (root / "vllm" / "entrypoints" / "cli").mkdir(parents=True)
    for name, text in cli.items():
        (root / "vllm" / "entrypoints" / "cli" / name).write_text(text, encoding="utf-8")
    files = frozenset({"vllm/benchmarks/latency.py", "vllm/benchmarks/common.py", "vllm/engine/arg_utils.py",
                       *(f"vllm/entrypoints/cli/{name}" for name in cli)})
    return PinView(
        pin="vllm@0.30.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",), files=files,
        symbols=[], flags=[FlagEntry("--model", (), "model", "vllm/engine/arg_utils.py:1")], envs=[], tree=str(root),
    )


def test_benchmark_flags_are_judged_against_the_benchmarks_own_parser(tmp_path: Path) -> None:
    pin = _bench_pin(
        tmp_path,
        "from vllm.benchmarks.common import add_common\n"
        "from vllm.engine.arg_utils import EngineArgs\n"
        "def add_cli_args(parser):\n"
        "    parser.add_argument('--input-len', type=int)\n"
        "    parser.add_argument('--correctness-test', action='store_true')\n"
        "    add_common(parser)\n"
        "    EngineArgs.add_cli_args(parser)\n",  # as vLLM's latency benchmark does: the engine's flags too
    )
    doc = "# vLLM\n\n```bash\nvllm bench latency --model m --input-len 8 --num-iters 3 --correct --output-lenn 4\n```\n"
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [pin])}
    assert got["--input-len"].status == "ok" and got["--input-len"].resolved_at == "vllm/benchmarks/latency.py"
    assert got["--num-iters"].status == "ok"  # from a module the benchmark imports
    assert got["--model"].status == "ok"  # the engine's flag, which the benchmark adds
    assert got["--correct"].status == "ok" and "unique prefix" in got["--correct"].note
    assert got["--output-lenn"].status == "broken" and "vllm bench latency" in got["--output-lenn"].note


def test_benchmark_parser_built_at_run_time_is_not_checkable(tmp_path: Path) -> None:
    pin = _bench_pin(tmp_path, "def add_cli_args(parser, names):\n    for n in names:\n        parser.add_argument(f'--{n}')\n")
    doc = "# vLLM\n\n```bash\nvllm bench latency --whatever 1\n```\n"
    (finding,) = [f for f in check_references(extract_all([("ch.md", doc)]), [pin]) if f.ref.text == "--whatever"]
    assert finding.status == "not-checkable" and "run time" in finding.note


def test_a_name_neither_project_defines_is_reported_once(vllm30: PinView, sglang20: PinView) -> None:
    doc = "# Notes\n\nThe `GoneEverywhereManager` did it.\n"
    findings = [f for f in check_references(extract_all([("ch.md", doc)]), [vllm30, sglang20]) if f.ref.text == "GoneEverywhereManager"]
    assert len(findings) == 1 and findings[0].status == "broken" and "neither project" in findings[0].note


def test_env_vars_read_through_helpers_count_as_defined(tmp_path: Path, sglang20: PinView) -> None:
    from analyzer.refs.build import env_literals

    (tmp_path / "sglang").mkdir()
    (tmp_path / "sglang" / "x.py").write_text('flag = get_bool_env_var("SGLANG_CACHE_DIT_ENABLED")\nname = "SGLANGX"\n', encoding="utf-8")
    found = env_literals(tmp_path)
    assert found == frozenset({"SGLANG_CACHE_DIT_ENABLED"})
    pin = replace(sglang20, env_literals=found)
    assert resolve(ref("SGLANG_CACHE_DIT_ENABLED", "env", framework="sglang"), pin).status == "ok"
    assert resolve(ref("SGLANG_NOT_READ_ANYWHERE", "env", framework="sglang"), pin).status == "broken"


def test_words_in_capitals_objects_members_and_bare_autorefs(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\nPass it to the `LLM` class; `NOT_A_THING` and `GPU` are words. "
        "Then `scheduler.schedule()` runs and `pool.no_such_member` is the author's.\n"
        "Models implement [Scheduler][vllm.v1.core.sched.scheduler.Scheduler] and [Gone][vllm.v1.gone.Gone].\n\n"
        "```bash\nvllm serve m --profiler-config '{\"torch_profiler_dir\": \"/tmp\"}'\n"
        "curl localhost:8000/v1/completions -d '{\"hash_block_tokens\": 1}'\n```\n"
    )
    got = _check(doc, vllm30)
    assert got["LLM"] == ["ok"]
    assert "NOT_A_THING" not in got and "GPU" not in got
    assert got["scheduler.schedule()"] == ["ok"]
    assert "pool.no_such_member" not in got
    assert got["vllm.v1.core.sched.scheduler.Scheduler"] == ["ok"]
    assert got["vllm.v1.gone.Gone"] == ["broken"]


def test_argparse_abbreviations(sglang20: PinView, vllm30: PinView) -> None:
    # `--chunked-prefill` leaves out `-size`: argparse takes it for `--chunked-prefill-size`.
    short = resolve(ref("--chunked-prefill", "flag", framework="sglang"), sglang20)
    assert short.status == "ok" and "--chunked-prefill-size" in short.note
    # A word cut short is an abbreviation too; dropping whole words names another option by accident.
    assert resolve(ref("--gpu-mem", "flag"), vllm30).status == "ok"
    assert resolve(ref("--gpu-memory", "flag"), vllm30).status == "broken"
    assert resolve(ref("--max-num", "flag"), vllm30).status == "broken"  # ambiguous: two options


def test_an_abbreviation_may_leave_out_the_kind_of_value() -> None:
    # SGLang's `--nccl-init` for `--nccl-init-addr`: the last word only says the value is an address.
    assert abbreviation_of("--nccl-init", ["--nccl-init-addr", "--nnodes"])[0] == "--nccl-init-addr"
    assert abbreviation_of("--metrics-export", ["--metrics-export-url"])[0] == "--metrics-export-url"
    # a last word that names what the option is about is no such qualifier
    assert abbreviation_of("--lora", ["--lora-modules"])[0] is None
    assert abbreviation_of("--nccl", ["--nccl-init-addr"])[0] is None


def test_a_term_the_prose_also_writes_plainly_is_not_broken(vllm30: PinView) -> None:
    doc = "# vLLM\n\nHiCache keeps blocks on the host. Enable `HiCache` with a flag; `GoneManager` is code.\n"
    got = _check(doc, vllm30)
    assert got["HiCache"] == ["not-checkable"] and got["GoneManager"] == ["broken"]


def test_a_name_missing_from_the_enumeration_its_siblings_belong_to(vllm30: PinView) -> None:
    extra = [
        Entry("vllm.v1.request.RequestStatus", "vllm/v1/request.py", 1, 20, "class"),
        Entry("vllm.v1.request.RequestStatus.WAITING", "vllm/v1/request.py", 3, 3, "attribute"),
        Entry("vllm.v1.request.RequestStatus.RUNNING", "vllm/v1/request.py", 4, 4, "attribute"),
    ]
    pin = replace(vllm30, symbols=[*vllm30.table, *extra])
    doc = "# vLLM\n\nThe status is `WAITING`, `RUNNING`, or `SWAPPED`.\n\nAll in `UPPERCASE` here.\n"
    got = _check(doc, pin)
    assert got["WAITING"] == ["ok"] and got["RUNNING"] == ["ok"]
    assert got["SWAPPED"] == ["broken"]
    assert "UPPERCASE" not in got  # alone, a word in capitals is prose


def test_capitals_in_cjk_prose_are_judged_by_the_names_listed_on_the_next_lines(vllm30: PinView) -> None:
    extra = [
        Entry("vllm.v1.request.RequestStatus", "vllm/v1/request.py", 1, 20, "class"),
        Entry("vllm.v1.request.RequestStatus.WAITING_FOR_KV", "vllm/v1/request.py", 3, 3, "attribute"),
    ]
    pin = replace(vllm30, symbols=[*vllm30.table, *extra])
    doc = (
        "# vLLM\n\n"
        "1. 状态为 WAITING_FOR_KV 的请求先跳过\n"
        "2. 状态为 WAITING_FOR_GRAMMAR 的请求也跳过\n\n"
        "另外，NCCL_BUFFER_SIZE 可以调大。\n"
    )
    got = _check(doc, pin)
    assert got["WAITING_FOR_KV"] == ["ok"]
    assert got["WAITING_FOR_GRAMMAR"] == ["broken"]  # the item beside it names a member of RequestStatus
    assert "NCCL_BUFFER_SIZE" not in got  # alone, far from them: unjudged
    assert [p.text for p in prose_names("如果状态是 WAITING_FOR_FSM （结构化输出）， GPU 和 KV 不算")] == ["WAITING_FOR_FSM"]
    # A module's constant beside it is no enumeration: `DP_SIZE` is not a missing member of it.
    consts = [Entry("vllm.consts", "vllm/consts.py", 1, 5, "module"), Entry("vllm.consts.TP_SIZE", "vllm/consts.py", 2, 2, "attribute")]
    listed = "# vLLM\n\n- `TP_SIZE`: tensor parallel size\n- `DP_SIZE`: data parallel size\n"
    assert "DP_SIZE" not in _check(listed, replace(vllm30, symbols=[*vllm30.table, *consts]))


def test_flags_of_other_programs_and_the_readers_own_scripts(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\nAdjust `--nproc-per-node` to your GPUs; vLLM's own is `--max-num-seqs`, not `--max-num-seqz`.\n\n"
        "```bash\nNCCL_DEBUG=TRACE torchrun --nproc-per-node=2 test.py\npython my_script.py --max-num-seqs 4\n```\n"
    )
    got = _check(doc, vllm30)
    assert "--nproc-per-node" not in got  # torchrun's, as the document's own command shows
    assert "test.py" not in got and "my_script.py" not in got  # the reader's scripts
    assert got["--max-num-seqs"] == ["ok"] and got["--max-num-seqz"] == ["broken"]


def test_fields_of_a_class_versus_options_passed_to_it(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\nThe `KVCacheManager` has these fields:\n\n- `hash_block_tokens`: defined elsewhere only\n\n"
        "Pass these options to `KVCacheManager`:\n\n- `hash_block_tokens`: an option\n"
    )
    got = _check(doc, vllm30)
    assert got["hash_block_tokens"] == ["broken", "ok"]


def test_a_gone_class_goes_to_the_qualified_one_the_text_talks_about(vllm30: PinView) -> None:
    from analyzer.refs.suggest import suggest

    extra = [
        Entry("vllm.runner.DecodeCudaGraphRunner", "vllm/runner.py", 1, 50, "class"),
        Entry("vllm.runner.DecodeCudaGraphRunner.capture", "vllm/runner.py", 10, 20, "function"),
        Entry("vllm.runner.PrefillCudaGraphRunner", "vllm/runner.py", 60, 90, "class"),
        Entry("vllm.runner.PrefillCudaGraphRunner.capture", "vllm/runner.py", 70, 80, "function"),
    ]
    pin = replace(vllm30, symbols=[*vllm30.table, *extra])
    about_decoding = frozenset({"decode", "replay", "graph"})
    cls = replace(ref("CudaGraphRunner", "symbol"), context=about_decoding)
    assert suggest(cls, pin)[0].replacement == "DecodeCudaGraphRunner"
    member = replace(ref("CudaGraphRunner.capture", "symbol"), context=about_decoding)
    best = suggest(member, pin)[0]
    assert best.replacement == "DecodeCudaGraphRunner.capture" and best.confidence >= 0.7
    # With nothing in the text to choose by, no confident pick.
    assert all(s.confidence < 0.5 for s in suggest(ref("CudaGraphRunner", "symbol"), pin))


def test_keyword_forms_are_checked_by_name(vllm30: PinView) -> None:
    got = _check("# vLLM\n\nSet `hash_block_tokens=3` or `no_such_kwarg=1`.\n", vllm30)
    assert got["hash_block_tokens=3"] == ["ok"]
    assert got["no_such_kwarg=1"] == ["not-checkable"]  # said so, never called broken on its own


def test_project_imported_under_an_alias(sglang20: PinView) -> None:
    doc = "# SGLang\n\n```python\nimport sglang as sgl\nsgl.launch_server(1)\nsgl.no_such_entry(2)\n```\n"
    got = _check(doc, sglang20)
    assert got["sgl.launch_server"] == ["ok"] and got["sgl.no_such_entry"] == ["broken"]


def test_notebooks_are_read_as_markdown_and_left_unfixed(tmp_path: Path, sglang20: PinView) -> None:
    import json

    from analyzer.refs.config import RefsError, load_book
    from analyzer.refs.fix import plan_fixes
    from analyzer.refs.run import read_documents

    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["# SGLang\n", "The `RadixCache` and `RadixKache` caches.\n"]},
            {"cell_type": "code", "source": ["server = launch_server_cmd(\n", '    "python3 -m sglang.launch_server --model-path m --chunked-prefill-sise 8"\n', ")\n"]},
            {"cell_type": "code", "source": ["!python3 -m sglang.launch_server --disable-radix-cache\n"]},
        ]
    }
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    book = load_book([path])
    got: dict[str, list[str]] = {}
    findings = check_references(extract_all(read_documents(book)), [sglang20])
    for f in findings:
        got.setdefault(f.ref.text, []).append(f.status)
    assert got["RadixCache"] == ["ok"] and got["RadixKache"] == ["broken"]
    assert got["--model-path"] == ["ok"] and got["--chunked-prefill-sise"] == ["broken"]
    assert got["--disable-radix-cache"] == ["ok"]
    (plan,) = plan_fixes([f for f in findings if f.status == "broken"], {book.display(path): path})
    assert plan.applied == 0 and "not rewritten" in plan.skipped[0]
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    try:
        read_documents(load_book([bad]))
    except RefsError as exc:
        assert "not a Jupyter notebook" in str(exc)
    else:
        raise AssertionError("a damaged notebook must be a clear error")


def test_myst_directives_entry_point_groups_and_file_names(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\n```{note}\nSet `--max-num-seqz` and `--max-num-seqs` here.\n```\n\n"
        "vLLM scans the `vllm.my_plugins` entry point group; see `CMakeLists.txt` and `README.md`.\n\n"
        "```python\nprint(1)\n```\n"
    )
    got = _check(doc, vllm30)
    assert got["--max-num-seqz"] == ["broken"] and got["--max-num-seqs"] == ["ok"]  # the directive's body is prose
    assert "vllm.my_plugins" not in got and "CMakeLists.txt" not in got and "README.md" not in got


def test_a_folder_goes_to_a_folder_before_a_module(vllm33: PinView) -> None:
    from analyzer.refs.suggest import suggest

    pin = replace(vllm33, files=frozenset({*vllm33.files, "vllm/v1/attention/backend.py", "vllm/config/attention.py"}))
    best = suggest(ref("vllm/attention/", "path"), pin)[0]
    assert best.replacement == "vllm/v1/attention/"


def test_a_name_outside_the_env_family_its_siblings_belong_to(vllm30: PinView) -> None:
    # SGLang's storage READMEs: `MOONCAKE_DEVICE` (the pin's env registry) beside Mooncake's own
    # `MC_MS_AUTO_DISC`, the NIXL backend's `SGLANG_..._USE_DIRECT_IO` beside the OS's `O_DIRECT`.
    extra = [
        Entry("vllm.envs.Envs", "vllm/envs.py", 1, 40, "class"),
        Entry("vllm.envs.Envs.VLLM_LOGGING_LEVEL", "vllm/envs.py", 10, 10, "attribute"),
        Entry("vllm.envs.Envs.VLLM_ENGINE_ITERATION_TIMEOUT_S", "vllm/envs.py", 11, 11, "attribute"),
    ]
    pin = replace(vllm30, symbols=[*vllm30.table, *extra])
    doc = (
        "# vLLM\n\nSet `VLLM_LOGGING_LEVEL` or `VLLM_ENGINE_ITERATION_TIMEOUT_S`; files are opened "
        "with `O_DIRECT` unless `LOCAL_HOSTNAME` is set.\n"
    )
    got = _check(doc, pin)
    assert got["VLLM_LOGGING_LEVEL"] == ["ok"]
    assert "broken" not in got.get("O_DIRECT", []) and "broken" not in got.get("LOCAL_HOSTNAME", [])


def test_options_of_a_script_named_in_the_same_sentence(vllm30: PinView) -> None:
    doc = (
        "# vLLM\n\n```bash\nvllm serve m --max-num-seqs 4\n```\n\n"
        "The roles come from the proxy (e.g. `my_proxy.py` using `--prefill-urls` and `--max-num-seqz`).\n\n"
        "For InfiniBand, add `--privileged -e NCCL_IB_HCA=mlx5` to the `start_cluster.sh` script. "
        "Then raise `--max-num-seqs` and drop `--max-num-seqq`.\n"
    )
    got = _check(doc, vllm30)
    # The script's own parser decides, and it is not the project's: neither is judged by `vllm serve`.
    assert got["--prefill-urls"] == ["not-checkable"] and got["--max-num-seqz"] == ["not-checkable"]
    assert "--privileged -e NCCL_IB_HCA=mlx5" not in got and "--privileged" not in got  # docker's, via the shell script
    # The next sentence names no script: its flags are the server's again.
    assert got["--max-num-seqs"] == ["ok", "ok"] and got["--max-num-seqq"] == ["broken"]


def test_a_code_blocks_title_and_permalink_in_its_info_string(vllm30: PinView) -> None:
    # A blog's fenced code with its file and a tag permalink after the language (held-out 20),
    # and mkdocs' `title="..."`: the file and the link are cited, judged like any path.
    doc = (
        "# vLLM's chat server\n\n"
        "```python vllm/entrypoints/openai/serving_chat.py https://github.com/vllm-project/vllm/blob/v0.9.0.1/vllm/entrypoints/openai/serving_chat.py#L120-L132\n"
        "class OpenAIServingChat:\n"
        "    ...\n"
        "```\n\n"
        '```py title="vllm/v1/core/sched/scheduler.py"\n'
        "x = 1\n"
        "```\n\n"
        "```python {linenos=true}\n"
        "y = 2\n"
        "```\n"
    )
    got = _check(doc, vllm30)
    assert got["vllm/entrypoints/openai/serving_chat.py"] == ["broken"]
    assert got["https://github.com/vllm-project/vllm/blob/v0.9.0.1/vllm/entrypoints/openai/serving_chat.py#L120-L132"] == ["broken"]
    assert got["vllm/v1/core/sched/scheduler.py"] == ["ok"]
    assert not {k for k in got if "linenos" in k}


def test_a_parser_handed_to_a_class_outside_the_tree_ends(tmp_path: Path) -> None:
    # `EngineArgs.add_cli_args(parser)` inside the benchmark's own `add_cli_args`, with the
    # engine's module missing: the run-time dispatch once handed the parser back to the very
    # function making the call, and again, for ever. Each call site is now followed once.
    pin = _bench_pin(
        tmp_path,
        "from vllm.engine.arg_utils import EngineArgs\n"
        "def add_cli_args(parser):\n"
        "    parser.add_argument('--input-len', type=int)\n"
        "    EngineArgs.add_cli_args(parser)\n",
    )
    (tmp_path / "tree" / "vllm" / "engine" / "arg_utils.py").unlink()
    found = command_flags(pin, "vllm bench latency")
    assert found is not None and "--input-len" in found.flags
