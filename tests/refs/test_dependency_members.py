"""Names a text gives the project that the pin's own sources show are another package's
(session dep13, issue 12 §2): a member the sources reach only through a dependency's module or a
value it makes (`xgr.GrammarMatcher(...)`, `self.matcher.accept_token(...)`), the methods listed
after a dependency's class ("`Servicer` wraps `LLM` with 3 RPCs: `Generate`, ..."), a method of a
field the pin makes with another library's type (`input_queue.get()`), and a bare script named in
a passage on the repository's examples, at a wheel. Each is unjudged with its reason; the project's
own gone names stay broken."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.dependencies import collect
from analyzer.refs.models import BROKEN, NOT_CHECKABLE, OK
from analyzer.refs.pinview import PinView, SymbolEntry

from .fakes import statuses, vllm_view

_BACKEND = '''
import queue

import grammarlib as gl
from rpclib.servicer import EngineServicer
from tokenlib import normalizers


@dataclass
class GrammarState:
    matcher: gl.Matcher
    ctx: gl.CompiledGrammar

    def accept(self, token):
        return self.matcher.accept_token(token)

    def fill(self, bitmask):
        self.matcher.fill_next_token_bitmask(bitmask)


def apply(logits, bitmask):
    gl.apply_mask_inplace(logits, bitmask)
    seq = normalizers.Sequence([])
    work = queue.Queue()
    return work.get_nowait(), gl.ops.custom.registered_op
'''

_METADATA = "Metadata-Version: 2.1\nName: vllm\nRequires-Dist: grammarlib\nRequires-Dist: rpclib\nRequires-Dist: tokenlib\n"


@pytest.fixture
def vllm(tmp_path: Path) -> PinView:
    view = vllm_view(tmp_path / "t")
    assert view.tree is not None
    root = Path(view.tree)
    (root / "vllm" / "backend.py").write_text(_BACKEND, encoding="utf-8")
    (root / "vllm-0.30.0.dist-info").mkdir(exist_ok=True)
    (root / "vllm-0.30.0.dist-info" / "METADATA").write_text(_METADATA, encoding="utf-8")
    view = replace(view, files=view.files | {"vllm/backend.py"})
    view.words_path = str(tmp_path / "cache" / "words" / f"{view.pin}.abc.w5.json")
    return view


def _findings(doc: str, pin: PinView) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in check_references(extract_all([("ch.md", doc)]), [pin]):
        out.setdefault(f.ref.text, []).append(f)
    return out


def test_members_reached_through_a_dependency_are_collected(vllm: PinView) -> None:
    assert vllm.tree is not None
    deps = collect(Path(vllm.tree), {"vllm"})
    for name in ("Matcher", "CompiledGrammar", "apply_mask_inplace", "accept_token", "fill_next_token_bitmask", "Sequence"):
        assert deps.reached.get(name, "").split(".")[0] in {"grammarlib", "tokenlib"}, name
    # A standard-library module's members, and a member's own members (`gl.ops.custom.x`: an op
    # the project may register), are not reached through a dependency.
    assert "get_nowait" not in deps.reached and "Queue" not in deps.reached
    assert "ops" in deps.reached and "registered_op" not in deps.reached and "custom" not in deps.reached


def test_a_dependency_s_member_in_a_text_about_it_is_not_judged(vllm: PinView) -> None:
    doc = (
        "vLLM's grammarlib backend compiles a `CompiledGrammar`, wraps it in a `Matcher`, calls its "
        "`fill_next_token_bitmask()` and `accept_token()`, and masks with `apply_mask_inplace()`.\n"
    )
    found = _findings(doc, vllm)
    for text in ("CompiledGrammar", "Matcher", "fill_next_token_bitmask()", "accept_token()", "apply_mask_inplace()"):
        (f,) = found[text]
        assert f.status == NOT_CHECKABLE and "grammarlib" in f.note and not f.suggestions, (text, f.note)


def test_a_reached_name_in_a_text_that_never_names_the_dependency_stays_broken(vllm: PinView) -> None:
    # The pin reaches `Sequence` through `tokenlib` only; a text on vLLM's scheduler that never
    # speaks of tokenlib means the project's own gone class.
    found = _findings("In vLLM, each request is a `Sequence` grouped by the scheduler; `Matcher` masks it.\n", vllm)
    assert [f.status for f in found["Sequence"]] == [BROKEN]
    assert [f.status for f in found["Matcher"]] == [BROKEN]


def test_names_listed_after_a_dependency_s_class_are_its_members(vllm: PinView) -> None:
    doc = (
        "`EngineServicer` wraps `LLM` with 3 RPCs: `Generate` (streaming), `Embed` and `Abort`.\n\n"
        "`EngineServicer` forwards to `Tokenize` as well.\n\n"
        "`SequenceGroupMaker` builds three kinds: `Generate`, `Embed`.\n"
    )
    found = _findings(doc, vllm)
    assert [f.status for f in found["LLM"]] == [OK]
    for text in ("Generate", "Embed", "Abort"):
        assert found[text][0].status == NOT_CHECKABLE and "EngineServicer" in found[text][0].note, text
    # The same names listed after a class that is no dependency's stay judged, and so does a name
    # the sentence does not list after a colon.
    assert [f.status for f in found["Generate"]] == [NOT_CHECKABLE, BROKEN]
    assert [f.status for f in found["Embed"]] == [NOT_CHECKABLE, BROKEN]
    assert [f.status for f in found["Tokenize"]] == [BROKEN]


_CORE = "vllm/v1/engine/core.py"
_REQQ = "vllm/v1/core/sched/request_queue.py"
_UTILS = "vllm/utils/cache.py"


def _queue_view(tmp_path: Path, made_with: str) -> PinView:
    tree = tmp_path / "q"
    lines = {_CORE: ["class EngineCoreProc:", "    def __init__(self):", f"        self.input_queue = {made_with}"],
             _REQQ: ["class FCFSRequestQueue:", "    def peek_request(self): ..."],
             _UTILS: ["class LRUCache:", "    def get(self, key): ..."]}
    for path, text in lines.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text("\n".join(text) + "\n", encoding="utf-8")
    symbols = [
        SymbolEntry("vllm.v1.engine.core.EngineCoreProc", _CORE, 1, 3, "class"),
        SymbolEntry("vllm.v1.engine.core.EngineCoreProc.input_queue", _CORE, 3, 3, "attribute"),
        SymbolEntry("vllm.v1.core.sched.request_queue.FCFSRequestQueue", _REQQ, 1, 2, "class"),
        SymbolEntry("vllm.v1.core.sched.request_queue.FCFSRequestQueue.peek_request", _REQQ, 2, 2, "function"),
        SymbolEntry("vllm.utils.cache.LRUCache", _UTILS, 1, 2, "class"),
        SymbolEntry("vllm.utils.cache.LRUCache.get", _UTILS, 2, 2, "function"),
    ]
    return PinView(pin="vllm@0.33.0", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
                   files=frozenset(lines), symbols=symbols, flags=[], envs=[], tree=str(tree))


def test_a_method_of_a_field_made_with_another_library_s_type(tmp_path: Path) -> None:
    doc = "In vLLM the engine core blocks on `input_queue.get()` when idle.\n"
    assert statuses(doc, _queue_view(tmp_path, "queue.Queue[tuple[int, int]]()"))["input_queue.get()"] == [NOT_CHECKABLE]
    # Made with the project's own queue class, which lacks the method: still broken.
    assert statuses(doc, _queue_view(tmp_path, "FCFSRequestQueue()"))["input_queue.get()"] == [BROKEN]


def test_a_script_of_a_section_on_examples_is_not_checkable_at_a_wheel(vllm: PinView) -> None:
    doc = "# KV Cache Examples\n\n## CPU Offload\n\n- `cpu_offload_example_v1.py` - CPU offloading with vLLM v1\n"
    assert statuses(doc, vllm)["cpu_offload_example_v1.py"] == [NOT_CHECKABLE]
    # A git pin holds the examples/ folder: there a missing script is broken.
    assert statuses(doc, replace(vllm, kind="git"))["cpu_offload_example_v1.py"] == [BROKEN]
    # Outside such a section, a module the package lacks is broken at a wheel as before.
    assert statuses("# vLLM internals\n\nThe stop checks live in `stop_checker.py`.\n", vllm)["stop_checker.py"] == [BROKEN]



def test_a_method_of_a_field_of_pythons_own_type(tmp_path: Path) -> None:
    doc = "In vLLM the engine core blocks on `input_queue.get()` when idle.\n"
    # A dict has `get`, whatever the classes named like a queue define ...
    assert statuses(doc, _queue_view(tmp_path, "{}"))["input_queue.get()"] == [NOT_CHECKABLE]
    # ... and a list has none: the classes named like it are asked as before (none has it).
    assert statuses(doc, _queue_view(tmp_path, "[]"))["input_queue.get()"] == [BROKEN]
