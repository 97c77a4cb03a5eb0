"""Walk a Markdown file's token stream (markdown-it-py) and collect references.

Sources: inline code spans, links to GitHub blob/tree URLs of vLLM and SGLang
(and relative links when the document says where it lives), shell commands,
Python snippets (imports, class bases, calls, annotations), text and diagram
blocks (call forms, dotted names, paths, class names the prose also cites), and
the bodies of mkdocs admonitions (`!!! note`), read as Markdown.
"""

from __future__ import annotations

import ast
import collections.abc
import contextlib
import functools
import io
import itertools
import posixpath
import re
import tokenize
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from markdown_it import MarkdownIt
from markdown_it.token import Token

from analyzer.index.extract import module_name
from analyzer.refs.block_locals import bound_names, enumerated
from analyzer.refs.classify import (
    BUILTINS,
    FOREIGN_NAMES,
    FOREIGN_ROOTS,
    PROJECT_RE,
    PYTHON_BUILTINS,
    REPO_ONLY_DIRS,
    Classified,
    classify,
    classify_env,
    classify_metric,
    classify_path,
    classify_symbol,
    other_system,
)
from analyzer.refs.copies import (
    bare_calls,
    commented_class,
    commented_file,
    docstring_args,
    headed,
    located,
    member_chains,
    method_owner,
    new_code,
    object_call,
    omits_self,
    self_members,
)
from analyzer.refs.diagram_names import diagram_names
from analyzer.refs.document import (
    CLASSNAME_RE,
    PYTHON_LANGS,
    ROOTS,
    SHELL_LANGS,
    TEXT_LANGS,
    DocFacts,
    config_keys,
    dedent_admonitions,
    document_facts,
    dotted,
    drawn_in_python,
    flattened_code,
    lead_owner,
    lead_program,
    liquid_highlights,
    mislabelled_python,
    parse_snippet,
    payload_keys,
    request_endpoint,
    request_keys,
    settings_lines,
    unwrap_myst,
    value_bindings,
)
from analyzer.refs.framework import decide, mentions
from analyzer.refs.heading_names import heading_class
from analyzer.refs.kernel_package import KERNEL_PACKAGE_RE
from analyzer.refs.layout import (
    blank_cjk,
    flow_steps,
    has_cjk,
    holds_no_command,
    is_pasted_outline,
    option_listing,
)
from analyzer.refs.links import (
    local_checkout_link,
    macro_link,
    relative_link,
    sentence_names,
    with_anchor_names,
)
from analyzer.refs.listing import (
    HUMPS_RE,
    Listed,
    class_outline,
    constant_listing,
    field_listing,
    tree_outline,
)
from analyzer.refs.models import ENV, FLAG, METRIC, PATH, REQUEST, SYMBOL, Reference
from analyzer.refs.named_objects import named_attributes
from analyzer.refs.prose_code import bare_names, in_formula, in_quotient, names_only, prose_names
from analyzer.refs.receivers import receivers
from analyzer.refs.shell import last_command, looks_like_command, shell_refs

_GITHUB_RE = re.compile(
    r"^https?://github\.com/(?P<repo>vllm-project/vllm|sgl-project/sglang)/(?P<mode>blob|tree)/"
    r"(?P<ref>[^/#?]+)/(?P<path>[^#?]*)(?:#L(?P<start>\d+)(?:-L(?P<end>\d+))?)?$"
)
_REPO_FRAMEWORK = {"vllm-project/vllm": "vllm", "sgl-project/sglang": "sglang"}
# The ASCII punctuation a Markdown backslash may escape (CommonMark 2.4).
_ESCAPABLE_RE = re.compile(r"[!-/:-@\[-`{-~]")
_AUTOREF_RE = re.compile(r"^(?:vllm|sglang)(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")
# A script named in code font (`toy_proxy_server.py`, `run_cluster.sh`), or a shell script linked
# (`<gh-file:examples/run_cluster.sh>`, `[the helper](.../run_cluster.sh)`): options written in the
# same sentence are that script's, not the command the passage ran before.
_SCRIPT_SPAN_RE = re.compile(r"`([\w./-]+\.(?:py|sh))`|(?:<|\]\()[^\s>)]*?([\w.-]+\.sh)[>)]")
# `python bench_multiturn.py --model-path ...` in a block with no language: the script the reader
# runs from the folder they stand in (a README's own folder, the author's), as in a `bash` block.
_RUN_SCRIPT_RE = re.compile(r"^\s*(?:\$\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:python3?|uv\s+run\s+python3?)(?:\s+-u)?\s+([\w.-]+\.py)(?=\s|$)")
_HEADING_LINE_RE = re.compile(r"#{1,6}\s")
_TOP_HEADING_RE = re.compile(r"#{1,2}\s")  # a `#` or `##` heading: a top section of the document
_LISTING_LINE_RE = re.compile(r"\s*(?:\||[-*+]\s|\d+[.)]\s)")
# A line of an options listing in a text block, as a script's `--help` prints it: the flag, a gap,
# what it does (`--qps               Target queries per second (required)`).
# (One space where the flag is long and its description starts a sentence: `--audio-sample-rate Sample rate`.)
_HELP_LINE_RE = re.compile(r"\s*-{1,2}[A-Za-z][\w-]*(?:[ =][A-Z_<>\[\]]+)?(?: {2,}\S|\t\S| [A-Z][a-z])")
_SENTENCE_END_RE = re.compile(r"[.!?。！？](?:\s|$)|\n\s*\n")
_NEW_NAME_RE = re.compile(r"\b(?:define|create|write|implement|add|name|call)\s+(?:a|an|your|the)?\s*(?:new|own|custom)\s*$", re.IGNORECASE)
# "defining our model in a file called `llama_wrapper.py`", "save it as `my_model.py`": the reader's
# new file, named by the sentence that has the reader make it.
_NEW_FILE_RE = re.compile(r"\b(?:(?:a|new|your|own)\s+(?:new\s+)?(?:file|script)\s+(?:called|named)|(?:create|save\s+(?:it\s+)?(?:as|to|in))(?:\s+a\s+(?:new\s+)?file)?)\s*$", re.IGNORECASE)
# The word after a code span that makes it a folder's name (`local_storage` directory, `results` 目录).
_FOLDER_WORD_RE = re.compile(r"\s*(?:directory|directories|folder|folders|dir)\b|\s*(?:目录|文件夹)", re.IGNORECASE)
_INLINE_AUTOREF_RE = re.compile(r"\[([^\]\n]+)\]\[((?:vllm|sglang)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\]")
_CODE_AUTOREF_TAIL_RE = re.compile(r"\]\[((?:vllm|sglang)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\]")
# In text blocks: `a.b.c(`, `Foo.bar`, paths, and class names of two humps or more.
_TEXT_CALL_RE = re.compile(r"(?<![\w.$/-])((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*)\(")
# `cur_size=4` inside a diagram message's parentheses (not `==`).
_MESSAGE_KEYWORD_RE = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)\s*=(?!=)")
_TEXT_DOTTED_RE = re.compile(r"(?<![\w.$/-])(_*[A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w(])")
# (Not an image and its tag, `vllm/vllm-openai:v0.19.1`, `lmsysorg/sglang:latest`.)
_TEXT_PATH_RE = re.compile(
    r"(?<![\w./-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*|[A-Za-z0-9_-]+\.(?:py|cu|cuh|cpp|cc|h|hpp|rs))(?::\d+(?:-\d+)?)?(?![\w/])"
    r"(?![\w.-]*:(?:v\d[\w.+-]*|latest|nightly|dev|main|stable)\b)"
)
# A Python error's class: `'Foo' object has no attribute`, `<class 'pkg.Foo'>`.
_ERROR_CLASS_RE = re.compile(r"(?:^|[\s(<])'(?:[A-Za-z_][\w]*\.)*(_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)'(?= object\b|>)")
# A sequence diagram's participant with a short name (`participant InputProc as InputProcessor`).
_DIAGRAM_ALIAS_RE = re.compile(r"\s*(?:participant|actor)\s+([A-Za-z_]\w*)\s+as\s+([A-Za-z_][\w.]*)")
# A tree diagram's line (`├── name`, `│   └── name`) and the snake_case or macro names on it.
_TREE_LINE_RE = re.compile(r"[├└]──|^\s*[|`]--")
# An import written in a comment: `from vllm.engine import LLMEngine`, `import sglang.srt.x`.
_COMMENT_IMPORT_RE = re.compile(
    r"\bfrom\s+(?P<module>(?:vllm|sglang)(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s+import\s+(?P<names>[A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|\bimport\s+(?P<module2>(?:vllm|sglang)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)"
)
_FOLDER_ENTRY_RE = re.compile(r"[A-Za-z_][\w.-]*/")
_TREE_NAME_RE = re.compile(r"(?<![\w./{<$-])([A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(?![\w./}>-])")
# `worker:vllm.worker.worker.Worker`: a dotted name from a project's package.
_TEXT_MODULE_RE = re.compile(r"(?<![\w.$/-])((?:vllm|sglang)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w(/-])")
# A Python source file's name alone (`block_manager.py`), as a heading or a list item.
_SOURCE_FILE_RE = re.compile(r"_*[a-z][a-z0-9_]*\.py")
# The same in a sentence, with its line numbers (`nixl_connector.py:316-518`): two words or more.
# `Processor.process_inputs()`, `LLMEngine._initialize_kv_cache`: a class's member in prose.
_PROSE_MEMBER_RE = re.compile(r"(?<![\w./:@#$%\\-])(_*[A-Z][A-Za-z0-9]*\.(?:_*[a-z][a-z0-9]*(?:_[a-z0-9]+)*|__[a-z]+__))(\(\))?(?![\w./@(-])")
_PROSE_FILE_RE = re.compile(r"(?<![\w./`-])_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+\.py(?::\d+(?:-\d+)?)?(?![\w/`-])")
# A path that starts at a project's package (or its repository's `python/sglang`).
_PROJECT_PATH_RE = re.compile(r"(?:python/)?(?:vllm|sglang)/[\w.-]+/")
# A class of two humps or more (`ModelWorkerBatch`, `GPUModelRunner`), not a word in capitals.
_MODULE_STRING_RE = re.compile(r"(?:vllm|sglang)(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_LONG_SNAKE_RE = re.compile(r"_*[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}")
_NAME_CHAIN_RE = re.compile(r"[\w.]+(?:\(\))?(?:\s*(?:->|—>|=>|[→⇒⟶])\s*[\w.]+(?:\(\))?)+")
_STEP_CLASS_RE = re.compile(r"_*(?=[A-Z][A-Za-z0-9]*[a-z])[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*")
# `_allocate_kv_cache`: one leading underscore, then words joined by underscores, standing alone.
_PRIVATE_NAME_RE = re.compile(r"(?<![\w.$/{<-])(_[a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w./}>(-])")
# A class's member written in code font (`Scheduler.stream_output()`): whose member a loose `self.x` is.
_QUALIFIED_MEMBER_RE = re.compile(r"(_*[A-Z][A-Za-z0-9]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:\([^()]*\))?")
# A field written with its type (`token_ids_cpu_tensor: (max_num_reqs, max_model_len) int32`):
# a name of two words or more, then a type that is no sentence.
_TYPED_FIELD_RE = re.compile(r"(_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s*:\s*[\w(\[][^:;=，。]*")
# `output_mode: "tokens"`, `"stream": true`: a body's key written with its value.
_SENT_KEY_RE = re.compile(r"""["']?([A-Za-z_]\w*)["']?\s*:\s*["'\w\[{-][^:;]*""")
# What the prose of an item holds when it lists code spans only (`a`、`b`, `a`, `b` and `c`).
_ITEM_SEPARATORS_RE = re.compile(r"[\s、,，/;；]|\band\b|和|与")
# A flag written with its value in code font (`--kv-cache-dtype fp8`, `--dtype=half`).
_FLAG_VALUE_RE = re.compile(r"(--[A-Za-z0-9][\w-]*)(?:=|\s+)([^\s-][^\s]*)")
# `self.waiting_queue`, `self.future_map.resolve_future()` written in the prose: a member of the
# class the passage describes, whichever it is.
# `self.use_nsa = is_deepseek_nsa(...)`, `assert self.use_nsa, "..."`: a statement quoted in the
# prose; each side that is a name or a call is a reference of its own. (Spaces around `=`: a
# `NAME=VALUE` is a shell assignment or a keyword, read as such elsewhere.)
_NAME_OR_CALL = r"[A-Za-z_][\w.]*(?:\([^()]*\))?"
_INLINE_STATEMENT_RE = re.compile(
    rf"(?P<left>{_NAME_OR_CALL})\s+(?:[-+*/|&]?=)\s+(?P<right>{_NAME_OR_CALL})|assert\s+(?:not\s+)?(?P<tested>{_NAME_OR_CALL})\s*(?:,.*)?"
)
_SELF_MEMBER_RE = re.compile(r"(?P<name>self(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\([^()]*\))?")
# A flow step's leading name (`generate_stream_resp (adapter.py)`, `tokenizer_manager.generate_request`).
_STEP_RE = re.compile(r"^\s*(?:(?:->|=>|[→⇒⟶])\s*)?((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*)(?:\(\))?(?=\s|$|\()")
_TEXT_CLASS_RE = re.compile(r"(?<![\w.])(_*(?:[A-Z][a-z0-9]+|[A-Z]{2,}(?=[A-Z][a-z]))(?:[A-Z][A-Za-z0-9]*)+)(?![\w.(])")

# A Python source file as a list item names it (`eagle_worker.py`, `v1/core/sched/scheduler.py`).
_SOURCE_FILE_RE = re.compile(r"[\w./-]*\w\.py")
# A bold list lead that is written like code: a class of two words or more, or a snake_case name.
_BOLD_NAME_RE = re.compile(r"_*(?=[A-Z][A-Za-z0-9]*[a-z])[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
# `paged_attention_v1/v2`, `ops.forward_v1/v2()`: one name and the variants of its last part.
_ALTERNATION_RE = re.compile(r"(?P<name>(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*?)(?P<alts>(?:/[A-Za-z0-9]{1,3})+)(?P<call>\(\))?")

# The typing vocabulary (`Sequence`, `Mapping`, `Awaitable`), read from this interpreter: a
# snippet's annotation may use it without importing it.
_TYPING_NAMES = frozenset(typing.__all__) | frozenset(collections.abc.__all__)
# Special forms no project names a class after: typing's wherever an annotation writes them.
_TYPING_FORMS = frozenset({"Self", "Any", "Never", "NoReturn", "LiteralString", "TypeAlias"})

# Each project's server, whose flags an options-only shell block of a document about it sets.
_PROJECT_SERVERS = {"vllm serve": "vllm", "sglang.launch_server": "sglang"}
# A block of options alone: every line that is not blank or a comment starts with `-`.
_OPTIONS_ONLY_RE = re.compile(r"(?:[ \t]*(?:-[^\n]*|#[^\n]*)?\n?)*")

# A Python file named in a sentence (`ops/paged_attn.py`).
_PY_FILE_RE = re.compile(r"\w\.py\b")
# Files only a repository holds (native sources, the build), and sections about the build. (A folder
# at a path's start: `benchmarks/` inside `sglang/multimodal_gen/benchmarks/x.py` is the package's.)
_REPO_FILES_RE = re.compile(r"(?<![\w/.-])(?:(?:vllm|sglang)/)?(?:csrc|tests|examples|benchmarks|tools|sgl-kernel|sgl-router)/|[\w-]\.(?:cu|cuh|cpp|cc|hpp|h)\b|\bsetup\.py\b|\bCMakeLists\.txt\b")
_BUILD_HEADING_RE = re.compile(r"\bbuild(?:ing)?\b|\bCMake\b|\bcompil|\btests?\b|\btesting\b|\bbenchmarks?\b|\bCI\b", re.IGNORECASE)
# A section on the repository's example or benchmark scripts ("# LMCache Examples"): its bare
# script names are files of those folders, which no wheel holds.
_SCRIPTS_HEADING_RE = re.compile(r"\bexamples\b|\bbenchmarks\b|\bscripts\b", re.IGNORECASE)


# The lead of an example's README, before its first section: "This example builds upon ...". (Not "this
# directory": the package's own folders have READMEs too, `vllm/grpc/README.md`.)
_EXAMPLE_LEAD_RE = re.compile(r"\bth(?:is|ese) examples?\b", re.IGNORECASE)


def _example_readme(lines: list[str]) -> bool:
    """The document's lead (up to its first `##` heading) says it is an example folder's README."""
    lead = list(itertools.takewhile(lambda line: not line.startswith("##"), lines))
    return any(_EXAMPLE_LEAD_RE.search(line) for line in lead if not line.startswith(("#", "<!--")))


_SITE_RE = re.compile(r"^https?://(?:www\.)?(?P<host>[^/#?]+)(?:/(?P<owner>[^/#?]+)/(?P<repo>[^/#?]+))?")


def _sentence_script(content: str, at: int, text: str) -> str | None:
    """The script another code span of the same sentence names (`toy_proxy_server.py` using
    `--prefiller-hosts`), when the span at `at` is not that script itself."""
    if at < 0:
        return None
    starts = [m.end() for m in _SENTENCE_END_RE.finditer(content, 0, at)]
    start = starts[-1] if starts else 0
    end_m = _SENTENCE_END_RE.search(content, at + len(text) + 2)
    sentence = content[start : end_m.start() if end_m else len(content)]
    names = [name for m in _SCRIPT_SPAN_RE.finditer(sentence) if (name := m.group(1) or m.group(2)) != text.strip()]
    return names[0] if len(set(names)) == 1 else None


def _repository_file(href: str, text: str) -> str | None:
    """`examples/rl/x.py` for a link to `../../../examples/rl/x.py` whose text is `x.py`: the file
    the text names, in a repository-only folder of either project; else None."""
    path = href.split("#", 1)[0].split("?", 1)[0]
    if not text.endswith(".py") or path.rsplit("/", 1)[-1] != text:
        return None
    parts = [p for p in path.split("/") if p not in {"", ".", ".."}]
    dirs = {d for project in REPO_ONLY_DIRS.values() for d in project}
    start = next((i for i, p in enumerate(parts) if p in dirs), None)
    return "/".join(parts[start:]) if start is not None else None


def _foreign_site(href: str) -> str | None:
    """Where an absolute link goes when that is neither project's repository nor documentation."""
    m = _SITE_RE.match(href)
    if m is None:
        return None
    host = m.group("host").lower()
    if host in {"github.com", "gitlab.com", "huggingface.co"} and m.group("owner"):
        where = f"{host}/{m.group('owner')}/{m.group('repo')}"
        return None if PROJECT_RE.search(where.replace("/", " ")) else where
    return None if PROJECT_RE.search(host.replace(".", " ")) or host.endswith((".vllm.ai", ".sglang.io", "vllm.ai")) else host


def alternatives(text: str) -> list[str]:
    """`paged_attention_v1/v2` -> `paged_attention_v1`, `paged_attention_v2`: a name whose last
    characters are followed by variants of the same length; [] for anything else (`a/b` paths)."""
    m = _ALTERNATION_RE.fullmatch(text)
    if m is None:
        return []
    name, call = m.group("name"), m.group("call") or ""
    alts = m.group("alts").split("/")[1:]
    size = len(alts[0])
    if any(len(a) != size for a in alts) or len(name) <= size + 1 or not name[-size:].isalnum():
        return []
    stem = name[:-size]
    if not (name[-size:].isdigit() or name[-size - 1] in "_." or (name[-size].isalpha() and name[-1].isdigit())):
        return []  # `input/output`: two words, not variants of one name
    return [name + call] + [stem + a + call for a in alts]


def _html_anchor(child: Token) -> str | None:
    """The target of an inline HTML `<a href="...">`, else None."""
    m = _HTML_ANCHOR_RE.match(child.content) if child.type == "html_inline" else None
    return m.group("href") if m else None


def _any_link(url: str) -> bool:
    return True


def markdown_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table")
    # Nothing is rendered, so no link is unsafe: a `file://` link into the author's checkout
    # of the project is a reference like any other (markdown-it drops it as a link otherwise).
    md.validateLink = _any_link  # type: ignore[method-assign]
    return md


# A top-level `class X` / `def f` / `async def f` line of a snippet.
_TOP_DEF_RE = re.compile(r"(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")


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
    owner: str | None = None
    owner_strict: bool = False
    owner_interface: bool = False
    owner_section: bool = False
    scope: str | None = None
    doc_defined: bool = False
    diagram: bool = False
    in_error: bool = False
    mirror: str | None = None
    subject: str | None = None
    fragment_of: str | None = None
    quoted_file: str | None = None
    spelled: bool = False
    callee: str | None = None
    writes: str | None = None
    column: str | None = None
    field_of: str | None = None
    endpoint: str | None = None
    located: str | None = None
    held_by: str | None = None
    bare_call: bool = False
    config_flag: str | None = None
    quiet: bool = False
    past: bool = False
    past_kinds: tuple[str, ...] = ()
    literal: bool = False
    self_siblings: tuple[str, ...] = ()
    annotates: tuple[str, ...] = ()
    receiver: str | None = None
    free_receiver: bool = False
    named_object: str | None = None
    only_named: bool = False
    base_of: str | None = None
    flag_value: str | None = None
    escaped: str | None = None


_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A name in capitals in a snippet's comment, which may be one of the projects' env vars.
_COMMENT_ENV_RE = re.compile(r"(?<![\w.$])[A-Z][A-Z0-9]*_[A-Z0-9_]+(?![\w.(])")
# A Python file named in code font in a paragraph (`engine.py`, `python/sglang/srt/x.py`); a paragraph
# longer than this is prose about more than the snippet below it.
# A heading or caption about the server's Prometheus metrics, and a name shaped like one of them
# with the project's name before an underscore (`sglang_prompt_tokens`).
_METRICS_RE = re.compile(r"\bmetrics?\b|prometheus|grafana|指标|监控", re.IGNORECASE)
_METRIC_WORD_RE = re.compile(r"(?<![\w:./-])(vllm|sglang)[:_][a-z][a-z0-9]*(?:_[a-z0-9]+)*(?![\w(.-])")
# A metric a code comment names, in its exported spelling (`vllm:gpu_cache_usage_perc`); a word
# with no `_` after the colon is an image tag (`sglang:latest`), not a metric.
_COMMENT_METRIC_RE = re.compile(r"(?<![\w:./-])(?:vllm|sglang):[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w(.:-])")
# A PromQL function applied (`rate(...)`, `histogram_quantile(0.99, ...)`): a query on the metrics.
_PROMQL_RE = re.compile(
    r"(?:rate|irate|increase|delta|idelta|deriv|histogram_quantile|(?:sum|avg|min|max|count|quantile|stddev)_over_time|"
    r"(?:sum|avg|min|max|count|topk|bottomk)\s*(?:by|without)\s*\([^)]*\))\s*\("
)
# What every Prometheus endpoint of a Python server exports beside the project's own: prometheus_client's
# process and garbage-collector collectors, and prometheus-fastapi-instrumentator's HTTP metrics.
_EXPORTER_METRIC_RE = re.compile(
    r"(?:process_(?:virtual_memory_bytes|resident_memory_bytes|start_time_seconds|cpu_seconds_total|open_fds|max_fds)"
    r"|python_gc_(?:objects_collected_total|objects_uncollectable_total|collections_total)|python_info"
    r"|http_(?:requests_total|request_size_bytes|response_size_bytes|request_duration_seconds|request_duration_highr_seconds))"
    r"(?:_bucket|_sum|_count|_created)?"
)
_UNDERSCORED_METRIC_RE = re.compile(r"(vllm|sglang)_[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
# A class name in a snippet's comment: two capitalised words or more, not part of a path or call.
_COMMENT_CLASS_RE = re.compile(r"(?<![\w./`-])_*(?=[A-Z][A-Za-z0-9]*[a-z])[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*(?![\w./(`-])")
_COMMENT_IMPORT_WORD_RE = re.compile(r"\bimport\b")
_LEAD_FILE_RE = re.compile(r"`([\w./-]*\w\.py)`")
# Inline HTML links (`<a href="...">`code`</a>`), as pages generated to Markdown write them.
_HTML_ANCHOR_RE = re.compile(r"<a\s[^>]*?\bhref\s*=\s*[\"'](?P<href>[^\"']+)[\"'][^>]*>", re.IGNORECASE)
_HTML_ANCHOR_END_RE = re.compile(r"</a\s*>", re.IGNORECASE)
# `vllm.core.scheduler:_schedule_prefills`: a module and a name in it, entry-point style.
_COLON_NAME_RE = re.compile(r"(?:vllm|sglang)(?:\.[A-Za-z_]\w*)+:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# A block that holds one file's path and nothing else (`python/sglang/srt/.../model_runner.py`).
_LONE_FILE_RE = re.compile(r"[\w.-]+(?:/[\w.-]+)*/_*[a-z][a-z0-9_]*\.py")
# A paragraph that only says where a section's code lives: a short label, a colon, one Python
# file in code font (`**文件位置**: `vllm/v1/core/kv_cache_manager.py``, `File: `x.py:45-334``).
_LOCATION_LINE_RE = re.compile(r"(?:\*\*)?[^`*\n:：]{1,16}(?:\*\*)?\s*[:：]\s*`(?P<file>[\w./-]*\w\.py)(?::[\d-]+)?`\s*")
_MAX_LEAD_TEXT = 200
# The kinds of past definition (`lineage.py`) that vouch for a snippet's name (`Reference.past_kinds`):
# a `def`'s name or a `self.x()` is a function's; a name called bare may be a class's too.
_FUNCTION = ("function",)
_CALLABLE = ("function", "class")
# MyST directives whose argument is a file the page pulls in (`{literalinclude} path`).
_INCLUDE_DIRECTIVES = frozenset({"literalinclude", "include"})


@dataclass(slots=True)
class _Walker:
    file: str
    lines: list[str]
    facts: DocFacts = field(default_factory=DocFacts)
    headings: list[tuple[int, str]] = field(default_factory=list)
    refs: list[Reference] = field(default_factory=list)
    command: tuple[str, str | None] | None = None  # the last vLLM/SGLang command the text ran
    server: tuple[str, str | None] | None = None  # the last server command: where bare options go
    # Per list, the (line, col, text) of each item's leading code span (`- \`guided_json\`: ...`).
    leads: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    # The project path the paragraph before the current code block gives as its place (`copies.located`).
    place: str | None = None
    # The paragraph right before the current code block ("The core loop in `EngineCore.step()`:").
    lead_text: str | None = None
    # The source file, by name, the paragraph before the current block or its first comment says it quotes.
    quoted_file: str | None = None
    # Another program the open lists' introducing sentence is about (`document.lead_program`):
    # the evidence whose names the items are, when no pin spells them.
    list_program: str | None = None
    # The open list's introducing sentence names repository files (`kernels in `sgl-kernel/`:`).
    list_repo: bool = False
    # The document is an example folder's README ("This example contains scripts ..."): its bare
    # script names are that folder's files, as under a heading on the repository's examples.
    example_readme: bool = False
    # Scripts the document runs by their bare names (`python bench_encoder.py ...` in a block,
    # `_run_scripts`): files of the folder the reader stands in, wherever the document names them.
    run_scripts: frozenset[str] = frozenset()
    # (heading level, class) for each class a snippet wrote out (`class ReqToTokenPool:`) under a
    # heading that names it: the class the section's later bare methods belong to (`_named_owner`).
    section_classes: list[tuple[int, str]] = field(default_factory=list)
    # (level, class) of headings that name a method on a class (`### LLMEngine.__init__`): the
    # class of their sibling sections' methods (`### add_request()`, `### step()`).
    heading_owners: list[tuple[int, str]] = field(default_factory=list)
    # Method name -> (class, parameter names) of each copy the document's snippets wrote in a
    # class (`class Scheduler:` with `def __init__(self, server_args, ...)`): whose method a later
    # copy with the same parameters, quoted on its own, is (`_copied_owner`).
    copied_methods: dict[str, set[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)
    # (heading level, file name) for each section a location line opened (`**文件位置**: `x.py``):
    # the file its later snippets quote, past subheadings and prose (`quoted_file`).
    section_files: list[tuple[int, str]] = field(default_factory=list)
    # Heading levels of the open sections whose text so far names sgl-kernel, SGLang's kernel
    # package (`kernel_package.py`); 0 for the document's lead. A subsection is inside them.
    kernel_sections: list[int] = field(default_factory=list)
    # The last paragraph of prose read (a table's caption: "Table 4. vLLM metrics ... /metrics").
    last_paragraph: str = ""
    # The class the current section's heading names alone in code font (`_section_owner`), for
    # the `self.x = ...` lines a block lifts out of it.
    section_owner: str | None = None
    # The project the open table cell's column header names alone (`| SGLang | vLLM |`).
    column_project: str | None = None
    # `payload = {...}`, `url = ...` in the Python snippet being read: what a later
    # `requests.post(url, json=payload)` sends, and where.
    _bindings: dict[str, ast.expr] = field(default_factory=dict)

    # ----- helpers -------------------------------------------------------
    def _content_offset(self, line: int, raw: str) -> int:
        """Where a block's content line starts on its source line (0 unless indented)."""
        if 0 <= line - 1 < len(self.lines) and raw and self.lines[line - 1].endswith(raw):
            return len(self.lines[line - 1]) - len(raw)
        return 0

    def _col(self, line: int, needle: str, start: int = 0) -> int:
        if 0 <= line - 1 < len(self.lines):
            return self.lines[line - 1].find(needle, start)
        return -1

    def _escaped(self, p: _Pending) -> _Pending:
        """`update\\_expert\\_location` in prose: Markdown rendered the escapes away before the
        name was read, so the line does not hold `p.text`; where it holds the escaped spelling,
        that is what the document wrote (`Reference.escaped`) and where."""
        if p.col >= 0 or not 0 <= p.line - 1 < len(self.lines) or not _ESCAPABLE_RE.search(p.text):
            return p
        spelling = "".join(rf"\\?{re.escape(c)}" if _ESCAPABLE_RE.fullmatch(c) else re.escape(c) for c in p.text)
        m = re.search(spelling, self.lines[p.line - 1])
        return replace(p, col=m.start(), escaped=m.group(0)) if m is not None and "\\" in m.group(0) else p

    def _section_scripts(self, line: int) -> tuple[str, ...]:
        """The scripts the section up to `line` names by bare file name in code font, for a flag in
        a table row or a list item (an options listing); a flag in a sentence is the sentence's."""
        if not 0 < line <= len(self.lines) or not _LISTING_LINE_RE.match(self.lines[line - 1]):
            return ()
        # (A `#` comment in a code block also ends the scan: a shorter section, never a wider one.)
        start = next((i for i in range(min(line, len(self.lines)) - 1, -1, -1) if _HEADING_LINE_RE.match(self.lines[i])), 0)
        named = (m.group(1) for row in self.lines[start:line] for m in _SCRIPT_SPAN_RE.finditer(row))
        return tuple(dict.fromkeys(n for n in named if n and n.endswith(".py") and "/" not in n))

    def _emit(self, pending: list[_Pending], block: str, paragraph: str = "") -> None:
        siblings = [p.found.framework for p in pending]
        heading_texts = [text for _, text in self.headings]
        other = (other_system(heading_texts[0]) if heading_texts else None) or self.facts.subject
        title = f"the document is about {other}" if other else None
        repo_context = bool(_REPO_FILES_RE.search(paragraph)) or self.list_repo or any(_BUILD_HEADING_RE.search(h) for h in heading_texts)
        scripts_section = self.example_readme or any(_SCRIPTS_HEADING_RE.search(h) for h in heading_texts)
        metrics = self._about_metrics()
        for p in map(self._escaped, pending):
            length = len(p.text) if p.origin == "inline" else 0
            if p.found.kind == PATH and p.found.bare_file and p.found.target in self.run_scripts:
                # `bench_encoder.py` listed under "## Files" of a README whose blocks run it: the
                # README's own folder's script, as where it is run (no package holds it).
                continue
            if metrics and p.found.kind == SYMBOL and _EXPORTER_METRIC_RE.fullmatch(p.found.target):
                # `http_requests_total`, `process_resident_memory_bytes` in a table of what `/metrics`
                # serves: the Prometheus client's and the HTTP instrumentator's own metrics.
                continue
            if metrics and p.found.kind == SYMBOL and (m := _UNDERSCORED_METRIC_RE.fullmatch(p.found.target)):
                # `vllm_kv_cache_blocks` in a list of the server's metrics: a Prometheus name
                # written with `_` where the project's have `vllm:` (`resolve._resolve_metric`).
                p = replace(p, found=Classified(METRIC, p.found.target, m.group(1), "a metric name written with `_`"))
            own, reason = p.found.framework, p.found.reason
            if own is None and self.column_project is not None and not mentions(block):
                # `| 维度 | SGLang(17-lora) | vLLM(13-lora) |`: a comparison's column is its header's project.
                own, reason = self.column_project, "its table column's header names the project"
            decision = decide(own, reason, block, p.offset, siblings, heading_texts, length, self.facts.project)
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
                    section_scripts=self._section_scripts(p.line) if p.found.kind == FLAG and p.command is None else (),
                    line_range=p.found.line_range,
                    commit=p.commit,
                    link_symbol=p.link_symbol or p.found.symbol,
                    repo_layout=p.found.repo_layout,
                    tentative=p.found.tentative,
                    owner=p.owner,
                    owner_strict=p.owner_strict,
                    owner_interface=p.owner_interface,
                    owner_section=p.owner_section,
                    scope=p.scope,
                    doc_defined=p.doc_defined,
                    bare_file=p.found.bare_file,
                    docs_page=p.found.docs_page,
                    anchor_names=p.found.anchor_names,
                    repo_context=repo_context and p.origin == "inline",
                    scripts_section=scripts_section,
                    diagram=p.diagram,
                    in_error=p.in_error,
                    mirror=p.mirror,
                    fragment_of=p.fragment_of,
                    quoted_file=p.quoted_file,
                    spelled=p.spelled,
                    callee=p.callee,
                    writes=p.writes,
                    column=p.column,
                    field_of=p.field_of,
                    endpoint=p.endpoint,
                    located=p.located,
                    held_by=p.held_by,
                    bare_call=p.bare_call,
                    config_flag=p.config_flag,
                    quiet=p.quiet,
                    past=p.past,
                    past_kinds=p.past_kinds,
                    literal=p.literal,
                    self_siblings=p.self_siblings,
                    annotates=p.annotates,
                    receiver=p.receiver,
                    free_receiver=p.free_receiver,
                    named_object=p.named_object,
                    only_named=p.only_named,
                    base_of=p.base_of,
                    flag_value=p.flag_value,
                    escaped=p.escaped,
                    subject=p.subject or title or (f"its list is introduced as {self.list_program}'s" if self.list_program and p.origin == "inline" else None),
                    paragraph=paragraph,
                    context=self.facts.words,
                )
            )

    # ----- inline content ------------------------------------------------
    def inline(self, token: Token, owner: tuple[str, bool, bool] | None = None, item_list: str | None = None, column: str | None = None) -> list[str]:
        """References of one paragraph (or list item, table cell); returns its code spans.
        `owner`: the class a list item's leading bare name belongs to; `item_list`: the list
        whose item this paragraph begins (its bold lead name is judged with its siblings')."""
        line = (token.map[0] + 1) if token.map else 1
        lead = self._bold_lead(token, line, item_list) if item_list else None
        plain = ""
        cursor: dict[int, int] = {}
        pending: list[_Pending] = []
        codes: list[str] = []
        link: tuple[str, int, int] | None = None  # href, line, plain offset at link start
        link_codes: list[str] = []
        link_text = ""
        # A paragraph that is only a chain of names (`LLMEngine —> ExecutorBase —> WorkerBase`) is a
        # call diagram in any language, one of names alone (`RadixCache/HiRadixCache`) a list of
        # them: their names are read as CJK prose's are.
        content = token.content.strip()
        cjk = has_cjk(content) or _NAME_CHAIN_RE.fullmatch(content) is not None or names_only(content)
        seek = 0
        children = token.children or []
        split = _split_flags(children)
        for index, child in enumerate(children):
            anchor: str | None = None
            if index in split.values():
                # The rest of a flag split across a `<br/>` (`recorder-mode`): judged with its head.
                plain += child.content
                continue
            if child.type in {"softbreak", "hardbreak"}:
                line += 1
                plain += "\n"
            elif child.type == "text":
                tail = _CODE_AUTOREF_TAIL_RE.match(child.content)
                if tail and index >= 2 and children[index - 1].type == "code_inline" and children[index - 2].content.endswith("["):
                    # `[`X`][vllm.a.X]`: an autoref whose text is code font, split by the parser.
                    found = classify_symbol(tail.group(1))
                    if found is not None:
                        pending.append(_Pending(line, self._col(line, tail.group(1)), tail.group(1), found, len(plain) + tail.start(1), "link"))
                for m in _INLINE_AUTOREF_RE.finditer(child.content):
                    # `[X][vllm.a.X]` with no link definition: mkdocs autorefs still link it.
                    found = classify_symbol(m.group(2))
                    if found is not None:
                        pending.append(_Pending(line, self._col(line, m.group(2)), m.group(2), found, len(plain) + m.start(2), "link"))
                if link is None:
                    pending.extend(self._prose_paths(child.content, line, len(plain)))
                    if child.content.strip() == content and _SOURCE_FILE_RE.fullmatch(content):
                        # `## block_manager.py`, `- sequence.py`: a heading or item that is a file's
                        # name alone cites that file, code font or not.
                        found = classify_path(content)
                        if found is not None and found.kind == PATH:
                            pending.append(_Pending(line, self._col(line, content), content, found, len(plain), "inline"))
                if link is None and cjk:
                    pending.extend(self._prose_code(child.content, line, len(plain), cursor))
                elif link is None:
                    pending.extend(self._past_prose(child.content, line, len(plain), cursor))
                plain += child.content
                if link is not None:
                    link_text += child.content
            elif child.type == "code_inline":
                text = child.content
                codes.append(text)
                col = self._col(line, text, cursor.get(line, 0))
                if col >= 0:
                    cursor[line] = col + len(text)
                if link is not None:
                    link_codes.append(text)
                at = token.content.find(f"`{text}`", seek)
                seek = max(seek, at + 1)
                spans = self._code_span(text, line, col, len(plain), _sentence_script(token.content, at, text))
                spans += self._nested_calls(text, line, col, len(plain), {p.text for p in spans})
                if index in split:
                    # `--expert-distribution-`<br/>`recorder-mode`: the flag is the two joined.
                    whole = text + children[split[index]].content
                    spans = [replace(p, text=text, found=replace(p.found, target=whole)) for p in self._code_span(whole, line, col, len(plain)) if p.found.kind == FLAG]
                if _NEW_NAME_RE.search(plain[-60:]):
                    # "Define a new `Processor` class": a name for the reader's own code; a
                    # citation only if the project has it.
                    spans = [replace(p, found=replace(p.found, tentative=True)) if p.found.kind == SYMBOL else p for p in spans]
                if _NEW_FILE_RE.search(plain[-60:]):
                    spans = [p for p in spans if not (p.found.kind == PATH and "/" not in p.found.target)]
                if at >= 0 and _FOLDER_WORD_RE.match(token.content, at + len(text) + 2):
                    # "saving the KV state to the `local_storage` directory": a folder's name
                    # without its path (the reader's, an example's), not a Python name.
                    spans = [p for p in spans if not (p.found.kind == SYMBOL and "." not in p.found.target)]
                # `a: T`、`b: T`: an item listing several typed fields gives each the list's class.
                leading = not plain.strip() or (
                    _TYPED_FIELD_RE.fullmatch(text.strip()) is not None
                    and all(_TYPED_FIELD_RE.fullmatch(c.strip()) for c in codes[:-1])
                    and not _ITEM_SEPARATORS_RE.sub("", functools.reduce(lambda rest, c: rest.replace(c, "", 1), codes[:-1], plain))
                )
                if owner is not None and leading:
                    # An interface's items are its methods, called (`load_model()`) or not.
                    spans = [
                        replace(p, owner=owner[0], owner_strict=owner[1], owner_interface=owner[2])
                        if p.found.tentative or (owner[2] and p.found.kind == SYMBOL and "." not in p.found.target)
                        else p
                        for p in spans
                    ]
                if item_list is not None and not plain.strip():
                    self.leads.setdefault(item_list, []).extend((p.line, p.col, p.text) for p in spans)
                if link is not None and (elsewhere := _foreign_site(link[0])):
                    # [`flash_attn_varlen_func`](https://github.com/Dao-AILab/...): that program's name.
                    spans = [replace(p, subject=f"it links to {elsewhere}") for p in spans]
                elif link is not None and (linked := _repository_file(link[0], text)) is not None:
                    # [`rlhf_sparse_nccl.py`](../../../examples/rl/rlhf_sparse_nccl.py): the file linked.
                    spans = [replace(p, found=replace(p.found, target=linked, bare_file=False)) if p.found.kind == PATH else p for p in spans]
                pending.extend(spans)
                plain += text
            elif child.type == "link_open" or (anchor := _html_anchor(child)) is not None:
                # (`<a href="...">`code`</a>` in a page rendered to HTML-in-Markdown: the same link.)
                link = (str(child.attrs.get("href", "")) if anchor is None else anchor, line, len(plain))
                link_codes = []
                link_text = ""
            elif (child.type == "link_close" or (child.type == "html_inline" and _HTML_ANCHOR_END_RE.match(child.content))) and link is not None:
                found_link = self._link(link[0], link[1], link[2], link_codes, link_text)
                if found_link is not None and found_link.link_symbol is None:
                    # `Builds `X` ([engine.py#L193](...))`: the lines should still spell `X`.
                    found_link.found = with_anchor_names(found_link.found, sentence_names(plain[: link[2]], codes))
                if found_link is not None:
                    pending.append(found_link)
                link = None
        if lead is not None and not any(p.text == lead.text and not p.past for p in pending):
            pending.insert(0, lead)
        if column is not None:
            pending = [replace(p, column=column) for p in pending]
        self._emit(pending, plain, token.content)
        return codes

    def _prose_code(self, text: str, line: int, offset: int, cursor: dict[int, int]) -> list[_Pending]:
        """`随后写入 batch.output_ids`: a name written like code in CJK prose (`prose_code.py`),
        judged as the same name in code font is."""
        out = self._prose_members(text, line, offset, cursor)
        for item in prose_names(text):
            col = self._col(line, item.text, cursor.get(line, 0))
            out.extend(self._code_span(item.text, line, col, offset + item.start))
        # `RadixCache/HiRadixCache` on a line of names alone: alternatives, not a path.
        for item in bare_names(text.replace("/", " ") if names_only(text) else text):
            col = self._col(line, item.text, cursor.get(line, 0))
            spans = self._code_span(item.text, line, col, offset + item.start)
            facts = self.facts
            vouched = (
                item.name in facts.code_spans
                or item.text in facts.code_spans
                or item.name in facts.class_words
                or item.name in facts.fence_words
                # `determine_num_available_blocks`: nobody's word, unless an operand of a formula.
                or (_LONG_SNAKE_RE.fullmatch(item.name) is not None and not in_formula(text, item))
            )
            if item.name not in facts.code_spans and self._short_for_a_cited_class(item.name):
                vouched = False  # `P0のSenderCache`: maybe the author's short form of a class cited in full
            if not vouched:
                # `增加 user_id 字段`: the author's own word unless a pin defines it.
                spans = [replace(p, quiet=True) for p in spans if p.found.kind == SYMBOL]
            out.extend(spans)
        return out

    def _short_for_a_cited_class(self, name: str) -> bool:
        """`SenderCache` in a text that cites `MultiModalProcessorSenderCache` in code font: the
        class's last words, the author's shorthand for it."""
        if not CLASSNAME_RE.match(name) or sum(c.isupper() for c in name) < 2:
            return False
        return any(len(span) > len(name) and span.endswith(name) and span[-len(name) - 1].isalpha() for span in self.facts.code_spans)

    def _past_prose(self, text: str, line: int, offset: int, cursor: dict[int, int]) -> list[_Pending]:
        """`... calls _run_workers to profile ...`: a code-shaped word of English prose outside code
        font. English prose is left alone as a rule (a word may be English); such a word is judged
        only where a past release of the project vouches for it (`Reference.past`, `lineage.py`)."""
        out: list[_Pending] = []
        for item in [*bare_names(text), *(n for n in prose_names(text) if "." in n.name)]:
            if "(" in item.text and "_" not in item.name and "." not in item.name:
                continue  # `step()`: one lowercase word, a call of anything
            col = self._col(line, item.text, cursor.get(line, 0))
            out.extend(replace(p, past=True) for p in self._code_span(item.text, line, col, offset + item.start) if p.found.kind == SYMBOL)
        # (Uncalled, judged where a past release vouches for it, as the words above are.)
        out.extend(replace(p, past=not p.text.endswith(")")) for p in self._prose_members(text, line, offset, cursor))
        for m in _PROSE_FILE_RE.finditer(text):
            # `... the nixl_connector.py file`: a module's file named in prose, judged as the
            # words above are (where a past release had a module of that name).
            found = classify_path(m.group(0))
            if found is not None and found.kind == PATH:
                out.append(_Pending(line, self._col(line, m.group(0), cursor.get(line, 0)), m.group(0), found, offset + m.start(), "inline", past=True))
        return out

    def _prose_members(self, text: str, line: int, offset: int, cursor: dict[int, int]) -> list[_Pending]:
        """`#### T3: Processor.process_inputs()`, `使用 Scheduler._schedule_prefills 调度`: a class's
        member, called or `snake_case`, out of code font: code in a sentence of any language."""
        out: list[_Pending] = []
        for m in _PROSE_MEMBER_RE.finditer(blank_cjk(text)):
            written, called = m.group(0), bool(m.group(2))
            root = written.split(".", 1)[0]
            if (not called and "_" not in m.group(1).split(".", 1)[1]) or root in FOREIGN_NAMES or root in FOREIGN_ROOTS or root in BUILTINS:
                continue
            col = self._col(line, written, cursor.get(line, 0))
            out.extend(p for p in self._code_span(written, line, col, offset + m.start()) if p.found.kind == SYMBOL)
        return out

    def _prose_paths(self, text: str, line: int, offset: int) -> list[_Pending]:
        """`... similar to the one in vllm/entrypoints/x_parser.py.`: a file path written in plain
        prose, out of code font. Only a path from a project's package (its first folder says
        whose), so that a reader's `data/train.json` stays prose."""
        out = []
        for m in _TEXT_PATH_RE.finditer(text):
            written = m.group(0).rstrip(".")
            if not _PROJECT_PATH_RE.match(written) or "." not in written.rsplit("/", 1)[-1]:
                continue
            found = classify_path(written)
            if found is not None and found.kind == PATH and found.framework is not None:
                out.append(_Pending(line, self._col(line, written), written, found, offset + m.start(), "inline"))
        return out

    def _bold_lead(self, token: Token, line: int, item_list: str) -> _Pending | None:
        """`- **NixlConnector**: ...`: a list of the project's classes, one per item, each named in
        bold. The name is judged with the other items' (`mirror`): when most of them, and at least
        two, are the project's, a name its sources never spell is stale; else the items are terms."""
        children = [c for c in token.children or [] if not (c.type == "text" and not c.content.strip())]
        if len(children) < 3 or [c.type for c in children[:3]] != ["strong_open", "text", "strong_close"]:
            return None
        name = children[1].content.strip()
        call = name.endswith("()")
        bare = name.removesuffix("()")
        if not _BOLD_NAME_RE.fullmatch(bare) or bare in FOREIGN_NAMES or bare in BUILTINS:
            return None
        found = Classified(SYMBOL, bare, None, "", tentative=True)
        # `**EagleWorker** (`eagle_worker.py`)`: the item names the file the class lives in, so the
        # name is code whatever its siblings' vote (as a copy the text locates, `copies.located`).
        rest = children[3:6]
        filed = (
            len(rest) == 3 and rest[0].type == "text" and rest[0].content.strip() in ("(", "（")
            and rest[1].type == "code_inline" and _SOURCE_FILE_RE.fullmatch(rest[1].content) is not None
            and rest[2].type == "text" and rest[2].content.lstrip().startswith((")", "）"))
        )
        return _Pending(
            line, self._col(line, name), name if call else bare, found, 0, "inline", diagram=True, mirror=item_list,
            located=rest[1].content if filed else None,
        )

    def _nested_calls(self, text: str, line: int, col: int, offset: int, taken: set[str]) -> list[_Pending]:
        """`model_config.get_num_kv_heads(get_attention_tp_size())`: a function called in a call's
        arguments is cited as a code span of that call alone would cite it."""
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError:
            return []
        if not isinstance(tree.body, ast.Call):
            return []
        out: list[_Pending] = []
        for node in ast.walk(tree.body):
            name = dotted(node.func) if isinstance(node, ast.Call) and node is not tree.body else None
            if name is None or name.split(".", 1)[0] in BUILTINS or name in taken or "_" not in name.rsplit(".", 1)[-1].strip("_"):
                continue
            at = text.find(name)
            for p in self._code_span(f"{name}()", line, col + at if col >= 0 and at >= 0 else -1, offset):
                if p.found.kind == SYMBOL:
                    out.append(replace(p, text=name))
        return out

    def _code_span(self, text: str, line: int, col: int, offset: int, script: str | None = None) -> list[_Pending]:
        if _PROMQL_RE.match(text.strip()) and (self._about_metrics() or _COMMENT_METRIC_RE.search(text)):
            # `rate(vllm:generation_tokens_total[1m])`, `histogram_quantile(0.99, ...)`: a
            # Prometheus query; only the project's metrics in it are citations.
            return [
                _Pending(line, col + m.start() if col >= 0 else -1, m.group(0), metric, offset, "inline")
                for m in _COMMENT_METRIC_RE.finditer(text)
                if (metric := classify_metric(m.group(0))) is not None
            ]
        if looks_like_command(text):
            out = []
            for ref in shell_refs(text, self.server or self.command):
                shell = Classified(ref.kind, ref.target, ref.framework, f"command {ref.command}" if ref.command else "text")
                inner = col + ref.col if col >= 0 and ref.col >= 0 else -1
                if not ref.server_flag and ref.kind == "flag":
                    shell = replace(shell, reason=f"flag of {ref.command}")
                out.append(_Pending(line, inner, ref.text, shell, offset, "inline", ref.command, flag_value=ref.value))
            return out
        stripped = text.strip()
        classified = classify(text)
        # `server_args.py` where the document made `server_args = ServerArgs(...)`: a file's name,
        # not a member of the object's class.
        instance = self._through_instance(stripped, line) if classified is None or classified.kind != PATH else None
        found = instance or classified
        if found is None and _COLON_NAME_RE.fullmatch(stripped):
            # `vllm.core.scheduler:_schedule_prefills`: a module and a name in it, written as an
            # entry point names its object.
            return [replace(p, text=stripped) for p in self._code_span(stripped.replace(":", "."), line, col, offset) if p.found.kind == SYMBOL]
        if found is None and (variants := alternatives(stripped)):
            # Each variant is checked; the written text (what a fix edits) is the whole.
            out = []
            for variant in variants:
                for p in self._code_span(variant, line, col, offset):
                    out.append(replace(p, text=stripped) if p.found.kind == SYMBOL else p)
            return out
        if found is None and (statement := _INLINE_STATEMENT_RE.fullmatch(stripped)) is not None:
            lead = len(text) - len(text.lstrip())
            out = []
            for side in ("left", "right", "tested"):
                if statement.group(side):
                    at = col + lead + statement.start(side) if col >= 0 else -1
                    out.extend(self._code_span(statement.group(side), line, at, offset))
            return out
        if found is None and (member := _SELF_MEMBER_RE.fullmatch(stripped)) is not None:
            return self._loose_self(member.group("name"), line, col, offset, "inline")
        if found is None and (typed := _TYPED_FIELD_RE.fullmatch(stripped)) is not None:
            # `num_computed_tokens_cpu: (max_num_reqs,) int32`: a field written with its type; the
            # name is the reference (judged as a bare name is, or as the list's class's member).
            field_name = typed.group(1)
            at = col + (len(text) - len(text.lstrip())) if col >= 0 else -1
            declared = Classified(SYMBOL, field_name, None, "a field written with its type", tentative=True)
            return [_Pending(line, at, field_name, declared, offset, "inline")]
        if found is None and (sent := _SENT_KEY_RE.fullmatch(stripped)) is not None and sent.group(1) in self.facts.request_keys:
            # `output_mode: "tokens"`: a key of the body the document's snippets send, with a value.
            at = col + (len(text) - len(text.lstrip())) if col >= 0 else -1
            key = Classified(SYMBOL, sent.group(1), None, "a key of the request body", tentative=True)
            return [_Pending(line, at, sent.group(1), key, offset, "inline", field_of=REQUEST)]
        if found is None:
            if _GITHUB_RE.match(stripped):
                link = self._link(stripped, line, offset, [], "")
                return [link] if link else []
            return self._error_message(text, line, col, offset)
        written = stripped
        value = None
        if found.kind == FLAG and (m := _FLAG_VALUE_RE.fullmatch(written)) is not None and m.group(1) == found.target:
            value = m.group(2)  # `--kv-cache-dtype fp8`: judged against the flag's choices
        if found.kind in {"env", "flag"} and found.target in written:
            # `VLLM_X=1`, `$VLLM_X`, `--flag=value`: the name alone is what a fix replaces.
            shift = written.find(found.target)
            col = col + (len(text) - len(text.lstrip())) + shift if col >= 0 else -1
            written = found.target
        root = found.target.split(".", 1)[0]
        if found.tentative and found.reason == "keyword" and (callee := self._passed_to(found.target)) is not None:
            # `calculate_kv_scales=False` in the prose, a keyword the document's snippets pass to
            # `LLM(...)`: that call's keyword, judged as it is there (`_keywords`).
            keyword = Classified(SYMBOL, found.target, callee.framework, f"keyword of `{callee.target}`", tentative=True)
            return [_Pending(line, col, written, keyword, offset, "inline", spelled=True, callee=callee.target, field_of=callee.target)]
        if found.tentative and found.target in self.facts.request_keys and (stripped == found.target or found.reason == "keyword"):
            # `guided_json` in the prose, sent as an `extra_body` key by the document's snippets:
            # a field of the server's request classes, as there.
            return [_Pending(line, col, written, found, offset, "inline", field_of=REQUEST)]
        if found.tentative and found.target in self.facts.local_names:
            return []  # the example's own variable or payload key
        if found.kind == SYMBOL and root in self.facts.foreign and root not in ROOTS:
            return []  # `AutoFP8ForCausalLM`, which the document's own code imports from another package
        if found.kind == SYMBOL and stripped in self.facts.local_names and "." in stripped:
            return []  # an entry-point group the document declares or names
        if found.kind == FLAG and script is not None:
            if not script.endswith(".py"):
                return []  # a shell script's own options (or docker's, which it wraps)
            # `toy_proxy_server.py` using `--prefiller-hosts`: that script's parser decides.
            return [_Pending(line, col, written, replace(found, reason=f"flag of {script}"), offset, "inline", script)]
        if found.kind == FLAG and found.target in self.facts.foreign_flags:
            # A flag the document also passes to another program (`torchrun --nproc-per-node`):
            # the projects' only when a pin has it.
            found = replace(found, tentative=True)
        if found.kind == SYMBOL and "." not in found.target and found.target in self.facts.plain_words and not found.tentative and found.target not in self.facts.class_words:
            # `HiCache` that the text also writes as a plain word: a term when no pin has it
            # (unless the text calls it a class, `ExecutorBase 类`, or it is one by its length).
            found = replace(found, tentative=True)
        defined = found.kind == SYMBOL and root in self.facts.defined
        # `future_map.resolve_future`: a member of an object the document never binds.
        free = found.reason.startswith("instance:") and self._free_call(found.reason.removeprefix("instance:"))
        span = _Pending(line, col, written, found, offset, "inline", doc_defined=defined, free_receiver=free, flag_value=value)
        if found.kind != SYMBOL or defined:
            return [span]
        return [span, *self._span_keywords(stripped, line, col + len(text) - len(text.lstrip()) if col >= 0 else -1, offset)]

    def _span_keywords(self, code: str, line: int, col: int, offset: int) -> list[_Pending]:
        """`EagleDraftInput(hidden_states=..., verified_id=...)` quoted in the prose: each keyword
        is one passed to the project's callable, judged against its signature at the pin as a
        snippet's call's are (`_keywords`); none for the author's or another package's callable."""
        if "=" not in code or not code.endswith(")"):
            return []
        try:
            node = ast.parse(code, mode="eval").body
        except SyntaxError:
            return []
        name = dotted(node.func) if isinstance(node, ast.Call) else None
        if not isinstance(node, ast.Call) or name is None or not any(kw.arg for kw in node.keywords):
            return []
        hit = self._passed_callee(name)
        if hit is None:
            return []
        out = []
        for kw in node.keywords:
            if kw.arg is None:
                continue
            at = code.find(f"{kw.arg}=", kw.col_offset) if kw.col_offset >= 0 else code.find(f"{kw.arg}=")
            found = Classified(SYMBOL, kw.arg, hit.framework, f"keyword of `{hit.target}`", tentative=True)
            value = kw.value.value if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str) else None
            out.append(
                _Pending(line, col + at if col >= 0 and at >= 0 else -1, kw.arg, found, offset, "inline", spelled=True, callee=hit.target, field_of=hit.target, flag_value=value)
            )
        return out

    def _message_keywords(self, raw: str, opened: int, callee: Classified, line: int, base: int) -> list[_Pending]:
        """`load_model(eep_scale_up=True)` as a diagram's message: each keyword is one passed to the
        callee, judged against its signature at the pin as a snippet's call's are (nothing where
        the callee does not resolve: the author's own call)."""
        close = raw.find(")", opened)
        if close < 0:
            return []
        out = []
        for km in _MESSAGE_KEYWORD_RE.finditer(raw, opened + 1, close):
            name = km.group(1)
            found = Classified(SYMBOL, name, callee.framework, f"keyword of `{callee.target}`", tentative=True)
            out.append(_Pending(line, base + km.start(1), name, found, 0, "fence", spelled=True, callee=callee.target, field_of=callee.target))
        return out

    def _loose_self(self, name: str, line: int, col: int, offset: int, origin: str) -> list[_Pending]:
        """`self.tp_rank`, `self.future_map.resolve_future()` in the prose, or in a snippet's lines
        outside any class or function: members of the project's class the passage is about, whose
        name the text need not give. Judged by spelling, as a copied method's members of members are
        (`Reference.spelled`): stale when the pin's sources never spell one of its names; not when
        the document's own snippets define the name."""
        members = name.split(".")[1:]
        if any(m.startswith("__") for m in members) or members[0] in self.facts.defined:
            return []
        owner = self._written_owner(members[0]) if len(members) == 1 else None
        if owner is not None:
            # `self.stream_output(...)` where the text also writes `Scheduler.stream_output()`:
            # the author's own word for whose member it is.
            found = Classified(SYMBOL, f"{owner}.{members[0]}", None, f"the text writes it `{owner}.{members[0]}`")
            return [_Pending(line, col, name, found, offset, origin)]
        if self.facts.embeds_engine:
            return []  # the reader's class, which keeps the engine on `self` (`DocFacts.embeds_engine`)
        found = Classified(SYMBOL, members[-1], None, "a member used on `self` outside a copied class", tentative=True)
        return [_Pending(line, col, name, found, offset, origin, spelled=True)]

    def _written_owner(self, member: str) -> str | None:
        """The one class the document's code spans write `member` on (`Scheduler.stream_output()`),
        where that class is not the document's own."""
        owners = {
            m.group(1)
            for span in self.facts.code_spans
            if (m := _QUALIFIED_MEMBER_RE.fullmatch(span)) is not None and m.group(2) == member
        }
        if len(owners) != 1:
            return None
        owner = owners.pop()
        return None if owner in self.facts.defined or owner in FOREIGN_NAMES else owner

    def _error_message(self, text: str, line: int, col: int, offset: int) -> list[_Pending]:
        """`AttributeError: 'MLPSpeculatorConfig' object has no attribute ...`: the class a Python
        error names. A reference when a pin defines it, or when the sources never spell it."""
        out = []
        for m in _ERROR_CLASS_RE.finditer(text):
            name = m.group(1)
            if name in FOREIGN_NAMES or name in self.facts.defined:
                continue
            found = Classified(SYMBOL, name, None, "", tentative=True)
            out.append(_Pending(line, col + m.start(1) if col >= 0 else -1, name, found, offset, "inline", in_error=True))
        return out

    def _through_instance(self, text: str, line: int) -> Classified | None:
        """`llm.generate` where the document made `llm = LLM(...)`: `LLM.generate` (unless, by
        `line`, another package's callable made the variable anew)."""
        m = re.fullmatch(r"([a-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:\(.*\))?", text)
        if m is None or m.group(1) not in self.facts.instances or self.facts.foreign_object(m.group(1), line):
            return None
        owner = self.facts.instances[m.group(1)].rsplit(".", 1)[-1]
        return Classified(SYMBOL, f"{owner}.{m.group(2)}", None, f"`{m.group(1)}` is a `{owner}`")

    def _link(self, href: str, line: int, offset: int, codes: list[str], text: str) -> _Pending | None:
        m = _GITHUB_RE.match(href)
        symbol = None
        for code in codes:
            found = classify(code)
            if found is not None and found.kind == SYMBOL:
                symbol = found.target
                break
        if m is None:
            return self._other_link(href, line, offset, codes, text, symbol)
        framework = _REPO_FRAMEWORK[m.group("repo")]
        path = m.group("path").rstrip("/")
        line_range = None
        if m.group("start"):
            start = int(m.group("start"))
            line_range = (start, int(m.group("end") or start))
        found = Classified(PATH, path, framework, "GitHub link", line_range, repo_layout=True)
        return _Pending(line, self._col(line, href), href, found, offset, "link", commit=m.group("ref"), link_symbol=symbol)

    def _other_link(self, href: str, line: int, offset: int, codes: list[str], text: str, symbol: str | None) -> _Pending | None:
        """mkdocs autorefs (`[X][vllm.a.X]`, rendered as a link to `vllm.a.X`) and links
        relative to the document's own place in its repository."""
        if (local := local_checkout_link(href)) is not None:
            return _Pending(line, self._col(line, href), href, local, offset, "link", link_symbol=symbol)
        if _AUTOREF_RE.match(href):
            found = classify_symbol(href)
            if found is not None:
                return _Pending(line, self._col(line, href), href, found, offset, "link")
        macro = macro_link(href, _REPO_FRAMEWORK.get(self.facts.repo or "") or self.facts.project[0])
        if macro is not None:
            # vLLM's mkdocs macro: a path from the repository's root.
            return _Pending(line, self._col(line, href), href, macro, offset, "link", link_symbol=symbol)
        if not self.facts.path or not self.facts.repo:
            # Where the document sits is unknown: only what the link itself, or the document's
            # other links, show to be the project's repository (`links.py`).
            relative = relative_link(href, self.facts.repository)
            return None if relative is None else _Pending(line, self._col(line, href), href, relative, offset, "link", link_symbol=symbol)
        if href.startswith(("http://", "https://", "mailto:", "#")) or ":" in href.split("/", 1)[0]:
            return None
        framework = _REPO_FRAMEWORK.get(self.facts.repo)
        if framework is None:
            return None
        target = posixpath.normpath(posixpath.join(posixpath.dirname(self.facts.path), href.split("#", 1)[0]))
        if target.startswith("..") or not target or target == ".":
            return None
        found = Classified(PATH, target, framework, f"relative link in {self.facts.repo}", repo_layout=True)
        return _Pending(line, self._col(line, href), href, found, offset, "link", link_symbol=symbol)

    # ----- code blocks ---------------------------------------------------
    def code_block(self, token: Token, owner: str | None = None, lead_text: str | None = None) -> None:
        """`owner`: the class the passage before the block is about (a field listing's class);
        `lead_text`: the paragraph right before the block (where it may say the code lives)."""
        if not token.map:
            return
        first = token.map[0] + (2 if token.type == "fence" else 1)  # 1-based line of the block's first content line
        lang = (token.info or "").strip().split(maxsplit=1)[0].lower().strip("{}.") if token.info else ""
        content = token.content
        if lang in _INCLUDE_DIRECTIVES and token.info and len(token.info.split()) > 1:
            # ```{literalinclude} ../../../vllm/x.py```: a file of the repository, written relative
            # to the document's place (a MyST directive's argument, as a link's target is).
            include = self._other_link(token.info.split()[1], token.map[0] + 1, 0, [], "", None)
            if include is not None:
                self._emit([include], "")
            return
        info = self._info_refs(token)
        if info:
            self._emit(info, "")
        self.place = located(lead_text) or next((p.found.target for p in info if p.origin == "fence" and p.found.framework), None)
        self.lead_text = lead_text
        self.section_owner = _section_owner(self.headings)
        if mislabelled_python(lang, content):
            lang = "python"
        # The file the block's own title names (```` ```python title="sglang/srt/x.py @ abc L32-43" ````).
        titled = next((p.found.target for p in info if p.found.kind == PATH and p.found.target.endswith(".py")), None)
        self.quoted_file = (_named_file(lead_text, content) or titled or self._section_file()) if lang in PYTHON_LANGS else None
        header = headed(content, lead_text) if self.place is None and lang in PYTHON_LANGS else None
        self.place = self.place or header or self._heading_place(content, lang)
        if lang in SHELL_LANGS and holds_no_command(content):
            lang = "text"  # a call chain or file list fenced as `shell` for its colours
        if flattened_code(lang, content):
            lang = "python"
        if lang in PYTHON_LANGS and option_listing(content):
            lang = "text"  # `--tokenizer-mode: "auto" | "slow"` lines typed as Python for colours
        if lang in PYTHON_LANGS and drawn_in_python(content):
            lang = "text"  # a class tree drawn with `├─` and `│`, typed as Python for its colours
        pending: list[_Pending] = []
        if lang in PYTHON_LANGS:
            pending = self._python(content, first)
            if self.place is not None:
                pending = [_placed(p, self.place) for p in pending]
            if self.quoted_file is not None:
                pending = [replace(p, quoted_file=p.quoted_file or self.quoted_file) if p.mirror else p for p in pending]
            if owner is not None:
                # An enumeration's members quoted under a heading about it (`ForwardMode` enum).
                for index, col, name in constant_listing(content.splitlines()):
                    line = first + index
                    entry = Classified(SYMBOL, name, None, f"listed under `{owner}`")
                    pending.append(_Pending(line, self._col(line, name, col), name, entry, 0, "fence", owner=owner, owner_strict=True))
        if lang in SHELL_LANGS or lang in TEXT_LANGS:
            refs = shell_refs(content, self.server or self.command or self._project_server(lang, content))
            self.command = last_command(refs) or self.command
            for ref in refs:
                if ref.server_flag and ref.command:
                    self.server = (ref.command, ref.framework)
            for ref in refs:
                line = first + ref.line
                col = self._col(line, ref.text) if ref.col >= 0 else -1
                reason = f"command {ref.command}" if ref.command else "text"
                found = Classified(ref.kind, ref.target, ref.framework, reason)
                # (`export VLLM_IMAGE=...` then `--image "$VLLM_IMAGE"`: the document's own variable.)
                own = ref.kind == ENV and ref.target in self.facts.shell_vars
                pending.append(_Pending(line, col, ref.text, found, 0, "fence", ref.command, flag_value=ref.value, doc_defined=own))
        if lang in SHELL_LANGS:
            taken = {(p.line, p.text) for p in pending}
            for index, raw in enumerate(content.splitlines()):
                # A listing of files (`# Scheduler` over `/home/u/vllm-learn/vllm/core/scheduler.py`):
                # a line that is a project file's path alone names that file; nothing runs it.
                listed = classify_path(raw.strip()) if raw.strip().startswith(("/", "~/")) and " " not in raw.strip() else None
                line = first + index
                if listed is not None and listed.kind == PATH and listed.framework is not None and (line, raw.strip()) not in taken:
                    pending.append(_Pending(line, self._col(line, raw.strip()), raw.strip(), listed, 0, "fence"))
        if lang in SHELL_LANGS or lang in TEXT_LANGS:
            for offset, key, flag in config_keys(content):
                # `--speculative-config '{"num_speculative_tokens": 3}'`: a field of the flag's config class.
                line = first + content.count("\n", 0, offset)
                given = Classified(SYMBOL, key, None, f"a key of `{flag}`'s JSON")
                pending.append(_Pending(line, self._col(line, f'"{key}"') + 1, key, given, 0, "fence", config_flag=flag))
        if lang in SHELL_LANGS:
            for offset, key, endpoint in payload_keys(content):
                # `curl ... -d '{"extra_body": ...}'`: a field of the server's request, as `json=` keys are.
                line = first + content.count("\n", 0, offset)
                sent = Classified(SYMBOL, key, None, "a key of the request body")
                pending.append(_Pending(line, self._col(line, f'"{key}"') + 1, key, sent, 0, "fence", field_of=REQUEST, endpoint=endpoint))
        if lang in PYTHON_LANGS or lang in SHELL_LANGS:
            taken = {(p.line, p.text) for p in pending}
            comment_paths = self._comment_paths(content, first, lang in PYTHON_LANGS)
            if header is not None:
                # The header's own path: the file a quoted copy lives in, not a new file (`check._new_file`).
                comment_paths = [replace(p, located=header) if p.found.kind == PATH and p.found.target == header else p for p in comment_paths]
            pending.extend(p for p in comment_paths if (p.line, p.text) not in taken)
        if lang in TEXT_LANGS:
            taken = {(p.line, p.text) for p in pending}
            taken |= {(first + i, m.group(1)) for i, raw in enumerate(content.splitlines()) if (m := _RUN_SCRIPT_RE.match(raw))}
            pending.extend(p for p in self._text(content, first, owner) if (p.line, p.text) not in taken)
            self.location_block(content, lead_text)
        self._emit(pending, "", content if lang in TEXT_LANGS else "")

    def _info_refs(self, token: Token) -> list[_Pending]:
        """```` ```python vllm/x.py https://github.com/.../x.py#L1-L9 ````, ```` ```py title="vllm/x.py" ````:
        the file a code block's info string names after its language (a blog's code-block title
        and permalink, mkdocs' `title=`): a path and a link of the project, and the block's place."""
        words = (token.info or "").split()[1:]
        if not words or not token.map:
            return []
        line = token.map[0] + 1
        out: list[_Pending] = []
        for word in words:
            word = word.removeprefix("title=").strip("\"'")
            if _GITHUB_RE.match(word):
                link = self._link(word, line, 0, [], "")
                if link is not None:
                    out.append(link)
            elif (found := classify_path(word)) is not None and found.kind == PATH and found.framework is not None:
                out.append(_Pending(line, self._col(line, word), word, found, 0, "fence"))
        return out

    def outline(self, token: Token, taken: int) -> None:
        """A paragraph that is a pasted outline (`is_pasted_outline`): its source lines are read as
        a text block's. `taken`: how many references the paragraph's own walk already gave."""
        if not token.map or token.map[1] - token.map[0] < 3:
            return
        rows = self.lines[token.map[0] : token.map[1]]
        first_text = token.content.split("\n", 1)[0].strip()
        start = rows[0].find(first_text) if first_text else -1
        if start < 0 or not is_pasted_outline(rows, start):
            return
        seen = {(r.line, r.text) for r in self.refs[len(self.refs) - taken :] if not r.past} if taken else set()
        pending = [p for p in self._text("\n".join(rows), token.map[0] + 1) if (p.line, p.text) not in seen]
        if taken:
            # The prose walk's `model_executor.f` where the block reading cites `model_executor.f()`:
            # one citation, the block's.
            cited = {(p.line, p.text.split("(", 1)[0]): p.text for p in pending}
            own = self.refs[len(self.refs) - taken :]
            self.refs[len(self.refs) - taken :] = [r for r in own if cited.get((r.line, r.text.split("(", 1)[0]), r.text) == r.text]
        self._emit(pending, "", token.content)

    def _project_server(self, lang: str, content: str) -> tuple[str, str | None] | None:
        """The server an options-only shell block (`--kv-transfer-config '{...}'`) is written for
        when the text ran no command before it: the document's project's."""
        if lang not in SHELL_LANGS or not _OPTIONS_ONLY_RE.fullmatch(content):
            return None
        project = self.facts.project[0]
        return next(((cmd, fw) for cmd, fw in _PROJECT_SERVERS.items() if fw == project), None)

    def _comment_paths(self, content: str, first: int, python: bool) -> list[_Pending]:
        """`# vllm/attention/ops/paged_attn.py:94-112` above quoted code: where it came from.
        Only paths that start at a project's package (a comment's `utils.py` may be the
        reader's own file). Also what else a comment cites: the imports it writes out and the
        metrics it names (`# vllm:num_generation_tokens_total`)."""
        comments: list[tuple[int, int, str]] = []  # (0-based line, column, text)
        try:
            if not python:
                raise SyntaxError  # a shell comment starts a line
            for tok in tokenize.generate_tokens(io.StringIO(content).readline):
                if tok.type == tokenize.COMMENT:
                    comments.append((tok.start[0] - 1, tok.start[1], tok.string))
        except (SyntaxError, tokenize.TokenError):
            comments = [(i, raw.index("#"), raw.strip()) for i, raw in enumerate(content.splitlines()) if raw.lstrip().startswith("#")]
        # (0-based line, name) of the snippet's top-level classes and functions, read line by line:
        # an outline's `def f(self, ...):` with no body does not parse.
        defs: list[tuple[int, str]] = []
        if python and comments:
            defs = [(i, m.group(1)) for i, raw in enumerate(content.splitlines()) if (m := _TOP_DEF_RE.match(raw))]
        # A path comment heads the code below it, up to the next one: `# in a.py` over `class
        # A`, then `# in b.py` over `def f` gives b.py `f`, not the snippet's first class.
        headings = [index for index, _, comment in comments if _TEXT_PATH_RE.search(comment)]
        out = []
        for index, _, comment in comments:
            line = first + index
            following = [h for h in headings if h > index]
            below = [name for at, name in defs if at >= index and (not following or at < following[0])]
            writes = below[0] if below else defs[0][1] if defs and len(headings) == 1 else None
            for m in _TEXT_PATH_RE.finditer(comment):
                found = classify_path(m.group(0))
                if found is not None and found.kind == PATH and found.framework is not None:
                    out.append(_Pending(line, self._col(line, m.group(0)), m.group(0), found, 0, "fence", writes=writes))
            if python:
                out.extend(self._comment_imports(comment, line))
            for m in _COMMENT_METRIC_RE.finditer(comment):
                # `# 用于 Prometheus Counter: vllm:num_generation_tokens_total`: the metric the line feeds.
                metric = classify_metric(m.group(0))
                if metric is not None:
                    out.append(_Pending(line, self._col(line, m.group(0)), m.group(0), metric, 0, "fence"))
        return out

    def _comment_imports(self, comment: str, line: int) -> list[_Pending]:
        """`# 这意味着 from vllm.engine import LLMEngine`: an import the comment writes out, from a
        project's package, is cited as an import line is (the module, and each name it takes)."""
        out: list[_Pending] = []
        for m in _COMMENT_IMPORT_RE.finditer(comment):
            module, names = m.group("module") or m.group("module2"), m.group("names")
            root = module.split(".", 1)[0]
            if names is None:
                out.append(_Pending(line, self._col(line, module), module, Classified(SYMBOL, module, root, "import"), 0, "fence"))
                continue
            if "." in module:
                out.append(_Pending(line, self._col(line, module), module, Classified(SYMBOL, module, root, "import"), 0, "fence"))
            start = self._col(line, m.group(0))
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", names):
                found = Classified(SYMBOL, f"{module}.{name}", root, "import")
                out.append(_Pending(line, self._col(line, name, max(start, 0)), name, found, 0, "fence"))
        return out

    def _text(self, content: str, first: int, owner: str | None = None) -> list[_Pending]:
        """Names written the way code is written, in a text block or a diagram. The calls of one
        block are judged together (`mirror`): when most of them, and at least two, are the
        project's, one its sources never spell is stale; else the block is the author's.
        `owner`: the class the passage is about, whose fields a field listing names."""
        out: list[_Pending] = []
        group = f"{self.file}:{first}:text"
        originals = content.splitlines()
        # CJK glued to a name (`CacheEngine.__init__中包含`) is not part of it.
        masked = [blank_cjk(raw) for raw in originals]
        listed: dict[int, list[Listed]] = {}
        for item in [*class_outline(originals), *tree_outline(originals)]:
            listed.setdefault(item.index, []).append(item)
        if owner is not None:
            for index, col, name in field_listing(masked):
                listed.setdefault(index, []).append(Listed(index, col, name, owner))
        steps = flow_steps(masked)
        bound = bound_names(masked)  # the block's own variables (pasted code): never the project's
        # `participant InputProc as InputProcessor`: the diagram's short name for a participant is
        # the author's label, wherever the block writes it; the name after `as` is the reference.
        aliases = {m.group(1) for raw in masked if (m := _DIAGRAM_ALIAS_RE.match(raw)) and m.group(1) != m.group(2)}
        alias_re = re.compile(rf"(?<![\w.])(?:{'|'.join(map(re.escape, sorted(aliases)))})(?![\w(])") if aliases else None
        metrics = self._about_metrics()
        for i, raw in enumerate(masked):
            line = first + i
            if raw.lstrip().startswith(("$ ", "# ", "pip ", "curl ")):
                continue
            # A fence indented under a list item gives its lines without that indent: columns
            # are the source line's, so the written text and `--fix` land on the name.
            base = self._content_offset(line, originals[i])
            spans: list[tuple[int, int]] = []

            def free(start: int, end: int, _spans: list[tuple[int, int]] = spans) -> bool:
                return all(end <= a or start >= b for a, b in _spans)

            if alias_re is not None:
                spans.extend(m.span() for m in alias_re.finditer(raw))

            for item in listed.get(i, []):
                # An outline's class and the members listed under it (`owner`, strictly: the
                # text says they are that class's).
                spans.append((item.col, item.col + len(item.name)))
                if item.owner is None:
                    what = "an outline's base class" if item.base else "an outline's class"
                    entry = Classified(SYMBOL, item.name, None, what)
                    out.append(_Pending(line, base + item.col, item.name, entry, 0, "fence", doc_defined=item.name in self.facts.defined))
                else:
                    entry = Classified(SYMBOL, item.name, None, f"listed under `{item.owner}`")
                    out.append(_Pending(line, base + item.col, item.name, entry, 0, "fence", owner=item.owner, owner_strict=True))
            if i in steps and (step := _STEP_RE.match(raw)) and free(*step.span(1)):
                # A flow's step (`v1_chat_completions (adapter.py)` between arrow lines): its
                # leading name, when written like code, is a name of the project's flow.
                name = step.group(1)
                root = name.split(".", 1)[0]
                if _STEP_CLASS_RE.fullmatch(name) and name not in FOREIGN_NAMES:
                    # A class as a step (`→ ModelWorkerBatch (schedule_batch.py)`): the flow's type.
                    spans.append(step.span(1))
                    out.append(_Pending(line, base + step.start(1), name, Classified(SYMBOL, name, None, "a step of a flow"), 0, "fence", doc_defined=name in self.facts.defined))
                elif ("_" in name.strip("_") or "." in name) and root not in FOREIGN_ROOTS and root not in FOREIGN_NAMES and root not in BUILTINS:
                    hit = classify_symbol(name) if (CLASSNAME_RE.match(root) or root in ROOTS) and "." in name else None
                    hit = hit or Classified(SYMBOL, name.rsplit(".", 1)[-1], None, "", tentative=True)
                    spans.append(step.span(1))
                    out.append(_Pending(line, base + step.start(1), name, hit, 0, "fence", doc_defined=root in self.facts.defined, diagram=hit.tentative))
            if metrics:
                # `sglang_prompt_tokens: Input token count histogram` in a list of the metrics.
                for m in _METRIC_WORD_RE.finditer(raw):
                    spans.append(m.span())
                    metric = classify_metric(m.group(0)) or Classified(SYMBOL, m.group(0), m.group(1), "a metric's name")
                    out.append(_Pending(line, base + m.start(), m.group(0), metric, 0, "fence"))
            on_tree = bool(_TREE_LINE_RE.search(raw))
            for m in _TEXT_PATH_RE.finditer(raw):
                found = classify_path(m.group(0))
                if found is not None and (found.framework or found.bare_file or "/" in found.target.strip("/")):
                    spans.append(m.span())
                    out.append(_Pending(line, self._col(line, m.group(0)), m.group(0), found, 0, "fence"))
                elif found is not None and found.kind == PATH and on_tree and _FOLDER_ENTRY_RE.fullmatch(m.group(0)):
                    # `├── attention/`: a folder entry of a directory tree, judged only under the
                    # folder the tree places it in (`placement.py`; `diagram` marks it for that).
                    spans.append(m.span())
                    out.append(_Pending(line, self._col(line, m.group(0)), m.group(0), found, 0, "fence", diagram=True))
            for m in _TEXT_CALL_RE.finditer(raw):
                name = m.group(1)
                root = name.split(".", 1)[0]
                if not free(*m.span(1)) or (root in FOREIGN_ROOTS and root != "self") or root in BUILTINS or root in FOREIGN_NAMES:
                    continue
                if name.isalpha() and raw.startswith(("s)", "es)"), m.end()):
                    continue  # `Primary File(s)`: a plural written out, not a call
                if name in bound and name not in self.facts.instances:  # `model_executable(...)` after `model_executable = self.model`
                    spans.append(m.span(1))
                    continue
                if "." not in name and CLASSNAME_RE.match(name) and in_quotient(raw, m.start(1), raw.find(")", m.end(1)) + 1 or m.end(1)):
                    spans.append(m.span(1))  # `E[x] / Latency(y)`: the author's formula
                    continue
                if root == "self" and name.count(".") == 1:
                    # `self.recv_requests()` in a call flow: the method, by its name.
                    found = Classified(SYMBOL, name.split(".", 1)[1], None, "", tentative=True)
                elif root == "self":
                    continue
                elif root in self.facts.instances:
                    owner = self.facts.instances[root].rsplit(".", 1)[-1]
                    found = Classified(SYMBOL, f"{owner}.{name.split('.', 1)[1]}", None, f"`{root}` is a `{owner}`")
                elif CLASSNAME_RE.match(root) or root in ROOTS:
                    found = classify_symbol(name)
                else:
                    # `scheduler.schedule()`, `step()`: an instance or a bare function, named by its last part.
                    found = Classified(SYMBOL, name.rsplit(".", 1)[-1], None, "", tentative=True)
                if found is None:
                    continue
                spans.append(m.span(1))
                on_tree = bool(_TREE_LINE_RE.search(raw)) and "." not in name
                voted = found.tentative and not on_tree and root not in self.facts.defined
                out.append(
                    _Pending(
                        line, base + m.start(1), name + "()", found, 0, "fence", doc_defined=root in self.facts.defined,
                        diagram=on_tree or voted, mirror=group if voted else None,
                    )
                )
                if root not in self.facts.defined and not on_tree:
                    out.extend(self._message_keywords(raw, m.end(1), found, line, base))
            for m in _TEXT_MODULE_RE.finditer(raw):
                if not free(*m.span(1)) or (found := classify_symbol(m.group(1))) is None:
                    continue
                spans.append(m.span(1))
                out.append(_Pending(line, base + m.start(1), m.group(1), found, 0, "fence"))
            for m in _TEXT_DOTTED_RE.finditer(raw):
                if not free(*m.span(1)) or m.group(1).split(".", 1)[0] in FOREIGN_NAMES:
                    continue
                found = classify_symbol(m.group(1))
                if found is not None:
                    spans.append(m.span(1))
                    out.append(_Pending(line, base + m.start(1), m.group(1), found, 0, "fence", doc_defined=m.group(1).split(".", 1)[0] in self.facts.defined))
            for m in _TEXT_CLASS_RE.finditer(raw):
                name = m.group(1)
                if not free(*m.span(1)) or name in FOREIGN_NAMES:
                    continue
                # A class name in a diagram is a citation when the prose writes it in code font too.
                cited = name in self.facts.code_spans
                found = Classified(SYMBOL, name, None, "", tentative=not cited)
                # One not cited is judged with the block's other names (`mirror`): where most of
                # them are the project's, a class name its sources never spell is stale.
                voted = not cited and name not in self.facts.defined
                out.append(
                    _Pending(line, base + m.start(1), name, found, 0, "fence", doc_defined=name in self.facts.defined, diagram=voted, mirror=group if voted else None)
                )
            if _TREE_LINE_RE.search(raw):
                # A file's structure drawn as a tree: its items are the file's names.
                for m in _TREE_NAME_RE.finditer(raw):
                    name = m.group(1)
                    if not free(*m.span(1)) or name.split("_", 1)[0] in FOREIGN_ROOTS or name in BUILTINS or enumerated(name, raw):
                        continue
                    spans.append(m.span(1))
                    found = Classified(SYMBOL, name, None, "", tentative=True)
                    out.append(_Pending(line, base + m.start(1), name, found, 0, "fence", doc_defined=name in self.facts.defined, diagram=True))
            for m in _PRIVATE_NAME_RE.finditer(raw):
                # `_allocate_kv_cache` in a text block: a private name of two words or more is
                # nobody's prose; a name of the code the block describes.
                if not free(*m.span(1)):
                    continue
                spans.append(m.span(1))
                found = Classified(SYMBOL, m.group(1), None, "", tentative=True)
                out.append(_Pending(line, base + m.start(1), m.group(1), found, 0, "fence", doc_defined=m.group(1) in self.facts.defined, diagram=True))
        # Fix the written text of calls back to what is on the line.
        fixed = []
        own = diagram_names(originals)
        for p in out:
            if p.text.endswith("()") and p.col >= 0:
                written = self.lines[p.line - 1][p.col :].split("(", 1)[0]
                p = replace(p, text=written)
            if p.text in own:
                # A Mermaid node's id or a state (`FreeQueue`, `InUse`): the project's name only
                # where a pin has it; never a stale reference of its own.
                p = replace(p, quiet=True)
            fixed.append(p)
        return fixed

    def _python(self, content: str, first: int) -> list[_Pending]:
        """Imports from vllm/sglang, env var names, class bases, calls and annotations naming
        classes, in a Python snippet. Names inside the snippet's own top-level classes and
        functions carry that scope: checked only when the project defines it too."""
        out: list[_Pending] = []
        trees = parse_snippet(content)
        if settings := settings_lines(trees):
            return self._settings(settings, first)
        for base, tree in trees:
            self._bindings = value_bindings(tree)
            # The members the snippet's lines outside any class or function use on `self`: together
            # they may say whose `self` it is (`check._siblings_class`).
            loose = [t for t in tree.body if not isinstance(t, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)]
            siblings = tuple(sorted({m.name.split(".", 1)[0] for t in loose for m in [*self_members(t), *member_chains(t)]}))
            for top in tree.body:
                scope = top.name if isinstance(top, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) else None
                out.extend(self._python_stmt(top, scope, first + base))
                if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef) and (owner := self._named_owner(top, content.splitlines(), base)) is not None:
                    out.extend(self._named_method(owner, top, first + base))
                elif isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef) and (owner := self._copied_owner(top)) is not None:
                    # Judged as that copy's methods are: only if it mirrors the project's class.
                    out.extend(self._named_method(owner, top, first + base, located=False))
                elif isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef):
                    out.extend(self._fragment(top, first + base))
                    out.extend(self._copied_function(top, first + base))
                elif scope is None:
                    # `self.x = ...` lines lifted out of a method: its class's members (a called
                    # `self.x()` is `_past_names`'s); the class the section's heading names, if any.
                    called = {(n.func.lineno, n.func.col_offset) for n in ast.walk(top) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
                    for member in [m for m in self_members(top) if (m.lineno, m.col) not in called] + member_chains(top):
                        line = first + base + member.lineno - 1
                        text = f"self.{member.name}"
                        col = self._col(line, text, member.col)
                        if self.section_owner is not None and "." not in member.name and member.name not in self.facts.defined:
                            found = Classified(SYMBOL, member.name, None, f"a `self` member in the section on `{self.section_owner}`", tentative=True)
                            out.append(_Pending(line, col, text, found, 0, "fence", owner=self.section_owner, owner_section=True))
                        else:
                            # Lines of a file the text names (`# scheduler.py`, a location line):
                            # that file's class's members (`check._not_the_quoted_class_s`).
                            out.extend(replace(p, quoted_file=self.quoted_file, self_siblings=siblings) for p in self._loose_self(text, line, col, 0, "fence"))
        # `req.fill_ids` where the snippet declares `req: Req`: the class's member, in place of what
        # other rules read there (a quoted method's attribute judged by spelling alone).
        typed = [p for base, tree in trees for p in self._typed_receivers(tree, first + base)]
        declared = {(p.line, p.text) for p in typed}
        out = [p for p in out if (p.line, p.text) not in declared] + typed
        # Cited already by another rule (`self.recv_requests()`, `x.f(...)`): not again.
        taken = {(p.line, p.text.split("(", 1)[0].rsplit(".", 1)[-1]) for p in out} | {(p.line, p.found.target.rsplit(".", 1)[-1]) for p in out}
        for base, tree in trees:
            out.extend(p for p in self._past_names(tree, first + base) if (p.line, p.found.target) not in taken)
            for top in tree.body:
                if isinstance(top, ast.ClassDef):
                    self._section_class(top.name)
                    for item in top.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                            self.copied_methods.setdefault(item.name, set()).add((top.name, _parameters(item)))
        # A keyword both of a project call and of a quoted method: once, as the method's, judged
        # against the callee's signature at the pin (`fields.accepts`), not by spelling alone.
        quoted = {(p.line, p.text) for p in out if p.spelled and p.fragment_of}
        callees = {(p.line, p.text): p for p in out if p.spelled and not p.fragment_of and p.callee}
        out = [
            replace(p, callee=kw.callee, field_of=kw.field_of) if p.spelled and p.fragment_of and (kw := callees.get((p.line, p.text))) else p
            for p in out
            if not (p.spelled and not p.fragment_of and (p.line, p.text) in quoted)
        ]
        # `# - Environment variables (VLLM_ATTENTION_BACKEND)`: a comment names the setting too.
        cited = {(p.line, p.text) for p in out}
        out.extend(p for p in self._comment_envs(content, first) if (p.line, p.text) not in cited)
        # `server_args.x`, `self.scheduler_config.x`: a member of the class the object is named
        # after, where a pin has one (`check._named_object_findings`), whichever rule cites it; cited
        # by none, nothing where no pin has such a class (`only_named`).
        named = {(p.line, p.text): p for base, tree in trees for p in self._named_objects(tree, first + base)}
        # `self.gpu_worker.execute_forward` where `self.gpu_worker` is judged itself (a member of
        # the quoted class): the chain stands or falls with its first hop, said once.
        hops = {(p.line, p.text) for p in out if p.text.startswith("self.")}
        named = {k: p for k, p in named.items() if not (p.text.startswith("self.") and (p.line, f"self.{p.named_object}") in hops)}
        for i, p in enumerate(out):
            n = named.get((p.line, p.text.split("(", 1)[0]))
            if n is not None and p.found.target.rsplit(".", 1)[-1] == n.found.target and not p.receiver:
                out[i] = replace(p, named_object=n.named_object)
                del named[(n.line, n.text)]
        out.extend(named.values())
        return [self._held(p) for p in out]

    def _comment_envs(self, content: str, first: int) -> list[_Pending]:
        """The projects' env vars a snippet's comments name (`# set VLLM_USE_V1=1 to ...`)."""
        out: list[_Pending] = []
        tokens: list[tokenize.TokenInfo] = []
        # A snippet cut mid-statement: the comments before the cut still count.
        with contextlib.suppress(tokenize.TokenError, IndentationError, SyntaxError):
            tokens.extend(t for t in tokenize.generate_tokens(io.StringIO(content).readline) if t.type == tokenize.COMMENT)
        for token in tokens:
            line = first + token.start[0] - 1
            for m in _COMMENT_ENV_RE.finditer(token.string):
                env = classify_env(m.group(0))
                if env is not None:
                    out.append(_Pending(line, self._col(line, m.group(0), token.start[1]), m.group(0), env, 0, "fence"))
            # (An import a comment writes out is cited as an import line is: `_comment_imports`.)
            for m in [] if _COMMENT_IMPORT_WORD_RE.search(token.string) else _COMMENT_CLASS_RE.finditer(blank_cjk(token.string)):
                # `# 根据版本及配置选用不同的 BlockSpaceManager`: a class of the old code the snippet
                # copies, judged only where a past release defined a class of that name.
                name = m.group(0)
                if name in FOREIGN_NAMES or name in self.facts.defined:
                    continue
                found = Classified(SYMBOL, name, None, "a class a comment names")
                out.append(_Pending(line, self._col(line, name, token.start[1]), name, found, 0, "fence", past=True, past_kinds=("class",)))
        return out

    def _named_objects(self, tree: ast.Module, first: int) -> list[_Pending]:
        """`server_args.tp_size` on an object the document never binds nor imports (nor another
        library's), and `self.server_args.tp_size`: the member of the object's namesake class."""
        facts = self.facts
        out: list[_Pending] = []
        seen: set[tuple[int, str]] = set()
        for a in named_attributes(tree):
            line = first + a.lineno - 1
            free = a.text.startswith("self.") or not (
                a.obj in facts.defined or a.obj in facts.imported or a.obj in facts.foreign or a.obj in FOREIGN_NAMES or a.obj in FOREIGN_ROOTS
                or (a.obj in facts.assigned and a.obj not in facts.held_from_self)
            )
            if not free or (line, a.text) in seen:
                continue
            seen.add((line, a.text))
            found = Classified(SYMBOL, a.member, None, f"`{a.obj}` is named like the project's class", tentative=True)
            out.append(_Pending(line, self._col(line, a.text, a.col), a.text, found, 0, "fence", named_object=a.obj, only_named=True))
        return out

    def _typed_receivers(self, tree: ast.Module, first: int) -> list[_Pending]:
        """`req.req_pool_idx` where the snippet declares `req: Req` (a parameter of its `def`, a
        variable annotated `x: Req = ...`) and `Req` is the project's class: that class's member
        (`Reference.receiver`), judged against it at each pin (`check._receiver_member`)."""
        out: list[_Pending] = []
        seen: set[tuple[int, str]] = set()
        for r in receivers(tree):
            cls = self._project_class(r.cls)
            line, text = first + r.lineno - 1, f"{r.var}.{r.member}"
            if cls is None or (line, text) in seen:
                continue
            seen.add((line, text))
            found = Classified(SYMBOL, f"{cls}.{r.member}", None, f"`{r.var}` is declared a `{cls}`")
            out.append(_Pending(line, self._col(line, text, r.col), text, found, 0, "fence", receiver=cls))
        return out

    def _project_class(self, name: str) -> str | None:
        """The class a snippet's annotation names, by its short name, when it may be the project's:
        not the document's own class, a variable, the standard library's or a dependency's."""
        facts = self.facts
        if name in facts.imported:
            return facts.imported[name].rsplit(".", 1)[-1]
        if not CLASSNAME_RE.match(name) or name.isupper() or name in _TYPING_NAMES:
            return None
        if name in facts.defined or name in facts.assigned or name in facts.foreign or name in FOREIGN_NAMES or name in BUILTINS or name in FOREIGN_ROOTS:
            return None
        return name

    def _past_names(self, tree: ast.Module, first: int) -> list[_Pending]:
        """Names of a snippet no other rule cites, each judged only where a past release of the
        project defined it (`Reference.past`): a function the snippet defines at its top level (a
        copy of `def _schedule_prefills(...)`), a `self.x()` called outside any class of the
        snippet, a string naming a class or method (`worker_class_name = "MultiStepWorker"`), and a
        bare call of a name the document neither defines, imports nor binds (`can_swap_out(seq_group)`
        in a sketch of V0's `swap_out`: `_free_call`)."""
        found: dict[tuple[int, str], tuple[str, tuple[str, ...]]] = {}
        literals: set[tuple[int, str]] = set()
        in_class = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in ast.walk(c)}
        # `autoround.quantize_and_save(out, format="auto_round")`: a value handed to another
        # library's object or function is that library's word, whatever a past release named so.
        handed = {
            id(arg)
            for call in ast.walk(tree)
            if isinstance(call, ast.Call) and (callee := dotted(call.func)) and callee.split(".", 1)[0] in self.facts.foreign
            for arg in (*call.args, *(k.value for k in call.keywords))
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node in tree.body:
                found.setdefault((node.lineno, node.name), (node.name, _FUNCTION))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and self._free_call(node.func.id):
                found.setdefault((node.lineno, node.func.id), (node.func.id, _CALLABLE))
            elif isinstance(node, ast.Call) and id(node) not in in_class and (name := dotted(node.func)) and name.count(".") == 1 and name.startswith("self."):
                found.setdefault((node.lineno, name), (name.split(".", 1)[1], _FUNCTION))
            elif isinstance(node, ast.Call) and id(node) not in in_class and (name := dotted(node.func)) and name.count(".") == 1 and self._free_call(name.split(".", 1)[0]):
                # `batch.get_model_worker_batch()` on a variable nothing in the document binds: the
                # object the quoted code works on, its method judged by name as `self.x()` is.
                found.setdefault((node.lineno, name), (name.split(".", 1)[1], _FUNCTION))
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Name) and HUMPS_RE.fullmatch(node.value.id):
                # `HpuPlatform` alone on a line (a sketch's list of subclasses): a statement that
                # does nothing in code, written to name the class.
                found.setdefault((node.lineno, node.value.id), (node.value.id, ("class",)))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _IDENTIFIER_RE.fullmatch(node.value) and id(node) not in handed:
                found.setdefault((node.lineno, node.value), (node.value, ()))
                literals.add((node.lineno, node.value))
            elif isinstance(node, ast.keyword) and isinstance(node.value, ast.Name) and id(node.value) not in handed and self._free_call(node.value.id):
                # `op_func=moe_forward_shared`: a function handed over by name, bound nowhere in
                # the document, as a name called bare is.
                found.setdefault((node.value.lineno, node.value.id), (node.value.id, _CALLABLE))
        out = []
        for (node_line, text), (name, kinds) in found.items():
            line = first + node_line - 1
            found_as = Classified(SYMBOL, name, None, "a past name in a snippet")
            literal = (node_line, text) in literals
            out.append(_Pending(line, self._col(line, text), text, found_as, 0, "fence", past=True, past_kinds=kinds, literal=literal))
        return out

    def _free_call(self, name: str) -> bool:
        """`can_swap_out(...)` called bare in a snippet: a function the author names but neither
        defines, imports nor binds anywhere in the document, nor Python's or another library's. The
        name of a function the author re-types from the project's code, or of a helper the author
        invents; only a past release of the project that defined it tells them apart (`past`)."""
        facts = self.facts
        if name in facts.defined or name in facts.imported or name in facts.foreign or name in facts.assigned or name in facts.local_names:
            return False
        return not (name in FOREIGN_NAMES or name in BUILTINS or name in FOREIGN_ROOTS or name in PYTHON_BUILTINS)

    def _settings(self, lines: list[ast.Assign], first: int) -> list[_Pending]:
        """Settings lines (`document.settings_lines`): keywords of the project call the document's
        snippets pass one of them to (`LLM(..., calculate_kv_scales=True)`), judged as that call's
        keywords are; nothing when no such call says whose settings they are."""
        names = [line.targets[0].id for line in lines if isinstance(line.targets[0], ast.Name)]
        hit = next((hit for name in names if (hit := self._passed_to(name)) is not None), None)
        if hit is None:
            return []
        return self._named_keywords([(name, line.lineno) for name, line in zip(names, lines, strict=True)], hit, None, first, set())

    def _passed_to(self, keyword: str) -> Classified | None:
        """The project's callable the document's snippets pass `keyword` to (`LLM(...,
        calculate_kv_scales=True)`), or None (no call takes it, or the callee is the author's)."""
        callee = self.facts.passed.get(keyword)
        return None if callee is None else self._passed_callee(callee)

    def _passed_callee(self, callee: str) -> Classified | None:
        """The project's callable a call written `callee(...)` names (through the document's
        imports), or None for the author's own, a local's, a dependency's."""
        if callee in self.facts.imported:
            full = self.facts.imported[callee]
            return Classified(SYMBOL, full, full.split(".", 1)[0], "import")
        hit = self._code_name(callee) or self._called_class(callee)
        return None if hit is None or hit.tentative or callee.split(".", 1)[0] in self.facts.defined else hit

    def _called_class(self, name: str) -> Classified | None:
        """`LLM(...)`: a name in capitals that is called is a class (an acronym), not a constant
        (`_code_name` leaves capitals to constants); none when the document binds the name."""
        facts = self.facts
        if not _CALLED_CAPS_RE.fullmatch(name) or name in facts.assigned or name in facts.defined or name in facts.local_names or name in facts.foreign:
            return None
        if name in FOREIGN_NAMES or name in BUILTINS or name in FOREIGN_ROOTS:
            return None
        return Classified(SYMBOL, name, None, "a class called by its name in capitals")

    def _held(self, p: _Pending) -> _Pending:
        """`output_processor.process_outputs`, whose class comes from a copied class's
        `self.output_processor = ...`: the attribute that holds it (`Reference.held_by`)."""
        root, _, member = p.text.partition(".")
        holder = self.facts.held.get(root)
        if holder is None or p.receiver or not member or "." in member or p.found.target != f"{self.facts.instances[root].rsplit('.', 1)[-1]}.{member}":
            return p
        return replace(p, held_by=holder)

    def _named_owner(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], base: int) -> str | None:
        """The class of a method quoted on its own when the comment line right above it, the
        paragraph right before the block or the section's heading names it as that class's
        (`# EngineCore.step() 的核心循环` or "The core loop in EngineCore.step():" over `def
        step(self):`, `#### LLMEngine.step() - ...`)."""
        args = fn.args.posonlyargs + fn.args.args
        if not args or args[0].arg != "self":
            return None
        start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)]) + base - 1  # 0-based line of the def
        above = next((line.strip() for line in reversed(lines[:start]) if line.strip()), "")
        if above.startswith("#") and (owner := method_owner(above, fn.name) or commented_class(above)) is not None:
            return owner
        # "The core loop in `EngineCore.step()`:" right before `def step(self):`.
        if self.lead_text and (owner := method_owner(self.lead_text, fn.name)) is not None:
            return owner
        if self.headings and (owner := method_owner(self.headings[-1][1], fn.name)) is not None:
            return owner
        # `### step()` after `### LLMEngine.__init__` under one parent: the sibling's class.
        level, text = self.headings[-1] if self.headings else (0, "")
        siblings = [name for lvl, name in self.heading_owners if lvl == level]
        if siblings and re.search(rf"(?<![\w.]){re.escape(fn.name)}(?:\(\))?(?![\w.])", text):
            return siblings[-1]
        # `### ReqToTokenPool`, its `class ReqToTokenPool:` with the fields, then `#### 核心方法`
        # with `def alloc(self, ...)`: the section's copy of the class, written in two blocks.
        if self.section_classes:
            return self.section_classes[-1][1]
        # `## 3. LLMEngine`, "... how LLM uses LLMEngine; first its __init__" over `def __init__(self, ...)`:
        # a section that is nothing but the class, whose paragraph names it with the method.
        named = _HEADING_CLASS_RE.fullmatch(text.strip())
        cls = (named.group("code") or named.group("cls")) if named is not None else None
        said_by = self.lead_text or self.last_paragraph  # (a list item's sentence is no block's lead)
        if cls is None or cls in FOREIGN_NAMES or not said_by:
            return None
        # (ASCII bounds: CJK prose runs names into its words, `使用LLMEngine为例`.)
        said = all(re.search(rf"(?<![A-Za-z0-9_.]){re.escape(word)}(?![A-Za-z0-9_])", said_by) for word in (cls, fn.name))
        return cls if said else None

    def _copied_owner(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
        """`def __init__(self, server_args, ...)` alone, after a snippet wrote `class Scheduler:`
        with a `def __init__` of the same parameters: the one class the document's snippets gave
        that method (a method of the same name with other parameters may be another class's)."""
        params = _parameters(fn)
        owners = {cls for cls, copied in self.copied_methods.get(fn.name, set()) if copied == params}
        return next(iter(owners)) if params[:1] == ("self",) and len(owners) == 1 else None

    def _section_class(self, name: str) -> None:
        """Record a snippet's class under the innermost open heading that names it."""
        word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
        level = next((lvl for lvl, text in reversed(self.headings) if word.search(text)), None)
        if level is not None:
            self.section_classes.append((level, name))

    def _named_method(self, cls: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, first: int, located: bool = True) -> list[_Pending]:
        """A method whose class the heading names: a copy of that class's method, judged as a
        located class copy's (`copies.py`): the method, its parameters, its `self.x` members.
        Not `located` where only an earlier snippet's class says whose it is (`_copied_owner`)."""
        group = f"{self.file}:{first + fn.lineno - 1}:{fn.name}"
        seen: set[tuple[int, str]] = set()
        line = first + fn.lineno - 1
        why = f"a method the heading gives to `{cls}`" if located else f"a method the document's copy of `{cls}` has"
        found = Classified(SYMBOL, f"{cls}.{fn.name}", None, why)
        out = [_Pending(line, self._col(line, fn.name), fn.name, found, 0, "fence", scope=cls, mirror=group)]
        seen.add((line, fn.name))
        out.extend(self._copied_method(cls, fn, group, first, seen))
        return [replace(p, located=f"{cls}.{fn.name}") for p in out] if located else out

    def _fragment(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, first: int) -> list[_Pending]:
        """`def event_loop_normal(self): ... self.get_next_batch_to_run()`: a method quoted without
        its class. The method and the methods it calls on `self` are checked on the project's
        class that defines it, when the snippet mirrors that class (see `check._mirrors`)."""
        args = fn.args.posonlyargs + fn.args.args
        if not args or args[0].arg != "self" or fn.name.startswith("__"):
            return []
        group = f"{self.file}:{first + fn.lineno - 1}:{fn.name}"
        out: list[_Pending] = []
        seen: set[str] = set()
        filed = self._file_above(fn, first) or self.quoted_file

        def add(lineno: int, name: str) -> None:
            if name in seen or name.startswith("__"):
                return
            seen.add(name)
            line = first + lineno - 1
            found = Classified(SYMBOL, name, None, "method of a quoted method's class")
            out.append(_Pending(line, self._col(line, name), name, found, 0, "fence", mirror=group, fragment_of=fn.name, quoted_file=filed))

        add(fn.lineno, fn.name)
        for arg in (*fn.args.posonlyargs, *fn.args.args[1:], *fn.args.kwonlyargs):
            # `def evict(self, num_tokens, evict_callback)`: the parameters of the method of the
            # class that defines it (`check._fragment_parameter`); they do not vote on the copy.
            line = first + arg.lineno - 1
            found = Classified(SYMBOL, arg.arg, None, f"a parameter of the quoted `{fn.name}`")
            at = self._col(line, arg.arg + ":")
            at = at if at >= 0 else self._col(line, arg.arg)
            out.append(_Pending(line, at, arg.arg, found, 0, "fence", mirror=group, fragment_of=fn.name, quoted_file=filed, field_of=fn.name))
        calls: set[int] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
                add(node.lineno, node.func.attr)
                calls.add(id(node.func))
        out.extend(replace(p, quoted_file=filed) for p in self._quoted_names(fn, group, calls, first))
        return out

    def _file_above(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, first: int) -> str | None:
        """`# model_runner.py` or `# From: vllm/worker/worker.py` on the line right above a
        method quoted on its own: the name of the file it was copied from."""
        start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)]) + first - 2  # 0-based line of the def
        above = next((line for line in reversed(self.lines[:start]) if line.strip()), "")
        return commented_file(above)

    def _copied_function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, first: int) -> list[_Pending]:
        """`async def build_async_engine_client_from_engine_args(engine_args, disable_x: bool = False)`:
        a module-level function quoted with a name of three words or more, as only the project's own
        function would be named (judged only where a pin defines it, `scope`): its annotated
        parameters are that function's (`field_of`), as a copied method's are its class's. A
        parameter written with its type was pasted from the source; an unannotated list may be the
        author's sketch of the call (`def run_scheduler_process(server_args, ..., balance_meta)`).
        A shorter name counts where the paragraph right before the block quotes it in code font
        ("在`backends.py`中的`split_graph`函数实现了图分割逻辑："): the text presents the project's."""
        args = fn.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        presented = bool(self.lead_text) and re.search(rf"`{re.escape(fn.name)}(?:\(\))?`", self.lead_text or "") is not None
        if _COPIED_FUNCTION_RE.fullmatch(fn.name) is None and not presented:
            return []
        if params and params[0].arg in {"self", "cls"}:
            params = params[1:]  # a method quoted on its own (`def load_lora_model(self, ...)`): the same
        out: list[_Pending] = []
        for arg in params:
            if arg.annotation is None:
                continue
            line = first + arg.lineno - 1
            found = Classified(SYMBOL, arg.arg, None, f"a parameter of a copy of `{fn.name}`")
            at = self._col(line, arg.arg + ":")
            at = at if at >= 0 else self._col(line, arg.arg)
            out.append(_Pending(line, at, arg.arg, found, 0, "fence", scope=fn.name, field_of=fn.name))
        return out

    def _quoted_names(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, group: str, calls: set[int], first: int) -> list[_Pending]:
        """Attributes (`batch.launch_done`, `self.tp_worker.cur_sampling_info`) and keywords
        (`ScheduleBatch(next_batch_sampling_info=...)`) of a quoted method: the types of its
        objects are unknown, but every name in it was the project's code, so one the sources no
        longer spell anywhere is stale (judged in `check`, only when the method is the project's)."""
        out: list[_Pending] = []
        seen: set[tuple[int, str]] = set()
        inner: set[int] = set()  # `self.tp_worker` inside `self.tp_worker.cur_sampling_info`

        def add(lineno: int, text: str, target: str) -> None:
            line = first + lineno - 1
            if (line, text) in seen:
                return
            seen.add((line, text))
            found = Classified(SYMBOL, target, None, "a name in a quoted method", tentative=True)
            out.append(_Pending(line, self._col(line, text), text, found, 0, "fence", mirror=group, fragment_of=fn.name, spelled=True))

        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute):
                inner.add(id(node.value))
                if id(node) in inner or id(node) in calls:
                    continue
                name = dotted(node)
                if name is None or not self._own_object(name.split(".", 1)[0]):
                    continue
                add(node.lineno, name, name.rsplit(".", 1)[1])
            elif isinstance(node, ast.Call):
                callee = dotted(node.func)
                if callee is None or not self._own_object(callee.split(".", 1)[0]):
                    continue
                for kw in node.keywords:
                    if kw.arg is not None:
                        add(getattr(kw, "lineno", node.lineno), kw.arg, kw.arg)
        return out

    def _own_object(self, root: str) -> bool:
        """A name a quoted method's code holds that is not the standard library's or a
        dependency's (`self`, `batch`, `ScheduleBatch`, not `torch`, `threading`, `len`)."""
        if root == "self":
            return True
        return not (root in self.facts.foreign or root in FOREIGN_ROOTS or root in FOREIGN_NAMES or root in BUILTINS)

    def _python_stmt(self, top: ast.stmt, scope: str | None, first: int) -> list[_Pending]:
        out: list[_Pending] = []
        seen: set[tuple[int, str]] = set()

        def add(
            node_line: int, text: str, found: Classified, doc_defined: bool = False, in_scope: str | None = scope, at: int = 0, diagram: bool = False,
            annotates: tuple[str, ...] = (), base_of: str | None = None,
        ) -> None:
            """`at`: the node's column in the snippet; the source line's is at or after it."""
            line = first + node_line - 1
            if (line, text) in seen:
                return
            seen.add((line, text))
            out.append(
                _Pending(
                    line, self._col(line, text, at), text, found, 0, "fence", scope=in_scope, doc_defined=doc_defined, diagram=diagram,
                    annotates=annotates, base_of=base_of,
                )
            )

        places = _annotated_places(top)

        for node in ast.walk(top):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.split(".")[0] in ROOTS and "." in node.module:
                    # The module a `from` line names is cited too: a moved module is one fix.
                    add(node.lineno, node.module, Classified(SYMBOL, node.module, node.module.split(".")[0], "import"), in_scope=None)
                if node.module.split(".")[0] in ROOTS:
                    for alias in node.names:
                        if alias.name == "*":
                            continue
                        target = f"{node.module}.{alias.name}"
                        found = Classified(SYMBOL, target, node.module.split(".")[0], "import")
                        add(getattr(alias, "lineno", node.lineno), alias.name, found, in_scope=None)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in ROOTS:
                        found = Classified(SYMBOL, alias.name, alias.name.split(".")[0], "import")
                        add(node.lineno, alias.name, found, in_scope=None)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                env = classify_env(node.value)
                if env is not None:
                    add(node.lineno, node.value, env, in_scope=None)
                elif _MODULE_STRING_RE.fullmatch(node.value) and (module := classify_symbol(node.value)) is not None:
                    # `worker_module_name = "vllm.worker.worker"`: a module imported by name.
                    add(node.lineno, node.value, module, in_scope=None)
                elif looks_like_command(node.value):
                    # `launch_server_cmd("python3 -m sglang.launch_server --model-path m ...")`
                    for r in shell_refs(node.value):
                        line = first + node.lineno - 1 + r.line
                        found = Classified(r.kind, r.target, r.framework, f"command {r.command}" if r.command else "text")
                        if (line, r.text) not in seen:
                            seen.add((line, r.text))
                            out.append(_Pending(line, self._col(line, r.text), r.text, found, 0, "fence", r.command))
            elif isinstance(node, ast.ClassDef):
                # `class SchedulerOutput:` mirrors the project's class or is the author's own.
                # A copy the text places in the project (`copies.located`) is the project's class.
                quoted = node is top and self.place is not None
                add(node.lineno, node.name, Classified(SYMBOL, node.name, None, "class statement"), doc_defined=not quoted, in_scope=None)
                if node is top:
                    group = f"{self.file}:{first + node.lineno - 1}:{node.name}"
                    start = len(out)
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not item.name.startswith("__"):
                            line = first + item.lineno - 1
                            found = Classified(SYMBOL, f"{node.name}.{item.name}", None, "method of a snippet's class")
                            if (line, item.name) not in seen:
                                seen.add((line, item.name))
                                out.append(_Pending(line, self._col(line, item.name), item.name, found, 0, "fence", scope=node.name, mirror=group))
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                            # (`__call__` too: held-out 23's copy of `PiecewiseBackend` is that alone.)
                            out.extend(self._copied_method(node.name, item, group, first, seen))
                        elif not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                            # `self.free_slots: List[int]` in the class body: a copy that lists the
                            # class's attributes as declarations, read as a method's `self.x` are.
                            out.extend(self._self_members(node.name, item, group, first, seen))
                            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not item.target.id.startswith("__"):
                                # `hidden_states: Optional[torch.Tensor]` in a dataclass's copy: its
                                # field, judged as the copy's methods are.
                                field_name, line = item.target.id, first + item.lineno - 1
                                if (line, field_name) not in seen:
                                    seen.add((line, field_name))
                                    found = Classified(SYMBOL, f"{node.name}.{field_name}", None, "field of a snippet's class")
                                    out.append(_Pending(line, self._col(line, field_name), field_name, found, 0, "fence", scope=node.name, mirror=group))
                    for lineno, param in docstring_args(node):
                        # `Args:` of the copy's docstring: its constructor's parameters (`field_of`).
                        line = first + lineno - 1
                        if (line, param) not in seen:
                            seen.add((line, param))
                            found = Classified(SYMBOL, param, None, f"a parameter the docstring of a copy of `{node.name}` lists")
                            at = self._col(line, param + ":")
                            out.append(_Pending(line, at, param, found, 0, "fence", scope=node.name, mirror=group, field_of=node.name))
                    if omits_self(node):
                        # Pseudocode that leaves out `self` paraphrases the project's class of that
                        # name (no one's runnable code): its bare calls are the class's members,
                        # and the copy is the class whatever the block's vote (as a located one).
                        out.extend(self._bare_members(node, group, first, seen))
                        out[start:] = [replace(p, located=p.located or node.name) if p.mirror == group else p for p in out[start:]]
                for b in node.bases:
                    name = dotted(b.value if isinstance(b, ast.Subscript) else b)
                    if name and (hit := self._code_name(name)) is not None:
                        add(b.lineno, name, hit, doc_defined=name.split(".", 1)[0] in self.facts.defined, in_scope=None, base_of=node.name)
            elif isinstance(node, ast.Assign | ast.Return) and node.value is not None:
                # `executor_class = RayDistributedExecutor`, `return UniProcExecutor`, and each
                # branch of `return EAGLEWorkerV2 if overlap else EAGLEWorker`: a class as a value.
                for value in _branches(node.value):
                    self._class_value(value, add)
            elif isinstance(node, ast.Call):
                name = dotted(node.func)
                for arg in node.args:
                    # `get_tokenizer_group(TokenizerGroup)`, `isinstance(x, SamplingParams)`: a class
                    # handed over as a value is cited as a called one is.
                    if isinstance(arg, ast.Name):
                        self._class_value(arg, add)
                endpoint = request_endpoint(node, self._bindings)
                for key, where in request_keys(node, self._bindings):
                    # `extra_body={"guided_choice": [...]}`, `json={...}`: a field of the server's request.
                    found = Classified(SYMBOL, key, None, "a key of the request body")
                    line = first + getattr(where, "lineno", node.lineno) - 1
                    if (line, key) not in seen:
                        seen.add((line, key))
                        at = max(self._col(line, f'"{key}"'), self._col(line, f"'{key}'"))
                        at = at + 1 if at >= 0 else self._col(line, key + "=")
                        out.append(_Pending(line, at, key, found, 0, "fence", field_of=REQUEST, endpoint=endpoint))
                if name and (hit := self._code_name(name, first + node.lineno - 1)) is not None:
                    add(node.lineno, name, hit, doc_defined=hit.target.split(".", 1)[0] in self.facts.defined or name.split(".", 1)[0] in self.facts.defined)
                    if not hit.tentative and name.split(".", 1)[0] not in self.facts.defined:
                        # An imported callee's keywords are judged on it as imported (its module's
                        # classes: `same_signature`), the use itself by its name alone.
                        full = self.facts.imported.get(name)
                        callee = hit if full is None else Classified(SYMBOL, full, full.split(".", 1)[0], "import")
                        out.extend(self._keywords(node, callee, scope, first, seen))
                elif name and (hit := self._called_class(name)) is not None:
                    # Reported only where a pin defines it (`UUID(...)` is another library's); its
                    # keywords are judged only where the class resolves (`check._quotes_project`).
                    add(node.lineno, name, replace(hit, tentative=True))
                    out.extend(self._keywords(node, hit, scope, first, seen))
                elif name and scope is None and object_call(name, self.facts.local_names | self.facts.defined | self.facts.foreign):
                    # `model_executor.determine_num_available_blocks()` at a snippet's top level: a
                    # method on an object the project names so (`resolve.through_instance` judges
                    # it by the classes named like the object); a name the sources never spell is
                    # broken, as a diagram's is (`diagram`).
                    member = name.rsplit(".", 1)[1]
                    add(node.lineno, name, Classified(SYMBOL, member, None, f"a method called on `{name.split('.', 1)[0]}`", tentative=True), diagram=True)
                elif name in self.facts.imported:
                    # `SamplingParams(guided_decoding=...)`: the import line cites the class; its
                    # keywords are its fields or parameters, whichever function the snippet is in.
                    full = self.facts.imported[name]
                    out.extend(self._keywords(node, Classified(SYMBOL, full, full.split(".", 1)[0], "import"), None, first, seen))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                name = dotted(node)
                root = name.split(".", 1)[0] if name else ""
                if name and (CLASSNAME_RE.match(root) or root in self.facts.instances) and (hit := self._code_name(name, first + node.lineno - 1)) is not None:
                    add(node.lineno, name, hit, doc_defined=hit.target.split(".", 1)[0] in self.facts.defined)
                elif name and name.split(".")[-2:-1] == ["envs"] and (env := classify_env(node.attr)) is not None:
                    # `envs.VLLM_USE_V1`, `vllm.envs.VLLM_X`: the project's env registry, read as an attribute.
                    add(node.lineno, node.attr, env, in_scope=None)
            elif (
                isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id.isupper()
                and node.id not in self.facts.defined | self.facts.local_names and (env := classify_env(node.id)) is not None
            ):
                # `ProcessingCache(VLLM_MM_INPUT_CACHE_GIB)`: read as imported from the env registry.
                add(node.lineno, node.id, env, in_scope=None, at=node.col_offset)
            annotation = node.annotation if isinstance(node, ast.AnnAssign | ast.arg) else node.returns if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None
            if annotation is not None:
                # A parameter's or return's type names a class from outside the snippet's own
                # class (as a base does): checked whoever's method it annotates.
                free = not isinstance(node, ast.AnnAssign)
                # `Sequence[int]`: the typing vocabulary, subscripted, is typing's (vLLM V0 had
                # a class `Sequence` of its own, which an annotation may name unsubscripted).
                generic = {id(sub.value) for sub in ast.walk(annotation) if isinstance(sub, ast.Subscript)}
                # A place holding one type (`tokenizer: AnyTokenizer`, `-> Optional[X]`) maps onto the
                # project's declaration there; a tuple of several (`-> Tuple[A, B]`) does not.
                types = {sub.id for sub in ast.walk(annotation) if isinstance(sub, ast.Name) and CLASSNAME_RE.match(sub.id) and sub.id not in _TYPING_NAMES}
                place = places.get(id(node), ()) if len(types) == 1 else ()
                for sub in ast.walk(annotation):
                    if id(sub) in generic and isinstance(sub, ast.Name) and sub.id in _TYPING_NAMES:
                        continue
                    if isinstance(sub, ast.Name) and sub.id in _TYPING_FORMS:
                        continue  # `-> Self`: typing's, subscripted or not
                    if isinstance(sub, ast.Name) and CLASSNAME_RE.match(sub.id) and (hit := self._code_name(sub.id)) is not None:
                        add(
                            sub.lineno, sub.id, hit, doc_defined=sub.id in self.facts.defined, in_scope=None if free else scope, at=sub.col_offset,
                            annotates=place,
                        )
        return out

    def _class_value(self, node: ast.Name, add: Callable[..., None]) -> None:
        """A class name used as a value (assigned, returned, passed): cited as a called one is."""
        if CLASSNAME_RE.match(node.id) and not node.id.isupper() and (hit := self._code_name(node.id)) is not None:
            add(node.lineno, node.id, hit, doc_defined=node.id in self.facts.defined, at=node.col_offset)

    def _copied_method(
        self, cls: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, group: str, first: int, seen: set[tuple[int, str]]
    ) -> list[_Pending]:
        """A method of a snippet's class (`class LLM:` ... `def __init__(self, model, *, swap_space=4)`):
        its parameters are the real method's (`field_of`), and the methods it calls on `self`
        (`self._validate_and_add_requests(...)`) the class's. Judged only when the snippet mirrors
        the project's class (`mirror`); neither votes on that (the class's own `def`s do)."""
        out: list[_Pending] = []
        args = fn.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            line = first + arg.lineno - 1
            if arg.arg in {"self", "cls"} or (line, arg.arg) in seen:
                continue
            seen.add((line, arg.arg))
            found = Classified(SYMBOL, arg.arg, None, f"a parameter of a copy of `{cls}.{fn.name}`")
            at = self._col(line, arg.arg + ":")
            at = at if at >= 0 else self._col(line, arg.arg)
            out.append(_Pending(line, at, arg.arg, found, 0, "fence", scope=cls, mirror=group, field_of=f"{cls}.{fn.name}"))
        out.extend(self._self_members(cls, fn, group, first, seen))
        for node in ast.walk(fn):
            # `self._cached_apply_hf_processor(..., return_mm_hashes=x)`: a keyword of the class's
            # own method, judged against that method's signature at the pin (`fields.accepts`).
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
                continue
            callee = f"{cls}.{node.func.attr}"
            for kw in node.keywords:
                line = first + kw.lineno - 1
                if kw.arg is None or (line, kw.arg) in seen:
                    continue
                seen.add((line, kw.arg))
                found = Classified(SYMBOL, kw.arg, None, f"keyword of `{callee}`", tentative=True)
                out.append(_Pending(line, self._col(line, kw.arg + "="), kw.arg, found, 0, "fence", scope=cls, mirror=group, callee=callee, field_of=callee))
        return out

    def _self_members(self, cls: str, node: ast.AST, group: str, first: int, seen: set[tuple[int, str]]) -> list[_Pending]:
        """`self.x` members, and members of members, in a method copied from `cls`: judged when
        the copy mirrors the class."""
        out: list[_Pending] = []
        for member in self_members(node):
            line, text = first + member.lineno - 1, f"self.{member.name}"
            if (line, text) in seen:
                continue
            seen.add((line, text))
            found = Classified(SYMBOL, f"{cls}.{member.name}", None, f"a member used on `self` in a copy of `{cls}`")
            out.append(_Pending(line, self._col(line, text, member.col), text, found, 0, "fence", scope=cls, mirror=group))
        for member in member_chains(node):
            # `self.llm_engine.get_tokenizer_group(...)`: a member of the member's object, whose
            # class the copy does not say; every name in it was the project's code, so one the
            # pin's sources never spell is stale (judged by spelling, `Reference.spelled`).
            line, text = first + member.lineno - 1, f"self.{member.name}"
            if (line, text) in seen:
                continue
            seen.add((line, text))
            found = Classified(SYMBOL, member.name.rsplit(".", 1)[1], None, f"a name in a copy of `{cls}`", tentative=True)
            out.append(_Pending(line, self._col(line, text, member.col), text, found, 0, "fence", scope=cls, mirror=group, spelled=True))
        return out

    def _bare_members(self, cls: ast.ClassDef, group: str, first: int, seen: set[tuple[int, str]]) -> list[_Pending]:
        """`init_memory_pool(...)` in a copy that leaves out `self` (`copies.bare_calls`): the
        class's member, judged as `self.init_memory_pool` is (`Reference.bare_call`)."""
        methods = {item.name for item in cls.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}
        facts = self.facts
        bound = facts.local_names | facts.foreign | set(facts.imported) | (facts.defined - methods) | BUILTINS | FOREIGN_NAMES | set(FOREIGN_ROOTS)
        out: list[_Pending] = []
        for item in cls.body:
            if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for call in bare_calls(item, bound):
                line = first + call.lineno - 1
                if (line, call.name) in seen:
                    continue
                seen.add((line, call.name))
                found = Classified(SYMBOL, f"{cls.name}.{call.name}", None, f"called bare in a copy of `{cls.name}` that leaves out `self`")
                out.append(_Pending(line, self._col(line, call.name, call.col), call.name, found, 0, "fence", scope=cls.name, mirror=group, bare_call=True))
        return out

    def _keywords(self, call: ast.Call, callee: Classified, scope: str | None, first: int, seen: set[tuple[int, str]]) -> list[_Pending]:
        """`Scheduler(..., dp_balance_meta=x)`: a keyword passed to the project's class or function
        is a name the project must spell (a parameter, a field); judged by spelling in `check`."""
        named = [(kw.arg, getattr(kw, "lineno", call.lineno)) for kw in call.keywords if kw.arg is not None]
        # `quantization="turboquant"`: the value too, judged where the keyword is an engine option's.
        values = {kw.arg: kw.value.value for kw in call.keywords if kw.arg and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)}
        return [replace(p, flag_value=values.get(p.text)) for p in self._named_keywords(named, callee, scope, first, seen)]

    def _named_keywords(self, named: list[tuple[str, int]], callee: Classified, scope: str | None, first: int, seen: set[tuple[int, str]]) -> list[_Pending]:
        """Keywords of `callee`, each with its (snippet-relative) line, as `_keywords` reads them."""
        out = []
        for name, lineno in named:
            line = first + lineno - 1
            if (line, name) in seen:
                continue
            seen.add((line, name))
            found = Classified(SYMBOL, name, callee.framework, f"keyword of `{callee.target}`", tentative=True)
            at = self._col(line, name + "=")
            at = at if at >= 0 else self._col(line, name)  # a settings line spaced `name = value`
            out.append(_Pending(line, at, name, found, 0, "fence", scope=scope, spelled=True, callee=callee.target, field_of=callee.target))
        return out

    def _code_name(self, name: str, line: int | None = None) -> Classified | None:
        """What a name used in a snippet cites, or None for the author's variables, the
        standard library and dependencies. `line`: where it is used (a variable another
        package's callable last made there is that package's object)."""
        parts = name.split(".")
        root = parts[0]
        if root in self.facts.foreign or root in FOREIGN_ROOTS or root in FOREIGN_NAMES or root in BUILTINS:
            return None
        if root[:1].isupper() and root in PYTHON_BUILTINS:
            return None  # `raise SystemExit()`, `except CancelledError:`: Python's own classes
        if line is not None and len(parts) > 1 and self.facts.foreign_object(root, line):
            return None
        if root in self.facts.imported:
            full = self.facts.imported[root]
            if len(parts) == 1:
                # Each use cites it again (`EAGLEWorker(...)` under its import): a reader who
                # fixes a gone class fixes every place the snippet names it. By its name alone: a
                # module that moved is the import line's fix, not the use's.
                return Classified(SYMBOL, full.rsplit(".", 1)[-1], full.split(".", 1)[0], "import")
            # `SamplingParams.extra_args`: the member through the class's short name.
            return Classified(SYMBOL, ".".join([full.rsplit(".", 1)[-1], *parts[1:]]), full.split(".", 1)[0], "import")
        if root in self.facts.instances and len(parts) == 2:
            owner = self.facts.instances[root].rsplit(".", 1)[-1]
            return Classified(SYMBOL, f"{owner}.{parts[1]}", None, f"`{root}` is a `{owner}`")
        if root in ROOTS:
            return classify_symbol(name)
        if CLASSNAME_RE.match(root) and not root.isupper() and root not in self.facts.assigned:
            return Classified(SYMBOL, name, None, "")
        return None

    # ----- headings ------------------------------------------------------
    def heading_class(self, token: Token) -> None:
        """`### GPUWorker (v1/worker/gpu_worker.py)`: the class and its file, cited in plain text
        (`heading_names.py`); the class judged as a name in code font is, even where the
        document's snippet below copies it."""
        named = heading_class(token.content)
        if named is None or token.map is None:
            return
        line = token.map[0] + 1
        pending = [_Pending(line, self._col(line, named.name), named.name, Classified(SYMBOL, named.name, None, "a heading names it with its file"), named.name_col, "inline")]
        if named.path is not None and (found := classify_path(named.path)) is not None:
            pending.append(_Pending(line, self._col(line, named.path), named.path, found, named.path_col, "inline"))
        written = {(p.line, p.text) for p in pending}
        self.refs = [r for r in self.refs if (r.file, r.line, r.text) not in {(self.file, *w) for w in written}]
        self._emit(pending, token.content)

    def _heading_place(self, content: str, lang: str) -> str | None:
        """The file the section's heading gives a Python snippet that copies the class the
        heading names (`### GPUWorker (v1/worker/gpu_worker.py)` over `class GPUWorker:`)."""
        named = heading_class(self.headings[-1][1]) if self.headings and lang in PYTHON_LANGS else None
        if named is None or not re.search(rf"^\s*class\s+{re.escape(named.name)}\b", content, re.MULTILINE):
            return None
        m = re.search(r"[\w./-]+\.py", self.headings[-1][1])
        return m.group(0) if m else None

    def heading(self, level: int, text: str) -> None:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))
        self.last_paragraph = ""
        self.section_classes = [(lvl, name) for lvl, name in self.section_classes if lvl < level]
        self.section_files = [(lvl, name) for lvl, name in self.section_files if lvl < level]
        self.kernel_sections = [lvl for lvl in self.kernel_sections if lvl < level]
        self.heading_owners = [(lvl, name) for lvl, name in self.heading_owners if lvl <= level]
        if (m := _HEADING_METHOD_RE.search(text)) is not None:
            self.heading_owners.append((level, m.group(1)))

    def kernel_package_named(self, text: str) -> None:
        """The open section names sgl-kernel (in this paragraph, item, cell or heading): its
        references from here on are marked (`Reference.kernel_package`)."""
        if KERNEL_PACKAGE_RE.search(text):
            self.kernel_sections.append(self.headings[-1][0] if self.headings else 0)

    def mark_kernel_package(self, start: int) -> None:
        """The references made since `start` are in a section about sgl-kernel, where it is one."""
        if self.kernel_sections:
            self.refs[start:] = [r if r.framework == "vllm" else replace(r, kernel_package=True) for r in self.refs[start:]]

    def _about_metrics(self) -> bool:
        """Whether the passage is about the server's metrics (its headings, its last paragraph)."""
        return any(_METRICS_RE.search(h) for h in (*(text for _, text in self.headings), self.last_paragraph, self.lead_text or ""))

    def location_line(self, text: str) -> None:
        """`**文件位置**: `vllm/v1/core/kv_cache_manager.py`` opening a section: its snippets quote
        that file, under its subheadings too (judged where the pin's class is in it, `_filed_copy`)."""
        m = _LOCATION_LINE_RE.fullmatch(text.strip())
        if m is not None and not new_code(text):
            self._section_file_is(m.group("file"))

    def location_block(self, content: str, lead_text: str | None) -> None:
        """`源码位置：` over a block that holds one file's path and nothing else: the section's
        later snippets quote that file, as under a location line."""
        m = _LONE_FILE_RE.fullmatch(content.strip())
        if m is not None and not (lead_text and new_code(lead_text)):
            self._section_file_is(m.group(0))

    def _section_file_is(self, path: str) -> None:
        level = self.headings[-1][0] if self.headings else 0
        self.section_files = [(lvl, name) for lvl, name in self.section_files if lvl < level]
        self.section_files.append((level, path))

    def _section_file(self) -> str | None:
        return self.section_files[-1][1] if self.section_files else None


# An acronym called as a class (`LLM(...)`, `MLP(...)`): capitals, no underscore.
_CALLED_CAPS_RE = re.compile(r"[A-Z][A-Z0-9]+")


# A heading naming a method on a class (`LLMEngine.__init__`, `Scheduler.schedule()`).
_HEADING_METHOD_RE = re.compile(r"(?<![\w.])(_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\.(?:_*[a-z]\w*)(?![\w.])")


def _annotated_places(top: ast.stmt) -> dict[int, tuple[str, ...]]:
    """For each parameter and method of a snippet's class (by `id` of its node), the places its
    annotation stands, `Class.method:param` or `Class.method:return`: the class's own, then each
    base's as written (`class ExampleParser(ToolParser)`: its `__init__` overrides ToolParser's)."""
    out: dict[int, tuple[str, ...]] = {}
    for cls in ast.walk(top):
        if not isinstance(cls, ast.ClassDef):
            continue
        owners = [cls.name] + [name.rsplit(".", 1)[-1] for b in cls.bases if (name := dotted(b.value if isinstance(b, ast.Subscript) else b))]
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            out[id(fn)] = tuple(f"{o}.{fn.name}:return" for o in owners)
            args = fn.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if a is not None:
                    out[id(a)] = tuple(f"{o}.{fn.name}:{a.arg}" for o in owners)
    return out


def _named_file(lead_text: str | None, content: str) -> str | None:
    """The one Python file, by name, that a short paragraph right before a snippet names in code
    font (`**关键代码** (`engine.py`):`), or the snippet's first line names as a comment alone
    (`# model_runner.py`); none where either calls the snippet an example or new code."""
    first = next((line for line in content.splitlines() if line.strip()), "")
    if (lead_text and new_code(lead_text)) or (first.lstrip().startswith("#") and new_code(first)):
        return None  # the text calls it an example (`# ... (概念示例)`), not the project's code
    if lead_text and len(lead_text) <= _MAX_LEAD_TEXT:
        files = set(_LEAD_FILE_RE.findall(lead_text))
        if len(files) == 1:
            return files.pop()
    return commented_file(first)


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    return tuple(a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs))


def _branches(value: ast.expr) -> list[ast.Name]:
    """The names a value may be: itself, or each branch of a conditional expression."""
    if isinstance(value, ast.IfExp):
        return _branches(value.body) + _branches(value.orelse)
    return [value] if isinstance(value, ast.Name) else []


def _placed(p: _Pending, place: str) -> _Pending:
    """A name of a snippet the text places in the project (`copies.located`): its class's members
    carry the place (the block's vote is then not needed), and a class it names inside a copy
    (`CpuGpuBlockAllocator.create(...)`, `Dict[SeqId, ...]`) is judged even where the copy's own
    class is gone (whose members are not: the class carries the breakage)."""
    if p.mirror is not None and p.field_of is not None and place.endswith(".py") and p.field_of.count(".") == 1:
        # A copied method's parameter: the method of the class in the file the text names (vLLM
        # has several `RMSNorm`s; `fields.accepts` falls back to the name alone if the file moved).
        module = module_name(place.removeprefix("python/"))
        return replace(p, located=place, field_of=f"{module}.{p.field_of}")
    if p.mirror is not None:
        return replace(p, located=place)
    if p.scope is not None and p.field_of is None and CLASSNAME_RE.match(p.text.split(".", 1)[0]) and not p.doc_defined:
        return replace(p, scope=None)
    return p


# A function's name of three words or more (`build_async_engine_client`): the project's, not a
# reader's `main` or `run`.
_COPIED_FUNCTION_RE = re.compile(r"_?[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}")


# The sentence before a table says it lists a class's fields ("`Req` 的字段", "the fields of `Req`").
_TABLE_FIELDS_RE = re.compile(r"的(?:字段|属性|成员)|\b(?:fields?|attributes?|members?)\b", re.IGNORECASE)
# A table's first column headed as a class's fields or attributes.
_FIELDS_HEADER_RE = re.compile(r"字段|字段名|属性|成员|fields?|attributes?|members?", re.IGNORECASE)
# A heading that is one class's name, numbered or not, in code font or of several capitals (`## 3. LLMEngine`).
_HEADING_CLASS_RE = re.compile(r"#*\s*(?:[\d.]+\s*)?(?:`(?P<code>_*[A-Z][A-Za-z0-9_]*)`|(?P<cls>_*[A-Z][a-z0-9]*[A-Z][A-Za-z0-9_]*))\s*")
# `##### `Req`（`managers/schedule_batch.py`）`: a class in code font, a file in parentheses at most.
_SECTION_OWNER_RE = re.compile(r"#*\s*(?:[\d.]+\s*)?`(?P<cls>_*[A-Z][A-Za-z0-9_]*)`\s*(?:[（(]\s*`[^`\n]+`\s*[）)])?\s*")


def _table_owner(lead: tuple[list[str], str]) -> str | None:
    """"下面这张表把 `ModelRunner` 的字段按作用层分组": the one class, in code font, whose fields the
    sentence before a table says the table lists (its first column, headed "字段", names them)."""
    codes, text = lead
    names = {c.strip() for c in codes if CLASSNAME_RE.match(c.strip()) and not c.strip().isupper() and c.strip() not in FOREIGN_NAMES}
    return names.pop() if len(names) == 1 and _TABLE_FIELDS_RE.search(text) else None


def _section_owner(headings: list[tuple[int, str]]) -> str | None:
    """The class a heading is nothing but (`Req`, with its file: `##### `Req`（`schedule_batch.py`）`):
    the section describes that class, so its field table's names and a block's `self.x` lines are
    its members. A heading with words of its own ("`Req` and its pool") says less."""
    if not headings:
        return None
    m = _SECTION_OWNER_RE.fullmatch(headings[-1][1].strip())
    if m is None or m.group("cls") in FOREIGN_NAMES or m.group("cls").isupper() or not CLASSNAME_RE.match(m.group("cls")):
        return None
    return m.group("cls")


def _heading_class(headings: list[tuple[int, str]]) -> str | None:
    """The class the current section is about: the first class name its heading writes in
    code font (`### `Req` — the request object`)."""
    if not headings:
        return None
    for span in re.findall(r"`([^`\n]+)`", headings[-1][1]):
        name = span.strip()
        if CLASSNAME_RE.match(name) and name not in FOREIGN_NAMES and not name.isupper():
            return name
    return None


_BREAK_TAG_RE = re.compile(r"<br\s*/?>", re.IGNORECASE)


def _split_flags(children: list[Token]) -> dict[int, int]:
    """`--hicache-storage-`<br/>`backend` in a table cell: a flag's name broken over two code
    spans for the column's width; index of its head -> index of its rest."""
    out: dict[int, int] = {}
    for i in range(len(children) - 2):
        head, tag, rest = children[i : i + 3]
        if (
            head.type == "code_inline" and head.content.startswith("--") and head.content.endswith("-")
            and tag.type == "html_inline" and _BREAK_TAG_RE.fullmatch(tag.content.strip())
            and rest.type == "code_inline" and re.fullmatch(r"[a-z0-9][a-z0-9-]*", rest.content)
        ):
            out[i] = i + 2
    return out


def _listed_with_request_fields(refs: list[Reference], leads: dict[str, list[tuple[int, int, str]]]) -> list[Reference]:
    """A list whose items lead with request fields the snippets send (a `guided_json` item and another,
    two at least): its other items' leading `snake_case` names are request fields too
    (`guided_whitespace_pattern`), judged as those are."""
    out = list(refs)
    for keys in leads.values():
        wanted = set(keys)
        items = [i for i, r in enumerate(out) if (r.line, r.col, r.text) in wanted]
        if sum(out[i].field_of == REQUEST for i in items) < 2:
            continue
        for i in items:
            r = out[i]
            if r.field_of is None and r.kind == SYMBOL and r.tentative and r.target == r.text and "_" in r.target.strip("_"):
                out[i] = replace(r, field_of=REQUEST)
    return out


def _top_sections(lines: list[str]) -> list[int]:
    """Per line, the number of the `#`/`##` section it sits in (headings inside code blocks are not)."""
    out, number, fenced = [], 0, False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and _TOP_HEADING_RE.match(line):
            number += 1
        out.append(number)
    return out


def _run_scripts(lines: list[str]) -> frozenset[str]:
    """Scripts a code block of the document runs by their bare names (`python bench_encoder.py`)."""
    out, fenced = set(), False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif fenced and (m := _RUN_SCRIPT_RE.match(line)):
            out.add(m.group(1))
    return frozenset(out)


def _repository_script(command: str) -> bool:
    """`benchmark/kernels/quantization/tune.py`: a script under a folder of the repository, not a
    module of a package (`vllm/...`, `python/sglang/...`)."""
    top, slash, _ = command.partition("/")
    return command.endswith(".py") and bool(slash) and top not in {"vllm", "sglang", "python", "sgl_kernel", "."}


def _other_programs_listings(refs: list[Reference], lines: list[str], foreign: set[str]) -> list[Reference]:
    """Options listed alone (table rows, list items, a text block's help lines) in a section
    whose listed flags the document passes to another program more often than to the projects'
    commands (`lmcache server --l1-size-gb`, `python -m benchmark.autotune.tune_server_args
    --save-server-logs`, `python bench_encoder.py --qps 20`): that program's options table, whose
    flags are the projects' only where a pin has them."""
    section = _top_sections(lines)

    def listed(r: Reference) -> bool:
        if r.kind != FLAG or not 0 < r.line <= len(lines):
            return False
        line = lines[r.line - 1]
        if r.origin == "inline":
            return not r.command and bool(_LISTING_LINE_RE.match(line))
        # A help line starts with its flag: no command on it, whatever the block's last one was.
        return r.origin == "fence" and bool(_HELP_LINE_RE.match(line))

    # A script of no project (`python benchmark/kernels/tune.py --N 5120`) is another program too.
    scripts = {r.target for r in refs if r.kind == FLAG and r.command and _repository_script(r.command)}
    foreign = foreign | scripts
    given = {r.target for r in refs if r.kind == FLAG and r.command and not listed(r)} - scripts  # passed to the projects' commands
    groups: dict[int, set[str]] = {}
    for r in filter(listed, refs):
        groups.setdefault(section[r.line - 1], set()).add(r.target)
    theirs = {number for number, flags in groups.items() if len(flags & foreign) > len(flags & given)}
    return [replace(r, tentative=True) if listed(r) and section[r.line - 1] in theirs else r for r in refs]


def extract_references(file: str, source: str, parser: MarkdownIt | None = None) -> list[Reference]:
    """All references in one Markdown document, in source order."""
    parser = parser or markdown_parser()
    liquid, numbers = liquid_highlights(unwrap_myst(source))
    text, shift = dedent_admonitions(liquid)
    for line, cut in numbers.items():
        shift[line] = shift.get(line, 0) + cut
    tokens = parser.parse(text)
    walker = _Walker(file, text.splitlines(), document_facts(source, tokens))
    walker.example_readme = _example_readme(walker.lines)
    walker.run_scripts = _run_scripts(walker.lines)
    heading_level = 0
    lead: tuple[list[str], str] | None = None  # code spans and text of the last paragraph outside lists
    owners: list[tuple[str, bool, bool] | None] = []  # per open list
    lists: list[str] = []  # per open list: its key, for the bold lead names of its items
    programs: list[str | None] = []  # per open list: another program its introducing sentence is about
    repo_lists: list[bool] = []  # per open list: its introducing sentence names repository files
    item_start = False
    in_paragraph = False
    table: str | None = None  # the open table's key, and the cell's column in it
    column = 0
    header_cell = False  # the next inline is a header cell's
    fields_table = False  # the open table's first column is headed "字段" / "Field": a class's fields
    in_header = False  # the open cell is a header cell
    column_projects: dict[int, str] = {}  # the open table's columns whose header names one project
    table_owner: str | None = None  # the class whose fields the sentence before the open table lists
    for token in tokens:
        if token.type == "table_open":
            table = f"{file}:{(token.map or [0])[0] + 1}:table"
            fields_table = False
            column_projects = {}
            table_owner = _table_owner(lead) if lead else None
        elif token.type == "table_close":
            table = None
        elif token.type == "tr_open":
            column = 0
        elif token.type in {"td_open", "th_open"}:
            column += 1
            header_cell = token.type == "th_open" and column == 1
            in_header = token.type == "th_open"
        if token.type == "heading_open":
            heading_level = int(token.tag[1:])
        elif token.type in {"bullet_list_open", "ordered_list_open"}:
            owners.append(lead_owner(*lead) if lead else None)
            lists.append(f"{file}:{(token.map or [0])[0] + 1}:list")
            programs.append(lead_program(lead[1]) if lead else None)
            walker.list_program = next((p for p in reversed(programs) if p), None)
            # (A sentence that also names a Python file, `ops/paged_attn.py` → `csrc/...cu`, may be
            # introducing the Python side: its items keep their plain judgement.)
            repo_lists.append(bool(lead and _REPO_FILES_RE.search(lead[1]) and not _PY_FILE_RE.search(lead[1])))
            walker.list_repo = any(repo_lists)
            lead = None
        elif token.type in {"bullet_list_close", "ordered_list_close"}:
            owners.pop() if owners else None
            lists.pop() if lists else None
            programs.pop() if programs else None
            walker.list_program = next((p for p in reversed(programs) if p), None)
            repo_lists.pop() if repo_lists else None
            walker.list_repo = any(repo_lists)
        elif token.type == "list_item_open":
            item_start = True
        elif token.type == "paragraph_open":
            in_paragraph = True
        elif token.type == "paragraph_close":
            in_paragraph = False
        elif token.type == "inline":
            if heading_level:
                walker.heading(heading_level, token.content)
                walker.kernel_package_named(token.content)
                heading_level = 0
                before = len(walker.refs)
                walker.inline(token)
                walker.mark_kernel_package(before)
                walker.heading_class(token)
                lead = None
                continue
            owner = owners[-1] if owners and item_start else None
            cell = f"{table}:{column}" if table is not None else None
            if header_cell:
                fields_table = _FIELDS_HEADER_RE.fullmatch(token.content.strip()) is not None
                header_cell = False
            if table is not None and in_header and len(named := {m.group(1).lower() for m in PROJECT_RE.finditer(token.content)}) == 1:
                column_projects[column] = named.pop()
            walker.column_project = column_projects.get(column) if table is not None and not in_header else None
            section = (table_owner or _section_owner(walker.headings)) if table is not None and fields_table and column == 1 else None
            if section is not None:
                owner = (section, False, False)
            before = len(walker.refs)
            walker.kernel_package_named(token.content)
            if in_paragraph and cell is None:
                walker.last_paragraph = token.content  # its own names' passage, then the next block's lead
            codes = walker.inline(token, owner, lists[-1] if lists and item_start else None, cell)
            walker.mark_kernel_package(before)
            if section is not None:
                # The section's class's own fields: judged on it where the pin has it (`owner_section`).
                # (`self.graph_runner` in that column too: the class's, not a name judged by spelling alone.)
                walker.refs[before:] = [replace(r, owner_section=True, spelled=False) if r.owner == section else r for r in walker.refs[before:]]
            if in_paragraph and cell is None:
                walker.outline(token, len(walker.refs) - before)
            if in_paragraph and not owners:
                lead = (codes, token.content)
                walker.location_line(token.content)
            item_start = False
        elif token.type in {"fence", "code_block"}:
            about = lead_owner(*lead) if lead else None
            before = len(walker.refs)
            walker.code_block(token, about[0] if about else _heading_class(walker.headings), lead[1] if lead else None)
            walker.mark_kernel_package(before)
            lead = None
    refs = _listed_with_request_fields(walker.refs, walker.leads)
    refs = _other_programs_listings(refs, walker.lines, walker.facts.foreign_flags)
    if shift:
        refs = [replace(r, col=r.col + shift.get(r.line, 0)) if r.col >= 0 else r for r in refs]
    refs.sort(key=lambda r: (r.line, r.col))
    return refs
