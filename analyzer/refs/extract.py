"""Walk a Markdown file's token stream (markdown-it-py) and collect references.

Sources: inline code spans, fenced/indented code blocks (shell commands and
Python imports), and links to GitHub blob/tree URLs of vLLM and SGLang.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

from markdown_it import MarkdownIt
from markdown_it.token import Token

from analyzer.refs.classify import Classified, classify, classify_env
from analyzer.refs.framework import decide
from analyzer.refs.models import PATH, SYMBOL, Reference
from analyzer.refs.shell import looks_like_command, shell_refs

_GITHUB_RE = re.compile(
    r"^https?://github\.com/(?P<repo>vllm-project/vllm|sgl-project/sglang)/(?P<mode>blob|tree)/"
    r"(?P<ref>[^/#?]+)/(?P<path>[^#?]*)(?:#L(?P<start>\d+)(?:-L(?P<end>\d+))?)?$"
)
_REPO_FRAMEWORK = {"vllm-project/vllm": "vllm", "sgl-project/sglang": "sglang"}
_SHELL_LANGS = {"", "bash", "sh", "shell", "console", "zsh", "shell-session", "terminal"}
_PYTHON_LANGS = {"python", "py", "python3", "pycon"}
_ROOTS = ("vllm", "sglang")


def markdown_parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


@dataclass(slots=True)
class _Pending:
    """A reference found in a block, before its framework is decided with the block's context."""

    line: int
    col: int
    text: str
    found: Classified
    offset: int  # position in the block's plain text
    origin: str
    command: str | None = None
    commit: str | None = None
    link_symbol: str | None = None


@dataclass(slots=True)
class _Walker:
    file: str
    lines: list[str]
    headings: list[tuple[int, str]] = field(default_factory=list)
    refs: list[Reference] = field(default_factory=list)

    # ----- helpers -------------------------------------------------------
    def _col(self, line: int, needle: str, start: int = 0) -> int:
        if 0 <= line - 1 < len(self.lines):
            return self.lines[line - 1].find(needle, start)
        return -1

    def _emit(self, pending: list[_Pending], block: str) -> None:
        siblings = [p.found.framework for p in pending]
        heading_texts = [text for _, text in self.headings]
        for p in pending:
            length = len(p.text) if p.origin == "inline" else 0
            decision = decide(p.found.framework, p.found.reason, block, p.offset, siblings, heading_texts, length)
            self.refs.append(
                Reference(
                    file=self.file,
                    line=p.line,
                    col=p.col,
                    text=p.text,
                    kind=p.found.kind,
                    target=p.found.target,
                    framework=decision.framework,
                    framework_reason=decision.reason,
                    origin=p.origin,
                    command=p.command,
                    line_range=p.found.line_range,
                    commit=p.commit,
                    link_symbol=p.link_symbol,
                    repo_layout=p.found.repo_layout,
                    tentative=p.found.tentative,
                )
            )

    # ----- inline content ------------------------------------------------
    def inline(self, token: Token) -> None:
        line = (token.map[0] + 1) if token.map else 1
        plain = ""
        cursor: dict[int, int] = {}
        pending: list[_Pending] = []
        link: tuple[str, int, int] | None = None  # href, line, plain offset at link start
        link_codes: list[str] = []
        for child in token.children or []:
            if child.type in {"softbreak", "hardbreak"}:
                line += 1
                plain += "\n"
            elif child.type == "text":
                plain += child.content
            elif child.type == "code_inline":
                text = child.content
                col = self._col(line, text, cursor.get(line, 0))
                if col >= 0:
                    cursor[line] = col + len(text)
                if link is not None:
                    link_codes.append(text)
                pending.extend(self._code_span(text, line, col, len(plain)))
                plain += text
            elif child.type == "link_open":
                link = (str(child.attrs.get("href", "")), line, len(plain))
                link_codes = []
            elif child.type == "link_close" and link is not None:
                found = self._link(link[0], link[1], link[2], link_codes)
                if found is not None:
                    pending.append(found)
                link = None
        self._emit(pending, plain)

    def _code_span(self, text: str, line: int, col: int, offset: int) -> list[_Pending]:
        if looks_like_command(text):
            out = []
            for ref in shell_refs(text):
                found = Classified(ref.kind, ref.target, ref.framework, f"command {ref.command}" if ref.command else "text")
                inner = col + ref.col if col >= 0 and ref.col >= 0 else -1
                if not ref.server_flag and ref.kind == "flag":
                    found = replace(found, reason=f"flag of {ref.command}")
                out.append(_Pending(line, inner, ref.text, found, offset, "inline", ref.command))
            return out
        found = classify(text)
        if found is None:
            if _GITHUB_RE.match(text.strip()):
                link = self._link(text.strip(), line, offset, [])
                return [link] if link else []
            return []
        written = text.strip()
        if found.kind in {"env", "flag"} and found.target in written:
            # `VLLM_X=1`, `$VLLM_X`, `--flag=value`: the name alone is what a fix replaces.
            shift = written.find(found.target)
            col = col + (len(text) - len(text.lstrip())) + shift if col >= 0 else -1
            written = found.target
        return [_Pending(line, col, written, found, offset, "inline")]

    def _link(self, href: str, line: int, offset: int, codes: list[str]) -> _Pending | None:
        m = _GITHUB_RE.match(href)
        if m is None:
            return None
        framework = _REPO_FRAMEWORK[m.group("repo")]
        path = m.group("path").rstrip("/")
        line_range = None
        if m.group("start"):
            start = int(m.group("start"))
            line_range = (start, int(m.group("end") or start))
        symbol = None
        for code in codes:
            found = classify(code)
            if found is not None and found.kind == SYMBOL:
                symbol = found.target
                break
        found = Classified(PATH, path, framework, "GitHub link", line_range, repo_layout=True)
        return _Pending(line, self._col(line, href), href, found, offset, "link", commit=m.group("ref"), link_symbol=symbol)

    # ----- code blocks ---------------------------------------------------
    def code_block(self, token: Token) -> None:
        if not token.map:
            return
        first = token.map[0] + (2 if token.type == "fence" else 1)  # 1-based line of the block's first content line
        lang = (token.info or "").strip().split(maxsplit=1)[0].lower() if token.info else ""
        content = token.content
        pending: list[_Pending] = []
        if lang in _PYTHON_LANGS:
            pending = self._python(content, first)
        elif lang in _SHELL_LANGS:
            for ref in shell_refs(content):
                line = first + ref.line
                col = self._col(line, ref.text) if ref.col >= 0 else -1
                reason = f"command {ref.command}" if ref.command else "text"
                found = Classified(ref.kind, ref.target, ref.framework, reason)
                pending.append(_Pending(line, col, ref.text, found, 0, "fence", ref.command))
        self._emit(pending, "")

    def _python(self, content: str, first: int) -> list[_Pending]:
        """Imports from vllm/sglang and env var names in a Python snippet; the rest is example code."""
        try:
            trees = [(0, ast.parse(content))]
        except SyntaxError:
            # Snippets with `...` placeholders: parse the lines that parse on their own.
            trees = []
            for i, raw in enumerate(content.splitlines()):
                try:
                    trees.append((i, ast.parse(raw.strip())))
                except SyntaxError:
                    continue
        out: list[_Pending] = []
        for base, tree in trees:
            for node in ast.walk(tree):
                line = first + base + getattr(node, "lineno", 1) - 1
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    if node.module.split(".")[0] in _ROOTS:
                        for alias in node.names:
                            if alias.name == "*":
                                continue
                            target = f"{node.module}.{alias.name}"
                            found = Classified(SYMBOL, target, node.module.split(".")[0], "import")
                            out.append(_Pending(line, self._col(line, alias.name), alias.name, found, 0, "fence"))
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.split(".")[0] in _ROOTS:
                            found = Classified(SYMBOL, alias.name, alias.name.split(".")[0], "import")
                            out.append(_Pending(line, self._col(line, alias.name), alias.name, found, 0, "fence"))
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    env = classify_env(node.value)
                    if env is not None:
                        out.append(_Pending(line, self._col(line, node.value), node.value, env, 0, "fence"))
        return out

    # ----- headings ------------------------------------------------------
    def heading(self, level: int, text: str) -> None:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))


def extract_references(file: str, source: str, parser: MarkdownIt | None = None) -> list[Reference]:
    """All references in one Markdown document, in source order."""
    parser = parser or markdown_parser()
    tokens = parser.parse(source)
    walker = _Walker(file, source.splitlines())
    heading_level = 0
    for token in tokens:
        if token.type == "heading_open":
            heading_level = int(token.tag[1:])
        elif token.type == "inline":
            if heading_level:
                walker.heading(heading_level, token.content)
                heading_level = 0
            walker.inline(token)
        elif token.type in {"fence", "code_block"}:
            walker.code_block(token)
    walker.refs.sort(key=lambda r: (r.line, r.col))
    return walker.refs
