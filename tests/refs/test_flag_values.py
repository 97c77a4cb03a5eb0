"""A flag's value outside the choices the pin's parser lists (held-out 21: `--linear-backend
flashinfer` where only `flashinfer_*` backends are accepted, `--kv-cache-dtype fp4_e2m1` gone at a
release): broken, with the closest choices as homes. A value the reader fills in, a value in
another case, and a flag whose choices the index could not read as literals are not judged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.refs.build import flags_from
from analyzer.refs.pinview import FlagEntry, PinView
from analyzer.refs.shell import shell_refs

from .fakes import statuses, vllm_view


def _pin(tmp_path: Path) -> PinView:
    pin = vllm_view(tmp_path)
    dtype = FlagEntry("--kv-cache-dtype", (), "kv_cache_dtype", "vllm/engine/arg_utils.py:50", ("auto", "fp8", "fp8_e4m3", "fp8_e5m2"))
    return replace(pin, flags=[*pin.flags, dtype])


def test_the_value_a_command_gives_a_flag_is_read() -> None:
    refs = shell_refs("vllm serve m --kv-cache-dtype fp8 --max-num-seqs=8 --enable-prefix-caching --x")
    assert [(r.text, r.value) for r in refs if r.kind == "flag"] == [
        ("--kv-cache-dtype", "fp8"), ("--max-num-seqs", "8"), ("--enable-prefix-caching", None), ("--x", None)
    ]


def test_a_value_outside_the_choices_is_broken_with_the_closest_as_home(tmp_path: Path) -> None:
    doc = (
        "# vLLM\n\n```bash\nvllm serve m --kv-cache-dtype fp8_e4m4 --max-num-seqs 8\n```\n\n"
        "Use `--kv-cache-dtype FP8`, `--kv-cache-dtype $DTYPE` or `--kv-cache-dtype fp4_e2m1`.\n"
    )
    found = statuses(doc, _pin(tmp_path))
    assert found["--kv-cache-dtype"] == ["broken", "ok", "ok", "broken"]  # FP8: another case
    assert found["--max-num-seqs"] == ["ok"]  # no choices listed: not judged by value
    from analyzer.refs.check import check_references, extract_all

    (gone,) = [f for f in check_references(extract_all([("ch.md", doc)]), [_pin(tmp_path / "h")]) if f.ref.line == 4 and f.status == "broken"]
    assert gone.best is not None and gone.best.replacement == "--kv-cache-dtype fp8_e4m3"


def test_choices_kept_as_an_expression_are_not_choices() -> None:
    (entry,) = flags_from([{"flag": "--cuda-graph-backend", "choices": "(FULL, BREAKABLE)"}])
    assert entry.choices == ()
    (listed,) = flags_from([{"flag": "--block-size", "choices": [8, 16, 32]}])
    assert listed.choices == ("8", "16", "32")


def test_a_value_the_config_checks_against_a_typed_list_is_broken_only_where_spelled_nowhere(tmp_path: Path) -> None:
    # Held-out 21's `--quantization lut_b_moe`: vLLM's parser takes any string for --quantization,
    # its config then checks it against `QuantizationMethods` (`typed_values`). A value the sources
    # spell nowhere is no method of the project's; one they spell (a plugin may register it) is
    # left alone, as is any value of a flag with no list.
    from .test_undefined_names import _with_words

    pin = _with_words(vllm_view(tmp_path), tmp_path, source='REGISTERED = "my_quant"\n')
    quant = FlagEntry("--quantization", ("-q",), "quantization", "vllm/engine/arg_utils.py:60", (), ("awq", "fp8", "fp8_per_tensor"))
    pin = replace(pin, flags=[*pin.flags, quant])
    doc = "# vLLM\n\nRun `--quantization fp8_per_tensor`, `--quantization lut_b_moe`, `--quantization my_quant` or `--quantization FP8`.\n"
    from analyzer.refs.check import check_references, extract_all

    found = {f.ref.flag_value: f.status for f in check_references(extract_all([("ch.md", doc)]), [pin]) if f.ref.text == "--quantization"}
    assert found == {"fp8_per_tensor": "ok", "lut_b_moe": "broken", "my_quant": "ok", "FP8": "ok"}
    (entry,) = flags_from([{"flag": "--quantization", "choices": None, "typed_values": ["awq", "fp8"]}])
    assert entry.typed_values == ("awq", "fp8") and entry.choices == ()
