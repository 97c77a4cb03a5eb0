"""A document's copy of a project class (`copies.py`): a snippet whose lead paragraph says where in
the project it lives is the project's class; its `self.x` members are judged against that class and
its bases at the pin, a class the pin no longer defines is broken and its members are not judged.
The forms are those of third-party source-reading notes (a V0 tutorial's `**位置**: \\`path\\`` line,
simplified bodies with `...` among the parameters)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.copies import constructed, headed, located, self_members
from analyzer.refs.document import parse_snippet
from analyzer.refs.pinview import PinView
from tests.refs.fakes import source_view

_SCHEDULER = '''
class SchedulerInterface:
    def has_requests(self) -> bool:
        return False


class Scheduler(SchedulerInterface):
    def __init__(self, vllm_config, kv_cache_config):
        self.waiting = []
        self.running = []
        self.kv_cache_manager = None

    def schedule(self):
        return None


def make_batch(requests):
    return requests
'''
_ENGINE = '''
class Executor:
    def execute_model(self, scheduler_output):
        return None


class OutputProcessor:
    def process_outputs(self, outputs):
        return outputs


class LLMEngine:
    def __init__(self, vllm_config):
        self.model_executor = Executor()
        self.output_processor = OutputProcessor()

    def step(self):
        return self.output_processor.process_outputs(self.model_executor.execute_model(None))


def build_engine_client(engine_args, usage_context=None):
    return LLMEngine(engine_args)
'''


_LAYERS = '''
class CustomOp:
    def forward(self, *args, **kwargs):
        return self.dispatch(*args, **kwargs)


class RMSNorm(CustomOp):
    def forward_native(self, x, residual):
        return x
'''
# Another class of the same name, in a model's file (as vLLM has several `RMSNorm`s).
_MODEL = '''
class RMSNorm:
    def forward(self, hidden_states):
        return hidden_states
'''


def _view(root: Path) -> PinView:
    """A vLLM pin whose index holds, as the real one does, the attributes `__init__` assigns, and
    whose sources' words are read from disk (`PinView.mentions`)."""
    return source_view(root, {
        "vllm/v1/core/sched/scheduler.py": _SCHEDULER,
        "vllm/v1/engine/llm_engine.py": _ENGINE,
        "vllm/model_executor/layers/layernorm.py": _LAYERS,
        "vllm/model_executor/models/toy.py": _MODEL,
    })


@pytest.fixture
def pin(tmp_path: Path) -> PinView:
    return _view(tmp_path)


def _statuses(doc: str, pin: PinView) -> dict[tuple[int, str], str]:
    return {(f.ref.line, f.ref.text): f.status for f in check_references(extract_all([("doc.md", doc)]), [pin])}


_COPY = """# vLLM internals

### Scheduler
**File**: `vllm/core/scheduler.py`

```python
class Scheduler:
    def __init__(self, scheduler_config, cache_config, ...):
        self.waiting: Deque[SequenceGroup] = deque()
        self.swapped = deque()
        self.block_manager = BlockSpaceManager(...)

    def schedule(self):
        if self.has_requests():
            return self._schedule_running(self.waiting)
```
"""


def test_a_located_copy_is_judged_member_by_member_against_the_pin_s_class(pin: PinView) -> None:
    got = _statuses(_COPY, pin)
    assert got[(8, "scheduler_config")] == "broken" and got[(8, "cache_config")] == "broken"  # `...` among them parses
    assert got[(9, "self.waiting")] == "ok"
    assert got[(10, "self.swapped")] == "broken"  # neither Scheduler nor its base assigns it
    assert got[(11, "self.block_manager")] == "broken"
    assert got[(14, "self.has_requests")] == "ok"  # inherited from the pin's base class
    assert got[(15, "self._schedule_running")] == "broken"
    assert got[(9, "SequenceGroup")] == "broken"  # a type in the annotation of `self.waiting`


def test_without_a_place_the_block_s_vote_still_decides(pin: PinView) -> None:
    # The same copy without the line saying where it lives: one method in common (`schedule`) is
    # no evidence that it is the project's class, so its members are not judged.
    doc = _COPY.replace("**File**: `vllm/core/scheduler.py`\n", "")
    got = _statuses(doc, pin)
    assert not any(status == "broken" for (_, text), status in got.items() if text.startswith("self.") or text.endswith("_config"))


_GONE = """# vLLM V0

### Block manager
**位置**: `vllm/core/block_manager.py`

```python
class SelfAttnBlockSpaceManager:
    def __init__(self, block_size, ...):
        self.block_size = block_size
        self.allocator = CpuGpuBlockAllocator.create(...)

    def allocate(self, seq_group):
        self._allocate_sequence(seq_group)
```
"""


def test_a_located_copy_of_a_gone_class_is_broken_and_its_members_are_not_judged(pin: PinView) -> None:
    got = _statuses(_GONE, pin)
    assert got[(7, "SelfAttnBlockSpaceManager")] == "broken"
    assert got[(10, "CpuGpuBlockAllocator.create")] == "broken"  # a class the copy names, judged though its own class is gone
    assert not any(text.startswith("self.") or text in {"block_size", "allocate", "seq_group"} for _, text in got)


def test_a_lead_that_tells_the_reader_to_write_new_code_is_not_a_place(pin: PinView) -> None:
    doc = _GONE.replace("**位置**: `vllm/core/block_manager.py`", "Add a new manager in `vllm/core/block_manager.py`:")
    assert not any(status == "broken" for (_, text), status in _statuses(doc, pin).items() if text != "vllm/core/block_manager.py")
    assert located("在 `vllm/attention/` 下创建新的 backend") is None
    assert located("**位置**: `vllm/core/scheduler.py`") == "vllm/core/scheduler.py"
    assert located("**Location**: `python/sglang/srt/managers/scheduler.py`") is not None
    assert located("A long paragraph. " * 20 + "`vllm/core/scheduler.py`") is None


def test_a_gone_folder_named_over_the_reader_s_new_class_is_broken(pin: PinView) -> None:
    doc = "# vLLM\n\n```python\n# under vllm/attention/ create a new backend\nclass MyBackend(Base):\n    pass\n```\n"
    assert _statuses(doc, pin)[(4, "vllm/attention/")] == "broken"


def test_self_members_and_constructed_attributes_are_read_from_the_copy() -> None:
    [(_, tree)] = parse_snippet("class A:\n    def f(self, x, ...):\n        self.m = Manager(x)\n        self.n.go(self.m, self.__dict__)\n")
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef) and isinstance(cls.body[0], ast.FunctionDef)
    assert [(m.lineno, m.name) for m in self_members(cls.body[0])] == [(3, "m"), (4, "n"), (4, "m")]
    assert constructed(cls) == {"m": "Manager"}


_ENGINE_NOTES = """# vLLM engine

#### LLMEngine.step() - the core loop

```python
def step(self):
    if not self._has_remaining_steps():
        outputs = self.model_executor.execute_model(req)
    return self._process_model_outputs(outputs)
```

### LLMEngine
**File**: `vllm/engine/llm_engine.py`

```python
class LLMEngine:
    def __init__(self, vllm_config, ...):
        self.scheduler = Scheduler(...)
        self.output_processor = SequenceGroupOutputProcessor(...)
```

Debugging:

```python
print(f"Waiting: {len(scheduler.waiting)}, swapped: {len(scheduler.swapped)}")
outputs = output_processor.process_outputs(model_outputs)
num_blocks = model_executor.determine_num_available_blocks()
result = model_executor.execute_model(req)
```
"""


def test_a_method_the_heading_gives_to_a_class_is_judged_on_that_class(pin: PinView) -> None:
    got = _statuses(_ENGINE_NOTES, pin)
    assert got[(6, "step")] == "ok"
    assert got[(7, "self._has_remaining_steps")] == "broken"
    assert got[(8, "self.model_executor")] == "ok"
    assert got[(9, "self._process_model_outputs")] == "broken"
    # Without the heading, a lone `def step(self)` is judged on whichever classes define `step`,
    # by the block's vote (one method in common: nothing said).
    plain = _ENGINE_NOTES.replace("#### LLMEngine.step() - the core loop", "#### The core loop")
    assert not any(status == "broken" for (line, _), status in _statuses(plain, pin).items() if line < 10)


def test_an_object_a_copied_class_constructs_is_judged_as_that_class(pin: PinView) -> None:
    got = _statuses(_ENGINE_NOTES, pin)
    assert got[(18, "self.scheduler")] == "broken"  # the pin's LLMEngine holds no scheduler
    assert got[(25, "scheduler.waiting")] == "ok" and got[(25, "scheduler.swapped")] == "broken"  # inside an f-string
    # The pin's LLMEngine still holds an `output_processor`: the pin's object is meant, not the
    # copy's stale `SequenceGroupOutputProcessor`.
    assert got[(26, "output_processor.process_outputs")] == "ok"


def test_a_method_on_an_object_the_project_names_is_judged_by_its_spelling(pin: PinView) -> None:
    got = _statuses(_ENGINE_NOTES, pin)
    assert got[(27, "model_executor.determine_num_available_blocks")] == "broken"  # the sources never spell it
    assert got[(28, "model_executor.execute_model")] == "ok"
    assert not any(text.startswith(("outputs.", "result.")) for _, text in got)  # the snippet's own variables


_HEADED = """# vLLM internals

```python
# vllm/v1/core/sched/scheduler.py
class Scheduler(SchedulerInterface):
    def schedule(self):
        return self._schedule_chunked(self.waiting)
```

```python
# vllm/core/old_scheduler.py (simplified)
class OldScheduler:
    def step(self):
        pass
```

The old `OldScheduler` ran each step.
"""


def test_a_path_comment_heading_the_snippet_places_the_copy(pin: PinView) -> None:
    got = _statuses(_HEADED, pin)
    assert got[(7, "self._schedule_chunked")] == "broken" and got[(7, "self.waiting")] == "ok"
    # A class the snippet's header places in the project is the project's, not the author's: its
    # name is judged (`OldScheduler` is gone), also where the prose names it.
    assert got[(12, "OldScheduler")] == "broken" and got[(17, "OldScheduler")] == "broken"
    # Without the header, the block's vote decides (one method in common: nothing said).
    plain = _statuses(_HEADED.replace("# vllm/v1/core/sched/scheduler.py\n", ""), pin)
    assert (6, "self._schedule_chunked") not in plain and plain[(11, "OldScheduler")] == "broken"


def test_a_header_that_names_the_reader_s_new_file_does_not_place() -> None:
    assert headed("# vllm/v1/core/sched/scheduler.py\nclass Scheduler:\n    pass\n", None) == "vllm/v1/core/sched/scheduler.py"
    assert headed("\n# File: python/sglang/srt/managers/scheduler.py\nx = 1\n", None) is not None
    assert headed("# vllm/model_executor/models/my_model.py\nclass MyModel:\n    pass\n", None) is None
    assert headed("# 在 vllm/attention/ 下创建新的 backend\nclass B:\n    pass\n", None) is None
    assert headed("# vllm/v1/core/sched/scheduler.py\nclass S:\n    pass\n", "Add your own scheduler:") is None
    assert headed("x = 1\n# vllm/v1/core/sched/scheduler.py\n", None) is None  # not the first line


_NORM = """# vLLM layers

```python
# vllm/model_executor/layers/layernorm.py
class RMSNorm(nn.Module):
    def forward(self, x, residual=None):
        return x
```
"""


def test_a_placed_copy_s_parameters_are_judged_on_the_class_in_the_named_file(pin: PinView) -> None:
    # The layer's `RMSNorm.forward` is its base's `forward(*args, **kwargs)`: nothing to say about
    # `x` or `residual`; the model's `RMSNorm.forward(hidden_states)` is another class.
    got = _statuses(_NORM, pin)
    assert got[(5, "RMSNorm")] == "ok"
    assert got.get((6, "residual")) != "broken" and got.get((6, "x")) != "broken"


def test_a_class_made_through_an_unknown_object_says_nothing_of_its_instances(pin: PinView) -> None:
    doc = "# vLLM\n\n```python\nproc = context.Process(target=run)\nproc.start()\n```\n"
    assert not any(text.startswith("proc.") for _, text in _statuses(doc, pin))


_NO_SELF = """# The scheduler, in pseudocode

```python
class Scheduler:
    def schedule(budget):
        if has_requests():
            pick_next(budget)
        return make_batch(waiting)
```
"""


def test_a_copy_that_leaves_out_self_calls_its_class_s_members_bare(pin: PinView) -> None:
    got = _statuses(_NO_SELF, pin)
    assert got[(6, "has_requests")] == "ok"  # the pin's class has it (from its base)
    assert got[(7, "pick_next")] == "broken"  # no member of the pin's Scheduler: judged without the block's vote
    assert (8, "make_batch") not in got  # also a module-level function of the pin: no clear verdict
    # With `self` kept, a bare call is a function the copy does not import, not a member.
    kept = _statuses(_NO_SELF.replace("schedule(budget)", "schedule(self, budget)"), pin)
    assert (7, "pick_next") not in kept


_DEEPER = """# vLLM engine

**File**: `vllm/v1/engine/llm_engine.py`

```python
class LLMEngine:
    def step(self):
        if envs.VLLM_GONE_FLAG:
            out = self.model_executor.run_gone_method(OldTokenizerGroup)
        return self.output_processor.process_outputs(out)
```
"""


def test_a_copy_s_env_reads_member_chains_and_classes_passed_as_values(pin: PinView) -> None:
    got = _statuses(_DEEPER, pin)
    # `envs.X`: a variable of the project's env registry (this pin's index has no registry to judge it).
    assert [r.kind for r in extract_all([("doc.md", _DEEPER)]) if r.text == "VLLM_GONE_FLAG"] == ["env"] and (8, "VLLM_GONE_FLAG") in got
    # A member of a member: the object's class is unknown, so only a name the pin's sources never
    # spell is said to be stale.
    assert got[(9, "self.model_executor.run_gone_method")] == "broken"
    assert (10, "self.output_processor.process_outputs") not in got
    assert got[(9, "OldTokenizerGroup")] == "broken"  # a class handed over as a value


def test_a_class_assigned_or_returned_as_a_value_is_cited(pin: PinView) -> None:
    doc = "# vLLM\n\n**File**: `vllm/v1/engine/llm_engine.py`\n\n```python\nclass LLMEngine:\n    def step(self):\n        executor_class = GoneExecutor\n        return Scheduler\n```\n"
    got = _statuses(doc, pin)
    assert got[(8, "GoneExecutor")] == "broken" and got[(9, "Scheduler")] == "ok"


def test_each_branch_of_a_conditional_class_value_is_cited(pin: PinView) -> None:
    # `return EAGLEWorkerV2 if enable_overlap else EAGLEWorker` names two classes (held-out 41).
    doc = "# vLLM\n\n**File**: `vllm/v1/engine/llm_engine.py`\n\n```python\nclass LLMEngine:\n    def step(self, overlap):\n        executor_class = Scheduler if overlap else GoneExecutor\n        return GoneRunner if overlap else Scheduler\n```\n"
    got = _statuses(doc, pin)
    assert got[(8, "Scheduler")] == "ok" and got[(8, "GoneExecutor")] == "broken"
    assert got[(9, "GoneRunner")] == "broken" and got[(9, "Scheduler")] == "ok"


_TREE = """# vLLM objects

```text
engine: LLMEngine
  |__ scheduler: SchedulerInterface
  |__ output: OutputProcessor
      |__ runner: GoneRunnerBase
```
"""


def test_class_names_in_a_diagram_are_judged_with_the_block_s_other_names(pin: PinView) -> None:
    got = _statuses(_TREE, pin)
    assert got[(4, "LLMEngine")] == "ok" and got[(7, "GoneRunnerBase")] == "broken"
    # Where most of the block's names are not the project's, the block is the author's own.
    toy = _statuses(_TREE.replace("LLMEngine", "ToyEngine").replace("SchedulerInterface", "ToyScheduler"), pin)
    assert (7, "GoneRunnerBase") not in toy


def test_a_comment_right_above_a_quoted_method_can_name_its_class(pin: PinView) -> None:
    doc = "# vLLM\n\n```python\n# LLMEngine.step(): the core loop\ndef step(self):\n    return self._process_model_outputs(self.model_executor)\n```\n"
    got = _statuses(doc, pin)
    assert got[(5, "step")] == "ok" and got[(6, "self._process_model_outputs")] == "broken" and got[(6, "self.model_executor")] == "ok"
    # A comment that names no class says nothing: the block's vote decides (one method: nothing said).
    plain = _statuses(doc.replace("# LLMEngine.step(): the core loop", "# the core loop"), pin)
    assert (6, "self._process_model_outputs") not in plain


def test_a_comment_that_is_a_class_s_name_alone_gives_the_method_to_it(pin: PinView) -> None:
    # Held-out 23's outline of the engine-core path: `# 5. EngineCore 处理（主循环）` over
    # `def core_busy_loop(self):` (gone), `# 8. LLMEngine 获取` over `def step(self):`.
    doc = (
        "# vLLM\n\n```python\n# 8. LLMEngine 获取\ndef step(self):\n    return self.model_executor\n\n"
        "# 5. LLMEngine 处理（主循环）\ndef core_busy_loop(self):\n    pass\n```\n"
    )
    got = _statuses(doc, pin)
    assert got[(5, "step")] == "ok" and got[(6, "self.model_executor")] == "ok"
    assert got[(9, "core_busy_loop")] == "broken"
    # Another capitalised word may be the subject instead ("Called by LLMEngine"): nothing said.
    called = _statuses(doc.replace("# 5. LLMEngine 处理（主循环）", "# Called by LLMEngine"), pin)
    assert (9, "core_busy_loop") not in called


def test_a_copied_class_s_dunder_methods_are_read_as_its_other_methods_are(pin: PinView) -> None:
    # Held-out 23's copy of `PiecewiseBackend`, placed by its path comment, is its `__call__` alone.
    doc = (
        "# vLLM\n\n```python\n# in vllm/v1/engine/llm_engine.py\nclass LLMEngine:\n    def __call__(self, *args):\n"
        "        if self.model_executor is None:\n            return self.compiled_graph_for_general_shape(*args)\n```\n"
    )
    got = _statuses(doc, pin)
    assert got[(7, "self.model_executor")] == "ok"
    assert got[(8, "self.compiled_graph_for_general_shape")] == "broken"


def test_the_paragraph_right_before_a_quoted_method_can_name_its_class(pin: PinView) -> None:
    doc = (
        "# vLLM\n\nEach iteration runs `LLMEngine.step()`:\n\n"
        "```python\ndef step(self):\n    out = self.model_executor.execute_model(None)\n    return self._process_model_outputs(out)\n```\n"
    )
    got = _statuses(doc, pin)
    assert got[(6, "step")] == "ok" and got[(7, "self.model_executor")] == "ok" and got[(8, "self._process_model_outputs")] == "broken"
    # The paragraph names another method of the class, or a method with no class: nothing said.
    for lead in ("Each iteration runs `LLMEngine.run()`:", "Each iteration runs `step()`:"):
        assert (8, "self._process_model_outputs") not in _statuses(doc.replace("Each iteration runs `LLMEngine.step()`:", lead), pin)


_FUNCTION_COPY = """# Serving with vLLM

```python
async def build_engine_client(
    engine_args: EngineArgs,
    disable_frontend: bool = False,
) -> EngineClient:
    ...

def run_reader_loop(config, made_up_limit):
    ...
```
"""


def test_a_copied_function_s_typed_parameters_are_the_project_function_s(pin: PinView) -> None:
    # A module-level function of three words or more is the project's when a pin defines it; the
    # parameters pasted with their types are judged against its signature.
    got = _statuses(_FUNCTION_COPY, pin)
    assert got[(5, "engine_args")] == "ok"
    assert got[(6, "disable_frontend")] == "broken"
    # A function the pin does not define is the author's; an unannotated list is not judged.
    assert (10, "made_up_limit") not in got
    sketch = _FUNCTION_COPY.replace("disable_frontend: bool = False", "disable_frontend=False")
    assert (6, "disable_frontend") not in _statuses(sketch, pin)


def test_a_function_the_lead_presents_is_the_project_s_whatever_its_name(pin: PinView) -> None:
    # Held-out 23: "在`backends.py`中的`split_graph`函数实现了图分割逻辑：" over
    # `def split_graph(graph: fx.GraphModule, ops: list[str])` (the parameter is `splitting_ops`).
    doc = "# vLLM\n\nThe `make_batch` function builds it:\n\n```python\ndef make_batch(requests: list, budget: int):\n    return requests\n```\n"
    got = _statuses(doc, pin)
    assert got[(6, "requests")] == "ok" and got[(6, "budget")] == "broken"
    # A two-word function the lead does not present may be the author's own: its parameters unjudged.
    plain = _statuses(doc.replace("The `make_batch` function builds it:", "A helper:"), pin)
    assert (6, "budget") not in plain


_DOCSTRING_ARGS = '''# vLLM notes

```python
class Scheduler:
    """
    Args:
        vllm_config: The engine's configuration.
        swap_budget (int): Blocks that may be swapped out;
            more text: not an entry.
    """

    def schedule(self):
        return self.has_requests()

    def has_requests(self):
        return bool(self.waiting)
```
'''


def test_a_copied_class_s_docstring_args_are_its_constructor_s_parameters(pin: PinView) -> None:
    # The `Args:` a copy's docstring lists document the project's constructor (`Scheduler(vllm_config, ...)`).
    got = _statuses(_DOCSTRING_ARGS, pin)
    assert got[(7, "vllm_config")] == "ok"
    assert got[(8, "swap_budget")] == "broken"
    assert not any(line == 9 for line, _ in got)  # a description's continuation line


# A note that writes a class out in two blocks of one section: its attributes as declarations in
# the class body, then its methods on their own under a sub-heading.
_SECTION_COPY = """# vLLM V1 notes

### Scheduler - the V1 scheduler

#### Fields

```python
class Scheduler:
    self.waiting: Deque[Request]
    self.running: List[Request]
    self.swapped: List[Request]
```

#### Core methods

```python
def schedule(self, budget):
    return self.running

def preempt(self, request):
    self.waiting.append(request)
    self.swapped_out.has_requests(request)
```
"""


def test_attributes_declared_in_a_copy_s_class_body_are_judged_as_its_members(pin: PinView) -> None:
    got = _statuses(_SECTION_COPY, pin)
    assert got[(9, "self.waiting")] == "ok" and got[(10, "self.running")] == "ok"
    assert got[(11, "self.swapped")] == "broken"  # neither Scheduler nor its base assigns it


def test_bare_methods_of_a_section_belong_to_the_class_its_snippet_wrote_out(pin: PinView) -> None:
    got = _statuses(_SECTION_COPY, pin)
    assert got[(17, "schedule")] == "ok"
    assert got[(17, "budget")] == "broken"  # the pin's `schedule(self)` takes no such parameter
    assert got[(20, "preempt")] == "broken"  # not a method of the pin's Scheduler
    assert got[(22, "self.swapped_out")] == "broken"
    # A method of a member judged on its own line is not a second finding of the member's name.
    assert got.get((22, "self.swapped_out.has_requests")) != "broken"


def test_a_section_class_lasts_only_while_its_heading_is_open(pin: PinView) -> None:
    # Under a new section the heading does not name, the methods are no longer Scheduler's.
    doc = _SECTION_COPY.replace("#### Core methods", "### Helpers of my own")
    got = _statuses(doc, pin)
    assert got.get((20, "preempt")) != "broken" and got.get((17, "budget")) != "broken"


def test_a_class_the_heading_does_not_name_gives_no_owner(pin: PinView) -> None:
    # A class written under a heading about something else is no section's copy.
    doc = _SECTION_COPY.replace("### Scheduler - the V1 scheduler", "### How requests wait")
    got = _statuses(doc, pin)
    assert got.get((20, "preempt")) != "broken" and got.get((17, "budget")) != "broken"


_DRAWN_TREE = """# vLLM V1 scheduler

```
scheduler.py
--| SchedulerInterface
----| has_requests
----| make_batch
----| drop_requests
```
"""


def test_a_drawn_tree_s_items_under_a_class_are_its_members(pin: PinView) -> None:
    got = _statuses(_DRAWN_TREE, pin)
    assert got[(6, "has_requests")] == "ok"
    assert got[(7, "make_batch")] == "ok"  # a function of the class's own package, drawn beside its methods
    assert got[(8, "drop_requests")] == "broken"


_SECTIONS = """# SGLang's hybrid caches

##### `Scheduler`（`vllm/v1/core/sched/scheduler.py`）

| 字段 | 含义 |
|------|------|
| `kv_cache_manager` | its cache |
| `model_executor` | another class's field |

```python
# scheduler.py fields
self.running = []
self.output_processor = None
```

##### `GoneBlockTable`（`vllm/core/block/block_table.py`）

| Field | Meaning |
|------|------|
| `kv_cache_manager` | a member of a class the pin no longer has, defined on another |
"""


def test_a_section_on_a_class_gives_its_field_table_and_lifted_lines_to_it(pin: PinView) -> None:
    # Held-out 25's `##### `Req`（`managers/schedule_batch.py`）` over a "字段 | 含义" table and
    # `self.swa_evicted_seqlen = 0` lines: the fields are `Req`'s, judged on it (another class's
    # field of that name does not make them current). A gone class's section says nothing more.
    got = _statuses(_SECTIONS, pin)
    assert got[(7, "kv_cache_manager")] == "ok" and got[(12, "self.running")] == "ok"
    assert got[(8, "model_executor")] == "broken" and got[(13, "self.output_processor")] == "broken"
    assert got[(20, "kv_cache_manager")] == "ok"  # judged by its name alone, as before
