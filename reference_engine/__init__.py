"""A readable LLM inference engine in PyTorch that runs on a CPU.

`from reference_engine import LLM, SamplingParams` is the usual entry point.
Heavy names (torch, tokenizers) load lazily, so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from reference_engine.sampling_params import SamplingParams

if TYPE_CHECKING:
    from reference_engine.config import EngineConfig
    from reference_engine.engine import Engine
    from reference_engine.llm import LLM
    from reference_engine.outputs import CompletionOutput, RequestOutput

_LAZY = {
    "LLM": "reference_engine.llm",
    "Engine": "reference_engine.engine",
    "EngineConfig": "reference_engine.config",
    "RequestOutput": "reference_engine.outputs",
    "CompletionOutput": "reference_engine.outputs",
}

__all__ = ["LLM", "CompletionOutput", "Engine", "EngineConfig", "RequestOutput", "SamplingParams"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reference_engine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
