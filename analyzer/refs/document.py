"""What a Markdown document says about its own names, read before the walk: its project,
what it writes in code font, the classes, variables and payload keys of its own snippets,
the flags it passes to other programs; and the two rewrites that make mkdocs/MyST bodies
readable as Markdown (admonitions dedented, directive fences blanked)."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from markdown_it.token import Token

from analyzer.refs.classify import (
    FOR_PROJECT_RE,
    FOREIGN_NAMES,
    FOREIGN_ROOTS,
    PROJECT_RE,
    other_system,
)
from analyzer.refs.copies import constructed, headed, located
from analyzer.refs.dependencies import STDLIB_MODULES
from analyzer.refs.framework import document_project
from analyzer.refs.layout import has_cjk
from analyzer.refs.links import REPO_PROJECTS, repository_of
from analyzer.refs.named_objects import from_self, loop_variables
from analyzer.refs.prose_code import bare_names, names_only
from analyzer.refs.pseudocode import reindent, unflatten
from analyzer.refs.shell import foreign_flags, foreign_words, looks_like_command

SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh", "shell-session", "terminal"}
PYTHON_LANGS = {"python", "py", "python3", "pycon"}
# Blocks read for names written the way code is written: plain text, diagrams, no language.
TEXT_LANGS = {"", "text", "txt", "plain", "plaintext", "mermaid", "plantuml", "ascii", "diagram", "dot", "graphviz", "none", "log", "output"}
ROOTS = ("vllm", "sglang")
CLASSNAME_RE = re.compile(r"^_*[A-Z][A-Za-z0-9_]*$")
_ATLAS_PATH_RE = re.compile(r"<!--\s*atlas:[^>]*?\brepo=(?P<repo>[\w.-]+/[\w.-]+)[^>]*?\bpath=(?P<path>\S+?)\s*-->")
_ADMONITION_RE = re.compile(r"^(?P<indent> *)(?:!!!|\?\?\?\+?) *[A-Za-z]")
_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
_FENCE_RE = re.compile(r"^(?P<f> {0,3}(?:```|~~~)).*?^(?P=f)", re.MULTILINE | re.DOTALL)
_PAYLOAD_RE = re.compile(r"(?:\s-d|--data(?:-raw|-binary)?|--json)\s+'([^']*)'", re.DOTALL)
_FIELDS_RE = re.compile(r"\b(?:fields?|attributes?|members?|properties|contain(?:s|ing)?)\b|字段|属性|成员|包含", re.IGNORECASE)
# "`Executor` 接口：", "Worker interface:": the items are the class's own methods.
_INTERFACE_RE = re.compile(r"\binterface\b|接口|的(?:核心|关键|主要)?方法", re.IGNORECASE)
_ENTRY_GROUP_RE = re.compile(r"""entry[-_]points\.["']([\w.-]+)["']""")
_ENTRY_GROUP_TEXT_RE = re.compile(r"`([\w.-]+)`\s+entry[ -]?point\s+group", re.IGNORECASE)
# `ExecutorBase 类` (not `X 类型`, a table column's "X type"), `Worker` class, 继承自 `WorkerBase`, "inherits from `WorkerBase`".
_CLASS_SAID_RE = re.compile(
    r"(?<![\w.])`?([A-Z_][A-Za-z0-9_]*)`?\s*(?:类(?!型)|[Cc]lass(?:es)?\b)"
    r"|(?:继承自|继承|inherits? from|subclass(?:es)? of|derived from)\s*`?([A-Z_][A-Za-z0-9_]*)"
)
_LONG_CLASS_RE = re.compile(r"(?!My|Your|Custom|Dummy|Example|Toy|Fake|Mock)_*(?:[A-Z]+[a-z0-9]+){3,}")
# A short lead that names a class and says the list is its interface, outside code font.
_NAMED_LIST_RE = re.compile(
    r"(?:\*\*)?(_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\s*(?:类|接口|的(?:接口|方法|成员|核心方法|关键方法)|(?:class|interface)(?:\s+methods)?|methods|API)(?:\*\*)?\s*[:：]"
)
# A paragraph that opens with a class's name in bold, alone or with its file (`**InputBatch（`x.py:91`）**`).
_BOLD_CLASS_LEAD_RE = re.compile(r"\*\*(_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\s*(?:[（(][^）)]*[）)])?\s*\*\*")
# `export VLLM_IMAGE="..."`, `SGLANG_PID=$(pgrep ...)`: a shell variable assigned at a line's start.
_SHELL_ASSIGN_RE = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=", re.MULTILINE)
_KEY_RE = re.compile(r"""["']([A-Za-z_][A-Za-z0-9_]*)["']\s*:""")


@dataclass(slots=True)
class DocFacts:
    """What the whole document says about its own names, gathered before the walk."""

    project: tuple[str | None, str] = (None, "")
    code_spans: set[str] = field(default_factory=set)  # texts written in code font in the prose
    plain_words: set[str] = field(default_factory=set)  # words of the prose outside code font
    # Names the prose calls a class (`ExecutorBase 类`, "the `Worker` class", "inherits from
    # `WorkerBase`"): a class name, not a term, even where the prose also writes it as a word.
    class_words: set[str] = field(default_factory=set)
    fence_words: set[str] = field(default_factory=set)  # identifiers written in its code blocks
    words: frozenset[str] = frozenset()  # lower-cased words of the whole document
    defined: set[str] = field(default_factory=set)  # classes/functions its Python snippets define
    instances: dict[str, str] = field(default_factory=dict)  # `llm` -> `LLM` (`llm = LLM(...)`)
    # An instance known from a copied class's `self.x = C(...)`: the attribute that holds it
    # (`output_processor` -> `LLMEngine.output_processor`), see `Reference.held_by`.
    held: dict[str, str] = field(default_factory=dict)
    imported: dict[str, str] = field(default_factory=dict)  # `LLM` -> `vllm.LLM`
    foreign: set[str] = field(default_factory=set)  # names imported from other packages
    # Per variable, each assignment from a call in document order: (line, made by another
    # package's callable). `model = AutoFP8ForCausalLM.from_pretrained(...)` rebinds `model`
    # to AutoFP8's object until the next assignment, whatever `model = LLM(...)` said elsewhere.
    bindings: dict[str, list[tuple[int, bool]]] = field(default_factory=dict)
    # Variables, parameters, keyword arguments and payload keys of the document's own
    # snippets (`"target_token": 67`): a bare name in code font that is one of these is
    # the example's, not the project's.
    local_names: set[str] = field(default_factory=set)
    # Names its Python snippets assign (`ModelRunnerClass = EmbeddingModelRunner`): a capitalised
    # one called later (`ModelRunnerClass(...)`) is a variable holding a class, not a class.
    assigned: set[str] = field(default_factory=set)
    # Of those, the ones only ever assigned what `self` holds (`request = self.running[i]`): the
    # project's objects, as a loop's variable is (`named_objects._from_self`).
    held_from_self: set[str] = field(default_factory=set)
    foreign_flags: set[str] = field(default_factory=set)  # flags the document passes to other programs
    # Its snippets keep the project's public engine on `self` (`self.llm = LLM(...)`, which the
    # projects' own code never does): their loose `self.x` lines are the reader's class (a
    # trainer that embeds the engine), not the project's.
    embeds_engine: bool = False
    # Keys of the `extra_body` dicts its snippets send (`extra_body={"guided_json": ...}`): fields
    # of the server's request classes, wherever the prose names them too.
    request_keys: set[str] = field(default_factory=set)
    shell_vars: set[str] = field(default_factory=set)  # variables its shell blocks assign and read back (`$VLLM_IMAGE`)
    # A keyword its Python snippets pass to a call, and the first callee it is passed to
    # (`calculate_kv_scales` -> `LLM`): whose setting a settings line of that name is.
    passed: dict[str, str] = field(default_factory=dict)
    repo: str | None = None  # `vllm-project/vllm` when the document says where it lives
    path: str | None = None  # its path in that repository
    # The project whose repository the document shows it sits in (its docs macros, autorefs, a
    # relative link climbing into the package): its relative links are that repository's (`links.py`).
    repository: str | None = None
    # Another program the document is about, though no heading says so: its snippets import from
    # that program's package and the text names it more often than vLLM and SGLang together (a
    # page on Dynamo's `from dynamo.llm import KvEventPublisher`); `None` otherwise.
    subject: str | None = None

    def foreign_object(self, var: str, line: int) -> bool:
        """Whether `var`, at `line`, holds an object another package's callable made (its last
        assignment at or before the line says so)."""
        before = [foreign for at, foreign in self.bindings.get(var, ()) if at <= line]
        return bool(before) and before[-1]



def dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# How many lines of prose (a note, an emoji line, a stray fence) a snippet may lose before it is
# read line by line instead.
_MAX_REPAIRS = 8


_CUT_BRANCH_RE = re.compile(r"^(\s*)(elif(?=\s)|else(?=\s*:))")


def _repaired(content: str) -> ast.Module | None:
    """The snippet parsed with the few lines that break it blanked: real notes paste a line of
    prose or an output marker into a quoted method, and the method around it is still code."""
    lines = content.splitlines()
    if any(line.lstrip().startswith(">>>") for line in lines):
        return None  # an interpreter session: read line by line
    # `...` on a line of its own among a call's arguments (`EngineArgs(model=model, ...)`): the
    # author's "and the rest", not code (a positional argument after keywords does not parse).
    rest = [i for i, line in enumerate(lines) if line.strip() in {"...", "...,"} and _closes_after(lines, i)]
    for i in rest:
        lines[i] = ""
    # `def __init__(self, vllm_config, executor_class, ...):`: the same "and the rest" among a
    # copied method's parameters. Blanked in place, so columns stay those of the document.
    lines = [_DEF_REST_RE.sub(lambda m: " " * len(m.group(0)), line) if _DEF_LINE_RE.match(line) else line for line in lines]
    # `elif self.is_hybrid_gdn:` / `else:` opening the snippet: a branch cut from its `if`, read
    # as an `if` of its own (rewritten in place, same length, so columns stay the document's).
    opening = next((i for i, line in enumerate(lines) if line.strip()), None)
    if opening is not None:
        lines[opening] = _CUT_BRANCH_RE.sub(lambda m: m.group(1) + ("if  " if m.group(2) == "elif" else "if 1"), lines[opening], count=1)
    # Only a few lines, and a small share of the snippet: more is not code with notes in it.
    budget = min(_MAX_REPAIRS, sum(1 for line in lines if line.strip()) // 4)
    blanked = 0
    while True:
        try:
            return ast.parse("\n".join(lines))
        except IndentationError:
            # Hand-typed pseudocode whose indentation slipped (or a body left empty by a blanked
            # line): read as the structure it means.
            again = reindent(lines)
            if again == lines:
                return None
            lines = again
        except SyntaxError as exc:
            bad = (exc.lineno or 0) - 1
            if blanked == budget or not 0 <= bad < len(lines) or not lines[bad].strip():
                return None
            if "follows keyword argument" in exc.msg and _ARG_REST_RE.search(lines[bad]):
                # `WorkerWrapperBase(vllm_config=vllm_config, ...)`: "and the rest" of a call's arguments.
                lines[bad] = _ARG_REST_RE.sub(lambda m: " " * len(m.group(0)), lines[bad])
            elif _DEF_LINE_RE.match(lines[bad]) and (params := _loose_params(lines[bad])) != lines[bad]:
                lines[bad] = params
            elif "expected 'except' or 'finally'" in exc.msg and (opened := _open_try(lines, bad)) is not None:
                lines[opened] = ""  # a `try:` the copy cut short: its body is still the method's code
            else:
                lines[bad] = ""  # blank, so line numbers stay those of the document
            blanked += 1


# In a hand-typed signature: a note in brackets after a parameter (`size [max_total_num_tokens]`),
# and two names with no comma between them (`page_size device`).
_PARAM_NOTE_RE = re.compile(r"(?<=\w)\s*\[[^\[\]()]*\]")
_PARAM_GAP_RE = re.compile(r"(?<=\w)( +)(?=[A-Za-z_])")


def _loose_params(line: str) -> str:
    """`def __init__(size [max_total_num_tokens], dtype, page_size device):` as the parameter list
    it means, `(size, dtype, page_size, device)`, with the notes blanked (columns stay put)."""
    head, sep, rest = line.partition("(")
    params, close, tail = rest.rpartition(")")
    if not sep or not close:
        return line
    params = _PARAM_NOTE_RE.sub(lambda m: " " * len(m.group(0)), params)
    params = _PARAM_GAP_RE.sub(lambda m: "," + " " * (len(m.group(1)) - 1) if len(m.group(1)) > 1 else ",", params)
    return f"{head}({params}){tail}"


def _open_try(lines: list[str], before: int) -> int | None:
    """The last `try:` line before line `before`."""
    return next((i for i in range(before - 1, -1, -1) if lines[i].strip() == "try:"), None)


_DEF_LINE_RE = re.compile(r"\s*(?:async\s+)?def\s+\w+\s*\(")
# `...` standing for a parameter: after `(` or `,`, before `,` or `)` (not a default `x=...`);
# written twice (`... ...`) or as the CJK ellipsis (`……`), as authors type "and the rest".
_REST = r"(?:\.{3,}|…+)(?:\s*(?:\.{3,}|…+))*"
_DEF_REST_RE = re.compile(rf"(?<=[(,])\s*{_REST}\s*(?=[,)])")
# `...` as one of a call's arguments, with the comma before it.
_ARG_REST_RE = re.compile(rf",\s*{_REST}\s*(?=[,)])")


def _closes_after(lines: list[str], i: int) -> bool:
    """Whether the line after `i` that is not blank closes a bracket, or `i` ends with a comma."""
    if lines[i].rstrip().endswith(","):
        return True
    following = next((line.strip() for line in lines[i + 1 :] if line.strip()), "")
    return following[:1] in {")", "]", "}"}


# `vllm/v1/core/kv_cache_manager.py` alone on a snippet's line: the file the snippet quotes (under
# `# 文件位置`), not a division of names whose last operand reads `kv_cache_manager.py`.
_PATH_LINE_RE = re.compile(r"^([ \t]*)(?=[\w.-]*/)([\w.-]+(?:/[\w.-]+)+\.py)[ \t]*$", re.MULTILINE)


def parse_snippet(content: str) -> list[tuple[int, ast.Module]]:
    """(line offset, tree) pairs: the whole snippet; when a few lines of prose break it, the
    snippet without them; else, when `...` placeholders or prompts break it, each line that
    parses on its own. A line that is a file's path alone is read as a comment."""
    content = _PATH_LINE_RE.sub(r"\1#\2", content)
    lines = content.splitlines()
    flat, origin = unflatten(lines)
    if len(flat) == len(lines):
        try:
            return [(0, ast.parse(content))]
        except SyntaxError:
            return _loose_trees(content)
    # Code a re-post flattened onto single lines (which may even parse as it is: `a = bself.c =
    # d` is one chained assignment): read as the lines it was, each name placed back where the
    # document writes it.
    return [(0, _placed_back(tree, base, origin)) for base, tree in _loose_trees("\n".join(flat))]


# Fences with no language of their own (a diagram's `mermaid`, a `log` say what they are).
_UNTYPED_LANGS = {"", "text", "txt", "plain", "plaintext", "none"}


_PYTHON_WORDS_RE = re.compile(r"\bself\.\w|^\s*(?:def|class|if|elif|for|while|return|with|try)\b", re.MULTILINE)


def mislabelled_python(lang: str, content: str) -> bool:
    """A fence typed as another language (```` ```cpp ```` for its colours) that holds Python: the
    whole block parses as Python and defines a function or class at its top level, which no C++,
    JSON or YAML block does."""
    if lang in PYTHON_LANGS or lang in SHELL_LANGS or lang in TEXT_LANGS or lang in _UNTYPED_LANGS:
        return False
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for node in tree.body)


# A line of a drawn tree (`├─ FCFSPolicy`, `│   get_priority(req)`, `└── x`).
_TREE_DRAWING_RE = re.compile(r"^\s*[├└│┌]")


def drawn_in_python(content: str) -> bool:
    """A fence typed as Python that holds a drawn tree (a class tree with `├─` and `│`), not code:
    no Python parses with those characters, so the block is read as a text block's names are. An
    arrow in a note pasted under real code (`流水线→重叠`) is no drawing: a third of the lines at
    least begin with the tree's characters."""
    lines = [line for line in content.splitlines() if line.strip()]
    drawn = sum(1 for line in lines if _TREE_DRAWING_RE.match(line))
    if drawn < 2 or drawn * 3 < len(lines):
        return False
    try:
        ast.parse(content)
    except (SyntaxError, ValueError):
        return True
    return False


def flattened_code(lang: str, content: str) -> bool:
    """An untyped fence holding Python a re-post flattened onto single lines (`pseudocode.
    is_flattened`): read as the Python it was, since its names are code, not a diagram's words."""
    if lang not in _UNTYPED_LANGS:
        return False
    lines = content.splitlines()
    flat, _ = unflatten(lines)
    # Python's own words, not only its shape: a log's or a table's columns are cut at gaps too.
    return len(flat) > len(lines) and _PYTHON_WORDS_RE.search("\n".join(flat)) is not None and _repaired("\n".join(flat)) is not None


def _loose_trees(content: str) -> list[tuple[int, ast.Module]]:
    """A snippet that does not parse as it is: repaired, else each line that parses alone."""
    repaired = _repaired(content)
    if repaired is not None:
        return [(0, repaired)]
    trees = []
    for i, raw in enumerate(content.splitlines()):
        try:
            trees.append((i, ast.parse(raw.strip().removeprefix(">>> ").removeprefix("... "))))
        except SyntaxError:
            continue
    return trees


def _placed_back(tree: ast.Module, base: int, origin: list[tuple[int, int]]) -> ast.Module:
    """`tree`, parsed from unflattened lines (`base`: its first line's index among them), with
    every node's line and column those of the document's flattened line (`origin`)."""
    for node in ast.walk(tree):
        for line_attr, col_attr in (("lineno", "col_offset"), ("end_lineno", "end_col_offset")):
            lineno = getattr(node, line_attr, None)
            if lineno is None or not 0 < base + lineno <= len(origin):
                continue
            index, shift = origin[base + lineno - 1]
            setattr(node, line_attr, index + 1)
            if getattr(node, col_attr, None) is not None:
                setattr(node, col_attr, getattr(node, col_attr) + shift)
    return tree


def settings_lines(trees: list[tuple[int, ast.Module]]) -> list[ast.Assign]:
    """A snippet of settings lines alone (`kv_cache_dtype = "fp8"` over `calculate_kv_scales = False`,
    the keywords a guide tells the reader to pass, with no call around them): each statement sets
    one lowercase name to a literal. Empty for any other snippet."""
    out: list[ast.Assign] = []
    for _, tree in trees:
        for top in tree.body:
            if not (isinstance(top, ast.Assign) and len(top.targets) == 1 and isinstance(top.targets[0], ast.Name)):
                return []
            if not top.targets[0].id.islower():
                return []
            try:
                ast.literal_eval(top.value)
            except ValueError:
                return []
            out.append(top)
    return out


def request_keys(call: ast.Call, bindings: Mapping[str, ast.expr] | None = None) -> list[tuple[str, ast.AST]]:
    """The top-level keys of the request body a call sends, each with the node that writes it:
    an OpenAI client's `extra_body={"k": v}` / `extra_body=dict(k=v)`, and the JSON body of an
    HTTP call to the server (`requests.post(url, json={...})`, `httpx.post(..., json=payload)`
    with `payload = {...}` bound in the same snippet, `bindings`)."""
    out: list[tuple[str, ast.AST]] = []
    http = isinstance(call.func, ast.Attribute) and call.func.attr in _HTTP_METHODS
    for kw in call.keywords:
        if kw.arg != "extra_body" and not (http and kw.arg == "json"):
            continue
        value = kw.value
        if isinstance(value, ast.Name) and kw.arg == "json" and bindings is not None:
            value = bindings.get(value.id, value)
        if isinstance(value, ast.Dict):
            out.extend((k.value, k) for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier())
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
            out.extend((k.arg, k) for k in value.keywords if k.arg is not None)
    return out


# The HTTP verbs whose `json=` is a request body (`requests`, `httpx`, `aiohttp` sessions).
_HTTP_METHODS = frozenset({"post", "put", "patch"})


# `curl http://localhost:8000/v1/completions ... -d '{...}'`: a request to a server over HTTP.
_HTTP_COMMAND_RE = re.compile(r"\bcurl\b[^\n]*\bhttps?://")


def payload_keys(content: str) -> list[tuple[int, str, str | None]]:
    """The top-level keys of each JSON body a `curl` command sends to a server (`-d '{...}'`),
    as (offset in `content`, key, the URL's path): the request's fields, as `json=` keys are
    (nested objects are the values of those fields: a message's `role`, a template's kwargs)."""
    out: list[tuple[int, str, str | None]] = []
    for command in _HTTP_COMMAND_RE.finditer(content):
        payload = _PAYLOAD_RE.search(content, command.start())
        # The body of this command: before the next command begins.
        if payload is None or _HTTP_COMMAND_RE.search(content, command.end(), payload.start()):
            continue
        url = re.search(r"https?://\S+", content[command.start() : payload.start()])
        endpoint = url_path(url.group(0).strip("'\"")) if url else None
        out.extend((payload.start(1) + at, key, endpoint) for at, key in _top_level_keys(payload.group(1)))
    return out


# `--speculative-config '{"method": ...}'`: a flag whose value is a config object in JSON.
_CONFIG_JSON_RE = re.compile(r"(?<![\w-])(--[a-z0-9]+(?:-[a-z0-9]+)*-config)(?:=|\s+)'(?=\s*\{)")


def config_keys(content: str) -> list[tuple[int, str, str]]:
    """The top-level keys of each JSON object a `--*-config` flag is given in single quotes, as
    (offset in `content`, key, the flag): the fields of the config class the flag fills."""
    out: list[tuple[int, str, str]] = []
    for m in _CONFIG_JSON_RE.finditer(content):
        end = content.find("'", m.end())
        if end < 0:
            continue
        out.extend((m.end() + at, key, m.group(1)) for at, key in _top_level_keys(content[m.end() : end]))
    return out


def _top_level_keys(body: str) -> list[tuple[int, str]]:
    """(offset, key) of each key of a JSON object's own (`{"a": {"b": 1}}` gives `a` alone),
    read by scanning: a body with `...` or a shell variable in it is no valid JSON."""
    out: list[tuple[int, str]] = []
    depth, i = 0, 0
    while i < len(body):
        if body[i] == '"':
            end = body.find('"', i + 1)
            while end > 0 and body[end - 1] == "\\":
                end = body.find('"', end + 1)
            if end < 0:
                break
            key = body[i + 1 : end]
            if depth == 1 and key.isidentifier() and re.match(r"\s*:", body[end + 1 :]):
                out.append((i + 1, key))
            i = end + 1
            continue
        depth += {"{": 1, "[": 1, "}": -1, "]": -1}.get(body[i], 0)
        i += 1
    return out


def value_bindings(tree: ast.AST) -> dict[str, ast.expr]:
    """`payload = {...}`, `url = f"http://localhost:{port}/generate"` in a snippet: the value each
    name is bound to (the last binding wins, as it does for the call after it in the usual
    request example)."""
    out: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value
    return out


# The routes the OpenAI client's calls go to.
_CLIENT_ROUTES = (
    ("chat.completions.create", "/v1/chat/completions"),
    ("completions.create", "/v1/completions"),
    ("embeddings.create", "/v1/embeddings"),
    ("responses.create", "/v1/responses"),
)


def request_endpoint(call: ast.Call, bindings: Mapping[str, ast.expr] | None = None) -> str | None:
    """The route a request call goes to, where the snippet says: the URL's path of an HTTP call
    (`requests.post(f"{url}/generate", ...)`, through a bound `url`), the route of an OpenAI
    client's method (`client.chat.completions.create`)."""
    name = dotted(call.func) or ""
    for method, route in _CLIENT_ROUTES:
        if name.endswith(method):
            return route
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in _HTTP_METHODS):
        return None
    url = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "url"), None)
    return url_path(_string_text(url, bindings or {})) if url is not None else None


def _string_text(node: ast.expr, bindings: Mapping[str, ast.expr], depth: int = 0) -> str:
    """The text a string expression builds, `{}` for each part the snippet does not spell."""
    if depth > 3:
        return "{}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_string_text(v, bindings, depth + 1) if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _string_text(node.left, bindings, depth + 1) + _string_text(node.right, bindings, depth + 1)
    if isinstance(node, ast.Name) and node.id in bindings:
        return _string_text(bindings[node.id], bindings, depth + 1)
    return "{}"


_URL_PATH_RE = re.compile(r"(?:https?://[^/\s'\"]*|\{\})(/[\w/.-]*)(?:$|[?#])")


def url_path(url: str) -> str | None:
    """`/v1/chat/completions` of `http://localhost:8000/v1/chat/completions?x=1` or of
    `{}/v1/chat/completions`; None when the path is not spelled out (`/v1/models/{}`)."""
    m = _URL_PATH_RE.match(url.strip())
    return (m.group(1).rstrip("/") or None) if m else None


def document_facts(source: str, tokens: list[Token]) -> DocFacts:
    facts = DocFacts(project=document_project(source))
    m = _ATLAS_PATH_RE.search(source)
    if m:
        facts.repo, facts.path = m.group("repo"), m.group("path")
    facts.repository = repository_of(source, REPO_PROJECTS.get(facts.repo or ""))
    # Entry-point groups (`[project.entry-points."vllm.logits_processors"]`, "the
    # `vllm.general_plugins` entry point group"): names of a packaging mechanism, not modules.
    facts.local_names |= set(_ENTRY_GROUP_RE.findall(source))
    facts.local_names |= {m.group(1) for m in _ENTRY_GROUP_TEXT_RE.finditer(source)}
    self_held: set[str] = set()
    otherwise: set[str] = set()
    facts.code_spans = {span.strip() for span in _CODE_SPAN_RE.findall(source)}
    # `CudaGraphRunner.can_run()` in the prose cites `CudaGraphRunner` too.
    facts.code_spans |= {m.group(0) for span in list(facts.code_spans) if (m := re.match(r"_*[A-Z][A-Za-z0-9_]*(?=\.)", span))}
    for span in facts.code_spans:
        if looks_like_command(span):
            facts.foreign_flags |= foreign_flags(span)
    prose = _CODE_SPAN_RE.sub(" ", _FENCE_RE.sub(" ", source))
    facts.words = frozenset(w.lower() for w in re.findall(r"[A-Za-z]{3,}", re.sub(r"([a-z])([A-Z])", r"\1 \2", source)))
    facts.plain_words = set(re.findall(r"(?<![\w./-])[A-Za-z_][A-Za-z0-9_]*(?![\w/(])", prose))
    without_fences = _FENCE_RE.sub(" ", source)
    facts.class_words = {a or b for a, b in _CLASS_SAID_RE.findall(without_fences)}
    # `ModelInputForGPUWithSamplingMetadata` in CJK prose (or on a line of names alone): a class name of three words or more is
    # nobody's term, whatever the sentence calls it (`MyRequestRouter` is the author's own).
    facts.class_words |= {
        n.name
        for line in prose.splitlines()
        for part in ([line] if has_cjk(line) else [p for p in line.split("|") if names_only(p)])  # a table's cell alone
        for n in bare_names(part if has_cjk(part) else part.replace("/", " "))  # `RadixCache/HiRadixCache`
        if _LONG_CLASS_RE.fullmatch(n.name)
    }
    facts.fence_words = {w for fence in _FENCE_RE.finditer(source) for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fence.group(0))}
    copied: dict[str, tuple[str, str]] = {}  # attribute of a snippet's class -> (that class, the class constructed)
    qualified: set[tuple[str, str]] = set()  # (`argparse`, `Namespace`) for `argparse.Namespace`
    lead: str | None = None  # the paragraph before the next block
    made_by: list[tuple[str, int, str]] = []  # (variable, line, root of the callable that made it)
    foreign_roots: set[str] = set()  # packages other than the projects its snippets import from
    shell_text: list[str] = []
    for i, token in enumerate(tokens):
        if token.type == "inline" and i and tokens[i - 1].type == "paragraph_open":
            lead = token.content
        if token.type not in {"fence", "code_block"}:
            continue
        lang = (token.info or "").strip().split(maxsplit=1)[0].lower() if token.info else ""
        lang = "python" if mislabelled_python(lang, token.content) else lang
        if lang in SHELL_LANGS or lang in TEXT_LANGS:
            facts.foreign_flags |= foreign_flags(token.content)
        if lang in SHELL_LANGS:
            facts.local_names |= foreign_words(token.content)
            shell_text.append(token.content)
        if lang in {"json", "jsonc", "yaml", "yml"} | PYTHON_LANGS:
            facts.local_names.update(_KEY_RE.findall(token.content))
        else:
            # Request payloads (`curl -d '{...}'`), not a config flag's JSON (`--x-config '{...}'`,
            # whose keys are the project's own field names).
            for payload in _PAYLOAD_RE.findall(token.content):
                facts.local_names.update(_KEY_RE.findall(payload))
            facts.request_keys.update(key for _, key, _ in payload_keys(token.content))
        if lang not in PYTHON_LANGS:
            continue
        # A copy whose first line says where in the project it lives (`copies.headed`) defines
        # the project's names, not the document's own.
        # (So does one the paragraph right before it places: `（定义在 `vllm/platforms/interface.py:41-61`）：`.)
        quoted = headed(token.content, lead) is not None or located(lead) is not None
        lead = None
        first = (token.map or [0])[0] + (2 if token.type == "fence" else 1)  # 1-based line of the block's first line
        for offset, tree in parse_snippet(token.content):
            bindings = value_bindings(tree)
            # (`for req in queue:` names the object it walks, as the project's code names it.)
            looped = loop_variables(tree)
            held = {id(n.targets[0]) for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1 and from_self(n.value)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    facts.local_names.add(node.id)
                    if id(node) in held:
                        self_held.add(node.id)
                    elif id(node) not in looped:
                        otherwise.add(node.id)
                    if id(node) not in looped:
                        facts.assigned.add(node.id)
                elif isinstance(node, ast.arg):
                    facts.local_names.add(node.arg)  # the snippet's own function's parameter
                if isinstance(node, ast.Call):
                    facts.request_keys.update(key for key, _ in request_keys(node, bindings))
                    if (callee := dotted(node.func)) is not None:
                        for kw in node.keywords:
                            if kw.arg is not None:
                                facts.passed.setdefault(kw.arg, callee)
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and CLASSNAME_RE.match(node.attr):
                    qualified.add((node.value.id, node.attr))
                if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and not quoted:
                    facts.defined.add(node.name)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for alias in node.names:
                        name = alias.asname or alias.name
                        if node.module.split(".")[0] in ROOTS:
                            facts.imported[name] = f"{node.module}.{alias.name}"
                        else:
                            facts.foreign.add(name)
                            foreign_roots.add(node.module.split(".")[0])
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.split(".")[0] not in ROOTS:
                            facts.foreign.add((alias.asname or alias.name).split(".")[0])
                            foreign_roots.add(alias.name.split(".")[0])
                        elif alias.asname:
                            facts.imported[alias.asname] = alias.name  # `import sglang as sgl`
                elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    made = dotted(node.value.func)
                    if made in _PUBLIC_ENGINES and any(_on_self(t) for t in node.targets):
                        facts.embeds_engine = True
                    if made:
                        made_by.extend((t.id, first + offset + node.lineno - 1, made.split(".", 1)[0]) for t in node.targets if isinstance(t, ast.Name))
                    if made and CLASSNAME_RE.match(made.rsplit(".", 1)[-1]):
                        for target in node.targets:
                            if isinstance(target, ast.Name):
                                facts.instances[target.id] = facts.imported.get(made, made)
                if isinstance(node, ast.ClassDef):
                    for attr, made in constructed(node).items():
                        copied.setdefault(attr, (node.name, made))
    # `argparse.Namespace` written somewhere in the snippets: a bare `Namespace` elsewhere is
    # argparse's too; `server = uvicorn.Server(config)`: `server.serve(...)` is uvicorn's method.
    facts.foreign |= {name for root, name in qualified if _foreign_module(root, facts)}
    for var, made in list(facts.instances.items()):
        root = made.split(".", 1)[0]
        if _foreign_module(root, facts):
            del facts.instances[var]
            facts.foreign.add(var)
        elif root != made and root not in ROOTS and root not in facts.imported and not CLASSNAME_RE.match(root):
            # `proc = context.Process(...)`: a class reached through an object the snippets do not
            # say is the project's (`LLM(...)`, `vllm.LLM(...)`, `sgl.Engine(...)` are).
            del facts.instances[var]
    for var, line, root in sorted(made_by, key=lambda b: b[1]):
        facts.bindings.setdefault(var, []).append((line, _foreign_module(root, facts)))
    # `self.scheduler = Scheduler(...)` in a copied class: the reader's later `scheduler.swapped`
    # is that class's member (a variable the snippets assign themselves keeps its own class).
    for attr, (holder, cls) in copied.items():
        if cls not in facts.foreign and cls not in FOREIGN_NAMES and attr not in facts.instances:
            facts.instances[attr] = facts.imported.get(cls, cls)
            facts.held[attr] = f"{holder}.{attr}"
    facts.subject = _imported_subject(source, foreign_roots, bool(facts.imported))
    facts.held_from_self = self_held - otherwise
    shell = "\n".join(shell_text)
    facts.shell_vars = {name for name in _SHELL_ASSIGN_RE.findall(shell) if re.search(rf"\$\{{?{name}\b", shell)}
    return facts


# The projects' public engines, built by their users and never by their own library code.
_PUBLIC_ENGINES = frozenset({"LLM", "vllm.LLM", "sgl.Engine", "sglang.Engine"})


def _on_self(target: ast.expr) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"


_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.S)
_MIN_SUBJECT_MENTIONS = 3
# Libraries a page on vLLM or SGLang uses as tools (`from openai import OpenAI` in a serving guide
# that says "OpenAI-compatible" throughout): never what the page is about.
_TOOL_LIBRARIES = frozenset({"torch", "transformers", "openai", "fastapi", "uvicorn", "requests", "huggingface_hub"})


def _imported_subject(source: str, roots: set[str], imports_project: bool) -> str | None:
    """The other program a document is about (`DocFacts.subject`): one whose package its snippets
    import from, named in the document (its code included, HTML comments not) at least three
    times, and more often than vLLM and SGLang or by snippets that import nothing from them."""
    prose = _HTML_COMMENT_RE.sub("", source)
    ours = len(PROJECT_RE.findall(prose))
    title = _TITLE_RE.search(prose)
    for root in sorted(roots - STDLIB_MODULES - _TOOL_LIBRARIES):
        # A library (`torch`, `requests`) is not what a page is written about, unless the page's
        # title names it (`# AutoRound` over `from auto_round import AutoRound`): then it is.
        spelled = _spellings_re(root)
        titled = spelled.search(title.group(1)) if title else None
        subject = other_system(root) or (titled.group(0) if titled else None)
        if subject is None:
            continue
        named = len(spelled.findall(prose))
        if named >= _MIN_SUBJECT_MENTIONS and (named > ours or not imports_project):
            return subject
    return None


_TITLE_RE = re.compile(r"^#\s+(.+)$", re.MULTILINE)


def _spellings_re(root: str) -> re.Pattern[str]:
    """`auto_round` as a package, a command or a name: `auto_round`, `auto-round`, `AutoRound`
    (`vllm_omni`: `vLLM-Omni`)."""
    words = [re.escape(w) for w in root.split("_") if w]
    return re.compile(rf"(?<![\w-]){'[-_ ]?'.join(words)}(?![\w-])", re.IGNORECASE)


def _foreign_module(root: str, facts: DocFacts) -> bool:
    """A module that is not the projects': imported from elsewhere, the standard library, or a
    dependency a serving text uses (`uvicorn`, `torch`)."""
    if root in ROOTS or root in {"self", "cls"}:
        return False
    return root in facts.foreign or root in STDLIB_MODULES or (root in FOREIGN_ROOTS and root.islower())


_MYST_OPEN_RE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\{(?P<name>note|tip|important|caution|warning|attention|danger|error|hint|seealso|admonition|dropdown)\}[^\n]*$")


def unwrap_myst(source: str) -> str:
    """MyST directives (```` ```{note} ````) hold Markdown, not code: blank out their fence
    lines so the body is read as prose (line numbers and columns stay as they were)."""
    lines = source.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = _MYST_OPEN_RE.match(lines[i].rstrip("\n"))
        if m is None:
            i += 1
            continue
        fence = m.group("fence")
        for j in range(i + 1, len(lines)):
            if lines[j].strip() == fence:
                lines[i] = "\n"
                lines[j] = "\n"
                break
        i += 1
    return "".join(lines)


_LIQUID_OPEN_RE = re.compile(r"^ {0,3}\{%-?\s*highlight\s+(?P<lang>[\w+-]+)[^%]*%\}\s*$")
_LIQUID_CLOSE_RE = re.compile(r"^ {0,3}\{%-?\s*endhighlight\s*-?%\}")
_LINE_NUMBER_RE = re.compile(r"^\d+(?: +|$)")


def liquid_highlights(source: str) -> tuple[str, dict[int, int]]:
    """Jekyll's `{% highlight python %}` ... `{% endhighlight %}` (a blog's code block, often in an
    HTML `<figure>`): read as a fenced block of that language. The HTML lines that hold it are
    blanked (CommonMark would read the block as part of the HTML), a copy's line numbers at the
    start of its lines (`1077     async with ...`) are taken off, and a `...` line (the copy's
    elision) is blanked. Returns the text and, per 1-based line, how many columns were removed
    (as `dedent_admonitions` does)."""
    lines = source.splitlines(keepends=True)
    shift: dict[int, int] = {}
    i = 0
    while i < len(lines):
        m = _LIQUID_OPEN_RE.match(lines[i])
        end = next((j for j in range(i + 1, len(lines)) if _LIQUID_CLOSE_RE.match(lines[j])), None) if m else None
        if m is None or end is None:
            i += 1
            continue
        k = i - 1
        while k >= 0 and lines[k].lstrip().startswith("<") and not lines[k].lstrip().startswith("<!--"):
            lines[k] = "\n"
            k -= 1
        lines[i], lines[end] = f"```{m.group('lang')}\n", "```\n"
        k = end + 1
        while k < len(lines) and lines[k].lstrip().startswith("</"):
            lines[k] = "\n"
            k += 1
        body = range(i + 1, end)
        numbered = {n: len(hit.group(0)) for n in body if (hit := _LINE_NUMBER_RE.match(lines[n]))}
        written = [n for n in body if lines[n].strip() and lines[n].strip() != "..."]
        width = max((len(lines[n].split(" ", 1)[0].strip()) + 1 for n in numbered), default=0)
        for n in body:
            if lines[n].strip() == "...":
                lines[n] = "\n"
            elif n in numbered and len(numbered) * 2 > len(written):
                cut = min(width, numbered[n])
                lines[n] = lines[n][cut:] or "\n"
                shift[n + 1] = cut
        i = end + 1
    return "".join(lines), shift


def dedent_admonitions(source: str) -> tuple[str, dict[int, int]]:
    """mkdocs admonitions (`!!! note`, `??? code "..."`) indent their body by four spaces,
    which CommonMark reads as an indented code block: dedent the bodies so they are read
    as Markdown. Returns the text and, per 1-based line, how many columns were removed."""
    lines = source.splitlines(keepends=True)
    shift: dict[int, int] = {}
    i = 0
    while i < len(lines):
        m = _ADMONITION_RE.match(lines[i])
        if m is None:
            i += 1
            continue
        body = len(m.group("indent")) + 4
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].startswith(" " * body)):
            j += 1
        while j > i + 1 and not lines[j - 1].strip():
            j -= 1
        for k in range(i + 1, j):
            if lines[k].startswith(" " * body):
                lines[k] = lines[k][: body - 4] + lines[k][body:]
                shift[k + 1] = shift.get(k + 1, 0) + 4
        i += 1  # nested admonitions in the body are found on the next lines
    return "".join(lines), shift


def lead_program(text: str) -> str | None:
    """Another program a list is about, from the sentence that introduces it ("Quark supports
    multiple quantization schemes for vLLM:"): it names that program and the project, if at all,
    only as what the program serves."""
    if not text.rstrip().endswith((":", "：")):
        return None
    sentence = re.split(r"[.;!?](?=\s)|[。；！？]", text.strip())[-1]
    return other_system(FOR_PROJECT_RE.sub(" ", sentence))


def lead_owner(codes: list[str], text: str) -> tuple[str, bool, bool] | None:
    """The class a list introduced by `text` describes ("`Req` has these fields:"), whether the
    text says the items are its fields (rather than, say, options passed to it), and whether it
    says they are its interface ("`Executor` 接口：", its methods)."""
    if not text.rstrip().endswith((":", "：")):
        return None
    names = [c.strip() for c in codes if CLASSNAME_RE.match(c.strip()) and c.strip() not in FOREIGN_NAMES]
    if not names and (m := _NAMED_LIST_RE.fullmatch(text.strip())) is not None and m.group(1) not in FOREIGN_NAMES:
        names = [m.group(1)]  # `**Executor 接口**：`, "Worker class methods:": the list's class, out of code font
    if not names and (m := _BOLD_CLASS_LEAD_RE.match(text.strip())) is not None and m.group(1) not in FOREIGN_NAMES and sum(c.isupper() for c in m.group(1)) >= 2:
        names = [m.group(1)]  # `**InputBatch（`gpu_input_batch.py:91`）** 是一个持久对象：...`: the paragraph is about it
    if not names:
        return None
    return names[-1], bool(_FIELDS_RE.search(text)), bool(_INTERFACE_RE.search(text))


