"""Names of sgl-kernel, the kernel package SGLang builds beside its wheel.

SGLang's CUDA kernels and their Python bindings (`scaled_fp4_quant`, `cutlass_scaled_fp4_mm`,
`qserve_w4a8_per_chn_gemm`, the `gemm.py` that wraps them) live in the repository's
`sgl-kernel/` folder and ship as a package of their own; the sglang wheel imports a few of them
and holds none. A section that says it is about that package ("`sgl-kernel` 实现了 ...",
"kernels provided by sgl_kernel") quotes its names: a name the wheel does not define there is
not broken on the wheel's word, it is another package's (not-checkable, with the reason), even
where a past release of sglang once defined a namesake. A name the wheel does define is judged
as anywhere else.

Plain data in and out: the extractor marks the references of such a section
(`Reference.kernel_package`); `kernel_package_names` settles their findings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from analyzer.refs.models import BROKEN, NOT_CHECKABLE, PATH, SYMBOL, Finding
from analyzer.refs.pinview import PinView

# The package named as such: `sgl-kernel`, `sgl_kernel` (not a longer word: `sgl_kernel_npu`).
KERNEL_PACKAGE_RE = re.compile(r"(?<![\w-])sgl[-_]kernel(?![\w-])")


def kernel_package_names(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    """Broken findings on a wheel pin of sglang, in a section about sgl-kernel, whose name that
    wheel does not define (a symbol's last part) or whose bare file it lacks: not-checkable."""
    by_pin = {p.pin: p for p in pins}
    for f in findings:
        ref, pin = f.ref, by_pin.get(f.pin or "")
        if f.status != BROKEN or not ref.kernel_package or pin is None or pin.project != "sglang" or pin.kind != "release":
            continue
        if ref.kind == SYMBOL:
            last = ref.target.rsplit(".", 1)[-1]
            if any(e.last == last for e in pin.table.ending_with(last)):
                continue  # the wheel defines that name: judged as anywhere else
        elif not (ref.kind == PATH and ref.bare_file):
            continue
        f.status, f.suggestions = NOT_CHECKABLE, []
        f.note = f"`{ref.target}` is not in {f.pin}; its section is about sgl-kernel, a package of its own that the wheel does not hold (its sources are the repository's sgl-kernel/)"
    return findings
