"""What a block of a Markdown document really holds, whatever it is labelled: a shell-labelled
fence with no command in it (a call chain, a file list, a class outline), a paragraph that is a
pasted outline (its continuation lines indented, which Markdown throws away), the steps of a flow
drawn with arrows; and the CJK text glued to identifiers, blanked so names end where the code ends.
Plain strings in, plain values out."""

from __future__ import annotations

import re

# CJK ideographs, kana, CJK and full-width punctuation: never part of an identifier, so a name
# glued to them (`CacheEngine.__init__中包含`) ends there.
_CJK_RE = re.compile(r"[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
_ARROW_RE = re.compile(r"->|=>|<-|[→↓↑←⇒⇓⬇⟶]")
# A line of arrows alone (`    ↓`, `  |`, `  v`): the joint between two steps of a flow.
_ARROW_LINE_RE = re.compile(r"\s*(?:[→↓↑←⇒⇓⬇⟶|]|->|=>|v)\s*")
# A line that starts with an arrow: a step of a flow (`  → ForwardBatch`, `-> run_batch()`).
_LEADING_ARROW_RE = re.compile(r"\s*(?:->|=>|[→⇒⟶])\s*\S")
# A program's name as a shell line starts with it: lower case (`pip`, `./run.sh`, `vllm`), or an
# environment assignment (`CUDA_VISIBLE_DEVICES=0`).
_PROGRAM_RE = re.compile(r"(?:[a-z0-9_.~/-][\w.+~/-]*|[A-Z_][A-Z0-9_]*=\S*)")
_SOURCE_FILE_RE = re.compile(r"\S+\.(?:py|pyi|cu|cuh|cc|cpp|c|h|hpp|rs|md|txt|json|ya?ml|toml)")


def has_cjk(text: str) -> bool:
    return _CJK_RE.search(text) is not None


def blank_cjk(text: str) -> str:
    """`text` with every CJK character replaced by a space (same length: columns stay)."""
    return _CJK_RE.sub(" ", text)


def could_be_command(line: str) -> bool:
    """Whether a line of a shell-labelled block may be a command line (prompt allowed). Not one:
    a line with arrows or CJK text, one that starts with a capital (`HTTP Request (...)`), a
    label (`TreeNode:`, `reset: ...`), a word followed by a parenthesis (a call chain's step:
    `v1_chat_completions (adapter.py)`, a syntax error for a shell) or a source file alone."""
    text = line.strip()
    if not text:
        return False
    if text.startswith("$ ") or text.startswith(">>> "):
        return True  # a prompt says so
    if _ARROW_RE.search(text) or _CJK_RE.search(text):
        return False
    words = text.split()
    first = words[0]
    if first.endswith(":") or not _PROGRAM_RE.fullmatch(first):
        return False
    if len(words) > 1 and (words[1].startswith("(") or words[1] == ":"):
        return False
    return not (len(words) == 1 and _SOURCE_FILE_RE.fullmatch(first) and not first.startswith(("./", "~/")))


def holds_no_command(content: str) -> bool:
    """A shell-labelled block none of whose lines (comments aside) can be a command: the author
    used the label for its colours, and the block is text (read as a text block is)."""
    lines = [line for line in content.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    steps = flow_steps(lines)  # a line between arrows is a step of a drawing, whatever its words
    return bool(lines) and not any(could_be_command(line) for i, line in enumerate(lines) if i not in steps)


# A line of a described option list: `--tokenizer-path: Path to tokenizer`, `--context-len`.
_OPTION_ITEM_RE = re.compile(r"\s*--[A-Za-z0-9][\w.-]*[A-Za-z0-9]:?(?:\s.*)?")


def option_listing(content: str) -> bool:
    """A block typed as Python for its colours that lists a server's options, one per line with
    what each does (`--skip-tokenizer-init: Skip loading tokenizer`): read as a block of options."""
    lines = [line for line in content.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return bool(lines) and all(_OPTION_ITEM_RE.fullmatch(line) for line in lines)


def is_pasted_outline(lines: list[str], content_col: int) -> bool:
    """A paragraph whose continuation lines are indented past where its text starts (`content_col`
    on the first line): an outline or call tree pasted without a fence. Markdown joins it into one
    paragraph; its lines are read as a text block's. At least two indented lines, and most."""
    rest = [line for line in lines[1:] if line.strip()]
    if any(line.lstrip().startswith(">") for line in lines):
        return False  # a block quote: its markers are the indentation
    deeper = sum(1 for line in rest if len(line) - len(line.lstrip(" ")) >= content_col + 2)
    return deeper >= 2 and deeper * 2 > len(rest)


def is_arrow_line(line: str) -> bool:
    return bool(line.strip()) and _ARROW_LINE_RE.fullmatch(line) is not None


def flow_steps(lines: list[str]) -> set[int]:
    """Indexes of the step lines of a flow drawn one step a line: joined by lines of arrows alone
    (`v1_chat_completions (adapter.py)` / `↓` / `generate_stream_resp`), the steps next to an
    arrow line, when the block has at least two arrow lines; or led by an arrow each
    (`  → ScheduleBatch (schedule_batch.py)`), when at least two lines are."""
    steps: set[int] = {i for i, line in enumerate(lines) if _LEADING_ARROW_RE.match(line) and not is_arrow_line(line)}
    if len(steps) < 2:
        steps = set()
    arrows = [i for i, line in enumerate(lines) if is_arrow_line(line)]
    if len(arrows) < 2:
        return steps
    for i in arrows:
        for j in (i - 1, i + 1):
            if 0 <= j < len(lines) and lines[j].strip() and not is_arrow_line(lines[j]):
                steps.add(j)
    return steps
