"""Suggestions a reader can accept (issue 12 §3): an env var whose setting became a flag, and a
moved file whose snippet heads each part of the code with its own path comment."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import extract_all
from analyzer.refs.pinview import FlagEntry, PinView, SymbolEntry
from analyzer.refs.suggest import suggest

from .test_resolve import ref


def test_an_env_var_whose_setting_became_a_flag_gets_that_flag(vllm30: PinView) -> None:
    # the fake pin's `--max-num-seqs` sets `max_num_seqs`
    found = suggest(ref("VLLM_MAX_NUM_SEQS", "env"), vllm30)
    assert found[0].replacement == "--max-num-seqs" and 0.7 <= found[0].confidence < 0.9
    assert found[0].location == "vllm/engine/arg_utils.py:41"
    # no flag sets the name, or two do: nothing is offered on that ground
    assert all(s.replacement.startswith("VLLM_") for s in suggest(ref("VLLM_NO_SUCH_SETTING", "env"), vllm30))
    vllm30.flags.append(FlagEntry("--max-seqs", (), "max_num_seqs", "vllm/engine/arg_utils.py:99"))
    assert not any(s.replacement.startswith("--") for s in suggest(ref("VLLM_MAX_NUM_SEQS", "env"), vllm30))
    # a variable without the project's prefix is not the project's setting
    assert not any(s.replacement.startswith("--") for s in suggest(ref("MAX_NUM_SEQS", "env"), vllm30))


def test_each_path_comment_heads_the_code_below_it() -> None:
    doc = (
        "```python\n"
        "# in vllm/sampling_params.py add a parameter\n"
        "class SamplingParams:\n"
        "    my_param: float = 1.0\n"
        "\n"
        "# in vllm/model_executor/layers/sampler.py apply it\n"
        "def _apply_my_param(logits, my_param):\n"
        "    pass\n"
        "```\n"
    )
    writes = {r.target: r.writes for r in extract_all([("ch.md", doc)]) if r.kind == "path"}
    assert writes == {"vllm/sampling_params.py": "SamplingParams", "vllm/model_executor/layers/sampler.py": "_apply_my_param"}
    # a lone heading still names the snippet's first definition, wherever it is
    lone = "```python\nclass Foo:\n    pass\n# from vllm/foo.py\n```\n"
    assert [r.writes for r in extract_all([("ch.md", lone)]) if r.kind == "path"] == ["Foo"]


def test_an_outline_def_that_does_not_parse_still_heads_its_path_comment() -> None:
    doc = (
        "```python\n"
        "# in vllm/attention/ create a backend\n"
        "class MyAttentionBackend(AttentionBackend):\n"
        "    def forward(self, query, key, value, ...):\n"
        "        pass\n"
        "\n"
        "# register it in vllm/attention/__init__.py\n"
        "def get_attn_backend(head_size, dtype, ...):\n"
        "    if my_condition:\n"
        "        return MyAttentionBackend()\n"
        "```\n"
    )
    writes = {r.target: r.writes for r in extract_all([("ch.md", doc)]) if r.kind == "path"}
    assert writes == {"vllm/attention": "MyAttentionBackend", "vllm/attention/__init__.py": "get_attn_backend"}


def test_a_path_comment_naming_a_file_the_pin_holds_elsewhere_is_a_moved_file_not_a_new_one(vllm30: PinView) -> None:
    from analyzer.refs.check import check_references
    from analyzer.refs.models import BROKEN

    doc = (
        "```python\n"
        "# in vllm/v1/core/block_pool.py add the helper\n"  # gone from vllm/v1/core/sched/, still at vllm/v1/core/
        "def _my_helper(pool):\n"
        "    pass\n"
        "```\n"
    ).replace("vllm/v1/core/block_pool.py", "vllm/v1/core/sched/block_pool.py")
    found = {f.ref.target: f.status for f in check_references(extract_all([("ch.md", doc)]), [vllm30])}
    assert found["vllm/v1/core/sched/block_pool.py"] == BROKEN
    # a file with a new name in a folder the pin has stays the reader's file to write
    new = doc.replace("sched/block_pool.py", "sched/my_pool.py")
    assert "vllm/v1/core/sched/my_pool.py" not in {f.ref.target for f in check_references(extract_all([("ch.md", new)]), [vllm30])}


def _compilation_pin(tmp_path: Path, *extra: SymbolEntry) -> PinView:
    symbols = [
        SymbolEntry("vllm.config", "vllm/config/__init__.py", 1, 20, "module"),
        SymbolEntry("vllm.config.compilation", "vllm/config/compilation.py", 1, 200, "module"),
        SymbolEntry("vllm.config.CompilationConfig", "vllm/config/__init__.py", 3, 3, "import"),
        SymbolEntry("vllm.config.CompilationMode", "vllm/config/__init__.py", 3, 3, "import"),
        SymbolEntry("vllm.config.compilation.CompilationConfig", "vllm/config/compilation.py", 50, 150, "class"),
        SymbolEntry("vllm.config.compilation.CompilationMode", "vllm/config/compilation.py", 10, 20, "class", ("enum.IntEnum",)),
        *extra,
    ]
    return PinView(pin="vllm@9.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
                   files=frozenset({"vllm/config/__init__.py", "vllm/config/compilation.py"}), symbols=symbols, flags=[], envs=[])


def _doc_findings(doc: str, pin: PinView) -> dict[str, list[str]]:
    from analyzer.refs.check import check_references

    found = check_references(extract_all([("ch.md", doc)]), [pin])
    return {f.ref.target: [s.replacement for s in f.suggestions if s.confidence >= 0.5] for f in found if f.status == "broken"}


def test_a_class_renamed_in_its_module_is_the_one_sibling_the_text_does_not_name(tmp_path: Path) -> None:
    doc = "```python\nfrom vllm.config import CompilationConfig, CompilationLevel\nconfig = CompilationConfig(level=CompilationLevel.PIECEWISE)\n```\n"
    found = _doc_findings(doc, _compilation_pin(tmp_path))
    assert found["vllm.config.CompilationLevel"][:1] == ["vllm.config.compilation.CompilationMode"]
    # without the text naming CompilationConfig, two siblings are left: no guess
    alone = _doc_findings("```python\nfrom vllm.config import CompilationLevel\n```\n", _compilation_pin(tmp_path))
    assert not any(s.startswith("vllm.config.compilation.") for s in alone["vllm.config.CompilationLevel"])
    # an enum (its members written in capitals) is succeeded by an enum only
    other = SymbolEntry("vllm.config.compilation.CompilationTimes", "vllm/config/compilation.py", 160, 170, "class")
    pin = _compilation_pin(tmp_path, SymbolEntry("vllm.config.CompilationTimes", "vllm/config/__init__.py", 3, 3, "import"), other)
    assert _doc_findings(doc, pin)["vllm.config.CompilationLevel"][:1] == ["vllm.config.compilation.CompilationMode"]


def test_a_bare_name_beside_a_quoted_class_member_gets_that_class_s_closest_member(vllm30: PinView) -> None:
    paragraph = "In vLLM, see `Scheduler.schedule` and `_preempt_requst` together."
    best = suggest(ref("_preempt_requst", "symbol", paragraph=paragraph), vllm30)[0]
    assert best.replacement == "Scheduler._preempt_request" and 0.5 <= best.confidence < 0.7
    # without the quoted class in its sentence, no member is offered on that ground
    alone = suggest(ref("_preempt_requst", "symbol", paragraph="In vLLM, see `_preempt_requst`."), vllm30)
    assert not any(s.replacement.startswith("Scheduler.") for s in alone)
