"""A method quoted on its own under a comment naming its file (`# model_runner.py` over `def
forward(self, ...)`): the method is the one the class in that file defines, so the `self.x()` it
calls and the `self.x` it reads are judged against that class alone, not against every class with
a `forward`; where no class in that file defines the method, the comment says nothing."""

from __future__ import annotations

from pathlib import Path

from analyzer.refs.models import BROKEN
from analyzer.refs.pinview import PinView, SymbolEntry

from .fakes import statuses

_RUNNER = "sglang/srt/model_executor/model_runner.py"
_FUSED = "sglang/srt/layers/fused.py"

_RUNNER_SRC = """class ModelRunner:
    def __init__(self, model):
        self.model = model
        self.decode_cuda_graph_runner = None
    def forward(self, forward_batch):
        return self._forward_raw(forward_batch)
    def _forward_raw(self, forward_batch):
        return self.model.forward(forward_batch)
"""
_FUSED_SRC = """class FusedOp:
    def forward(self, x):
        self.graph_runner = x
        return self.graph_runner.replay(x)
    def can_run_cuda_graph(self, x):
        return True
"""


def _view(tmp_path: Path) -> PinView:
    tree = tmp_path / "sglang-0.5.20"
    for rel, text in ((_RUNNER, _RUNNER_SRC), (_FUSED, _FUSED_SRC)):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
    r = "sglang.srt.model_executor.model_runner.ModelRunner"
    f = "sglang.srt.layers.fused.FusedOp"
    symbols = [
        SymbolEntry(r, _RUNNER, 1, 8, "class"),
        SymbolEntry(f"{r}.__init__", _RUNNER, 2, 4, "function"),
        SymbolEntry(f"{r}.model", _RUNNER, 3, 3, "attribute"),
        SymbolEntry(f"{r}.decode_cuda_graph_runner", _RUNNER, 4, 4, "attribute"),
        SymbolEntry(f"{r}.forward", _RUNNER, 5, 6, "function"),
        SymbolEntry(f"{r}._forward_raw", _RUNNER, 7, 8, "function"),
        SymbolEntry(f, _FUSED, 1, 6, "class"),
        SymbolEntry(f"{f}.forward", _FUSED, 2, 4, "function"),
        SymbolEntry(f"{f}.graph_runner", _FUSED, 3, 3, "attribute"),
        SymbolEntry(f"{f}.can_run_cuda_graph", _FUSED, 5, 6, "function"),
    ]
    view = PinView(
        pin="sglang@0.5.20", project="sglang", kind="release", layout_prefix="python/", packages=("sglang",),
        files=frozenset([_RUNNER, _FUSED, "sglang/__init__.py"]), symbols=symbols, flags=[], envs=[], tree=str(tree),
    )
    view.words_path = str(tmp_path / "words.json")
    return view


_QUOTED = """# SGLang's model runner

```python
{comment}
def forward(self, forward_batch):
    if self.can_run_cuda_graph(forward_batch):
        return self.graph_runner.replay(forward_batch)
    return self.model.forward(forward_batch)
```
"""


def _check(comment: str, tmp_path: Path) -> dict[str, list[str]]:
    return statuses(_QUOTED.format(comment=comment), _view(tmp_path), name="notes.md")


def test_the_file_a_comment_names_picks_the_quoted_method_s_class(tmp_path: Path) -> None:
    for comment in ("# model_runner.py", "# From: python/sglang/srt/model_executor/model_runner.py"):
        found = _check(comment, tmp_path)
        assert found.get("can_run_cuda_graph") == [BROKEN], comment  # only `FusedOp` has it
        assert found.get("self.graph_runner.replay") == [BROKEN], comment  # `FusedOp` sets graph_runner
        assert BROKEN not in found.get("self.model.forward", []), comment
        assert BROKEN not in found.get("forward", []), comment


def test_without_a_file_any_class_with_the_method_vouches_for_its_members(tmp_path: Path) -> None:
    for comment in ("# the forward pass", "# my_runner.py"):  # no file, or one no class of the pin is in
        found = _check(comment, tmp_path)
        assert BROKEN not in [s for statuses_ in found.values() for s in statuses_], (comment, found)


_COPY = """# SGLang's model runner

{lead}

```python
class ModelRunner:
    def forward(self, forward_batch):
        self.graph_runner = make_runner()
        return self.model.forward(forward_batch)
```
"""


def test_a_class_copy_whose_file_the_paragraph_names_needs_no_vote(tmp_path: Path) -> None:
    """One method is too few for a copy's vote (two of the project's methods at least); the file
    named right before it says the copy is the pin's class in that file, so a member it lacks is
    broken. Named nowhere, or named where the pin has no such class, the copy stays the author's."""
    view = _view(tmp_path)
    found = statuses(_COPY.format(lead="**Key code** (`model_runner.py`):"), view, name="notes.md")
    assert found.get("self.graph_runner") == [BROKEN]
    assert BROKEN not in found.get("self.model", [])
    for lead in ("**Key code**:", "**Key code** (`runner_utils.py`):", "**A simplified example** (`model_runner.py`):"):
        assert BROKEN not in statuses(_COPY.format(lead=lead), view, name="notes.md").get("self.graph_runner", []), lead
