"""Forms written from held-out 34 and 35 (blind parts): a mixin's `self` is the class that mixes
it in; a name imported from a gone module is the project's where it still defines it, and the
module's home is where the names live now; a folder of C++ headers is no Python module (names a
pin imports from the dependency of that name stay the dependency's); a renamed field's home
names its class."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.build import source_literals
from analyzer.refs.check import check_references, extract_all
from analyzer.refs.not_project import _module_paths
from analyzer.refs.pinview import PinView, SymbolEntry
from tests.refs.fakes import source_view

_SCHEDULER = '''
class SchedulerPPMixin:
    def event_loop_pp(self):
        self.mbs = []
        recv_reqs = self.request_receiver.recv_requests()
        self.process_input_requests(recv_reqs)


class Scheduler(SchedulerPPMixin):
    def __init__(self):
        self.request_receiver = None

    def process_input_requests(self, reqs):
        return reqs
'''

_DOC = '''# Pipeline parallel loop

```python
def event_loop_pp(self):
    self.mbs = []
    recv_reqs = self.request_receiver.recv_requests()
    self.process_input_requests(recv_reqs)
    self.get_next_batch_to_run()
```
'''


def _findings(doc: str, pin: PinView) -> dict[tuple[int, str], str]:
    return {(f.ref.line, f.ref.text): f.status for f in check_references(extract_all([("ch.md", doc)]), [pin])}


def test_a_mixins_self_is_the_class_that_mixes_it_in(tmp_path: Path) -> None:
    pin = source_view(tmp_path, {"sglang/srt/managers/scheduler.py": _SCHEDULER, "sglang/srt/managers/io.py": "def recv_requests():\n    pass\n"}, "sglang@0.5.20")
    got = _findings(_DOC, pin)
    broken = {text for (_, text), status in got.items() if status == "broken"}
    # `request_receiver` and `process_input_requests` are `Scheduler`'s, which derives from the mixin
    assert not any("request_receiver" in t or "process_input_requests" in t for t in broken), got
    assert any("get_next_batch_to_run" in t for t in broken), got  # no class of the family has it


_PROTOCOL = '''
from dataclasses import dataclass


@dataclass
class StreamingInput:
    prompt: str
'''


def test_a_name_imported_from_a_gone_module_is_the_projects_and_the_module_goes_where_it_lives(tmp_path: Path) -> None:
    pin = source_view(tmp_path, {"vllm/engine/protocol.py": _PROTOCOL, "vllm/inputs/__init__.py": ""})
    doc = "```python\nfrom vllm.inputs.data import StreamingInput, Gone\n```\n"
    findings = check_references(extract_all([("ch.md", doc)]), [pin])
    by_text = {f.ref.text: f for f in findings}
    assert by_text["vllm.inputs.data"].status == "broken"
    assert by_text["vllm.inputs.data"].best is not None and by_text["vllm.inputs.data"].best.replacement == "vllm.engine.protocol"
    assert by_text["StreamingInput"].status == "ok"
    assert by_text["Gone"].status == "broken"  # defined nowhere: still reported


def test_a_folder_of_cpp_headers_is_no_python_module(tmp_path: Path) -> None:
    # (a folder of its own: the dependency table is cached beside the views, per pin name)
    base = source_view(tmp_path / "pin", {"sglang/srt/ops.py": "from sgl_kernel import fast_topk\n\n\ndef topk(x):\n    return fast_topk(x)\n"}, "sglang@0.5.20")
    # the kernels' C++ include folder is called `sgl_kernel` too
    pin = replace(base, files=frozenset([*base.files, "sglang/kernels/include/sgl_kernel/topk.cuh"]))
    pin.words_path = base.words_path
    assert "sgl_kernel" not in _module_paths(pin) and "srt.ops" in _module_paths(pin)
    got = _findings("The top-k kernel is `fast_topk(...)`.\n", pin)
    assert got[(1, "fast_topk(...)")] != "broken"  # sgl_kernel's, which the pin imports it from


_METADATA = '''
class DSAMetadata:
    dsa_cu_seqlens_k: int = 0
'''


def test_a_renamed_fields_home_names_its_class(tmp_path: Path) -> None:
    pin = source_view(tmp_path, {"sglang/srt/layers/attention/dsa_backend.py": _METADATA}, "sglang@0.5.20")
    findings = check_references(extract_all([("ch.md", "The field `nsa_cu_seqlens_k` holds the lengths.\n")]), [pin])
    f = next(f for f in findings if f.ref.text == "nsa_cu_seqlens_k")
    assert f.status == "broken" and f.best is not None and f.best.replacement == "DSAMetadata.dsa_cu_seqlens_k"


def test_each_side_of_a_statement_quoted_in_the_prose_is_a_reference(tmp_path: Path) -> None:
    pin = source_view(tmp_path, {"sglang/srt/configs/model_config.py": "def is_deepseek_dsa(config):\n    return True\n"}, "sglang@0.5.20")
    doc = "The backend checks:\n\n- `self.use_nsa = is_deepseek_nsa(...)`\n- `assert is_deepseek_dsa(config), \"only DeepSeek\"`\n"
    got = _findings(doc, pin)
    assert got[(3, "is_deepseek_nsa(...)")] == "broken"
    assert got[(4, "is_deepseek_dsa(config)")] == "ok"
    # a shell assignment, not a statement: another program's variable and its value
    assert not any("TRITON_ATTN" in text for _, text in _findings("Set `E_MM_ATTN_BACKEND=TRITON_ATTN` there.\n", pin))


_QUANT = '''
import enum


class KVQuantMode(enum.Enum):
    FP8 = 1
    NVFP4 = 2


LINEAR_ALGOS = ["FP8", "NVFP4", "FP8_PB_WO"]  # MXFP9 is planned
'''


def test_a_value_the_sources_spell_is_not_a_missing_member_of_its_siblings_enum(tmp_path: Path) -> None:
    base = source_view(tmp_path / "v", {"vllm/model_executor/layers/quantization/modelopt.py": _QUANT})
    # the quoted names in capitals, as the loader reads them at build time
    pin = replace(base, values=source_literals(Path(base.tree or ""), ("vllm",)).values)
    pin.words_path = base.words_path
    doc = "# vLLM\n\nThe algorithms are `FP8`, `NVFP4`, `FP8_PB_WO` and `MXFP9`.\n"
    got = _findings(doc, pin)
    assert got[(3, "NVFP4")] == "ok"
    assert (3, "FP8_PB_WO") not in got  # a value of `LINEAR_ALGOS`, which the sources spell
    assert got[(3, "MXFP9")] == "broken"  # in a comment only, not a value: a missing member


def test_pythons_own_exceptions_are_not_the_projects() -> None:
    doc = "# vLLM\n\n```python\ntry:\n    run()\nexcept CancelledError:\n    raise SystemExit()\n```\n"
    texts = {r.text for r in extract_all([("ch.md", doc)])}
    assert "SystemExit" not in texts and "CancelledError" not in texts


_EPLB = '''
class EplbState:
    def rearrange(self, is_profile=False, rank_mapping=None):
        return None
'''


def test_a_diagram_messages_keywords_are_the_callees(tmp_path: Path) -> None:
    pin = source_view(tmp_path / "p", {"vllm/distributed/eplb/eplb_state.py": _EPLB})
    doc = (
        "# vLLM EPLB\n\n```mermaid\nsequenceDiagram\n"
        "    Worker->>EPLB: rearrange(model, execute_shuffle=True, rank_mapping=m)\n"
        "    Worker->>Me: my_helper(flag=True)\n```\n"
    )
    got = _findings(doc, pin)
    assert got[(5, "execute_shuffle")] == "broken" and got[(5, "rank_mapping")] == "ok"
    assert (6, "flag") not in got  # the author's own call: nothing says what it takes


_ANOTHER_PROGRAMS_PAGE = """## Overview

The Dynamo event plane carries KV events; Dynamo's router reads them. Engines call
`publish_stored()` on Dynamo's `KvEventPublisher`, and vLLM or SGLang relay theirs over ZMQ.

```python
from dynamo.llm import KvEventPublisher

class CustomEnginePublisher:
    def __init__(self, block_size):
        self.block_size = block_size
        self.kv_publisher = KvEventPublisher(kv_block_size=block_size)
```

```mermaid
flowchart LR
    pub["KvEventPublisher"] --> router["Dynamo router"]
```
"""


def test_a_page_about_another_program_that_its_snippets_import_from(tmp_path: Path) -> None:
    # no heading names Dynamo; the snippets import from `dynamo` and the prose names it 4 times
    pins = [
        source_view(tmp_path / "v", {"vllm/distributed/kv_events.py": "class BlockStored:\n    block_size: int = 0\n"}),
        source_view(tmp_path / "s", {"sglang/srt/disaggregation/kv_events.py": "class BlockStored:\n    block_size: int = 0\n"}, "sglang@0.5.20"),
    ]

    def broken(doc: str) -> list[str]:
        return [f.ref.text for f in check_references(extract_all([("ch.md", doc)]), pins) if f.status == "broken"]

    assert broken(_ANOTHER_PROGRAMS_PAGE) == []  # Dynamo's names, and the author's class's own attribute
    # the same page citing a name vLLM lacks in a snippet that imports from vLLM: still judged
    own = _ANOTHER_PROGRAMS_PAGE.replace("from dynamo.llm import KvEventPublisher", "from vllm.distributed.kv_events import GoneEvent")
    assert "GoneEvent" in broken(own)


def test_a_gone_modules_home_is_the_package_that_re_exports_its_names(tmp_path: Path) -> None:
    base = source_view(tmp_path / "p", {"vllm/inputs/llm.py": "class TokensPrompt:\n    pass\n", "vllm/inputs/__init__.py": ""})
    # `vllm/inputs/__init__.py` re-exports it, as the index records an import, and so does `vllm`: the
    # nearest package above its module is where a reader imports it from
    exports = [SymbolEntry("vllm.inputs.TokensPrompt", "vllm/inputs/__init__.py", 1, 1, "import"), SymbolEntry("vllm.TokensPrompt", "vllm/__init__.py", 1, 1, "import")]
    pin = replace(base, symbols=[*base.table, *exports])
    pin.words_path = base.words_path
    findings = check_references(extract_all([("ch.md", "```python\nfrom vllm.inputs.data import TokensPrompt\n```\n")]), [pin])
    gone = next(f for f in findings if f.ref.text == "vllm.inputs.data")
    assert gone.best is not None and gone.best.replacement == "vllm.inputs"
