"""Plain data passed between extraction, resolution, suggestion and reporting."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Reference kinds.
PATH = "path"
SYMBOL = "symbol"
FLAG = "flag"
ENV = "env"
METRIC = "metric"  # a Prometheus metric the server exports (`vllm:num_requests_running`)

# Resolution statuses.
OK = "ok"
BROKEN = "broken"
NOT_CHECKABLE = "not-checkable"
# The file is there but a `#L` anchor or `:12` suffix no longer points at what the text
# cites: the suggestion carries the new lines.
WARNING = "warning"

AMBIGUOUS = "ambiguous"
# `Reference.field_of` of a key of `extra_body`: the OpenAI-compatible server's request classes.
REQUEST = "request"
FRAMEWORKS = ("vllm", "sglang")

# Suggestions at or above this confidence are applied by `--fix`.
HIGH_CONFIDENCE = 0.8


@dataclass(frozen=True, slots=True)
class Reference:
    """One citation found in the manuscript.

    `text` is exactly as written (what `--fix` replaces, at `line`/`col`), save Markdown's
    backslash escapes outside code font, which `escaped` keeps (`eplb\\_manager.py`);
    `target` is the normalised thing to resolve (`Scheduler.schedule()` ->
    `Scheduler.schedule`, `vllm/x.py:12` -> `vllm/x.py`).
    """

    file: str
    line: int  # 1-based
    col: int  # 0-based offset of `text` (or `escaped`) in the source line; -1 when unknown
    text: str
    kind: str
    target: str
    framework: str  # "vllm" | "sglang" | "ambiguous"
    framework_reason: str
    origin: str  # "inline" | "fence" | "link"
    command: str | None = None  # e.g. "vllm serve" for a flag inside a shell command
    line_range: tuple[int, int] | None = None  # `#L10-L20` anchor, or `path:12`
    commit: str | None = None  # commit/tag a GitHub link names
    link_symbol: str | None = None  # symbol named by a link's text, checked against its anchor
    repo_layout: bool = False  # written as a repository path (`python/sglang/...`)
    # `hash_block_tokens` in code font may be a function or just a variable name:
    # reported only when a pin defines it (or, across an upgrade, when the old pin did).
    tentative: bool = False
    # The class a bare name belongs to, from the text that introduces it: a list after
    # "`Req` has these fields:" gives its items' names the owner `Req`.
    owner: str | None = None
    owner_strict: bool = False  # the text says these are the owner's fields ("`Req` has these fields:")
    # The text lists the owner's interface ("**Executor 接口**："): where the pin has that class, a
    # same-named definition elsewhere is not the one listed.
    owner_interface: bool = False
    # The owner is the class the section's heading names (`##### \`Req\`（\`schedule_batch.py\`）`
    # over a field table or `self.x = ...` lines): judged on it where the pin has it, else not at all.
    owner_section: bool = False
    # In a Python snippet: the snippet's own top-level class or function the name sits in.
    # A snippet that mirrors the project's code (`def add_request` of `LLMEngine`) is checked;
    # the author's own code (`class PriorityQueue`) is not a citation.
    scope: str | None = None
    # Named by a `class`/`def` of the document's own snippets: a reference only when the
    # project defines it too (the snippet mirrors real code), else the author's invention.
    doc_defined: bool = False
    bare_file: bool = False  # `scheduler.py` written without folders: looked up by file name
    # A flag written with no command, in a section that names scripts by file (`compare-json-results.py`
    # over a table of its options): those scripts, where the flag may be theirs (`check._scripts_flags`).
    section_scripts: tuple[str, ...] = ()
    # The one path the same document writes that bare file name under (`tests/.../x.py`): the
    # file meant, where the pin holds no file of the name (a repository script, a gone module).
    written_at: str | None = None
    # A relative link to a page of the docs, from a document whose folder is unknown: looked up
    # under the pin's `docs/` by its trailing path (`links.py`).
    docs_page: bool = False
    # Names of the code a `#L` link's sentence cites before it: the anchored lines should still
    # spell one of them (`links.py`).
    anchor_names: tuple[str, ...] = ()
    # The folder a directory tree or a file table writes a bare name under (`placement.py`): the
    # target is then that folder's entry, not any file of that name.
    under: str | None = None
    # The paragraph cites files only a repository holds (`csrc/x.cu`, `setup.py`), or its section
    # is about the build: a name there that a wheel lacks may live in those files.
    repo_context: bool = False
    # Its section says it is about sgl-kernel, SGLang's kernel package (`kernel_package.py`): a
    # name the wheel lacks there is that package's.
    kernel_package: bool = False
    # A heading above says the section is about the repository's examples or benchmarks ("# LMCache
    # Examples"): a bare script name there is a file of those folders, which no wheel holds.
    scripts_section: bool = False
    diagram: bool = False  # an item of a tree diagram drawn in a text block (a file's structure)
    in_error: bool = False  # a class a quoted Python error names (`'X' object has no attribute`)
    # A bare word of CJK prose shaped like code (`通过 _validate_token_prompt 验证`) that nothing
    # else in the document vouches for: judged only where a pin defines it.
    quiet: bool = False
    # A code-shaped word of English prose outside code font (`_run_workers`, `CacheEngine`): judged
    # only where a past release of the document's project defined it (`lineage.py`, `--past`);
    # without a lineage it is not a reference.
    past: bool = False
    # With `past`, in a snippet: the kinds of past definition that vouch for the name (`lineage.py`
    # kinds): a `def`'s name or a called name is a function's (or a class's, when called bare), never
    # a module's. Empty: any kind.
    past_kinds: tuple[str, ...] = ()
    # With `past`: written as a string literal (`op_name="moe_forward_shared"`), which names
    # something else where the pin's sources still write that string whole (a registry's key).
    literal: bool = False
    # A loose `self.x` of a snippet's lines outside any class or function: the first names after
    # `self.` of all such lines of the snippet, which may say whose `self` it is (one class alone
    # has one of them, and most of them: `self._request_dispatcher` is `Scheduler`'s).
    self_siblings: tuple[str, ...] = ()
    # Evidence that a name the projects never spell is another program's: the document's title
    # names that program (`# Codex`), or the name links to its pages. Said in the finding's note.
    subject: str | None = None
    # A method a snippet's class defines (`class Scheduler:` ... `def get_next_batch_to_run`): the
    # class's `file:line:name`. Judged only when the snippet mirrors the project's class (most of
    # its methods exist there); a toy class of the same name is the author's own.
    mirror: str | None = None
    # A method quoted on its own (`def event_loop_normal(self):`): the name of that method, for
    # the method itself and for the `self.x()` it calls, checked on the project's class that has it.
    fragment_of: str | None = None
    # The file, by its name, the text says quoted code comes from (`# model_runner.py` right above a
    # method, `**关键代码** (`engine.py`):` before the block, its first line's comment): the quoted
    # method or class is the pin's one in a file of that name, where the pin has one there.
    quoted_file: str | None = None
    # Quoted code's attribute or keyword (`batch.launch_done` in a quoted method, `x=` passed to
    # the project's class): judged by spelling alone. A name the pin's sources never spell is
    # stale; one they spell says nothing (its owner's type is unknown).
    spelled: bool = False
    # For a keyword: the project's callable it is passed to, which must resolve at the pin.
    callee: str | None = None
    # A path in a snippet's comment (`# pkg/models/my_model.py`): the first class or function the
    # snippet defines. A missing file in an existing folder, above code the pin does not have, is
    # the file the reader is shown how to write, not a citation.
    writes: str | None = None
    # A table cell's column (`file:line:column`): a name no pin spells, in a column whose other
    # names are none of them the project's, is a row of another program's table (its settings).
    column: str | None = None
    # A name in a field's place (`fields.py`): a key of `extra_body` (`"request"`: the server's
    # request classes), a keyword of the project's callable, a parameter of a copied method
    # (`LLM.__init__`): judged against what that place takes at the pin.
    field_of: str | None = None
    # For a key of a request body sent to a server over HTTP: the route it goes to
    # (`/v1/chat/completions`), whose handler's request class takes it (`fields.route_classes`).
    endpoint: str | None = None
    # A snippet's class or method whose lead paragraph says where in the project it lives
    # (`copies.located`: `**File**: \`vllm/core/scheduler.py\``): the project path written there.
    # Such a copy is the project's class whatever the block's vote (`check._mirrors`).
    located: str | None = None
    # `output_processor.process_outputs` where the object's class is known only from a copied
    # class's `self.output_processor = SequenceGroupOutputProcessor(...)`: that attribute
    # (`LLMEngine.output_processor`). Where the pin's class still has it, the pin's object is
    # meant (judged by the member's name, `resolve.through_instance`), not the copy's stale class.
    held_by: str | None = None
    # A name called bare in a copy that leaves out `self` (`copies.bare_calls`): the copied class's
    # member, unless the pin has a module-level function of that name (then no clear verdict).
    bare_call: bool = False
    # A key of the JSON a `--*-config` flag is given (`--speculative-config '{"method": ...}'`):
    # judged as a field of the config class the flag's destination is named after.
    config_flag: str | None = None
    # A type a snippet's signature declares (`def __init__(self, tokenizer: AnyTokenizer)` of a
    # class `ExampleParser(ToolParser)`): the places it annotates, `Class.method:param` (`return`
    # for the return type), the snippet's class first, then its bases. A gone type's new home is
    # what the project's same method declares there now.
    annotates: tuple[str, ...] = ()
    # A snippet variable's attribute (`req.fill_ids`) where the snippet declares the variable's class
    # (`def f(self, req: Req)`, `x: Req = ...`; `receivers.py`): that class's short name. The target
    # is `Req.fill_ids`, judged against the pin's classes of that name only (`check._receiver_member`).
    receiver: str | None = None
    # A member of an object the document never binds (`future_map.resolve_future` in the prose):
    # where no pin knows the member, judged by a past release that defined it (`check._undefined`).
    free_receiver: bool = False
    # An object a snippet never binds, named like the project's instances (`server_args.tp_size`,
    # `self.scheduler_config.x`; `named_objects.py`): the object's name. Judged as a member of the
    # pin's class of exactly that name (`ServerArgs`), and not at all where there is none.
    named_object: str | None = None
    # Cited by that rule alone: no finding where no pin has the class.
    only_named: bool = False
    # An object named by one word (`state`) whose class of that name (`State`) holds none of the
    # members the document gives its objects of that name: not judged as that class's member
    # (`check._held_one_word_objects`).
    one_word_unheld: bool = False
    # A snippet's `class X(Base)`: for `Base`, the class the copy derives from it (`X`). Where
    # `Base` is gone and the pin's `X` has one base, that base is its home (`copied_bases.py`).
    base_of: str | None = None
    # A flag's value as written (`--kv-cache-dtype fp8`): where the pin's parser lists the flag's
    # choices, a value outside them is broken (`resolve._resolve_flag`).
    flag_value: str | None = None
    # `text` as the document writes it, where Markdown's backslash escapes made the two differ
    # (`eplb\\_manager.py` in prose renders `eplb_manager.py`): what `--fix` finds at `col`.
    escaped: str | None = None
    # The paragraph's Markdown, for a replacement the text names itself ("use `X` instead").
    paragraph: str = field(default="", compare=False, repr=False)
    # Lower-cased words of the whole document (one set shared by its references): picks,
    # among renamed candidates, the one in the text's own terms (`Decode...` in a text on decoding).
    context: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def sentence(self, ends: re.Pattern[str]) -> tuple[str, int] | None:
        """The sentence of `paragraph` that quotes this reference in code font (bounded by the
        matches of `ends`: each rule says what ends its sentences), and the reference's offset
        in it; None when the paragraph does not quote it."""
        at = self.paragraph.find(f"`{self.text}`")
        if at < 0:
            return None
        stops = [m.end() for m in ends.finditer(self.paragraph)]
        start = max((e for e in stops if e <= at), default=0)
        end = min((e for e in stops if e > at), default=len(self.paragraph))
        return self.paragraph[start:end], at - start


@dataclass(frozen=True, slots=True)
class Suggestion:
    replacement: str  # text that would replace `Reference.text`
    confidence: float  # 0..1
    reason: str
    location: str | None = None  # path:line of what the replacement points at


@dataclass(slots=True)
class Finding:
    """A reference resolved against one pin (or against none, when none applies)."""

    ref: Reference
    pin: str | None
    status: str
    resolved_at: str | None = None
    note: str = ""
    suggestions: list[Suggestion] = field(default_factory=list)
    framework: str | None = None  # decided framework when the text left it ambiguous
    previous_status: str | None = None  # in `--from/--to` mode: status at the old pin
    past: str | None = None  # with `--past`: the past definition that vouches for the name (`PastName.evidence`)

    @property
    def best(self) -> Suggestion | None:
        return max(self.suggestions, key=lambda s: s.confidence, default=None)

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "file": self.ref.file,
            "line": self.ref.line,
            "col": self.ref.col,
            "text": self.ref.text,
            "escaped": self.ref.escaped,
            "kind": self.ref.kind,
            "framework": self.framework or self.ref.framework,
            "framework_reason": self.ref.framework_reason,
            "ambiguous": self.ref.framework == AMBIGUOUS,
            "pin": self.pin,
            "status": self.status,
            "resolved_at": self.resolved_at,
            "suggestion": best.replacement if best else None,
            "confidence": round(best.confidence, 2) if best else None,
            "note": self.note,
            "previous_status": self.previous_status,
            "suggestions": [
                {
                    "replacement": s.replacement,
                    "confidence": round(s.confidence, 2),
                    "reason": s.reason,
                    "location": s.location,
                }
                for s in sorted(self.suggestions, key=lambda s: -s.confidence)
            ],
        }
