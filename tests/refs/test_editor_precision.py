"""What a careful editor does not call broken: a script the document places in the repository's
tests, a key inside a dict-valued setting, a metrics page's short metric name, and a snippet's
variable that holds a class. Each case with its counterpart that stays broken."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import PinView, SymbolEntry

_CFG = "vllm/config/kv_transfer.py"
_WORKER = "vllm/distributed/kv_transfer/nixl_worker.py"
_METRICS = "vllm/v1/offload/metrics.py"

_SOURCES = {
    _CFG: (
        "from dataclasses import dataclass, field\n"
        "from typing import Any\n"
        "@dataclass\n"
        "class KVTransferConfig:\n"
        "    kv_connector: str | None = None\n"
        "    kv_connector_extra_config: dict[str, Any] = field(default_factory=dict)\n"
        "    kv_transfer_backend: TransferBackend | None = None\n"
    ),
    _WORKER: (
        "class TransferBackend:\n"
        "    def start(self):\n"
        "        pass\n"
        "class NixlWorker:\n"
        "    def __init__(self, cfg):\n"
        "        self.backends = cfg.kv_connector_extra_config.get('backends')\n"
    ),
    _METRICS: (
        "class OffloadMetrics:\n"
        "    def __init__(self, counter_cls):\n"
        "        self.saves = counter_cls(name=\"vllm:kv_offload_save_outcomes_total\")\n"
        "        self.used = counter_cls(name=\"vllm:kv_offload_used_blocks\")\n"
    ),
}


def _view(tmp_path: Path) -> PinView:
    tree = tmp_path / "vllm-0.33.0"
    for rel, text in _SOURCES.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
    symbols = [
        SymbolEntry("vllm.config.kv_transfer.KVTransferConfig", _CFG, 4, 7, "class"),
        SymbolEntry("vllm.config.kv_transfer.KVTransferConfig.kv_connector", _CFG, 5, 5, "attribute"),
        SymbolEntry("vllm.config.kv_transfer.KVTransferConfig.kv_connector_extra_config", _CFG, 6, 6, "attribute"),
        SymbolEntry("vllm.config.kv_transfer.KVTransferConfig.kv_transfer_backend", _CFG, 7, 7, "attribute"),
        SymbolEntry("vllm.distributed.kv_transfer.nixl_worker.TransferBackend", _WORKER, 1, 3, "class"),
        SymbolEntry("vllm.distributed.kv_transfer.nixl_worker.TransferBackend.start", _WORKER, 2, 3, "function"),
        SymbolEntry("vllm.distributed.kv_transfer.nixl_worker.NixlWorker", _WORKER, 4, 6, "class"),
        SymbolEntry("vllm.distributed.kv_transfer.nixl_worker.NixlWorker.backends", _WORKER, 6, 6, "attribute"),
        SymbolEntry("vllm.v1.offload.metrics.OffloadMetrics", _METRICS, 1, 4, "class"),
    ]
    view = PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset([*_SOURCES, "vllm/__init__.py"]), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(tmp_path / "words.json")
    return view


def _found(doc: str, pin: PinView) -> dict[str, tuple[str, str]]:
    return {f.ref.text: (f.status, f.note) for f in check_references(extract_all([("doc.md", doc)]), [pin])}


def test_a_bare_file_the_document_places_under_the_repository_s_tests_is_not_checkable(tmp_path: Path) -> None:
    doc = (
        "# vLLM disaggregated serving\n\n"
        "Run the proxy `tests/v1/kv_connector/nixl_integration/toy_proxy_server.py` in front of both instances.\n\n"
        "The roles come from the proxy (e.g. `toy_proxy_server.py`), not from vLLM.\n\n"
        "The server is started by `other_proxy.py`.\n"
    )
    found = _found(doc, _view(tmp_path))
    assert found["toy_proxy_server.py"][0] == NOT_CHECKABLE
    assert "tests/v1/kv_connector/nixl_integration/toy_proxy_server.py" in found["toy_proxy_server.py"][1]
    # A bare name the document never writes with its folders is still looked up by name alone.
    assert found["other_proxy.py"][0] == BROKEN


def test_a_bare_file_the_pin_has_is_that_file_whatever_path_the_document_wrote(tmp_path: Path) -> None:
    # The full path written is stale, the file of that name is there: the bare name is right.
    doc = (
        "# vLLM KV transfer\n\n"
        "Start from `vllm/distributed/kv_transfer/kv_transfer.py`.\n\n"
        "`kv_transfer.py` declares the settings.\n"
    )
    found = _found(doc, _view(tmp_path))
    assert found["vllm/distributed/kv_transfer/kv_transfer.py"][0] == BROKEN
    assert found["kv_transfer.py"][0] == OK


def test_a_member_of_a_dict_valued_setting_is_a_key_not_an_attribute(tmp_path: Path) -> None:
    doc = (
        "# vLLM NIXL\n\n"
        "Set `kv_connector_extra_config.backends` in `--kv-transfer-config`.\n\n"
        "Then `kv_transfer_backend.backends` lists them.\n"
    )
    found = _found(doc, _view(tmp_path))
    assert found["kv_connector_extra_config.backends"][0] == NOT_CHECKABLE
    assert "dict" in found["kv_connector_extra_config.backends"][1]
    # An attribute declared with a class: its member is that class's, and the class has none.
    assert found["kv_transfer_backend.backends"][0] == BROKEN


def test_a_metrics_page_s_short_name_is_the_metric_that_ends_so(tmp_path: Path) -> None:
    doc = (
        "# vLLM offload metrics\n\n"
        "- `save_outcomes_total` classifies stores.\n"
        "- `used_blocks` counts pinned blocks.\n"
        "- `evicted_blocks_total` counts evictions.\n"
    )
    found = _found(doc, _view(tmp_path))
    assert found["save_outcomes_total"][0] == OK and "vllm:kv_offload_save_outcomes_total" in found["save_outcomes_total"][1]
    assert found["used_blocks"][0] == OK
    assert found["evicted_blocks_total"][0] == BROKEN  # no metric ends so


def test_a_snippet_s_variable_holding_a_class_is_not_a_class(tmp_path: Path) -> None:
    doc = (
        "# vLLM workers\n\n"
        "```python\n"
        "RunnerClass = pick_runner(config)\n"
        "self.model_runner = RunnerClass(vllm_config=config)\n"
        "self.other = OldModelRunner(vllm_config=config)\n"
        "```\n"
    )
    found = _found(doc, _view(tmp_path))
    assert "RunnerClass" not in found
    assert found["OldModelRunner"][0] == BROKEN
