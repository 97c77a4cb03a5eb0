"""Forms from the false alarms of held-out 184-189 (labelled blind at the start of the session): a
section about sgl-kernel, SGLang's kernel package, quoting that package's names; Kubernetes' own
vocabulary in a deployment page; transformers' configuration class of a model family the pin
serves; a name a Chinese sentence says was removed; a benchmark README's scripts and the options
listing of its script."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.lineage import PastName
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import FlagEntry

from .fakes import findings_by_place, source_view, statuses_at

_SGLANG = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/layers/__init__.py": "",
    "sglang/srt/layers/quantization/__init__.py": "",
    "sglang/srt/layers/quantization/fp8_kernel.py": "def per_token_group_quant_fp8(x):\n    return x\n",
}


def test_a_section_about_sgl_kernel_quotes_that_packages_names(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SGLANG, "sglang@0.5.20")
    # A past release of sglang had a namesake (a JIT kernel): still the kernel package's name here.
    past = {"sglang": {"scaled_fp4_quant": [PastName("sglang@0.5.10", "sglang.jit_kernel.nvfp4.scaled_fp4_quant", "function", "sglang/jit_kernel/nvfp4.py")]}}
    doc = (
        "# SGLang quantization\n\n"
        "## 8. Native FP4\n\n"
        "On SM100, `sgl-kernel` implements NVFP4.\n\n"  # 5
        "### 8.1 Blockscaled quant\n\n"
        "SGLang implements `scaled_fp4_quant`, one scale per 16 elements.\n\n"  # 9
        "- `cutlass_scaled_fp4_mm` (`gemm.py`): the matrix multiply.\n"  # 11
        "- `per_token_group_quant_fp8` and `per_token_group_quant_fp9`: SGLang's own wrappers.\n\n"  # 12
        "## 9. Other GEMMs\n\n"
        "SGLang calls `gone_gemm_wrapper` here.\n"  # 16
    )
    found = findings_by_place(doc, view, lineages=past)
    assert statuses_at(found, 9, "scaled_fp4_quant") == [NOT_CHECKABLE]
    assert statuses_at(found, 11, "cutlass_scaled_fp4_mm") == [NOT_CHECKABLE]
    assert statuses_at(found, 11, "gemm.py") == [NOT_CHECKABLE]
    # A name the wheel defines is judged as anywhere else.
    assert statuses_at(found, 12, "per_token_group_quant_fp8") == [OK]
    # The next section does not name the package: its names are the project's.
    assert statuses_at(found, 16, "gone_gemm_wrapper") == [BROKEN]


_VLLM = {
    "vllm/__init__.py": "",
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/models/__init__.py": "",
    "vllm/model_executor/models/glm.py": "class GlmMoeDsaForCausalLM:\n    def __init__(self, config):\n        self.config = config\n",
}


def test_kubernetes_kinds_in_a_deployment_page(tmp_path: Path) -> None:
    view = source_view(tmp_path, _VLLM, "vllm@0.30.0")
    doc = (
        "# Multi-node vLLM\n\n"
        "```mermaid\n"
        "flowchart TD\n"
        '    LWS["LeaderWorkerSet (LWS)<br>(a multi-node API)"]\n'  # 5
        "```\n\n"
        "The volume must be `ReadWriteMany`; a pod stuck in `ImagePullBackOff` cannot pull the image.\n"  # 8
    )
    found = findings_by_place(doc, view)
    for line, name in ((5, "LeaderWorkerSet"), (8, "ReadWriteMany"), (8, "ImagePullBackOff")):
        assert BROKEN not in statuses_at(found, line, name), name


def test_transformers_config_class_of_a_family_the_pin_serves(tmp_path: Path) -> None:
    view = source_view(tmp_path, _VLLM, "vllm@0.30.0")
    doc = (
        "# Running GLM on a CPU\n\n"
        "- `GlmMoeDsaConfig.__init__` defaults `index_topk=2048`, so the attribute always exists.\n"  # 3
        "- `GlmMoeDsaRunnerConfig` holds the runner's settings.\n"  # 4
    )
    found = findings_by_place(doc, view)
    assert statuses_at(found, 3, "GlmMoeDsaConfig.__init__") == [NOT_CHECKABLE]
    # No family of that name in the pin (`GlmMoeDsaRunner...` is not a model): judged as before.
    assert statuses_at(found, 4, "GlmMoeDsaRunnerConfig") == [BROKEN]


def test_a_chinese_sentence_says_the_name_was_removed(tmp_path: Path) -> None:
    view = source_view(tmp_path, _VLLM, "vllm@0.30.0")
    doc = (
        "# Dummy weights\n\n"
        "14 种格式。**注意：老版本的 `dummy_hf_loader` 在 0.28.0 已被移除**\n\n"  # 3
        "调度时，`free_dummy_blocks` 被移除出队列后再分配。\n"  # 5
    )
    found = findings_by_place(doc, view)
    assert statuses_at(found, 3, "dummy_hf_loader") == [NOT_CHECKABLE]
    # 被移除 without 已 ("is removed from the queue") says what the code does, not that the name is gone.
    assert statuses_at(found, 5, "free_dummy_blocks") == [BROKEN]


_SERVER = {
    "sglang/__init__.py": "",
    "sglang/launch_server.py": "def main():\n    pass\n",
}


def test_a_benchmark_readmes_scripts_and_their_options_listing(tmp_path: Path) -> None:
    bare = source_view(tmp_path, _SERVER, "sglang@0.5.20")
    view = replace(bare, flags=[FlagEntry("--model-path", (), "model_path", "sglang/srt/server_args.py:1"), FlagEntry("--port", (), "port", "sglang/srt/server_args.py:2")])
    doc = (
        "# Encoder Benchmark\n\n"
        "## Files\n\n"
        "- `bench_encoder.py` - QPS-based benchmark script\n\n"  # 5
        "## Usage\n\n"
        "```bash\n"
        "python -m sglang.launch_server --model-path Qwen/Qwen3-VL-8B-Instruct --port 30000\n"
        "python bench_encoder.py --encoder-url http://localhost:30000 --qps 20 --duration 60\n"
        "```\n\n"
        "## Common Options\n\n"
        "```\n"
        "--encoder-url       Encoder server URL (required)\n"  # 17
        "--qps               Target queries per second (required)\n"  # 18
        "--duration          Test duration in seconds (default: 60)\n"
        "--audio-sample-rate Sample rate of random audio in Hz\n"  # 20
        "```\n\n"
        "## Server options\n\n"
        "```\n"
        "--model-path        The model\n"
        "--max-num-seqz      Misspelled\n"  # 27
        "```\n"
    )
    found = findings_by_place(doc, view)
    # A script the document's blocks run by its bare name: the reader's folder's, here too.
    assert BROKEN not in statuses_at(found, 5, "bench_encoder.py")
    # The script's own options, listed as its --help prints them: the script's, not the server's.
    for line, flag in ((17, "--encoder-url"), (18, "--qps"), (20, "--audio-sample-rate")):
        assert BROKEN not in statuses_at(found, line, flag), flag
    # A listing of the server's options is still the server's.
    assert statuses_at(found, 27, "--max-num-seqz") == [BROKEN]
