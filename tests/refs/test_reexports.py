"""Names a package re-exports (SGLang's diffusion guide: `sglang.multimodal_gen.runtime.distributed.divide`
through `from .utils import *`, `ModelTaskType` imported into a config module, a kernel served by a
lazy `__getattr__` table): importable from where the text says, so not broken. Read from the
module's source statically; an import inside a function is no re-export."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView
from analyzer.refs.symbols import SymbolEntry

_INIT = '''\
from vllm.pkg.impl import *
from vllm.pkg.types import Kind as Kind

if True:
    from .more import extra_op

_LAZY = {"fast_op": "ops.fast", "slow_op": "ops.slow:slow_impl"}


def __getattr__(name):
    return _LAZY[name]


def build():
    from .secret import hidden_op
    return hidden_op
'''


def _pin(vllm30: PinView) -> PinView:
    assert vllm30.tree is not None
    init = Path(vllm30.tree) / "vllm" / "pkg" / "__init__.py"
    init.parent.mkdir(parents=True, exist_ok=True)
    init.write_text(_INIT, encoding="utf-8")
    entries = [
        SymbolEntry("vllm.pkg", "vllm/pkg/__init__.py", 1, 16, "module"),
        SymbolEntry("vllm.pkg.impl.helper_op", "vllm/pkg/impl.py", 3, 9, "function"),
        SymbolEntry("vllm.pkg.secret.hidden_op", "vllm/pkg/secret.py", 10, 12, "function"),
        SymbolEntry("vllm.pkg.types.Kind", "vllm/pkg/types.py", 3, 9, "class"),
        SymbolEntry("vllm.pkg.more.extra_op", "vllm/pkg/more.py", 3, 9, "function"),
        SymbolEntry("vllm.pkg.ops.fast.fast_op", "vllm/pkg/ops/fast.py", 3, 9, "function"),
        SymbolEntry("vllm.pkg.ops.slow.slow_impl", "vllm/pkg/ops/slow.py", 3, 9, "function"),
    ]
    return replace(vllm30, symbols=[*vllm30.table, *entries])


def test_names_a_package_re_exports_resolve_where_the_text_imports_them(vllm30: PinView) -> None:
    doc = (
        "In vLLM, import `vllm.pkg.helper_op`, `vllm.pkg.Kind`, `vllm.pkg.extra_op`, `vllm.pkg.fast_op` and "
        "`vllm.pkg.slow_op`; `vllm.pkg.hidden_op` and `vllm.pkg.gone_op` are not importable from there.\n"
    )
    got = {f.ref.text: f for f in check_references(extract_all([("ch.md", doc)]), [_pin(vllm30)])}
    for text in ("vllm.pkg.helper_op", "vllm.pkg.Kind", "vllm.pkg.extra_op", "vllm.pkg.fast_op", "vllm.pkg.slow_op"):
        assert got[text].status == OK, (text, got[text].note)
    assert got["vllm.pkg.fast_op"].resolved_at is not None and "ops/fast.py" in got["vllm.pkg.fast_op"].resolved_at
    for text in ("vllm.pkg.hidden_op", "vllm.pkg.gone_op"):
        assert got[text].status == BROKEN, (text, got[text].note)
