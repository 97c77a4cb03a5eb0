"""A gone class renamed inside its module with the same signature (issue 12 §3: renames with the
same parent and signature): `from vllm.sampling_params import GuidedDecodingParams` and
`GuidedDecodingParams(choice=...)` at a pin where `vllm.sampling_params` stands: the one class of
that module ending in `Params`, other than those the document names itself, that takes `choice`
is the new name, suggested on the import and on the class's bare mentions in the prose. Nothing
when the text passes no keyword, or when two classes take them."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

_MOD = "vllm/sampling_params.py"


def _view(tmp_path: Path, twin: bool = False) -> PinView:
    (tmp_path / "vllm").mkdir(parents=True, exist_ok=True)
    (tmp_path / _MOD).write_text("# sampling\n", encoding="utf-8")
    fields = {"SamplingParams": ("temperature", "structured_outputs"), "StructuredOutputsParams": ("choice", "regex"), "BeamSearchParams": ("beam_width",)}
    if twin:
        fields["ChoiceParams"] = ("choice",)
    symbols = [SymbolEntry("vllm.sampling_params", _MOD, 1, 200, "module")]
    for line, (cls, names) in enumerate(fields.items(), 1):
        symbols.append(SymbolEntry(f"vllm.sampling_params.{cls}", _MOD, line * 10, line * 10 + 9, "class", ("msgspec.Struct",)))
        symbols += [SymbolEntry(f"vllm.sampling_params.{cls}.{n}", _MOD, line * 10 + 1, line * 10 + 1, "attribute") for n in names]
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset({_MOD}), symbols=symbols, flags=[], envs=[], tree=str(tmp_path),
    )


_DOC = (
    "In vLLM, configure it with `GuidedDecodingParams` inside `SamplingParams`.\n\n"
    "```python\nfrom vllm.sampling_params import SamplingParams, GuidedDecodingParams\n\n"
    "params = GuidedDecodingParams(choice=[\"yes\", \"no\"])\n```\n"
)


def _best(doc: str, pin: PinView) -> dict[tuple[int, str], str | None]:
    out = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin]):
        if f.status == BROKEN and f.ref.text == "GuidedDecodingParams":
            out[(f.ref.line, f.ref.target)] = f.best.replacement if f.best and f.best.confidence >= 0.5 else None
    return out


def test_the_class_of_the_module_that_takes_the_keywords_passed(tmp_path: Path) -> None:
    best = _best(_DOC, _view(tmp_path))
    assert best == {
        (1, "GuidedDecodingParams"): "vllm.sampling_params.StructuredOutputsParams",
        (4, "vllm.sampling_params.GuidedDecodingParams"): "vllm.sampling_params.StructuredOutputsParams",
        (6, "GuidedDecodingParams"): "vllm.sampling_params.StructuredOutputsParams",  # the call, cited again
    }


def test_no_keyword_or_two_classes_that_take_them_is_no_home(tmp_path: Path) -> None:
    assert set(_best(_DOC, _view(tmp_path, twin=True)).values()) == {None}
    silent = _DOC.replace('(choice=["yes", "no"])', "()")
    assert set(_best(silent, _view(tmp_path)).values()) == {None}
