"""Forms from held-out 65 and 66: lines lifted out of a method under a block that only names
their file (`源码位置：` over `python/.../model_runner.py`), and under a comment with a Windows
checkout's path; an engine keyword's value that no registry of the project holds
(`LLM(load_format="oci")`); a registry value a source names only as a prefix or a module
(`turboquant`); an old copy's standard-library class the pin no longer imports (`PriorityQueue`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.copies import commented_file
from analyzer.refs.lineage import Lineage
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK, Finding
from analyzer.refs.pinview import FlagEntry, PinView

from .fakes import past_lineage, source_view

_SOURCES = {
    "sglang/srt/model_executor/model_runner.py": (
        "from sglang.srt.distributed import get_parallel\n\n\n"
        "class ModelRunner:\n"
        "    def __init__(self, server_args):\n"
        "        self.ps = get_parallel()\n"
        "        self.server_args = server_args\n\n"
        "    def init_torch_distributed(self):\n"
        "        return self.ps.tp_size * self.ps.pp_size\n\n\n"
        "class RankZeroFilter:\n"
        "    pass\n"
    ),
    "sglang/srt/distributed/__init__.py": "def get_parallel():\n    return None\n\n\ndef attach(tp_worker):\n    return tp_worker.model_runner\n",
    "sglang/srt/entrypoints/engine.py": "class Engine:\n    def __init__(self, **kwargs):\n        self.kwargs = kwargs\n",
    "sglang/srt/model_loader/loader.py": (
        "LOADERS = {\"auto\": 1, \"safetensors\": 2}\n\n\n"
        "def get_loader(load_format, model_path):\n"
        "    return LOADERS[load_format]\n\n\n"
        "def is_turbo(fmt):\n"
        "    return fmt.startswith(\"turbo_\")\n"
    ),
    "sglang/srt/managers/cache_controller.py": (
        "class HiCacheController:\n"
        "    def __init__(self):\n"
        "        self.write_queue = None\n"
        "        self.load_queue = None\n"
    ),
}


def _view(tmp_path: Path) -> PinView:
    view = source_view(tmp_path, _SOURCES, pin="sglang@0.5.20")
    load = FlagEntry("--load-format", (), "load_format", "sglang/srt/server_args.py:10", typed_values=("auto", "safetensors", "turbo"))
    return replace(view, flags=[load], words_path=view.words_path)


def _findings(doc: str, *pins: PinView, lineages: dict[str, Lineage] | None = None) -> dict[tuple[int, str], list[Finding]]:
    out: dict[tuple[int, str], list[Finding]] = {}
    for f in check_references(extract_all([("ch.md", doc)]), list(pins), lineages=lineages):
        out.setdefault((f.ref.line, f.ref.text), []).append(f)
    return out


_LOCATED = """# SGLang 的分布式初始化

源码位置：

```text
python/sglang/srt/model_executor/model_runner.py
```

关键逻辑：

```python
init_distributed_environment(
    world_size=self.tp_size * self.pp_size,
    rank=self.ps.tp_size,
)
print(self.server_args)
```
"""


def test_lines_of_a_file_a_lone_path_names_are_its_classs(tmp_path: Path) -> None:
    found = _findings(_LOCATED, _view(tmp_path))
    size = found[(13, "self.tp_size")]
    assert [f.status for f in size] == [BROKEN]
    assert "`tp_size` is not a member of `ModelRunner` (the class of `python/sglang/srt/model_executor/model_runner.py`" in size[0].note
    assert [f.status for f in found[(13, "self.pp_size")]] == [BROKEN]
    # Members the class keeps stand, and what they hold.
    assert not [f for (line, _), fs in found.items() for f in fs if line in (14, 16) and f.status == BROKEN]
    # Without the block naming the file, whose lines they are is unknown: judged by spelling.
    unplaced = _findings(_LOCATED.replace("```text\npython/sglang/srt/model_executor/model_runner.py\n```\n", ""), _view(tmp_path))
    assert not [f for fs in unplaced.values() for f in fs if f.status == BROKEN]


def test_a_windows_checkouts_path_in_a_comment_names_the_file() -> None:
    # The path as written, from the package's folder on (the folders narrow which file it is).
    assert commented_file(r"# D:\Codex\repos\sglang\python\sglang\srt\model_executor\model_runner.py") == "python/sglang/srt/model_executor/model_runner.py"
    assert commented_file("# python/sglang/srt/managers/scheduler.py") == "python/sglang/srt/managers/scheduler.py"
    assert commented_file("# model_runner.py") == "model_runner.py"
    assert commented_file(r"# C:\work\notes.txt") is None


def test_the_windows_comment_places_the_lines(tmp_path: Path) -> None:
    doc = (
        "# SGLang\n\n"
        "```python\n"
        "# D:\\Codex\\repos\\sglang\\python\\sglang\\srt\\model_executor\\model_runner.py\n"
        "self.load_format = load_format\n"  # 5: spelled in the sources, not kept by ModelRunner
        "self.ps = get_parallel()\n"  # 6
        "```\n"
    )
    found = _findings(doc, _view(tmp_path))
    assert [f.status for f in found[(5, "self.load_format")]] == [BROKEN]
    assert BROKEN not in [f.status for f in found.get((6, "self.ps"), [])]


def test_an_engine_keywords_value_no_registry_holds_is_broken(tmp_path: Path) -> None:
    doc = (
        "# Loading SGLang models\n\n"
        "```python\n"
        "import sglang as sgl\n"
        "from sglang.srt.entrypoints.engine import Engine\n\n"
        "engine = Engine(model_path=\"m\", load_format=\"oci\")\n"  # 7
        "engine = Engine(model_path=\"m\", load_format=\"safetensors\")\n"  # 8
        "engine = Engine(model_path=\"m\", load_format=\"turbo_\")\n"  # 9
        "engine = Engine(model_path=\"m\", load_format=f\"{fmt}\")\n"  # 10
        "```\n"
    )
    found = _findings(doc, _view(tmp_path))
    oci = found[(7, "load_format")]
    assert [f.status for f in oci] == [BROKEN]
    assert "`oci` is none of the 3 values --load-format is checked against" in oci[0].note
    # A listed value; a string the sources hold whole (a prefix they test: maybe a plugin's key);
    # a value built at run time: none is judged broken.
    for line in (8, 9, 10):
        assert BROKEN not in [f.status for f in found.get((line, "load_format"), [])]


def test_an_old_copys_standard_library_class_is_pythons(tmp_path: Path) -> None:
    doc = (
        "# HiCache in SGLang v0.4.6\n\n"
        "```python\n"
        "class HiCacheController:\n"
        "    def __init__(self):\n"
        "        self.write_queue = PriorityQueue()\n"  # 6
        "        self.load_queue = PriorityQueue()\n"
        "```\n"
    )
    found = _findings(doc, _view(tmp_path))
    queue = found[(6, "PriorityQueue")]
    assert [f.status for f in queue] == [NOT_CHECKABLE]
    assert "Python's (`queue.PriorityQueue`)" in queue[0].note


# Held-out 67 and 68: an HTML anchor around a code span; `module:function` written as an entry
# point names its object; an object named after a class only a past release had; a sentence of an
# SGLang document that names vLLM after the name, in passing.

_VLLM = {
    "vllm/v1/core/sched/scheduler.py": "class Scheduler:\n    def schedule(self):\n        pass\n",
    "vllm/v1/worker/gpu_model_runner.py": "class GPUModelRunner:\n    def execute_model(self):\n        pass\n",
}


def _vllm_view(tmp_path: Path) -> PinView:
    return source_view(tmp_path, _VLLM, pin="vllm@0.30.0")


def test_an_html_anchor_is_a_link(tmp_path: Path) -> None:
    doc = (
        "# The vLLM scheduler\n\n"
        '- <a href="https://github.com/vllm-project/vllm/blob/main/vllm/core/scheduler.py" target="_blank">`vllm.core.scheduler`</a>\n'
        '- <a href="https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py">`Scheduler`</a>\n'
    )
    found = _findings(doc, _vllm_view(tmp_path))
    gone = found[(3, "https://github.com/vllm-project/vllm/blob/main/vllm/core/scheduler.py")]
    assert [f.status for f in gone] == [BROKEN]
    assert [f.status for f in found[(3, "vllm.core.scheduler")]] == [BROKEN]
    assert [f.status for f in found[(4, "https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py")]] == [OK]


def test_module_colon_name_is_the_modules_name(tmp_path: Path) -> None:
    doc = "# vLLM\n\nSee `vllm.core.scheduler:_schedule_prefills` and `vllm.v1.core.sched.scheduler:Scheduler`.\n"
    found = _findings(doc, _vllm_view(tmp_path))
    assert [f.status for f in found[(3, "vllm.core.scheduler:_schedule_prefills")]] == [BROKEN]
    assert [f.status for f in found[(3, "vllm.v1.core.sched.scheduler:Scheduler")]] == [OK]


_PAST_SGLANG = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/model_executor/__init__.py": "",
    "sglang/srt/model_executor/forward_batch_info.py": "class InputMetadata:\n    forward_mode: int = 0\n",
    "sglang/srt/managers/tp_worker.py": "class TpWorker:\n    def __init__(self):\n        self.model_runner = None\n",
}


def _sglang_lineage(tmp_path: Path) -> Lineage:
    return past_lineage(tmp_path / "past", _PAST_SGLANG, "sglang@0.2.15-src")


def test_an_object_named_after_a_past_class_holds_a_gone_classs_member(tmp_path: Path) -> None:
    doc = (
        "# SGLang's attention, early on\n\n"
        "```python\n"
        "if input_metadata.forward_mode == 1:\n"  # 4
        "    return server_args.model_path\n"  # 5
        "print(tp_worker.model_runner)\n"  # 6
        "```\n"
    )
    found = _findings(doc, _view(tmp_path), lineages={"sglang": _sglang_lineage(tmp_path)})
    member = found[(4, "input_metadata.forward_mode")]
    assert [f.status for f in member] == [BROKEN]
    assert "named after `InputMetadata`" in member[0].note
    # Without the past release, an object no class is named like says nothing.
    bare = _findings(doc, _view(tmp_path))
    assert (4, "input_metadata.forward_mode") not in bare
    assert BROKEN not in [f.status for fs in found.values() for f in fs if f.ref.line == 5]
    # `TpWorker` is gone too, but the pin's code still reads `tp_worker.model_runner`: the object
    # outlived its class.
    assert BROKEN not in [f.status for fs in found.values() for f in fs if f.ref.line == 6]


def test_a_passing_mention_of_the_other_project_yields_to_the_documents(tmp_path: Path) -> None:
    doc = (
        "# SGLang 的第一版调度器\n\n"
        "SGLang 的调度器很早就有了。SGLang 用 RadixCache。SGLang 也有调度器。\n\n"
        "加载的入口是 `get_loader`。\n\n"  # 5
        "它的预估是 `new_token_ratio` 的祖先，这和 vLLM 的思路相反。\n"  # 7
    )
    found = _findings(doc, _view(tmp_path), _vllm_view(tmp_path))
    assert [f.pin for f in found[(5, "get_loader")]] == ["sglang@0.5.20"]
    # vLLM is named after the name, in a comparison: judged as the document's project's.
    ratio = found[(7, "new_token_ratio")]
    assert [f.pin for f in ratio] == ["sglang@0.5.20"]
    assert ratio[0].ref.framework_reason == "the section is about sglang; vllm is only named after it in the sentence"


def test_a_flag_under_the_projects_prefix_is_the_wrappers(tmp_path: Path) -> None:
    # Held-out 70: an RL framework passes `--sglang-X` through to SGLang's `--X`.
    doc = "# Launching SGLang from the trainer\n\nThe trainer takes `--sglang-load-format` and `--sglang-no-such-option`.\n"
    found = _findings(doc, _view(tmp_path))
    passed = found[(3, "--sglang-load-format")]
    assert [f.status for f in passed] == [NOT_CHECKABLE]
    assert "under another program's `--sglang-` prefix" in passed[0].note
    assert [f.status for f in found[(3, "--sglang-no-such-option")]] == [BROKEN]


def test_lines_of_a_file_the_project_never_had_are_another_programs(tmp_path: Path) -> None:
    # Held-out 66: a verl note quotes verl's `replica.py` with `self.x` lines.
    doc = (
        "# verl drives SGLang\n\n"
        "```python\n"
        "# replica.py:119-129\n"
        "self.gpus_per_replica_node = min(gpus_per_node, self.world_size)\n"  # 5
        "```\n\n"
        "```python\n"
        "# forward_batch_info.py\n"
        "self.load_format = load_format\n"  # 10: a file a past release had
        "```\n"
    )
    found = _findings(doc, _view(tmp_path), lineages={"sglang": _sglang_lineage(tmp_path)})
    verl = found[(5, "self.gpus_per_replica_node")]
    assert [f.status for f in verl] == [NOT_CHECKABLE]
    assert "a file no release of sglang has had" in verl[0].note
    assert not [f for (line, _), fs in found.items() for f in fs if line == 10 and "no release" in f.note]
    # Without the past releases nothing says the file was never the project's: judged as before.
    bare = _findings(doc, _view(tmp_path))
    assert [f.status for f in bare[(5, "self.gpus_per_replica_node")]] == [BROKEN]


def test_a_links_symbol_written_in_full_is_the_files(tmp_path: Path) -> None:
    # Held-out 71: a generated page's anchors name the linked class by its full dotted name.
    doc = (
        "# vLLM\n\n"
        '- <a href="https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py#L1-L3">'
        "`vllm.v1.core.sched.scheduler.Scheduler`:1-3</a>\n"
    )
    found = _findings(doc, _vllm_view(tmp_path))
    link = found[(3, "https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/sched/scheduler.py#L1-L3")]
    assert [f.status for f in link] == [OK]
