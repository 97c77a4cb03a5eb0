"""A document's copy of a project class: where the text says it lives, and the members it uses.

Source-reading notes quote simplified versions of the project's classes (`class Scheduler:` with
`self.waiting`, `self.block_manager = BlockSpaceManager(...)`, elided bodies) and say where each
lives, in the sentence right before the snippet (`**File**: \\`vllm/core/scheduler.py\\``). A
careful editor reads such a class as the project's class of that name: its `self.x` members are
judged against that class (and its bases) at the pin, and a class the pin no longer defines is a
broken reference (its members are not judged: the class carries the breakage).

Plain data in, plain data out: the walker (`extract.py`) gives the lead paragraph and the class's
ast; `check.py` reads `Reference.located` in the block's vote (`_mirrors`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from analyzer.refs.classify import classify_path, from_package_root
from analyzer.refs.models import PATH

# A path in the lead paragraph, in code font or not: `vllm/core/scheduler.py`, `vllm/executor/`.
_PATH_RE = re.compile(r"(?<![\w./-])(?:python/)?(?:vllm|sglang)/[\w./-]*")
# The lead paragraph tells the reader to write new code there: the snippet is the reader's, not a
# quotation ("Add a new backend under `vllm/attention/`", "在 ... 中添加").
_NEW_CODE_RE = re.compile(
    r"\b(?:new|create|add|adding|implement|write|define|custom|your|my|own|example|toy|simplified\s+version\s+of\s+our)\b|新|创建|添加|增加|实现|编写|定义(?![在于])|自定义|示例|例子",
    re.IGNORECASE,
)
# (`定义在 `x.py``, "defined in x.py", says where the code is, not that the reader defines it.)
# A lead paragraph longer than this is prose about the code, not the line that says where it is.
_MAX_LEAD = 200


def located(lead_text: str | None) -> str | None:
    """The project path (a file or a folder) that the paragraph right before a snippet gives as
    its place (`**位置**: \\`vllm/core/scheduler.py\\``); None when the paragraph gives none, is
    long prose, or says the code is the reader's new code."""
    if not lead_text or len(lead_text) > _MAX_LEAD or new_code(lead_text):
        return None
    for m in _PATH_RE.finditer(lead_text):
        found = classify_path(m.group(0).rstrip("."))
        if found is not None and found.kind == PATH and found.framework is not None:
            return found.target
    return None


def new_code(text: str) -> bool:
    """Whether a line or paragraph says the code near it is the reader's new code or an example
    (`# 概念示例`, "a simplified version of our ..."), not the project's as it is."""
    return _NEW_CODE_RE.search(text) is not None


# A comment line of a snippet.
_COMMENT_RE = re.compile(r"\s*#(.*)")
# A comment that only names a Python file (`# model_runner.py`, `# From: vllm/worker/worker.py`,
# `# 文件: python/sglang/srt/managers/scheduler.py`).
# (`# D:\repos\sglang\...\scheduler.py`: a Windows checkout's path names the file as well, and
# `# tokenizer_manager.py:533-554` with the lines quoted.)
_FILE_COMMENT_RE = re.compile(r"\s*#\s*(?:[^\s:：/\\]{1,12}\s*[:：]\s*)?`?(?:[A-Za-z]:\\)?([\w./\\-]*\w\.py)(?::L?\d+(?:-L?\d+)?)?`?\s*")


def commented_file(line: str) -> str | None:
    """The one Python file a comment line names and nothing else (`# model_runner.py`,
    `# vllm/config/scheduler.py` over a quoted method: the file it was copied from), as written;
    None for any other line, or where the comment calls the code new or an example."""
    m = _FILE_COMMENT_RE.fullmatch(line)
    if m is None or new_code(line):
        return None
    path = m.group(1).replace("\\", "/")
    # (`D:\Codex\repos\sglang\python\sglang\srt\x.py`: from the package's folder on.)
    return from_package_root(path) or path


def headed(content: str, lead_text: str | None) -> str | None:
    """The project file a snippet's first line, a comment, names as where the code below it lives
    (`# vllm/v1/executor/abstract.py` over `class Executor(ExecutorBase):`), as `located` reads
    the paragraph before a snippet; None when the line names none, or it or the paragraph says
    the code is the reader's new code (`# 在 vllm/attention/ 下创建 ...`, `# .../my_model.py`)."""
    first = next((line for line in content.splitlines() if line.strip()), "")
    m = _COMMENT_RE.match(first)
    if m is None or (lead_text and new_code(lead_text)):
        return None
    comment = m.group(1)
    if new_code(re.sub(r"[_/.]", " ", comment)):
        return None  # the reader's own file (`my_model.py`)
    return located(comment)


@dataclass(frozen=True, slots=True)
class SelfMember:
    """`self.x` in a method of a snippet's class: its (snippet-relative) line, column, name."""

    lineno: int
    col: int
    name: str


def self_members(fn: ast.AST) -> list[SelfMember]:
    """Each `self.x` a copied method reads, writes or calls (`self.swapped`, `self.block_manager =
    ...`, `self._schedule_running(...)`), once per line; dunder names left out. Only the first
    attribute of a chain (`self.scheduler` of `self.scheduler.schedule()`): what follows is a
    member of that attribute's object, whose class the copy does not say."""
    out: list[SelfMember] = []
    seen: set[tuple[int, str]] = set()
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
            continue
        if node.attr.startswith("__") or (node.lineno, node.attr) in seen:
            continue
        seen.add((node.lineno, node.attr))
        out.append(SelfMember(node.lineno, node.col_offset, node.attr))
    return sorted(out, key=lambda m: (m.lineno, m.col))


def member_chains(fn: ast.AST) -> list[SelfMember]:
    """`self.llm_engine.get_tokenizer_group` in a copied method: the member of a member
    (`llm_engine.get_tokenizer_group`, two names deep), once per line; dunder names left out."""
    out: list[SelfMember] = []
    seen: set[tuple[int, str]] = set()
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)):
            continue
        inner = node.value
        if not (isinstance(inner.value, ast.Name) and inner.value.id == "self") or "__" in (inner.attr[:2] + node.attr[:2]):
            continue
        name = f"{inner.attr}.{node.attr}"
        if (node.lineno, name) not in seen:
            seen.add((node.lineno, name))
            out.append(SelfMember(node.lineno, node.col_offset, name))
    return sorted(out, key=lambda m: (m.lineno, m.col))


def constructed(tree: ast.ClassDef) -> dict[str, str]:
    """`self.block_manager = BlockSpaceManager(...)` in a copied class: the attribute's class, by
    the name of the class whose constructor the copy calls (CamelCase only: `executor_class(...)`
    says nothing). Keyed by the attribute's name, as a reader later writes the object
    (`block_manager.allocate(...)`)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AnnAssign) or not isinstance(node.value, ast.Call):
            continue
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is None or not name[:1].isupper() or name.isupper():
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                out.setdefault(target.attr, name)
    return out


def method_owner(heading: str, method: str) -> str | None:
    """The class a heading gives a method to (`LLMEngine.step() - the core loop` for `step`), in
    code font or not, or as two words (`AsyncLLMEngine __init__`, `Scheduler::schedule`) where
    both look like code (a class of several capitals, a method with an underscore); None when it
    names the method on no class."""
    m = re.search(rf"(?<![\w.])(_*[A-Z][A-Za-z0-9_]*)\.{re.escape(method)}(?![\w])", heading)
    if m:
        return m.group(1)
    m = re.search(rf"(?<![\w./])(_*[A-Z][A-Za-z0-9_]*)`?(?P<sep>::|#|\s+)`?{re.escape(method)}(?![\w])", heading)
    if m is None:
        return None
    if m.group("sep") in {"::", "#"}:
        return m.group(1)
    humps = sum(c.isupper() for c in m.group(1)) >= 2 and any(c.islower() for c in m.group(1))
    return m.group(1) if humps and "_" in method else None


# A class's name among a comment's words: capitals inside it and a word of two lower-case letters
# (`EngineCoreProc`, `LLMEngine`; not `GIL`, `MoE`).
_CAPITALISED_RE = re.compile(r"(?<![\w./])_*[A-Z]\w*")
_COMMENT_CLASS_RE = re.compile(r"(?<![\w./])_*(?=[A-Za-z0-9]*[a-z]{2})[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*(?![\w./(])")


def commented_class(comment: str) -> str | None:
    """The one class a comment right above a method quoted on its own names (`# 5. EngineCore
    处理（主循环）` over `def core_busy_loop(self):`): whose method the author says it is. None
    when it names no class, several, or a file (`# vllm/v1/engine/core.py`: a place, not an owner)."""
    text = comment.lstrip("#").strip()
    if "/" in text or ".py" in text:
        return None
    names = set(_COMMENT_CLASS_RE.findall(text))
    # Any other capitalised word may be a class too, or make the sentence say something else
    # ("# Called by EngineCore"): the comment must be the class's name and no other word of English.
    words = set(_CAPITALISED_RE.findall(text))
    return names.pop() if len(names) == 1 and words == names else None


# `model_executor`, `block_manager`: an object named in two words or more, as the project names
# its attributes (a lone word, `batch`, `budget`, says too little about its type).
_OBJECT_RE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def object_call(name: str, bound: set[str]) -> bool:
    """`model_executor.determine_num_available_blocks`: a method called on an object that the
    snippets never bind (`bound`: their variables, parameters, definitions and imports), named in
    two words or more; what the object is, the pin says (`resolve.through_instance`)."""
    parts = name.split(".")
    return len(parts) == 2 and _OBJECT_RE.fullmatch(parts[0]) is not None and parts[0] not in bound and not parts[1].startswith("__")


_BOUND_DECORATORS = {"staticmethod", "classmethod", "property"}


def omits_self(tree: ast.ClassDef) -> bool:
    """A copy written as pseudocode that leaves out `self` (`def initialize(min_memory):`,
    `load_model()`): a method whose first parameter is not `self`, and no decorator says why."""
    for item in tree.body:
        if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) or item.decorator_list:
            continue
        first = (item.args.posonlyargs + item.args.args)[:1]
        if not first or first[0].arg not in {"self", "cls"}:
            return True
    return False


def bare_calls(fn: ast.FunctionDef | ast.AsyncFunctionDef, bound: set[str]) -> list[SelfMember]:
    """`init_memory_pool(...)` in a copied method of a copy that leaves out `self`: a name called
    bare that nothing in the snippets binds (`bound`: their variables, parameters, imports and
    top-level functions, the standard library's and dependencies' names); the copied class's
    member, as `self.init_memory_pool(...)` would be. A capitalised name is a class, not a member."""
    out: list[SelfMember] = []
    seen: set[tuple[int, str]] = set()
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        name = node.func.id
        if name in bound or name[:1].isupper() or name.startswith("__") or (node.lineno, name) in seen:
            continue
        seen.add((node.lineno, name))
        out.append(SelfMember(node.lineno, node.func.col_offset, name))
    return sorted(out, key=lambda m: (m.lineno, m.col))


# A Google-style docstring's section of parameters, and one entry of it (`model: The name ...`,
# `dtype (str): ...`).
_ARGS_HEAD_RE = re.compile(r"(\s*)(?:Args|Arguments|Parameters):\s*$")
_ARG_ENTRY_RE = re.compile(r"(\s*)([A-Za-z_]\w*)\s*(?:\([^()]*\))?\s*:")


def docstring_args(tree: ast.ClassDef) -> list[tuple[int, str]]:
    """The parameters a copied class's docstring lists under `Args:` (`model: The name or path of
    ...`), each with its snippet-relative line: the constructor's parameters, as the project's
    own docstring documents them. Entries are the lines at the first entry's indentation."""
    out: list[tuple[int, str]] = []
    for item in tree.body:
        if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)):
            continue
        lines = item.value.value.split("\n")
        entry: int | None = None
        head: int | None = None
        for i, text in enumerate(lines):
            if not text.strip():
                continue
            indent = len(text) - len(text.lstrip())
            if (m := _ARGS_HEAD_RE.fullmatch(text)) is not None:
                head, entry = len(m.group(1)), None
                continue
            if head is None or indent <= head:
                head = None
                continue
            if entry is None:
                entry = indent
            if indent == entry and (m := _ARG_ENTRY_RE.match(text)) is not None:
                out.append((item.value.lineno + i, m.group(2)))
    return out
