"""Text laid out like code without being fenced as such (issue 12 §1): shell-labelled fences
holding no command, pasted outlines, class outlines and field listings, flow steps, CJK glued
to names. Snippets written for these tests."""

from __future__ import annotations

from analyzer.refs.extract import extract_references
from analyzer.refs.layout import (
    blank_cjk,
    could_be_command,
    flow_steps,
    holds_no_command,
    is_pasted_outline,
)
from analyzer.refs.listing import class_outline, constant_listing, field_listing, tree_outline
from analyzer.refs.models import Reference


def _refs(doc: str) -> list[Reference]:
    return extract_references("notes.md", doc)


def _texts(doc: str) -> set[str]:
    return {r.text for r in _refs(doc)}


# ----- layout -------------------------------------------------------------


def test_blank_cjk_keeps_columns() -> None:
    line = "Foo.bar_baz里面调用 qux"
    out = blank_cjk(line)
    assert len(out) == len(line)
    assert out.startswith("Foo.bar_baz ") and out.endswith(" qux")


def test_command_lines_and_text_lines_of_shell_blocks() -> None:
    for line in ("pip install -U vllm", "$ Anything goes after a prompt", "./build.sh", "CUDA_VISIBLE_DEVICES=1 python x.py", "git clone https://x/y"):
        assert could_be_command(line), line
    for line in (
        "Engine.start (engine.py)",  # capitalised: a name, not a program
        "load_weights (loader.py; 只看这里)",
        "step_fn -> run_fn",
        "    ↓",
        "Worker:",
        "  warmup: runs a dummy batch",
        "pkg/sub/module.py",
    ):
        assert not could_be_command(line), line


def test_a_shell_block_is_text_only_when_no_line_can_be_a_command() -> None:
    assert holds_no_command("pkg/a.py\npkg/b.py\n")
    assert holds_no_command("# the flow\nfetch_batch (loader.py)\n    ↓\nrun_batch\n    ↓\nfinish\n")
    assert not holds_no_command("fetch_batch (loader.py)\n    ↓\nrun_batch\n")  # one arrow: `run_batch` may be a program
    assert not holds_no_command("pkg/a.py\npython pkg/a.py --x 1\n")
    assert not holds_no_command("")


def test_pasted_outline_needs_indented_continuation_lines() -> None:
    outline = ["Engine.start()", "    Worker.warm()", "        Runner.load()", "    Worker.ready()"]
    assert is_pasted_outline(outline, 0)
    prose = ["A sentence that wraps", "onto a second line and", "  one odd indented line."]
    assert not is_pasted_outline(prose, 0)
    item = ["- first line of an item", "  continues aligned with its text", "  and again"]
    assert not is_pasted_outline(item, 2)  # aligned with the item's text: ordinary wrapping
    assert not is_pasted_outline(["> quoted", ">     deeper", ">     deeper"], 0)


def test_flow_steps_sit_next_to_arrow_lines() -> None:
    lines = ["Client call", "  ↓", "route_request (router.py)", "  ↓", "dispatch", "free text"]
    assert flow_steps(lines) == {0, 2, 4}
    assert flow_steps(["a", "  ↓", "b"]) == set()  # one arrow is not a flow


# ----- listings -----------------------------------------------------------


def test_class_outline_members_and_subtitles() -> None:
    lines = [
        "BlockPool:",
        "  __init__: sets up",
        "  allocate: takes blocks",
        "  release: gives them back",
        "",
        "PrefixBlockPool ( BlockPool):",
        "  lookup: finds a prefix",
        "helpers:",
        "  _hash_block: hashes one block",
        "  _touch: marks use",
        "Note: one line of prose ends the outline",
        "  after: not a member",
    ]
    got = [(x.index, x.name, x.owner, x.base) for x in class_outline(lines)]
    assert (0, "BlockPool", None, False) in got
    assert (2, "allocate", "BlockPool", False) in got and (3, "release", "BlockPool", False) in got
    assert all(name != "__init__" for _, name, _, _ in got)
    assert (5, "PrefixBlockPool", None, False) in got and (5, "BlockPool", None, True) in got
    assert (8, "_hash_block", "PrefixBlockPool", False) in got and (9, "_touch", "PrefixBlockPool", False) in got
    assert all(name != "after" for _, name, _, _ in got)


def test_a_header_with_one_member_is_not_an_outline() -> None:
    assert class_outline(["SomeThing:", "  only: one line"]) == []
    assert class_outline(["Word:", "  a: x", "  b: y"]) == []  # one hump and no base: a term


def test_tree_outline_nests_members_under_their_class() -> None:
    lines = [
        "engine.py",
        "--| EngineCore",
        "----| step",
        "----| add_request",
        "--| run_engine",
        "----| helper_one",
        "----| helper_two",
        "pool.py",
        "├── BlockPool",
        "│   ├── get_new_blocks()",
        "│   └── free_blocks()  # gives them back",
        "└── KVCacheBlock",
        "    └── only_one",
    ]
    got = [(x.index, x.name, x.owner) for x in tree_outline(lines)]
    assert got == [
        (2, "step", "EngineCore"), (3, "add_request", "EngineCore"),
        (9, "get_new_blocks", "BlockPool"), (10, "free_blocks", "BlockPool"),
    ]  # a function's children and a class with one item under it are no class's members
    assert tree_outline(["EngineCore", "  step", "  add_request"]) == []  # indent alone draws no tree


def test_field_listing_needs_python_types() -> None:
    lines = ["req_id: str        # who", "tokens: List[int]  # what", "state: RunState"]
    assert [name for _, _, name in field_listing(lines)] == ["req_id", "tokens", "state"]
    assert field_listing(["enabled: true", "mode: auto"]) == []  # configuration, not fields
    assert field_listing(["only: int"]) == []
    assert field_listing(["a: int", "then a sentence"]) == []


# ----- extraction ---------------------------------------------------------


def test_shell_fence_with_a_call_chain_is_read_as_text() -> None:
    doc = (
        "# SGLang flow\n\n"
        "```shell\n"
        "serve_chat (python/sglang/srt/entrypoints/http_server.py)\n"
        "    ↓\n"
        "Scheduler.admit_request (调度)\n"
        "    ↓\n"
        "build_batch_inputs\n"
        "```\n"
    )
    refs = {r.text: r for r in _refs(doc)}
    assert refs["python/sglang/srt/entrypoints/http_server.py"].kind == "path"
    assert refs["Scheduler.admit_request"].target == "Scheduler.admit_request"
    assert refs["serve_chat"].diagram and refs["build_batch_inputs"].diagram


def test_shell_fence_with_a_command_stays_a_command() -> None:
    doc = "# vLLM\n\n```bash\nvllm serve m --max-model-len 4096\nEngine.loop_once (core)\n```\n"
    texts = _texts(doc)
    assert "--max-model-len" in texts
    assert "Engine.loop_once" not in texts


def test_class_outline_in_a_shell_fence_gives_owned_members() -> None:
    doc = (
        "# SGLang cache\n\n"
        "```shell\n"
        "BlockPool:\n"
        "  allocate: 分配\n"
        "  release: 释放\n"
        "```\n"
    )
    refs = {r.text: r for r in _refs(doc)}
    assert refs["BlockPool"].target == "BlockPool" and not refs["BlockPool"].tentative
    assert (refs["allocate"].owner, refs["allocate"].owner_strict) == ("BlockPool", True)
    assert refs["release"].owner == "BlockPool"


def test_field_listing_takes_the_class_of_its_heading() -> None:
    doc = (
        "# SGLang\n\n"
        "### `RunState` — one request\n\n"
        "Its fields:\n\n"
        "```\n"
        "req_id: str           # id\n"
        "token_ids: List[int]  # ids\n"
        "```\n"
    )
    refs = {r.text: r for r in _refs(doc)}
    assert refs["req_id"].owner == "RunState" and refs["req_id"].owner_strict
    assert refs["token_ids"].owner == "RunState"


def test_field_listing_without_a_class_in_sight_is_left_alone() -> None:
    doc = "# SGLang\n\nSome settings:\n\n```\nreq_id: str\ntoken_ids: List[int]\n```\n"
    assert not {"req_id", "token_ids"} & _texts(doc)


def test_pasted_outline_paragraph_is_read_line_by_line() -> None:
    doc = (
        "# vLLM notes\n\n"
        "LLMEngine.boot()\n"
        "    Executor.measure_memory() <=== 先测内存\n"
        "        worker:vllm.v1.worker.gpu_worker.Worker\n"
        "        Runner.dry_run(num_tokens=8)\n"
    )
    refs = {r.text: r for r in _refs(doc)}
    assert {"LLMEngine.boot", "Executor.measure_memory", "vllm.v1.worker.gpu_worker.Worker", "Runner.dry_run"} <= set(refs)
    lines = doc.splitlines()
    for r in refs.values():
        assert lines[r.line - 1][r.col : r.col + len(r.text)] == r.text


def test_ordinary_wrapped_paragraph_is_not_an_outline() -> None:
    doc = "# vLLM\n\nThe Engine.boot method is described\nin the text and wraps normally\nacross three lines.\n"
    assert "Engine.boot" not in _texts(doc)


def test_names_glued_to_cjk_text_end_at_the_cjk() -> None:
    doc = "# vLLM\n\n```\nBlockTable.__init__中调用 Runner.dry_run里\n```\n"
    texts = _texts(doc)
    assert "BlockTable.__init__" in texts
    assert "Runner.dry_run" in texts


# ----- snippets and prose -------------------------------------------------


def test_from_import_line_cites_its_module() -> None:
    doc = "# vLLM\n\n```python\nfrom vllm.engine.old_place import (\n    Widget, Gadget)\nfrom vllm import LLM\n```\n"
    refs = {r.text: r for r in _refs(doc)}
    assert refs["vllm.engine.old_place"].target == "vllm.engine.old_place" and refs["vllm.engine.old_place"].line == 4
    assert refs["Widget"].target == "vllm.engine.old_place.Widget"
    assert "vllm" not in refs  # the package alone is not a module anyone moves


def test_annotations_of_the_authors_own_class_are_checked() -> None:
    doc = (
        "# vLLM\n\n```python\n"
        "class MyPlugin(PluginBase):\n"
        "    def __init__(self, tok: TokenizerThing, ids: Sequence[int], hist: Sequence):\n"
        "        pass\n"
        "    def build(self) -> OutputThing:\n"
        "        pass\n"
        "```\n"
    )
    refs = {r.text: r for r in _refs(doc)}
    assert refs["TokenizerThing"].scope is None  # checked even though `MyPlugin` is the author's
    assert refs["OutputThing"].scope is None  # a return annotation too
    # `Sequence[int]` is typing's; `Sequence` alone may be the project's class of that name.
    assert [r.line for r in _refs(doc) if r.text == "Sequence"] == [5]
    seq = next(r for r in _refs(doc) if r.text == "Sequence")
    assert seq.col == doc.splitlines()[4].rindex("Sequence")


def test_project_path_in_plain_prose_is_a_reference() -> None:
    doc = "# vLLM\n\nWrite it like the one in vllm/entrypoints/some_parser.py. Keep data/train.json as is.\n"
    refs = {r.text: r for r in _refs(doc)}
    assert refs["vllm/entrypoints/some_parser.py"].kind == "path"
    assert "data/train.json" not in refs
    assert "vllm/entrypoints/some_parser.py." not in refs  # the sentence's full stop is not the path's


def test_arrow_led_lines_are_flow_steps_and_their_classes_cited() -> None:
    assert flow_steps(["Request", "  → ParsedRequest (parse.py)", "  → BatchPlan (plan.py)"]) == {1, 2}
    assert flow_steps(["a", "→ only one"]) == set()
    doc = "# SGLang\n\n```\nHTTP body\n  → ParsedRequest   (io.py — parsed)\n  → BatchPlan       (plan.py — grouped)\n```\n"
    refs = {r.text: r for r in _refs(doc)}
    assert not refs["ParsedRequest"].tentative and not refs["BatchPlan"].tentative
    assert "HTTP" not in refs


def test_enum_members_quoted_under_a_heading_about_the_enum() -> None:
    lines = ["PREFILL = 1   # first", "DECODE = 2", "", "# a comment", "IDLE = auto()"]
    assert [name for _, _, name in constant_listing(lines)] == ["PREFILL", "DECODE", "IDLE"]
    assert constant_listing(["PREFILL = 1", "x = compute()"]) == []
    doc = "# SGLang\n\n### `RunMode` enum\n\n```python\nPREFILL = 1  # a\nVERIFY_DRAFT = 2  # b\n```\n"
    refs = {r.text: r for r in _refs(doc)}
    assert (refs["VERIFY_DRAFT"].owner, refs["VERIFY_DRAFT"].owner_strict) == ("RunMode", True)
    plain = "# SGLang\n\nSome numbers:\n\n```python\nPREFILL = 1\nVERIFY_DRAFT = 2\n```\n"
    assert "VERIFY_DRAFT" not in {r.text for r in _refs(plain)}  # no class in sight


def test_private_names_in_a_text_block_are_code() -> None:
    doc = "# vLLM\n\n```\nBlockTable.__init__里调用 _grow_block_list, then _x and __dunder_name__\n```\n"
    refs = {r.text: r for r in _refs(doc)}
    assert refs["_grow_block_list"].tentative and refs["_grow_block_list"].diagram
    assert "_x" not in refs and "__dunder_name__" not in refs  # one word; a dunder
