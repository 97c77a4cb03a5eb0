"""Broken findings on names the pin itself says are another package's (issue 12 §2).

A name that resolves nowhere is broken unless there is positive evidence that it is not a
reference to the project. This stage takes that evidence from the pin and from Python, never
from guesses about the name's shape:

- the pin's sources import the name from a package it depends on (`from cache_dit import
  ForwardPattern` anywhere in the pin makes `ForwardPattern.Pattern_0` cache-dit's): a package
  that is no module of the pin's own, or one its wheel's METADATA requires (`flashinfer` for
  `Requires-Dist: flashinfer_python`). Names from the standard library do not count (`Sequence`,
  `Queue` are also words the projects name their own classes with);
- the pin's sources, which never define the name, use it as a member of such a package's module
  or of a value that module makes (`xgr.GrammarMatcher(...)` after `import xgrammar as xgr`;
  `self.matcher.accept_token(...)` where `matcher: xgr.GrammarMatcher`), and the document names
  that package (elsewhere the name may be the project's own gone one: V0's `Sequence`);
- the sentence lists the name after a colon, under a subject the pin imports from such a
  package ("`VllmEngineServicer` wraps `AsyncLLM` with 6 RPCs: `Generate`, ...");
- a `typing` name (`Sequence`) in a passage that speaks of typing.

(A dotted name rooted at a dependency, `flashinfer.X`, `asyncio.Queue`, is already no citation:
`classify` leaves it alone.)

Each rule turns a broken finding into not-checkable with the reason (the report keeps it). A
name an older pin of the project defined is a removed one, whatever a dependency calls it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from analyzer.refs.classify import FOR_PROJECT_RE, OTHER_SYSTEMS_RE, PROJECT_RE
from analyzer.refs.dependencies import (
    CONTAINER_METHODS,
    FORMAT,
    STDLIB_MODULES,
    TYPING_NAMES,
    Dependencies,
    load_or_collect,
    stdlib_classes,
    stdlib_methods,
)
from analyzer.refs.models import BROKEN, FLAG, NOT_CHECKABLE, SYMBOL, Finding, Reference
from analyzer.refs.pinview import PinView
from analyzer.refs.resolve import find_symbol
from analyzer.refs.suggest import History

_LEADING_NAME_RE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_TYPING_RE = re.compile(r"\btyping\b|type hints?|annotat", re.IGNORECASE)


def dependencies(pin: PinView) -> Dependencies | None:
    """The pin's dependencies, read once from its tree (cached beside its words)."""
    if "dependencies" not in pin.memo:
        root = pin.repo_tree or pin.tree
        found = None
        if root and pin.words_path:
            words = Path(pin.words_path)
            cache = words.parent.parent / "deps" / f"{words.name.rsplit('.w', 1)[0]}.d{FORMAT}.json"
            # The release tree's root holds the package and its dist-info; `tree` may be the package's parent.
            found = load_or_collect(cache, Path(root), set(pin.packages))
        pin.memo["dependencies"] = found
    result: Dependencies | None = pin.memo["dependencies"]
    return result


# Files Python imports: sources, stubs and compiled extensions (`_C.abi3.so`).
_MODULE_SUFFIXES = (".py", ".pyi", ".so", ".pyd")


def _module_paths(pin: PinView) -> frozenset[str]:
    """Every dotted run of folders and file stems in the pin's Python paths (`mooncake`,
    `disaggregation.mooncake.conn`, `runner.pytest_runner`): the modules a script that puts a
    folder of the pin on its path could import as its own. A folder of C++ headers
    (`kernels/jit/include/sgl_kernel/`) is no module: `sgl_kernel` stays the dependency's."""
    if "module paths" not in pin.memo:
        runs: set[str] = set()
        for path in (*pin.files, *pin.outside_files):
            if not path.endswith(_MODULE_SUFFIXES):
                continue
            parts = [p.split(".", 1)[0] for p in path.split("/")]
            for i in range(len(parts)):
                for j in range(i + 1, len(parts) + 1):
                    runs.add(".".join(parts[i:j]))
        pin.memo["module paths"] = frozenset(runs)
    result: frozenset[str] = pin.memo["module paths"]
    return result


def _dependency_module(module: str, pin: PinView, deps: Dependencies) -> bool:
    """A module of a package the pin depends on: its METADATA requires the package (`flashinfer`
    for `flashinfer_python`), or the pin holds no module of that dotted name (`mooncake.store`
    is not the pin's `srt/disaggregation/mooncake/` folder, which has no `store`)."""
    root = module.split(".", 1)[0]
    if root not in deps.roots or root in STDLIB_MODULES:
        return False
    low = root.lower()
    # (`pyzmq` provides `zmq`, `pyyaml` `yaml`.)
    return any(d in {low, "py" + low} or d.startswith(low + "_") for d in deps.declared) or module not in _module_paths(pin)


def not_project(findings: list[Finding], pins: Sequence[PinView], histories: dict[str, History] | None = None) -> list[Finding]:
    by_pin = {p.pin: p for p in pins}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if f.status != BROKEN or pin is None:
            continue
        history = (histories or {}).get(pin.pin)
        if f.ref.kind == FLAG:
            note = _another_programs_flag(f) or _prefixed_passthrough(f, pin)
        elif f.ref.kind == SYMBOL:
            note = (
                _evidence(f, pin, history.old if history is not None else None, f.past is not None)
                or _standard_library(f, pin)
                or _standard_method(f, pin)
                or _model_family_config(f, pin)
            )
        else:
            continue
        if note:
            f.status, f.note, f.suggestions = NOT_CHECKABLE, note, []
    return findings


# typing's names no project would call a class of its own (unlike `Sequence`, V0 vLLM's).
_TYPING_FORMS = frozenset(
    {
        "Any", "Annotated", "AsyncGenerator", "AsyncIterable", "AsyncIterator", "Awaitable", "Callable", "ClassVar",
        "Concatenate", "Coroutine", "DefaultDict", "Dict", "Final", "FrozenSet", "Generator", "Generic", "Hashable",
        "Iterable", "Iterator", "List", "Literal", "LiteralString", "Mapping", "MutableMapping", "MutableSequence",
        "MutableSet", "Never", "NoReturn", "Optional", "ParamSpec", "Self", "Set", "Tuple", "Type", "TypeAlias",
        "TypeGuard", "TypeVar", "TypeVarTuple", "Union", "Unpack",
    }
)


def _standard_library(f: Finding, pin: PinView) -> str | None:
    """`status_code: HTTPStatus` in a copied function: a class the pin's sources import from the
    standard library (`from http import HTTPStatus`) and never define, that no past release of the
    project defined either (`f.past`: V0's `Sequence` was vLLM's own). `typing`'s names, which the
    projects reuse for classes of their own, keep the rule on passages about typing."""
    # (`HTTPStatus.SERVICE_UNAVAILABLE`: a member of such a class is Python's too.)
    name = f.ref.target.split(".", 1)[0]
    if f.past is None and f.ref.origin == "fence" and f.ref.target == name and name in _TYPING_FORMS and not _defines(pin, name):
        # `mapping: List[Tuple[Type, Callable]]` in a snippet that leaves out its imports.
        return f"`{name}` is Python's (`typing.{name}`), and {pin.pin} never defines it"
    if f.past is not None or f.ref.target.count(".") > 1 or not name[:1].isupper() or name in TYPING_NAMES or _defines(pin, name):
        return None
    deps = dependencies(pin)
    source = deps.imported.get(name) if deps is not None else None
    if source is None and f.ref.origin == "fence" and "." not in f.ref.target and (module := stdlib_classes().get(name)) is not None:
        # `self.write_queue = PriorityQueue()` in an old copy whose import the snippet leaves out,
        # where the pin no longer imports it: Python's all the same. (Not in prose, where a word
        # such as `Pipe` or `Server` may be the author's name for a gone part of the project.)
        return f"`{name}` is Python's (`{module}.{name}`), and {pin.pin} never defines it"
    if source is None or source.split(".", 1)[0] not in STDLIB_MODULES:
        return None
    return f"{pin.pin}'s sources import `{name}` from `{source}`, the standard library, and never define it: the name is Python's"


def _standard_method(f: Finding, pin: PinView) -> str | None:
    """`move_to_end()`, `run_in_executor(self._executor, ...)` written bare: a method of a class
    of Python's own (`OrderedDict`, the asyncio event loop), where neither the pin nor a past
    release of the project defines anything of that name."""
    name = f.ref.target
    if f.past is not None:
        return None
    holder, _, method = name.rpartition(".")
    if holder and method in CONTAINER_METHODS and find_symbol(holder, pin)[0] and f.ref.text.lstrip("`").startswith(holder.split(".", 1)[0]):
        # `ModelRegistry.models.update(...)`: the attribute exists, and what it holds (a dict)
        # has the method.
        return f"`{holder}` is {pin.pin}'s; `{method}` is a method of the built-in container it holds"
    if holder or not name.islower() or _defines(pin, name):
        return None
    owner = stdlib_methods().get(name)
    return f"`{name}` is a method of Python's `{owner}`, and {pin.pin} never defines it" if owner else None


_FAMILY_CONFIG_RE = re.compile(r"([A-Z][A-Za-z0-9]*?)Config")
# What Hugging Face's transformers names a family's models beside its `<Family>Config`.
_FAMILY_MODELS = ("ForCausalLM", "ForConditionalGeneration", "Model")


def _model_family_config(f: Finding, pin: PinView) -> str | None:
    """`GlmMoeDsaConfig.__init__` where the pin has `GlmMoeDsaForCausalLM` and never spells
    `GlmMoeDsaConfig`: transformers' configuration class of that model family (each family's is
    `<Family>Config`), which the project's model reads and does not define. (A config the pin
    imports is settled by `_evidence`; one a past release of the project defined is a removed one.)"""
    root = f.ref.target.split(".", 1)[0]
    m = _FAMILY_CONFIG_RE.fullmatch(root)
    if f.past is not None or m is None or _defines(pin, root) or pin.mentions(root) is not False:
        return None
    model = next((m.group(1) + kind for kind in _FAMILY_MODELS if _defines(pin, m.group(1) + kind)), None)
    if model is None:
        return None
    return f"`{root}` is the configuration class Hugging Face's transformers gives the `{m.group(1)}` models ({pin.pin} defines `{model}`, never `{root}`)"


def _defines(view: PinView | None, name: str) -> bool:
    return view is not None and bool(view.find_symbol(name))


def _evidence(f: Finding, pin: PinView, old: PinView | None, past: bool = False) -> str | None:
    ref = f.ref
    m = _LEADING_NAME_RE.match(ref.text.strip().lstrip("@"))
    if m is None:
        return None
    parts = m.group(0).split(".")
    inherited = _inherited_from_dependency(ref.target, pin)
    if inherited is not None:
        return inherited
    owner = ref.target.split(".", 1)[0]
    if "." in ref.target and owner != parts[0]:
        # `@app.post(...)` below the snippet's `app = FastAPI()`: the member is looked up on the
        # object's class (`FastAPI.post`), so the class is what may be a dependency's.
        return _evidence_for(ref, owner, [owner], pin, old, past)
    return _evidence_for(ref, parts[0], parts, pin, old, past)


_MAX_BASES = 4


def _inherited_from_dependency(target: str, pin: PinView) -> str | None:
    """`CarDescription.model_json_schema()`: a member missing from a class of the pin whose bases
    reach a class the pin imports from a dependency (`BaseModel` from pydantic), and which the
    pin's sources use but never define (they call it): inherited from the dependency, not a gone
    name. A member the sources never spell, or one the project defines on other classes
    (`forward_impl` on an `nn.Module` subclass), stays judged."""
    owner, _, member = target.rpartition(".")
    if not owner or member.startswith("__") or pin.mentions(member) is not True or pin.find_symbol(member):
        return None  # never used, or defined by the project itself (`forward_impl`): its own name
    deps = dependencies(pin)
    if deps is None:
        return None
    frontier = [e for e in pin.find_symbol(owner) if e.kind == "class"]
    seen: set[str] = set()
    for _ in range(_MAX_BASES):
        following = []
        for cls in frontier:
            for base in cls.bases:
                name = base.split("[", 1)[0].rsplit(".", 1)[-1]
                if name in seen:
                    continue
                seen.add(name)
                own = [e for e in pin.find_symbol(name) if e.kind == "class"]
                source = deps.imported.get(name)
                if not own and source is not None and _dependency_module(source, pin, deps):
                    short = owner.rsplit(".", 1)[-1]
                    return f"`{short}` derives from `{name}`, which {pin.pin} imports from `{source}`: `{member}` (which its sources use) is inherited from there"
                following.extend(own)
        frontier = following
    return None


def _evidence_for(ref: Reference, first: str, parts: list[str], pin: PinView, old: PinView | None, past: bool = False) -> str | None:
    if first in pin.packages or first in {"vllm", "sglang"} or _defines(pin, first) or _defines(old, first):
        return None  # the project's module, or a name the project defines (or did): its own
    if len(parts) == 1 and first in TYPING_NAMES and _TYPING_RE.search(ref.paragraph or ""):
        return f"`{first}` is a name of Python's `typing`, in a passage on typing"
    deps = dependencies(pin)
    if deps is None:
        return None
    source = deps.imported.get(first)
    if source is not None and _dependency_module(source, pin, deps):
        return f"{pin.pin}'s sources import `{first}` from `{source}`, a dependency: the name is {source.split('.', 1)[0]}'s"
    source = deps.reached.get(first)
    if source is not None and _dependency_module(source, pin, deps) and (_speaks_of(ref, source.split(".", 1)[0]) or _framework(source, past)):
        return f"{pin.pin}'s sources define no `{first}` and use it as a member of `{source}` or of a value it makes, a dependency: the name is {source.split('.', 1)[0]}'s"
    listed = _listed_under_dependency(ref, first, pin, deps)
    if listed is not None:
        return listed
    owner = _possessor(ref, pin)
    if owner is not None and not past:
        return f"its sentence gives it to {owner} (\"{owner}'s\"), another program, and {pin.pin} defines no `{owner}`"
    named = _dependency_named(ref.paragraph or "", pin, deps)
    if named is not None:
        return f"its paragraph speaks of `{named}`, a package {pin.pin} depends on, and never of {pin.project}: the name is {named}'s"
    return None


_SPAN_RE = re.compile(r"`([^`]+)`")
# "matches LeRobot's `NormalizerProcessorStep`": a capitalised word with a lower-case letter, then
# its possessive, right before the name.
_POSSESSIVE_RE = re.compile(r"(?<![\w`.])([A-Z][\w+-]*[a-z][\w+-]*)['’]s\s*$")


def _possessor(ref: Reference, pin: PinView) -> str | None:
    """The program a possessive right before the name gives it to (`LeRobot's` in held-out 23's
    pi0 page): not the project (`vLLM's`), not a release (`V0's`, no lower-case letter), not a
    class of the pin (`Scheduler's`)."""
    at = (ref.paragraph or "").find(f"`{ref.text}`")
    if at < 0:
        return None
    m = _POSSESSIVE_RE.search(ref.paragraph[max(0, at - 80) : at])
    if m is None or PROJECT_RE.fullmatch(m.group(1)) or _defines(pin, m.group(1)):
        return None
    return m.group(1)


# The framework both projects are written in: every text about them is about its tensors too.
_FRAMEWORK = "torch"


def _framework(source: str, past: bool) -> bool:
    """A name the pin reaches only through torch (`repeat_interleave(...)`, `zeros([B, V])`, a
    tensor's method written bare) is torch's even in a text that never says "torch", unless a past
    release of the project defined it (then it is the project's removed name)."""
    return source.split(".", 1)[0] == _FRAMEWORK and not past


def _speaks_of(ref: Reference, package: str) -> bool:
    """Whether the document names the package (`XGrammar` for `xgrammar`, every word of
    `smg_grpc_servicer`): a name the pin reaches through a dependency is that dependency's only
    in a text about it; elsewhere it may be the project's own gone name (V0's `Sequence`, which
    the pin reaches only through `tokenizers`)."""
    words = [w for w in package.lower().split("_") if w]
    return bool(words) and all(w in ref.context for w in words)


# What may stand between a list's items: commas, `and`/`or`, a word in parentheses ("(streaming)").
_LIST_GLUE_RE = re.compile(r"(?:[\s,]|\band\b|\bor\b|\([^()`]*\))*")


def _listed_under_dependency(ref: Reference, first: str, pin: PinView, deps: Dependencies) -> str | None:
    """"`VllmEngineServicer` wraps `AsyncLLM` with 6 RPCs: `Generate`, `Embed`, ...": a name the
    pin does not define, in the list after a colon of a sentence whose subject (its first name in
    code font) is one the pin imports from a dependency, is that dependency's member."""
    found = ref.sentence(_SENTENCE_END_RE)
    if found is None:
        return None
    sentence, at = found
    spans = list(_SPAN_RE.finditer(sentence))
    colon = sentence.rfind(":", 0, at)
    if not spans or colon < spans[0].end() or not _LIST_GLUE_RE.fullmatch(_SPAN_RE.sub(" ", sentence[colon + 1 : at])):
        return None
    head = _LEADING_NAME_RE.match(spans[0].group(1).strip())
    subject = head.group(0).split(".", 1)[0] if head else ""
    source = deps.imported.get(subject)
    if not subject or source is None or _defines(pin, subject) or not _dependency_module(source, pin, deps):
        return None
    return f"listed after `{subject}`, which {pin.pin} imports from `{source}`, a dependency; it defines no `{first}`: {source.split('.', 1)[0]}'s member"


_PROSE_NAME_RE = re.compile(r"(?<![\w./-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?![\w/-])")


def _dependency_named(paragraph: str, pin: PinView, deps: Dependencies) -> str | None:
    """A package the pin's METADATA requires (`Requires-Dist: cache_dit`), named in a paragraph
    that never names the project: "cache-dit's `LTX2PatchFunctor`", a path into it
    (`src/cache_dit/caching/...`), `diffusers` in code font. A name written in prose must carry
    its separator (`cache-dit`), so that a requirement spelled like an English word (`requests`,
    `build`) is not read in ordinary sentences; in code font any requirement counts."""
    if not paragraph or PROJECT_RE.search(paragraph):
        return None
    own = {p.lower() for p in pin.packages} | {pin.project}
    declared = {d for d in deps.declared if d not in own}
    found = [(m.start(), w) for m in _SPAN_RE.finditer(paragraph) for w in _packages_in_span(m.group(1).strip().strip("\"'"))]
    prose = _SPAN_RE.sub(lambda m: " " * len(m.group(0)), paragraph)
    found += [(m.start(), m.group(0)) for m in _PROSE_NAME_RE.finditer(prose)]
    return next((w for _, w in sorted(found) if _normalised(w) in declared), None)


_IMPORT_SPAN_RE = re.compile(r"(?:from|import)\s+([A-Za-z_][\w-]*)")


def _packages_in_span(span: str) -> list[str]:
    """What a code-font span names as a package: the whole span (`diffusers`), a folder of a path
    (`src/cache_dit/caching/forward_pattern.py`), the module of an import (`from diffusers import
    ...`). A dotted name (`torch.float16`) uses a package without speaking of it."""
    if re.fullmatch(r"[A-Za-z][\w-]*", span):
        return [span]
    if "/" in span:
        return span.split("/")[:-1]
    return _IMPORT_SPAN_RE.findall(span)


def _normalised(word: str) -> str:
    return re.sub(r"[-_.]+", "_", word).lower()


# Programs a serving text starts beside the projects, besides those `classify` knows: a build tool,
# a copier, a node-graph UI, a client binary named after its system (`mooncake_client`).
_PROGRAMS_RE = re.compile(
    r"(?<![\w-])(ComfyUI|nvcc|rsync|docker|podman|kubectl|pip|git|ssh|curl|gcc|clang|cmake|"
    r"(?:mooncake|flexkv|lmcache|nixl)_\w+)(?![\w-])",
    re.IGNORECASE,
)
# "started with", "run it with": the flag is handed to the program named just before.
_HANDED_RE = re.compile(r"\b(?:with|without|using|use|passing|pass|add|adding)\b[^.;]*$", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.;!?](?=\s|$)|[。；！？]")
# "the `--cap-add=...` flag to the Docker command", "`--gpus` in your docker run line": the
# program a sentence hands a flag to, named after it as the command that takes it (no code span
# in between; "set `--load-format` to tensorizer" names a value, not a receiver).
_RECEIVER_RE = re.compile(
    r"[^`]{0,40}?\b(?:to|for|of|into|in)\s+(?:the|a|an|your)\s+(?P<program>[\w.-]+)(?:\s+[\w-]+)?\s+"
    r"(?:command|commands|CLI|call|invocation|line|container|containers|options|arguments|flags)\b",
    re.IGNORECASE,
)

# "See `--shm-size` for docker": the program named right after the flag, with no article.
_BARE_RECEIVER_RE = re.compile(r"\s*(?:for|to)\s+(?P<program>[\w.-]+)\b", re.IGNORECASE)


def _prefixed_passthrough(f: Finding, pin: PinView) -> str | None:
    """`--sglang-moe-dense-tp-size 1` in a note on an RL framework that launches SGLang: a flag of
    that framework's own parser, named with the project's prefix, that passes the pin's
    `--moe-dense-tp-size` through; not the pin's flag, spelled wrong."""
    flag = f.ref.target.split(".", 1)[0].split("=", 1)[0]
    prefix = f"--{pin.project}-"
    if not flag.startswith(prefix) or not pin.flags:
        return None
    inner = "--" + flag.removeprefix(prefix)
    if not any(inner == e.flag or inner in e.aliases for e in pin.flags):
        return None
    return f"`{flag}` is `{inner}`, {pin.pin}'s flag, under another program's `--{pin.project}-` prefix: that program's option"


def _another_programs_flag(f: Finding) -> str | None:
    """"Start ComfyUI with `--disable-cuda-malloc`", "a Mooncake master started with
    `--enable_multi_tenants=true`": a flag written alone, in a sentence that hands it to another
    program named before it (and names neither project in between, other than as what the run is
    for: "`nsys profile ...`, with a few recommended flags for vLLM"), or after it as the command
    that takes it ("add the `--cap-add=...` flag to the Docker command"), is that program's option."""
    ref = f.ref
    if ref.origin != "inline" or ref.command or not ref.paragraph:
        return None
    at = ref.paragraph.find(f"`{ref.text}")
    if at < 0:
        return None
    start = max((m.end() for m in _SENTENCE_END_RE.finditer(ref.paragraph, 0, at)), default=0)
    before = ref.paragraph[start:at]
    named = [m for rx in (OTHER_SYSTEMS_RE, _PROGRAMS_RE) for m in rx.finditer(before)]
    if named:
        last = max(named, key=lambda m: m.start())
        between = FOR_PROJECT_RE.sub(" ", before[last.end():])
        if not PROJECT_RE.search(between) and _HANDED_RE.search(between):
            return f"an option handed to {last.group(1)}, another program, in its sentence; not {f.pin}'s flag"
    # The receiver named after the flag: "add the `--cap-add=...` flag to the Docker command".
    close = ref.paragraph.find("`", at + 1)
    end = _SENTENCE_END_RE.search(ref.paragraph, close + 1) if close >= 0 else None
    after = ref.paragraph[close + 1 : end.start() if end else len(ref.paragraph)] if close >= 0 else ""
    received = _RECEIVER_RE.match(after) or _BARE_RECEIVER_RE.match(after)
    if received is None or PROJECT_RE.search(received.group(0)):
        return None
    program = received.group("program")
    if not any(rx.fullmatch(program) for rx in (OTHER_SYSTEMS_RE, _PROGRAMS_RE)):
        return None
    return f"an option handed to {program}, another program, in its sentence; not {f.pin}'s flag"
