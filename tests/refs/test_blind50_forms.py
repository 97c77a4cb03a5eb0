"""Forms from held-out 50 and 51: a Mermaid node's id and a state diagram's states are the
author's handles, not stale names; `file.py:NAME` finds a class's attribute in that file; a past
module of the same name does not vouch for a copied class's `self.x`; a benchmark that builds its
parser with another runtime's `ServerArgs` takes that runtime's options."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.commandflags import read_literal
from analyzer.refs.diagram_names import diagram_names
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView

from .fakes import source_view, statuses

_POOL = "vllm/v1/core/block_pool.py"
_POOL_SRC = '''from typing import ClassVar


class FreeKVCacheBlockQueue:
    def popleft_n(self, n):
        return n


class BlockPool:
    DEFAULT_BLOCK_SIZE: ClassVar[int] = 16

    def get_new_blocks(self, n):
        return n
'''


def _view(tmp_path: Path) -> PinView:
    return source_view(tmp_path, {_POOL: _POOL_SRC}, pin="vllm@0.30.0")


def test_a_nodes_id_and_a_state_are_the_diagrams_own_names(tmp_path: Path) -> None:
    doc = """# vLLM's block pool

```mermaid
graph TB
    FreeQueue["FreeKVCacheBlockQueue<br/>(a list)"]
    Alloc["get_new_blocks(n)"] --> FreeQueue
    Gone["NoSuchBlockQueue"]
```

```mermaid
stateDiagram-v2
    [*] --> Free
    Free --> InUse: get_new_blocks()
    InUse --> Cached_Block: cache_full_blocks()
```
"""
    found = {text: set(s) for text, s in statuses(doc, _view(tmp_path)).items()}
    for own in ("FreeQueue", "Alloc", "Gone", "InUse", "Free", "Cached_Block"):
        assert BROKEN not in found.get(own, set()), own
    # What the nodes and the transitions are labelled with is still the project's code.
    assert found["FreeKVCacheBlockQueue"] == {OK}
    assert OK in found["get_new_blocks"]
    assert found["NoSuchBlockQueue"] == {BROKEN}


def test_the_names_a_diagram_gives_its_nodes() -> None:
    graph = ["graph LR", '  A["get_new_blocks(n)"] --> Scheduler[Scheduler.schedule] --> C(Foo)', '  E --> F{"check x(y)"}']
    # `Scheduler[Scheduler.schedule]` names the class it draws; `get_new_blocks` is inside a label.
    assert diagram_names(graph) == {"A", "C", "F"}
    assert diagram_names(["sequenceDiagram", "  A->>B: call()"]) == set()


def test_a_files_class_attribute_is_defined_in_the_file(tmp_path: Path) -> None:
    doc = "# vLLM's blocks\n\nThe size defaults to 16 (`vllm/v1/core/block_pool.py:DEFAULT_BLOCK_SIZE`), not `vllm/v1/core/block_pool.py:NO_SUCH_SIZE`.\n"
    found = statuses(doc, _view(tmp_path))
    assert found["vllm/v1/core/block_pool.py:DEFAULT_BLOCK_SIZE"] == [OK]
    assert found["vllm/v1/core/block_pool.py:NO_SUCH_SIZE"] == [BROKEN]


_BENCH_FILES = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": "class ServerArgs:\n    @staticmethod\n    def add_cli_args(parser):\n        parser.add_argument('--tp-size')\n",
    "sglang/multimodal_gen/__init__.py": "",
    "sglang/multimodal_gen/runtime/__init__.py": "",
    "sglang/multimodal_gen/runtime/server_args/__init__.py": "from sglang.multimodal_gen.runtime.server_args.server_args import ServerArgs\n",
    "sglang/multimodal_gen/runtime/server_args/server_args.py": (
        "class ServerArgs:\n    @staticmethod\n    def add_cli_args(parser):\n        parser.add_argument('--backend')\n        parser.add_argument('--num-gpus')\n"
    ),
    "sglang/multimodal_gen/benchmarks/__init__.py": "",
    "sglang/multimodal_gen/benchmarks/bench_offline.py": (
        "import argparse\n"
        "from sglang.multimodal_gen.runtime.server_args import ServerArgs\n\n\n"
        "class BenchArgs:\n    @staticmethod\n    def add_cli_args(parser):\n        parser.add_argument('--num-prompts')\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n    ServerArgs.add_cli_args(parser)\n    BenchArgs.add_cli_args(parser)\n"
        + "# the benchmark's own code\n" * 80  # a module, not a short shim whose every import is followed
    ),
    "sglang/bench_serving_like.py": (
        "import argparse\nfrom sglang.srt.server_args import ServerArgs\n\n\n"
        "def main():\n    parser = argparse.ArgumentParser()\n    ServerArgs.add_cli_args(parser)\n    parser.add_argument('--runs')\n"
    ),
}


def _tree(tmp_path: Path) -> PinView:
    for rel, text in _BENCH_FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return PinView(
        pin="sglang@9.9", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset(_BENCH_FILES), symbols=[], flags=[], envs=[], tree=str(tmp_path),
    )


def test_another_runtimes_server_args_are_read_as_the_commands_own(tmp_path: Path) -> None:
    view = _tree(tmp_path)
    bench = read_literal(view, "sglang.multimodal_gen.benchmarks.bench_offline")
    assert bench is not None and {"--backend", "--num-gpus", "--num-prompts"} <= bench.flags
    # The server's own `ServerArgs` still means "and the server's flags" (read from its table).
    serving = read_literal(view, "sglang.bench_serving_like")
    assert serving is not None and serving.server and "--runs" in serving.flags


def test_a_past_module_of_the_same_name_does_not_vouch_for_a_copied_classs_member(tmp_path: Path) -> None:
    """`self.model_runner` in a copy of `GPUWorker` (a class neither pin has): a module
    `vllm.v1.worker.gpu.model_runner` of a past release is no evidence that the class had that
    member, so nothing is reported; a past `Worker.model_runner` attribute is."""
    from analyzer.refs.check import check_references, extract_all
    from analyzer.refs.lineage import PastName

    doc = """# vLLM's worker

```python
class GPUWorker:
    def execute_model(self, scheduler_output):
        return self.model_runner.execute_model(scheduler_output)
```
"""
    view = _view(tmp_path)
    module = PastName("vllm@0.20.0", "vllm.v1.worker.gpu.model_runner", "module", "vllm/v1/worker/gpu/model_runner.py")
    got = check_references(extract_all([("ch.md", doc)]), [view], lineages={"vllm": {"model_runner": [module], "GPUWorker": [PastName("vllm@0.20.0", "vllm.v1.worker.gpu_worker.GPUWorker", "class", "vllm/v1/worker/gpu_worker.py")]}})
    assert not [f for f in got if f.ref.text == "self.model_runner" and f.status == BROKEN]


def test_a_snippets_comment_names_an_env_var(tmp_path: Path) -> None:
    from .fakes import vllm_view

    doc = """# vLLM's backends

```python
def pick(backend_name):
    # - Environment variables (VLLM_ATTENTION_BACKEND, VLLM_LOGGING_LEVEL); MAX_SIZE is ours
    return backend_name
```
"""
    found = statuses(doc, vllm_view(tmp_path))
    assert found["VLLM_ATTENTION_BACKEND"] == [BROKEN]
    assert found["VLLM_LOGGING_LEVEL"] == [OK]
    assert "MAX_SIZE" not in found



def test_options_written_alone_in_a_shell_block_are_the_projects(tmp_path: Path) -> None:
    """A block of options with no command before it (`--piecewise-cuda-graph-max-tokens 512  # or
    1024`): the options a reader adds to the server, judged as a flag in the prose is."""
    from .fakes import sglang_view

    doc = """# Piecewise CUDA graphs in SGLang

```bash
# Solution 1: reduce the token count
--piecewise-cuda-graph-max-tokens 512  # or 1024

--disable-radix-cache --chunked-prefill-size 2
```
"""
    found = statuses(doc, sglang_view(tmp_path))
    assert found["--piecewise-cuda-graph-max-tokens"] == [BROKEN]
    assert found["--chunked-prefill-size"] == [OK]
    # Named again in the prose, the option is still the project's (not another program's).
    prose = doc + "\nSet `--piecewise-cuda-graph-max-tokens` lower when memory is short.\n"
    assert statuses(prose, sglang_view(tmp_path / "again"))["--piecewise-cuda-graph-max-tokens"] == [BROKEN, BROKEN]
    # In a script the options are the script's tools' (`ARGS=( ... )`).
    script = "# SGLang\n\n```bash\nARGS=(\n  --image-width-gone 1024\n)\nrun_tool \"${ARGS[@]}\"\n```\n"
    assert "--image-width-gone" not in statuses(script, sglang_view(tmp_path / "script"))


def test_a_heading_names_a_class_and_its_file(tmp_path: Path) -> None:
    """`### FreeBlockQueue (v1/core/block_pool.py)`: the class and the file are cited though not
    in code font, and the snippet below that copies the class is that file's class: a class the
    pin lacks is broken there too (its members carry nothing more)."""
    from analyzer.refs.heading_names import heading_class

    doc = """# vLLM's block pool

### FreeBlockQueue (v1/core/block_pool.py)

```python
class FreeBlockQueue:
    def popleft_n(self, n):
        return self.blocks[:n]
```

### FreeKVCacheBlockQueue (`block_pool.py`)

### Overview (v1/core/block_pool.py)
"""
    found = {text: set(s) for text, s in statuses(doc, _view(tmp_path)).items()}
    assert found["FreeBlockQueue"] == {BROKEN}  # the heading's and the copy's `class` line
    assert found["v1/core/block_pool.py"] == {OK}
    assert found["FreeKVCacheBlockQueue"] == {OK}
    assert "self.blocks" not in found and "Overview" not in found
    assert heading_class("3.1 Scheduler (`scheduler.py`)") is None  # a word, not a name shaped like code
    named = heading_class("##### _Communicator Class (tokenizer_communicator_mixin.py:83-149)".lstrip("# "))
    assert named is not None and named.name == "_Communicator" and named.path == "tokenizer_communicator_mixin.py:83-149"
