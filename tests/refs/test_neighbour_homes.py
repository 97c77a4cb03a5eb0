"""A gone file's new home from what the document writes around it (`neighbour_homes.py`): the
names listed under it, and the folder its sibling moved to (the shape of a note on SGLang's
Triton kernels, whose triton_ops/ moved to kernels/ops/attention/)."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView


def test_a_gone_file_goes_where_the_names_listed_under_it_live_and_its_folder_follows(vllm30: PinView) -> None:
    # The shape of a note on SGLang's Triton kernels: the gone file, the kernels listed under it
    # (still defined, in a file of the same name elsewhere), then a sibling file of its folder.
    doc = (
        "# vLLM\n\n"
        "- **Pool**: `vllm/engine/block_pool.py`\n"
        "  - `BlockPool` (`:10-80`) hands out blocks.\n"
        "- The hashes sit in `engine/kv_cache_utils.py` (same structure).\n"
    )
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [vllm30])}
    pool, utils = got["vllm/engine/block_pool.py"], got["engine/kv_cache_utils.py"]
    assert pool.status == "broken" and pool.best is not None and pool.best.replacement == "vllm/v1/core/block_pool.py"
    assert utils.status == "broken" and utils.best is not None and utils.best.replacement == "vllm/v1/core/kv_cache_utils.py"
