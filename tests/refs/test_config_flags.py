"""An option folded into a config option's object (`suggest._folded_into_config`), in vLLM's
shape: `--speculative-model` and `--num-speculative-tokens` became fields of the
`SpeculativeConfig` that `--speculative-config` takes."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.pinview import FlagEntry, PinView, SymbolEntry
from analyzer.refs.suggest import suggest

from .test_resolve import ref

ARGS = "vllm/engine/arg_utils.py"
SPEC = "vllm/config/speculative.py"
COMP = "vllm/config/compilation.py"


def _pin(tmp_path: Path) -> PinView:
    symbols = [
        SymbolEntry("vllm.config.speculative.SpeculativeConfig", SPEC, 10, 90, "class"),
        SymbolEntry("vllm.config.speculative.SpeculativeConfig.model", SPEC, 12, 12, "attribute"),
        SymbolEntry("vllm.config.speculative.SpeculativeConfig.num_speculative_tokens", SPEC, 13, 13, "attribute"),
        SymbolEntry("vllm.config.compilation.CompilationConfig", COMP, 10, 90, "class"),
        SymbolEntry("vllm.config.compilation.CompilationConfig.backend", COMP, 12, 12, "attribute"),
        SymbolEntry("vllm.config.compilation.CompilationConfig.mode", COMP, 13, 13, "attribute"),
    ]
    flags = [
        FlagEntry("--speculative-config", (), "speculative_config", f"{ARGS}:40"),
        FlagEntry("--compilation-config", ("-cc",), "compilation_config", f"{ARGS}:41"),
        FlagEntry("--distributed-executor-backend", (), "distributed_executor_backend", f"{ARGS}:42"),
    ]
    return PinView(
        pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset([ARGS, SPEC, COMP]), symbols=symbols, flags=flags, envs=[], tree=str(tmp_path),
    )


def test_an_option_that_became_a_field_of_a_config_option(tmp_path: Path) -> None:
    pin = _pin(tmp_path)
    for gone in ("--speculative-model", "--num-speculative-tokens"):
        best = suggest(ref(gone, "flag", command="vllm serve"), pin)[0]
        assert best.replacement == "--speculative-config" and 0.5 <= best.confidence < 0.8, gone
    # `backend` is a field of CompilationConfig, but nothing of `--compilation-config` is in the
    # old name (`--guided-decoding-backend`): not folded there.
    assert all(s.replacement != "--compilation-config" for s in suggest(ref("--guided-decoding-backend", "flag", command="vllm serve"), pin))
