"""Keywords of quoted calls, judged against the callee's signature at the pin (`fields.accepts`):
a keyword of a project call inside a quoted method, a call quoted in the prose's code font, and a
call to a class named in capitals (`LLM(...)`). The forms are those of third-party notes on vLLM's
LoRA loading and SGLang's EAGLE worker, and of vLLM's pooling-models page (`task=` of the
`--task` era)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.fields import accepts
from analyzer.refs.pinview import PinView
from tests.refs.fakes import source_view

_LORA = '''
class LRUCacheLoRAModelManager:
    def __init__(self, model, max_num_seqs, device):
        self.max_num_seqs = max_num_seqs


class WorkerLoRAManager:
    def __init__(self, vllm_config, device, embedding_modules):
        self.max_num_seqs = vllm_config.max_num_seqs
        self.device = device


class LRUCacheWorkerLoRAManager(WorkerLoRAManager):
    _manager_cls: type[LRUCacheLoRAModelManager] = LRUCacheLoRAModelManager

    def create_lora_manager(self, model):
        return model


@dataclass
class LoRAMapping(WorkerLoRAManager):
    index_mapping: tuple = ()
'''
_RUNNER = '''
class LoRAModelRunnerMixin:
    def load_lora_model(self, model, vllm_config, device):
        self._check_model(model)
        self._set_active(model)
        self.lora_manager = LRUCacheWorkerLoRAManager(vllm_config, device, model.embedding_modules)
        return self.lora_manager.create_lora_manager(model)

    def _check_model(self, model):
        return model

    def _set_active(self, model):
        return model
'''
_SPEC = '''
@dataclass
class EagleDraftInput:
    hidden_states: object = None
    bonus_tokens: object = None
'''
_STAGES = '''
class DenoisingStage(PipelineStage):
    def __init__(self, transformer, scheduler, pipeline=None):
        self.transformer = transformer
'''
# A test's stand-in of the same name, which the wheel ships too.
_STAND_IN = '''
class DenoisingStage(PipelineStage):
    def __init__(self):
        pass
'''
_ARGS = '''
@dataclass
class EngineArgs:
    model: str = "facebook/opt-125m"
    runner: str = "auto"
'''
_LLM = '''
class LLM:
    def __init__(self, model: str, **kwargs) -> None:
        self.engine = EngineArgs(model=model, **kwargs)
'''


@pytest.fixture
def pin(tmp_path: Path) -> PinView:
    return source_view(
        tmp_path,
        {
            "vllm/test_stages.py": _STAND_IN,
            "vllm/multimodal_gen/pipelines/stages/denoising.py": _STAGES,
            "vllm/lora/worker_manager.py": _LORA,
            "vllm/v1/worker/lora_model_runner_mixin.py": _RUNNER,
            "vllm/v1/spec_decode/eagle.py": _SPEC,
            "vllm/engine/arg_utils.py": _ARGS,
            "vllm/entrypoints/llm.py": _LLM,
        },
    )


def _found(doc: str, pin: PinView) -> dict[tuple[int, str], tuple[str, str]]:
    out = {}
    for f in check_references(extract_all([("doc.md", doc)]), [pin]):
        out[(f.ref.line, f.ref.text)] = (f.status, f.best.replacement if f.best else "")
    return out


def test_an_inherited_init_says_what_a_subclass_takes(pin: PinView) -> None:
    # Not the attributes the base's `__init__` sets on `self` (`max_num_seqs`).
    assert accepts("LRUCacheWorkerLoRAManager", "device", pin) is True
    assert accepts("LRUCacheWorkerLoRAManager", "max_num_seqs", pin) is False
    # A dataclass writes its own `__init__` over its fields, whatever its base's.
    assert accepts("LoRAMapping", "index_mapping", pin) is True
    # Each class of the name by its own `__init__`, not its namesake's: the real one takes them.
    assert accepts("DenoisingStage", "transformer", pin) is True and accepts("DenoisingStage", "pipeline", pin) is True
    assert accepts("DenoisingStage", "vae", pin) is False


_QUOTED = """# vLLM LoRA loading (vLLM)

```python
def load_lora_model(self, model, vllm_config, device):
    self._check_model(model)
    self._set_active(model)
    self.lora_manager = LRUCacheWorkerLoRAManager(
        max_num_seqs=vllm_config.max_num_seqs,
        device=device,
    )
```
"""


def test_a_keyword_of_a_project_call_in_a_quoted_method_is_judged_by_the_signature(pin: PinView) -> None:
    got = _found(_QUOTED, pin)
    # Spelled everywhere (an attribute of the class), yet no keyword of its constructor.
    assert got[(8, "max_num_seqs")][0] == "broken"
    assert got[(9, "device")][0] == "ok"
    # `_manager_cls: type[...]` holds a class, not an object: not a home for the keyword.
    assert "LRUCacheLoRAModelManager" not in got[(8, "max_num_seqs")][1]


_PROSE = """# EAGLE worker (SGLang)

Creates `EagleDraftInput(hidden_states=logits_output.hidden_states, verified_id=next_token_ids)`.
Then `MyInput(size=1)` and `GoneInput(size=1)` are built.

```python
class MyInput:
    size: int = 0
```
"""


def test_keywords_of_a_call_quoted_in_the_prose(tmp_path: Path) -> None:
    sglang = source_view(tmp_path, {"sglang/srt/speculative/eagle_utils.py": _SPEC}, pin="sglang@0.5.20")
    got = _found(_PROSE, sglang)
    assert got[(3, "verified_id")][0] == "broken"
    assert got[(3, "hidden_states")][0] == "ok"
    # The document's own class, and a class the pin does not have (its own reference says so):
    # no verdict on their keywords.
    assert (4, "size") not in got


_POOLING = """# Pooling models (vLLM)

```python
llm = LLM(model="intfloat/e5-mistral-7b-instruct", task="embed")
(output,) = llm.embed("Hello, my name is")
```

```python
LIMIT = make_limit()
LIMIT(task=1)
run_id = UUID(hex="12345678123456781234567812345678")
```
"""


def test_a_class_named_in_capitals_is_called_with_keywords(pin: PinView) -> None:
    got = _found(_POOLING, pin)
    assert got[(4, "task")][0] == "broken"  # LLM(**kwargs) -> EngineArgs, which has no `task`
    assert got[(4, "model")][0] == "ok"
    assert got[(4, "LLM")][0] == "ok"
    assert (10, "task") not in got  # a name the document binds is its own object
    # Another library's class in capitals, which the pin does not define: no verdict on it or its keywords.
    assert got.get((11, "UUID"), ("not-checkable",))[0] != "broken" and (11, "hex") not in got
