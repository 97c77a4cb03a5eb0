"""The fast ast-paired locator agrees with libcst's own PositionProvider on real code."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import libcst as cst
import pytest

from analyzer.index.extract import _Extractor, extract_file
from analyzer.index.locate import AstLocator

REPO = Path(__file__).resolve().parents[2]
# Real, varied code from this repository (comprehensions, f-strings, decorators, async, ...).
SAMPLES = sorted(
    p.relative_to(REPO).as_posix()
    for p in [REPO / "analyzer" / "index" / "extract.py", *(REPO / "reference_engine").glob("*.py")]
)

TRICKY = '''
x = [f(a) for a in g(b) if h(a)] if cond(y) else k(z).w
d = {k(1): v(2) for k, v in items()}
@deco(a.b)
@other
def fn(p: T.U = d(1), *, q: V.W = e(2)) -> R.S:
    s = f"{obj.attr!r:>{width.n}} {call(x)}" "plain" f"{o.p}"
    try:
        pass
    except (E.F, G) as exc:
        raise H(exc).i from exc
    match cmd.value:
        case Point(x=0) if guard(cmd):
            pass
        case Color.RED:
            pass
    lam = lambda m=n.o: m.p(q)
    (aa.bb)(cc).dd = ee[ff.gg:hh(1)]
    yield from it.er()
    async_ = [await_(t) async for t in src.aiter()]
    return (yield other.thing)
class C(Base.B, *mixins, metaclass=M.X, **kw):
    attr: A.B = c.d()
'''


def normalise(value: Any) -> Any:
    # libcst's code generation re-indents continuation lines; ast slices keep the
    # source's layout. Compare texts with whitespace removed.
    if isinstance(value, str):
        return "".join(value.split())
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def test_tricky_source_pairs_without_fallback() -> None:
    module = cst.parse_module(TRICKY)
    facts = _Extractor(module, AstLocator(TRICKY, ast.parse(TRICKY)), "t.py", "", 0).run()  # raises on mismatch
    slow = extract_file(TRICKY.encode(), "t.py", fast=False)
    fast = facts.to_dict() | {"sha256": slow.sha256, "lines": slow.lines}
    assert normalise(fast) == normalise(slow.to_dict())


@pytest.mark.parametrize("path", SAMPLES)
def test_fast_and_slow_locators_agree(path: str) -> None:
    data = (REPO / path).read_bytes()
    fast = extract_file(data, path, fast=True)
    slow = extract_file(data, path, fast=False)
    assert normalise(fast.to_dict()) == normalise(slow.to_dict())
