"""Names written like code in CJK prose, outside code font (`随后写入 batch.output_ids，最后 ...`,
`如果状态是 WAITING_FOR_FSM`).

In Chinese or Japanese text an ASCII run is never a word of the sentence: a dotted `object.member`
with an underscore in it (or called) is a name of the code the text describes, whether or not the
author put it in backticks. English prose is left alone: there a bare word may
be English, and authors who mean code mostly say so with code font.
Plain strings in, plain values out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.refs.layout import blank_cjk

# `snake_case`, `object.member_name`, `object.method(...)`: lower-case words joined by underscores
# or dots (a dotted name needs an underscore or a call: `e.g`, `docs.vllm.ai` are not code).
_NAME_RE = re.compile(r"(?<![\w./:@#$%-])(_*[a-z][a-z0-9]*(?:[_.][A-Za-z0-9_]+)+)(\((?:[\w, ]*)\))?(?![\w./@-])")
# `WAITING_FOR_REMOTE_KVS`: capitals joined by underscores (one capitalised word is an acronym).
_CAPS_RE = re.compile(r"(?<![\w./:@#$%-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w./@(-])")
_PACKAGES = ("vllm", "sglang")
# File names and hosts, which look dotted: `model_runner.py`, `foo_bar.md`, `api.example.com`.
_SUFFIX_RE = re.compile(r"\.(?:py|pyi|md|txt|json|ya?ml|toml|cfg|ini|sh|cu|cuh|cc|cpp|h|hpp|rs|com|org|io|ai|net|html?)$")


# TeX math in a Markdown text (`$(\\text{num\\_query\\_tiles}, \\text{num\\_heads})$`): pandoc's rule,
# an opening `$` before a non-space, a closing `$` after one and before no digit (`$5 and $10`
# is money), and a TeX command or a sub/superscript group inside (`$VLLM_PORT` is a variable).
_MATH_RE = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?=\S)([^$\n]{1,500}?)(?<=\S)\$(?!\d)", re.DOTALL)
_TEX_RE = re.compile(r"\\[A-Za-z]+|[_^]\{")


def blank_math(text: str) -> str:
    """The text with its TeX formulas blanked (offsets kept): their words are the formula's."""
    return _MATH_RE.sub(lambda m: " " * len(m.group(0)) if _TEX_RE.search(m.group(0)) else m.group(0), text)


@dataclass(frozen=True, slots=True)
class ProseName:
    start: int  # offset in the text
    text: str  # as written, with its call's parentheses when there are any (`f(req)`)
    name: str  # the dotted name alone


def prose_names(text: str) -> list[ProseName]:
    """The code-shaped names of a run of prose (the caller reads only paragraphs that hold CJK
    text, `has_cjk`)."""
    out = []
    masked = blank_math(blank_cjk(text))
    for m in _CAPS_RE.finditer(masked):
        # `WAITING_FOR_FSM`: a constant or an enumeration's member, never a word of the sentence;
        # judged as one in code font is (by the names listed with it, `check._enum_siblings`).
        out.append(ProseName(m.start(1), m.group(1), m.group(1)))
    for m in _NAME_RE.finditer(masked):
        name, call = m.group(1), m.group(2) or ""
        if _SUFFIX_RE.search(name) or ("." in name and "_" not in name and not call and name.split(".", 1)[0] not in _PACKAGES):
            continue  # (`vllm.worker.worker`: a module of the projects, underscore or not)
        if "." not in name:
            # A bare `snake_case` word in such prose is as often the author's own (a variable of a
            # formula, a field they add, a typo: `gpu_mem * util%`, `增加 user_id 字段`): only
            # `object.member` says that it is a name of the code.
            continue
        out.append(ProseName(m.start(1), name + call, name))
    return sorted(out, key=lambda n: n.start)


# `ExecutorBase`, `LLMEngine`: a class name (capitals inside the word, a word of two lower-case letters
# or more: `MoE`, `LoRA` are acronyms); `_create_worker`, `input_preprocessor`: a `snake_case` name;
# `step()`: a called name. Not part of a path or a dotted name.
_BARE_RE = re.compile(
    r"(?<![\w./:@#$%\\-])(_*(?=[A-Z][A-Za-z0-9]*[a-z]{2})[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+|_*[a-z][a-z0-9]*(?=\(\)))(\(\))?(?![\w./@(-])"
)


def bare_names(text: str) -> list[ProseName]:
    """Single code-shaped words of CJK prose outside code font (`LLMEngine —> ExecutorBase`,
    `通过 _validate_token_prompt 验证`). Unlike `prose_names`, the shape alone does not make one a
    name of the code (`增加 user_id 字段`): the caller judges one only where the document or a pin
    vouches for it."""
    masked = blank_math(blank_cjk(text))
    return [ProseName(m.start(1), m.group(1) + (m.group(2) or ""), m.group(1)) for m in _BARE_RE.finditer(masked)]


# The operators an operand stands beside: any arithmetic or comparison, or only a product's.
_OPERATORS = "=*/×÷+<>"
_PRODUCT_OPERATORS = "*/×÷"


def _beside_operator(text: str, start: int, end: int, operators: str) -> bool:
    """Whether `text[start:end]` has one of `operators` right before or after it (a parenthesis between allowed)."""
    ops = re.escape(operators)
    return re.search(rf"[{ops}]\s*\(?\s*$", text[:start]) is not None or re.match(rf"^\s*\)?\s*[{ops}]", text[end:]) is not None


def in_formula(text: str, name: ProseName) -> bool:
    """`kv_cache_block大小 = n_hidden_layer * block_size * ...`: an operand of the author's
    arithmetic, which may be their own variable whatever its shape."""
    return _beside_operator(text, name.start, name.start + len(name.text), _OPERATORS)


def in_quotient(text: str, start: int, end: int) -> bool:
    """`maximize E[accepted] / Latency(total)`: a factor of a product or quotient. A class is
    constructed, never divided, so a capitalised call there is the author's math, not code."""
    return _beside_operator(text, start, end, _PRODUCT_OPERATORS)


_SEPARATORS_RE = re.compile(r"\s*(?:-+>|—>|=>|[→⇒⟶])\s*|\s+-\s+|[\s/,|、，:：]+")
_CODE_WORD_RE = re.compile(r"_*[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")
_SHAPED_RE = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]|_|\.|\(\)")


def names_only(text: str) -> bool:
    """A paragraph, heading or table cell that holds nothing but code-shaped names
    (`RayDistributedExecutor`, `RadixCache/HiRadixCache`): names in any language, read as CJK
    prose's are (a word, `Hierarchical`, makes it prose)."""
    words = [w.removeprefix("(").removesuffix(")") if w != "()" and not w.endswith("()") else w for w in _SEPARATORS_RE.split(text.strip().strip("*`"))]
    words = [w for w in words if w]
    return bool(words) and all(_CODE_WORD_RE.fullmatch(w) and _SHAPED_RE.search(w.lstrip("_")) for w in words)
