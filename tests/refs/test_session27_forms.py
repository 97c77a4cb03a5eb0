"""Forms from the false alarms of held-out 148-165 (labelled blind in the session before): a script
named with `-`, a platform's Dockerfile, the files an example folder's README lists, and Docker's
options in a sentence about launching under Docker."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import FlagEntry

from .fakes import findings_by_place, source_view, statuses_at

_SOURCES = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/sched/__init__.py": "",
    "vllm/v1/core/sched/scheduler.py": "class Scheduler:\n    def schedule(self):\n        return None\n",
}


def test_a_script_named_with_a_hyphen_is_the_repositorys(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    doc = (
        "# Benchmark dashboard\n\n"
        "The `compare-json-results.py` helps to compare two result files.\n"  # 3
        "The `compare_json_gone.py` once did this.\n"  # 4
        "See `scheduler.py` for the loop.\n"  # 5
    )
    found = findings_by_place(doc, view)
    # No module can be imported under a name with `-`: the repository's script, not the wheel's.
    assert statuses_at(found, 3, "compare-json-results.py") == [NOT_CHECKABLE]
    # The same name with `_` could be a module: still looked up, and broken when gone.
    assert statuses_at(found, 4, "compare_json_gone.py") == [BROKEN]
    assert statuses_at(found, 5, "scheduler.py") == [OK]


def test_a_platforms_dockerfile_is_a_file_not_a_dotted_name(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    doc = (
        "# The vLLM source tree\n\n"
        "```\n"
        "docker/\n"
        "├── Dockerfile              # the main image\n"
        "├── Dockerfile.cpu          # CPU\n"  # 6
        "└── Dockerfile.rocm         # ROCm\n"  # 7
        "```\n\n"
        "The scheduler is `Scheduler.gone_method`.\n"  # 10
    )
    found = findings_by_place(doc, view)
    assert not found.get((6, "Dockerfile.cpu"))
    assert not found.get((7, "Dockerfile.rocm"))
    assert statuses_at(found, 10, "Scheduler.gone_method") == [BROKEN]


def test_the_files_an_example_folders_readme_lists(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    readme = (
        "# Disaggregated Prefill\n\n"
        "This example contains scripts that demonstrate disaggregated prefill.\n\n"
        "## Files\n\n"
        "- `prefill_example.py` - performs the prefill stage.\n"  # 7
        "- `scheduler.py` - the package's scheduler, for comparison.\n"  # 8
    )
    found = findings_by_place(readme, view)
    assert statuses_at(found, 7, "prefill_example.py") == [NOT_CHECKABLE]
    assert statuses_at(found, 8, "scheduler.py") == [OK]
    # The same list in a document that does not say it is an example's README: looked up.
    note = readme.replace("This example contains scripts that demonstrate", "A note on")
    found = findings_by_place(note, view)
    assert statuses_at(found, 7, "prefill_example.py") == [BROKEN]


def test_dockers_options_in_a_sentence_about_docker(tmp_path: Path) -> None:
    bare = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    view = replace(bare, flags=[FlagEntry("--tensor-parallel-size", ("-tp",), "tensor_parallel_size", "vllm/engine/arg_utils.py:1")])
    doc = (
        "# Running vLLM\n\n"
        "- For Docker launches, use `--ipc=host` and a large `--shm-size`.\n"  # 3
        "- Use `--gone-server-flag` to make the server faster.\n"  # 4
        "- Use `--tensor-parallel-size` to split the model.\n"  # 5
    )
    found = findings_by_place(doc, view)
    assert statuses_at(found, 3, "--ipc=host") != [BROKEN]
    assert statuses_at(found, 3, "--shm-size") != [BROKEN]
    # No other program in the sentence: the server's flag, judged as before.
    assert statuses_at(found, 4, "--gone-server-flag") == [BROKEN]
    assert statuses_at(found, 5, "--tensor-parallel-size") == [OK]


def test_names_in_capitals_are_siblings_only_within_a_table_column(tmp_path: Path) -> None:
    sources = {
        **_SOURCES,
        "vllm/pooling.py": "import enum\n\n\nclass ChannelReduction(enum.Enum):\n    MEAN = 1\n    CLS = 2\n    LAST = 3\n",
    }
    view = source_view(tmp_path, sources, "vllm@0.30.0")
    doc = (
        "# Long text embedding\n\n"
        "| Variable | Default | Description |\n"
        "|---|---|---|\n"
        "| `MAX_EMBED_LEN` | `3072000` | Maximum input length |\n"  # 5
        "| `POOLING_TYPE` | `auto` | Pooling: `auto`, `MEAN`, `CLS`, `LAST` |\n"  # 6
        "| `API_KEY` | `EMPTY` | API key |\n"  # 7
        "\n"
        "| Reduction |\n"
        "|---|\n"
        "| `MEAN` |\n"  # 11
        "| `FIRST_GONE` |\n"  # 12
    )
    found = findings_by_place(doc, view)
    # The description column's `MEAN` is no sibling of the first column's variables.
    assert BROKEN not in statuses_at(found, 5, "MAX_EMBED_LEN")
    assert BROKEN not in statuses_at(found, 7, "API_KEY")
    # Within one column, a name missing from the class its neighbours belong to is still broken.
    assert statuses_at(found, 11, "MEAN") == [OK]
    assert statuses_at(found, 12, "FIRST_GONE") == [BROKEN]


def test_an_options_listing_of_the_program_the_document_runs(tmp_path: Path) -> None:
    bare = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    view = replace(bare, flags=[FlagEntry("--kv-transfer-config", (), "kv_transfer_config", "vllm/engine/arg_utils.py:1")])
    doc = (
        "# LMCache\n\n"
        "## The server\n\n"
        "```bash\n"
        "lmcache server --l1-size-gb 100 --eviction-policy LRU\n"
        "vllm serve m --kv-transfer-config '{}'\n"
        "```\n\n"
        "| Flag | Default |\n"
        "|---|---|\n"
        "| `--l1-size-gb` | required |\n"
        "| `--eviction-policy` | required |\n"
        "| `--chunk-size` | 256 |\n"  # 14
        "\n## vLLM's side\n\n"
        "- `--kv-transfer-config`: the connector\n"  # 18
        "- `--gone-vllm-flag`: removed\n"  # 19
    )
    found = findings_by_place(doc, view)
    # Listed beside the options the document hands to `lmcache server`: that program's.
    assert not found.get((14, "--chunk-size"))
    # A listing of the project's own flags is judged as before.
    assert statuses_at(found, 18, "--kv-transfer-config") == [OK]
    assert statuses_at(found, 19, "--gone-vllm-flag") == [BROKEN]


def test_the_files_under_a_heading_on_the_folders_scripts(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    doc = (
        "# MoE LoRA tables\n\n"
        "## Scripts here\n\n"
        "- `tune_lora_config.py` - emit a seed table\n"  # 5
        "\n## The scheduler\n\n"
        "- `gone_scheduler.py` - the old scheduler\n"  # 9
    )
    found = findings_by_place(doc, view)
    assert statuses_at(found, 5, "tune_lora_config.py") == [NOT_CHECKABLE]
    assert statuses_at(found, 9, "gone_scheduler.py") == [BROKEN]



def test_a_layers_weight_is_registered_at_run_time(tmp_path: Path) -> None:
    sources = {
        **_SOURCES,
        "vllm/layers.py": (
            "class QKVParallelLinear:\n    def forward(self, x):\n        return x\n\n\n"
            # A class named like the object (the word "proj"), which the name is looked up on first.
            "class RelLogitsProj:\n    def forward(self, x):\n        return x\n\n\n"
            # Unrelated classes that have the names: what makes the text's names look current.
            "class BaseLayerWithLoRA:\n    def __init__(self):\n        self.weight = None\n        self.lora_a = None\n\n\n"
            "class LlamaAttention:\n    def __init__(self):\n        self.qkv_proj = QKVParallelLinear()\n"
        ),
    }
    view = source_view(tmp_path, sources, "vllm@0.30.0")
    doc = "# Weight loading in vLLM\n\nThe vLLM loader writes `qkv_proj.weight` in three slices, and `qkv_proj.lora_a` too.\n"
    found = findings_by_place(doc, view)
    assert statuses_at(found, 3, "qkv_proj.weight") == [NOT_CHECKABLE]
    # Another member only unrelated classes have is still broken on the object.
    assert statuses_at(found, 3, "qkv_proj.lora_a") == [BROKEN]


def test_a_method_of_pythons_own_classes_written_bare(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    doc = (
        "# The vLLM scheduler's cache\n\n"
        "On a hit the vLLM cache calls `move_to_end()` and the tokenizer runs in `run_in_executor(self._executor, ...)`.\n"  # 3
        "The vLLM scheduler then calls `schedule()` and `gone_schedule_step()`.\n"  # 4
    )
    found = findings_by_place(doc, view)
    # `OrderedDict.move_to_end`, the asyncio loop's `run_in_executor`: Python's, not the project's.
    assert statuses_at(found, 3, "move_to_end()") == [NOT_CHECKABLE]
    assert statuses_at(found, 3, "run_in_executor(self._executor, ...)") == [NOT_CHECKABLE]
    assert statuses_at(found, 4, "schedule()") == [OK]
    assert statuses_at(found, 4, "gone_schedule_step()") == [BROKEN]



def test_a_containers_method_on_an_attribute_the_pin_has(tmp_path: Path) -> None:
    registry = "class _ModelRegistry:\n    def __init__(self):\n        self.models = {}\n\n\nModelRegistry = _ModelRegistry()\n"
    view = source_view(tmp_path, {**_SOURCES, "vllm/registry.py": registry}, "vllm@0.30.0")
    doc = (
        "# Registering a model with vLLM\n\n"
        "```python\n"
        "from vllm.registry import ModelRegistry\n"
        "ModelRegistry.models.update({'MyModel': MyModel})\n"  # 5
        "ModelRegistry.gone_models.update({'MyModel': MyModel})\n"  # 6
        "```\n"
    )
    found = findings_by_place(doc, view)
    assert NOT_CHECKABLE in statuses_at(found, 5, "ModelRegistry.models.update")
    assert BROKEN not in statuses_at(found, 5, "ModelRegistry.models.update")
    assert BROKEN in statuses_at(found, 6, "ModelRegistry.gone_models.update")


def test_a_name_the_sentence_calls_a_directory(tmp_path: Path) -> None:
    view = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    doc = (
        "# vLLM offline prefill\n\n"
        "The vLLM script saves the KV state to the `local_storage` directory.\n"  # 3
        "The vLLM `local_storage` function was removed.\n"  # 4
    )
    found = findings_by_place(doc, view)
    assert BROKEN not in statuses_at(found, 3, "local_storage")
    assert statuses_at(found, 4, "local_storage") == [BROKEN]


def test_a_rule_of_dashes_in_a_programs_output_is_no_flag(tmp_path: Path) -> None:
    bare = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    view = replace(bare, flags=[FlagEntry("--tensor-parallel-size", (), "tensor_parallel_size", "vllm/engine/arg_utils.py:1")])
    doc = (
        "# vLLM ASR benchmark\n\n"
        "```bash\n"
        "vllm serve openai/whisper-large-v3 --tensor-parallel-size 1\n"
        "```\n\n"
        "```\n"
        "------------------------------\n"  # 8
        "--gone-option 3\n"  # 9
        "----tensor-parallel-size 2\n"  # 10
        "```\n"
    )
    found = findings_by_place(doc, view)
    assert not found.get((8, "------------------------------"))
    # Dashes too many before a name: an author's slip, still read as an option.
    assert statuses_at(found, 10, "----tensor-parallel-size")
    # An option line after the server command is still the server's.
    assert statuses_at(found, 9, "--gone-option") == [BROKEN]


def test_the_options_listing_of_a_repository_script_the_document_runs(tmp_path: Path) -> None:
    bare = source_view(tmp_path, _SOURCES, "vllm@0.30.0")
    view = replace(bare, flags=[FlagEntry("--tensor-parallel-size", (), "tensor_parallel_size", "vllm/engine/arg_utils.py:1")])
    doc = (
        "# Tuning vLLM's block-wise kernels\n\n"
        "```bash\n"
        "python benchmarks/kernels/tune_block_wise.py --N 5120 --K 25600\n"
        "```\n\n"
        "## Parameters\n\n"
        "- `--N`, `--K`: weight matrix dimensions\n"  # 9
        "- `--block-n`: block size\n"  # 10
        "\n## Serving\n\n"
        "- `--gone-server-flag`: removed\n"  # 14
    )
    found = findings_by_place(doc, view)
    assert BROKEN not in statuses_at(found, 9, "--N")
    assert BROKEN not in statuses_at(found, 10, "--block-n")
    assert statuses_at(found, 14, "--gone-server-flag") == [BROKEN]
