"""Forms from the false alarms of held-out 178-183 (labelled blind at the start of the session): a
tree drawn under the author's vendored checkout, torchrun's own options named in the prose, a
member the pin's code reads on an object named like another class, and keywords of a method of a
class the pin does not define."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.diagram_names import diagram_names
from analyzer.refs.fields import accepts
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import EnvEntry, FlagEntry

from .fakes import findings_by_place, source_view, statuses_at

_SOURCES = {
    "vllm/__init__.py": "",
    "vllm/third_party/__init__.py": "",
    "vllm/distributed/__init__.py": "",
    "vllm/distributed/parallel_state.py": "class GroupCoordinator:\n    pass\n",
}


def test_a_tree_under_the_authors_vendored_checkout(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    doc = (
        "# Distributed inference\n\n"
        "```\n"
        "third_party/vllm/vllm/distributed/\n"
        "├── parallel_state.py           # GroupCoordinator\n"  # 5
        "├── gone_state.py               # removed since\n"  # 6
        "```\n"
    )
    found = findings_by_place(doc, view)
    # `third_party/` is also a folder of vLLM's package; the path is the checkout's, under the author's folder.
    assert statuses_at(found, 5, "parallel_state.py") == [OK]
    assert statuses_at(found, 6, "gone_state.py") == [BROKEN]


def test_torchruns_own_options_named_in_the_prose(tmp_path: Path) -> None:
    bare = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    view = replace(bare, flags=[FlagEntry("--max-num-seqs", (), "max_num_seqs", "vllm/engine/arg_utils.py:1")])
    doc = (
        "# Fused all-reduce benchmark\n\n"
        "The examples use two ranks. You can modify `--nproc_per_node` to your machine, and `--max-num-seqz` too.\n\n"  # 3
        "```\n"
        "torchrun --nproc_per_node=2 \\\n"
        "benchmarks/kernels/benchmark_fused_collective.py \\\n"
        "--no-quant --trials 100\n"
        "```\n"
    )
    found = findings_by_place(doc, view)
    # torchrun takes it before the script it runs: torchrun's option, not the project's.
    assert BROKEN not in statuses_at(found, 3, "--nproc_per_node")
    assert statuses_at(found, 3, "--max-num-seqz") == [BROKEN]


_BACKENDS = {
    "vllm/__init__.py": "",
    "vllm/attention/__init__.py": "",
    "vllm/attention/metadata.py": "class ForwardMetadata:\n    seq_lens: list\n\n\nclass ForwardBatch:\n    seq_lens: list\n",
    "vllm/attention/worker.py": "def draft(forward_batch, pool):\n    forward_batch.token_to_kv_pool = pool\n",
    "vllm/attention/triton.py": (
        "class TritonMetadata:\n"
        "    max_extend_len: int\n\n\n"
        "class TritonBackend:\n"
        "    def init_forward_metadata(self):\n"
        "        self.forward_metadata = TritonMetadata()\n"
    ),
    "vllm/attention/flashinfer.py": (
        "from typing import Union\n\n\n"
        "class DecodeMetadata:\n"
        "    decode_wrappers: list\n\n\n"
        "class PrefillMetadata:\n"
        "    prefill_wrappers: list\n\n\n"
        "class FlashInferBackend:\n"
        "    def __init__(self):\n"
        "        self.forward_metadata: Union[PrefillMetadata, DecodeMetadata] = None\n\n"
        "    def forward(self):\n"
        "        return self.forward_metadata.decode_wrappers\n"
    ),
}


def test_a_member_the_pins_code_reads_on_an_object_of_that_name(tmp_path: Path) -> None:
    view = source_view(tmp_path, _BACKENDS, "vllm@0.30.0")
    doc = (
        "# The FlashInfer backend\n\n"
        "```python\n"
        "def forward_decode(self, q, layer, forward_batch):\n"
        "    wrapper = self.forward_metadata.decode_wrappers[0]\n"  # 5
        "    lens = self.forward_metadata.seq_lens\n"  # 6
        "    old = self.forward_metadata.gone_wrappers\n"  # 7
        "    forward_batch.token_to_kv_pool.set_kv_buffer(layer)\n"  # 8
        "```\n"
    )
    found = findings_by_place(doc, view)
    # `ForwardMetadata` lacks it, but the pin's own code reads it on an object of that name.
    assert statuses_at(found, 5, "self.forward_metadata.decode_wrappers") == [OK]
    assert statuses_at(found, 6, "self.forward_metadata.seq_lens") == [OK]
    assert statuses_at(found, 7, "self.forward_metadata.gone_wrappers") == [BROKEN]
    # A parameter's member the pin only writes onto it somewhere: `ForwardBatch` has none.
    assert statuses_at(found, 8, "forward_batch.token_to_kv_pool") == [BROKEN]


def test_keywords_of_a_method_of_a_class_the_pin_lacks(tmp_path: Path) -> None:
    sources = {
        "vllm/__init__.py": "",
        "vllm/lora/__init__.py": "",
        "vllm/lora/workspace.py": "class LoRAWorkspace:\n    def begin_forward(self, batch):\n        return batch\n",
    }
    view = source_view(tmp_path, sources, "vllm@0.30.0")
    # A quoted method's parameter the pin types as FlashInfer's wrapper: the pin has no class of
    # that name, so its `begin_forward` is FlashInfer's, not the one method of that name the pin has.
    assert accepts("BatchDecodeWithPagedKVCacheWrapper.begin_forward", "data_type", view) is None
    assert accepts("LoRAWorkspace.begin_forward", "data_type", view) is False
    assert accepts("LoRAWorkspace.begin_forward", "batch", view) is True


def test_a_tex_formulas_words_in_cjk_prose(tmp_path: Path) -> None:
    sources = {"vllm/__init__.py": "", "vllm/attention/__init__.py": "", "vllm/attention/flash.py": "def flash_attn_varlen_func(q, k, v):\n    return q\n"}
    view = source_view(tmp_path, sources, "vllm@0.30.0")
    doc = (
        "# vLLM 的 FlashAttention\n\n"
        "   - 映射至 3D CUDA Grid：$\\text{Grid 维度} = (\\text{num\\_query\\_tiles}, \\text{num\\_heads}) = (16, 64)$。\n"  # 3
        "   - vLLM 调用 flash_attn_varlen_func 与 gone_attn_func 计算。\n"  # 4
    )
    found = findings_by_place(doc, view)
    # A TeX formula's `\text{...}` words are the formula's, not names of the code.
    assert not found.get((3, "num_query_tiles"))
    assert statuses_at(found, 4, "flash_attn_varlen_func") == [OK]
    assert statuses_at(found, 4, "gone_attn_func") == [BROKEN]


def test_a_titled_mermaid_subgraphs_id() -> None:
    block = [
        "flowchart TD",
        '    subgraph SamplerForward["Sampler.forward() flow"]',
        '        S1["Step 1"]',
        "    end",
        '    subgraph Scheduler["Scheduler.schedule()"]',
        "    subgraph MoEP [MoE parallel]",
        "    subgraph Untitled",
    ]
    # The id of a subgraph with a title is the author's handle, as a labelled node's is; an id
    # the title names (`Scheduler`), or one shown as the title, is not.
    assert diagram_names(block) == {"SamplerForward", "MoEP", "S1"}


def test_a_shell_variable_the_document_assigns_and_reads_back(tmp_path: Path) -> None:
    sources = {"vllm/__init__.py": "", "vllm/envs.py": 'environment_variables = {\n    "VLLM_PORT": lambda: 8000,\n}\n'}
    bare = source_view(tmp_path, sources, "vllm@0.30.0")
    view = replace(bare, envs=[EnvEntry("VLLM_PORT", "vllm/envs.py:2")])
    doc = (
        "# Deploying vLLM on a cloud\n\n"
        "```bash\n"
        'export VLLM_IMAGE="vllm/vllm-openai@sha256:89c1d0"\n'  # 4
        "export VLLM_PORT=8000\n"  # 5
        "export VLLM_GONE_FLAG=1\n"  # 6
        'cloud endpoint create --image "$VLLM_IMAGE" --port "$VLLM_PORT"\n'
        "```\n"
    )
    found = findings_by_place(doc, view)
    # Assigned and read back as an argument's value: the document's variable, not vLLM's.
    assert BROKEN not in statuses_at(found, 4, "VLLM_IMAGE")
    # One vLLM reads stays its own; one set for vLLM and never read back is judged.
    assert statuses_at(found, 5, "VLLM_PORT") == [OK]
    assert statuses_at(found, 6, "VLLM_GONE_FLAG") == [BROKEN]


def test_an_image_and_its_tag_in_a_shell_comment(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    doc = (
        "# Deploying vLLM on a cloud\n\n"
        "```bash\n"
        "# vllm/vllm-openai:v0.19.1, Linux/amd64 image digest.\n"  # 4
        "# see vllm/distributed/parallel_state.py:1 and vllm/distributed/gone_state.py\n"  # 5
        "cloud endpoint create --name demo\n"
        "```\n"
    )
    found = findings_by_place(doc, view)
    # A container image with its tag is no file of the package.
    assert not [k for k in found if k[0] == 4]
    assert statuses_at(found, 5, "vllm/distributed/parallel_state.py:1") == [OK]
    assert statuses_at(found, 5, "vllm/distributed/gone_state.py") == [BROKEN]

