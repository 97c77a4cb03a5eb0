"""A snippet variable declared with a project class (`def cache_finished_req(self, req: Req)`,
`batch: "ScheduleBatch"`, `Optional[Req]`, `x: Req = ...`): its attributes, read, stored or called,
are that class's members, judged against it (and its bases) at each pin; a member that moved into
the class one field holds is suggested there."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, OK
from analyzer.refs.pinview import PinView

from .fakes import source_view, statuses

_BATCH = "sglang/srt/managers/schedule_batch.py"
_BATCH_SRC = '''from dataclasses import dataclass


class ReqKvInfo:
    def __init__(self):
        self.req_pool_idx = None


class ReqMixin:
    def init_mixin(self):
        self.mixin_state = 0


class Req(ReqMixin):
    def __init__(self, rid, origin_input_ids):
        self.rid = rid
        self.origin_input_ids = origin_input_ids
        self.output_ids = []
        self.kv = ReqKvInfo()

    @property
    def seqlen(self):
        return len(self.origin_input_ids) + len(self.output_ids)

    def finished(self):
        return False

    def reset(self):
        for name in ("a", "b"):
            self.last_node, self.extend_range = None, None


@dataclass
class ScheduleBatch:
    reqs: list
    forward_mode: int = 0
'''


def _view(tmp_path: Path) -> PinView:
    return source_view(tmp_path, {_BATCH: _BATCH_SRC}, pin="sglang@0.5.20")


def _judged(doc: str, view: PinView) -> dict[str, set[str]]:
    """Each reference text's statuses, over every line that writes it."""
    return {text: set(found) for text, found in statuses(doc, view).items()}


def _doc(code: str) -> str:
    return f"# SGLang's chunk cache\n\nThe cache frees a finished request:\n\n```python\n{code}```\n"


_METHOD = """def cache_finished_req(self, req: Req, is_insert: bool = True):
    kv_indices = self.req_to_token_pool.req_to_token[req.req_pool_idx, : len(req.origin_input_ids)]
    self.req_to_token_pool.free(req.req_pool_idx)
    req.prefix_indices = kv_indices
    if req.finished() and req.seqlen > req.mixin_state:
        req.last_node = None
"""


def test_an_attribute_the_declared_class_lacks_is_broken(tmp_path: Path) -> None:
    found = _judged(_doc(_METHOD), _view(tmp_path))
    assert found["req.req_pool_idx"] == {BROKEN}  # `ReqKvInfo`'s now, not `Req`'s
    assert found["req.prefix_indices"] == {BROKEN}  # a store of a member the class never has


def test_members_the_class_defines_inherits_or_writes_on_self_are_ok(tmp_path: Path) -> None:
    found = _judged(_doc(_METHOD), _view(tmp_path))
    assert found["req.origin_input_ids"] == {OK}  # `self.x = ...` in `__init__`
    assert found["req.finished"] == {OK}  # a method, called
    assert found["req.seqlen"] == {OK}  # a property
    assert found["req.mixin_state"] == {OK}  # written on `self` in a base
    assert found["req.last_node"] == {OK}  # written on `self` in a tuple assignment


def test_the_home_is_the_class_one_field_holds(tmp_path: Path) -> None:
    refs = extract_all([("ch.md", _doc(_METHOD))])
    broken = [f for f in check_references(refs, [_view(tmp_path)]) if f.ref.text == "req.req_pool_idx" and f.status == BROKEN]
    assert broken and all(f.best is not None and f.best.replacement == "ReqKvInfo.req_pool_idx" for f in broken)


def test_every_way_of_declaring_the_class_is_read(tmp_path: Path) -> None:
    code = """def run(batch: "ScheduleBatch", req: Optional[Req], other: Req | None = None):
    first: Req = batch.reqs[0]
    return batch.forward_mode, batch.spec_info, req.fill_ids, other.rid, first.fill_ids
"""
    found = _judged(_doc(code), _view(tmp_path))
    assert found["batch.forward_mode"] == {OK}  # a dataclass field
    assert found["batch.spec_info"] == {BROKEN}
    assert found["req.fill_ids"] == {BROKEN}
    assert found["other.rid"] == {OK}
    assert found["first.fill_ids"] == {BROKEN}


def test_variables_whose_class_is_not_the_project_s_or_not_certain_are_not_judged(tmp_path: Path) -> None:
    code = """class Job:
    pass


def run(job: Job, t: torch.Tensor, req: Req, reqs: List[Req], gone: NoSuchClass):
    req = job.next_req()
    return job.fill_ids, t.fill_ids, req.fill_ids, reqs.fill_ids, gone.fill_ids
"""
    found = _judged(_doc(code), _view(tmp_path))
    for text in ("job.fill_ids", "t.fill_ids", "req.fill_ids", "reqs.fill_ids", "gone.fill_ids"):
        assert BROKEN not in found.get(text, []), text


_ENGINE = "vllm/v1/engine/async_llm.py"
_ARGS = "vllm/engine/arg_utils.py"
_ENGINE_SRC = '''class AsyncLLM:
    @classmethod
    def from_vllm_config(cls, vllm_config, enable_log_requests=False, disable_log_stats=False):
        return cls()


def build_async_engine_client_from_engine_args(engine_args):
    return AsyncLLM.from_vllm_config(None)
'''
_ARGS_SRC = '''from dataclasses import dataclass


@dataclass
class AsyncEngineArgs:
    enable_log_requests: bool = False
    disable_log_stats: bool = False
'''


def test_a_setting_passed_through_under_its_own_name_is_one_fix(tmp_path: Path) -> None:
    # `disable_log_requests=engine_args.disable_log_requests`: the keyword's finding says it (with
    # its new name); the attribute is reported on its own only where the keyword is fine.
    code = """def build_async_engine_client_from_engine_args(engine_args: AsyncEngineArgs, vllm_config):
    return AsyncLLM.from_vllm_config(
        vllm_config,
        disable_log_requests=engine_args.disable_log_requests,
        disable_log_stats=engine_args.log_stats_off,
    )
"""
    view = source_view(tmp_path, {_ENGINE: _ENGINE_SRC, _ARGS: _ARGS_SRC}, pin="vllm@0.30.0")
    doc = f"# vLLM's serve path\n\nThe server builds its engine:\n\n```python\n{code}```\n"
    found = _judged(doc, view)
    assert found["disable_log_requests"] == {BROKEN}
    assert "engine_args.disable_log_requests" not in found or BROKEN not in found["engine_args.disable_log_requests"]
    assert found["engine_args.log_stats_off"] == {BROKEN}
