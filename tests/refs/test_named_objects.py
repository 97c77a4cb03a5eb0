"""An object a snippet never binds, named the way the project names its instances
(`server_args.piecewise_cuda_graph_tokens`, `self.scheduler_config.is_multi_step`): a reader takes
`server_args` for a `ServerArgs`, so the attribute is that class's member, judged against the pin's
class of exactly that name. A name no class is exactly named after, or one the document binds or
imports, says nothing."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView

from .fakes import source_view, statuses

_ARGS = "sglang/srt/server_args.py"
_ARGS_SRC = '''from dataclasses import dataclass


@dataclass
class ServerArgs:
    tp_size: int = 1
    dp_size: int = 1
    enable_dp_attention: bool = False

    def resolve_memory(self):
        return 0


class SchedulerConfig:
    def __init__(self):
        self.max_running_requests = 8


class RadixCache:
    def match_prefix(self, key):
        return key


class DetokenizerManager:
    pass


class DetokenizerManagerClient:
    def get_output(self):
        return None


class EngineBase:
    pass


class AsyncEngine(EngineBase):
    def get_tokenizer(self):
        return None
'''


def _view(tmp_path: Path) -> PinView:
    return source_view(tmp_path, {_ARGS: _ARGS_SRC}, pin="sglang@0.5.20")


def _judged(doc: str, view: PinView) -> dict[str, set[str]]:
    return {text: set(found) for text, found in statuses(doc, view).items()}


def _doc(code: str, prose: str = "The runner reads its settings:") -> str:
    return f"# SGLang's model runner\n\n{prose}\n\n```python\n{code}```\n"


def test_a_free_objects_member_is_judged_against_its_namesake_class(tmp_path: Path) -> None:
    code = """class PiecewiseCudaGraphRunner:
    def __init__(self, model_runner):
        self.config = CompilationConfig(
            server_args.piecewise_cuda_graph_tokens,
            server_args.tp_size,
        )
        self.dp = server_args.dp_size if server_args.enable_dp_attention else 1
"""
    found = _judged(_doc(code), _view(tmp_path))
    assert found["server_args.piecewise_cuda_graph_tokens"] == {BROKEN}
    assert found["server_args.tp_size"] == {OK}
    assert found["server_args.dp_size"] == {OK}
    assert found["server_args.enable_dp_attention"] == {OK}


def test_a_stored_or_called_member_counts_too(tmp_path: Path) -> None:
    code = "server_args.enable_lora_prefetch = False\nserver_args.resolve_memory()\nserver_args._handle_gpu_memory_settings()\n"
    found = _judged(_doc(code), _view(tmp_path))
    assert found["server_args.enable_lora_prefetch"] == {BROKEN}
    assert {OK} in (found.get("server_args.resolve_memory()"), found.get("server_args.resolve_memory"))
    assert {BROKEN} in (found.get("server_args._handle_gpu_memory_settings()"), found.get("server_args._handle_gpu_memory_settings"))


def test_an_object_held_on_self_is_named_like_its_class(tmp_path: Path) -> None:
    code = "def schedule(self):\n    if self.scheduler_config.is_multi_step:\n        n = self.scheduler_config.max_running_requests\n"
    found = _judged(_doc(code), _view(tmp_path))
    assert found["self.scheduler_config.is_multi_step"] == {BROKEN}
    assert found["self.scheduler_config.max_running_requests"] == {OK}


def test_a_bound_imported_or_merely_related_name_says_nothing(tmp_path: Path) -> None:
    code = """from mylib import scheduler_config
server_args = parse_my_args()
x = server_args.piecewise_cuda_graph_tokens
y = scheduler_config.is_multi_step
z = tree_cache.no_such_method
"""
    found = _judged(_doc(code), _view(tmp_path))
    # Bound by the snippet, imported from another library, or named like no class exactly
    # (`tree_cache` is a `RadixCache`, which the name does not say): not judged by this rule.
    assert BROKEN not in found.get("server_args.piecewise_cuda_graph_tokens", set())
    assert BROKEN not in found.get("scheduler_config.is_multi_step", set())
    assert BROKEN not in found.get("tree_cache.no_such_method", set())


def test_the_prose_names_an_object_the_same_way(tmp_path: Path) -> None:
    doc = "# SGLang's model runner\n\nIt reads `server_args.piecewise_cuda_graph_tokens` and `server_args.tp_size`.\n"
    found = _judged(doc, _view(tmp_path))
    assert found["server_args.piecewise_cuda_graph_tokens"] == {BROKEN}
    assert found["server_args.tp_size"] == {OK}


def test_a_class_named_with_more_words_or_a_subclass_may_hold_the_member(tmp_path: Path) -> None:
    code = """def step(self):
    out = self.detokenizer_manager.get_output()
    self.detokenizer_manager.no_such_call()
    tok = self.engine_base.get_tokenizer()
"""
    found = _judged(_doc(code), _view(tmp_path))
    # The front end's `detokenizer_manager` may be the `...Client`; an `EngineBase` may be the
    # `AsyncEngine` that implements it. Neither is a broken citation.
    assert BROKEN not in found.get("self.detokenizer_manager.get_output", set())
    assert BROKEN not in found.get("self.engine_base.get_tokenizer", set())
    assert found["self.detokenizer_manager.no_such_call"] == {BROKEN}
