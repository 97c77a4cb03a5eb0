"""Run the checker over documents: extract, pick pins by framework, resolve, suggest."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from analyzer.index.extract import module_name
from analyzer.refs.classify import OTHER_SYSTEMS_RE, PROJECT_RE
from analyzer.refs.commandindex import subcommands
from analyzer.refs.copied_bases import homes_from_copied_bases
from analyzer.refs.docproject import settle_by_document, weak_mentions
from analyzer.refs.document import CLASSNAME_RE
from analyzer.refs.extract import alternatives, extract_references, markdown_parser
from analyzer.refs.field_homes import field_homes
from analyzer.refs.fields import accepts, judge_field
from analyzer.refs.folder_moves import moved_within_the_documents_folder
from analyzer.refs.formula import formula
from analyzer.refs.generated import field_type, foreign_type
from analyzer.refs.gone_fragments import gone_class_of_fragment
from analyzer.refs.gone_module_imports import imported_from_gone_modules
from analyzer.refs.held_parts import member_of_a_held_part
from analyzer.refs.kernel_package import kernel_package_names
from analyzer.refs.lineage import Lineage, PastName, past_names, version_key
from analyzer.refs.lineage import short_name as lineage_short_name
from analyzer.refs.mirrored_envs import mirrored_envs
from analyzer.refs.models import (
    AMBIGUOUS,
    BROKEN,
    ENV,
    FLAG,
    NOT_CHECKABLE,
    OK,
    PATH,
    SYMBOL,
    WARNING,
    Finding,
    Reference,
    Suggestion,
)
from analyzer.refs.named_objects import single_word_object
from analyzer.refs.namesakes import snake
from analyzer.refs.neighbour_class import in_the_passage_s_class
from analyzer.refs.neighbour_homes import neighbour_homes
from analyzer.refs.new_modules import readers_modules, written_modules
from analyzer.refs.not_project import not_project
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.placement import place
from analyzer.refs.qualify import qualifier
from analyzer.refs.renamed_classes import renamed_classes
from analyzer.refs.resolve import (
    classes_named_like,
    engine_keyword_value,
    find_symbol,
    held_otherwise,
    is_unshipped_test,
    metric_ending,
    open_members,
    resolve,
    resolve_member,
    resolve_qualified,
    through_instance,
)
from analyzer.refs.said_gone import said_gone
from analyzer.refs.said_required import said_required
from analyzer.refs.shell import SERVER_COMMANDS
from analyzer.refs.sibling_classes import renamed_siblings
from analyzer.refs.subclass_members import on_a_subclass
from analyzer.refs.successors import Successors, deprecated_home, successor_home, written_owner
from analyzer.refs.suggest import (
    History,
    case_variant,
    member_of_a_quoted_class,
    privacy_changed,
    reordered_on_the_named_class,
    spelled_like,
    style_changed,
    suggest,
    versioned_home,
)
from analyzer.refs.unjudged import unjudged

IgnoreFn = Callable[[Reference], bool]


def extract_all(documents: Iterable[tuple[str, str]], ignore: IgnoreFn | None = None) -> list[Reference]:
    """References of every (display name, Markdown text) document, ignore list applied."""
    parser = markdown_parser()
    refs: list[Reference] = []
    for name, text in documents:
        refs.extend(r for r in place(text, extract_references(name, text, parser)) if ignore is None or not ignore(r))
    return refs


def _with_suggestions(finding: Finding, pin: PinView, history: History | None) -> Finding:
    if finding.status in {BROKEN, WARNING}:
        finding.suggestions = suggest(finding.ref, pin, history)
    return finding


def check_reference(
    ref: Reference,
    pins: Sequence[PinView],
    histories: dict[str, History] | None = None,
    lineages: Mapping[str, Lineage] | None = None,
    successors: Mapping[str, Successors] | None = None,
) -> list[Finding]:
    """The reference's findings at each pin of its project. With `lineages` (past releases,
    `lineage.py`), a code-shaped name that a past release of the project defined is a reference
    even where nothing else vouches for it, and one the pin no longer has is broken, with the
    past definition as the evidence and the checker's suggestions for that name as its homes;
    with `successors` (`successors.py`), where upstream's own diffs took that name wins over a
    weaker guess."""
    if _project_class_in_a_copy(ref, pins, lineages or {}):
        ref = replace(ref, scope=None)
    vouched = _past_definitions(ref, pins, lineages or {})
    if ref.past and not vouched:
        # A word of English prose nothing vouches for is the author's, unless it is a class of
        # the pin miswritten in another case (`MultiProcExecutor` in a heading): a reader who
        # searches the sources for it finds nothing, and the class it means is beyond doubt.
        return _miscased_class(ref, pins)
    if vouched and ref.framework == AMBIGUOUS and len(vouched) == 1 and not any(find_symbol(ref.target, pin)[0] for pin in pins):
        # A past release says whose name it was, unless a pin of either project defines it now
        # (`can_schedule` in an SGLang note: SGLang's today, an old vLLM scheduler's once).
        ref = replace(ref, framework=next(iter(vouched)))
    if ref.spelled and ref.quoted_file and ref.fragment_of is None and ref.scope is None and (foreign := _foreign_lines(ref, pins, lineages or {})):
        return foreign
    findings = _check_reference(ref, pins, histories, vouched=bool(vouched), lineages=lineages or {})
    if not findings and (ref.named_object or ref.free_receiver) and lineages:
        findings = _gone_namesake(ref, [p for p in pins if p.project == ref.framework], lineages) or []
    by_pin = {p.pin: p for p in pins}
    if successors and ref.kind in {FLAG, SYMBOL}:
        findings = [_deprecated_for(f, by_pin, successors) for f in findings]
    if vouched:
        findings = [_past_evidence(f, vouched, by_pin, histories or {}, successors or {}) for f in findings]
        if ref.past:
            findings = [f for f in findings if f.status in {OK, BROKEN}]
        if ref.literal:
            # `op_name="moe_forward_shared"`: the gone function's name is still the key the pin's
            # sources register something under (the custom op), which the string names.
            findings = [f for f in findings if not (f.status == BROKEN and (pin := by_pin.get(f.pin or "")) is not None and pin.quotes(ref.target))]
    return findings


def _miscased_class(ref: Reference, pins: Sequence[PinView]) -> list[Finding]:
    """Broken at each pin of the reference's project where its name, of two words or more, is
    defined nowhere and differs only in case from one class's name (`suggest.case_variant`)."""
    if "." in ref.target or not _CLASS_WORDS_RE.fullmatch(ref.target):
        return []
    out = []
    for pin in pins:
        if ref.framework not in {AMBIGUOUS, pin.project} or pin.mentions(ref.target):
            continue
        variant = case_variant(ref.target, pin)
        if variant:
            note = f"`{ref.target}` is not defined in {pin.pin}; `{variant[0].replacement}` is, spelled in another case"
            framework = pin.project if ref.framework == AMBIGUOUS else None
            out.append(Finding(ref, pin.pin, BROKEN, note=note, suggestions=variant, framework=framework))
    if ref.framework == AMBIGUOUS and len({f.pin for f in out}) != 1:
        return []  # the text named no project: only one that has the class says whose it is
    return out


def _project_class_in_a_copy(ref: Reference, pins: Sequence[PinView], lineages: Mapping[str, Lineage]) -> bool:
    """`SequenceStatus.RUNNING` inside a quoted `def _preempt(self, ...)` no pin defines (V0's
    scheduler): the method's own names are the author's or gone with it, but a member of a class the
    project has, or had in a past release, is the project's whoever's code names it (as in a copy
    the text places, `extract._placed`). Not the snippet's own classes (`doc_defined`)."""
    if ref.scope is None or ref.kind != SYMBOL or ref.doc_defined or ref.text.startswith("self."):
        return False
    if ref.callee and ref.field_of == ref.callee:
        # `Request(tokens=...)` in the author's own `def trace_allocation():`: the class's keyword.
        root, dot = ref.callee.rsplit(".", 1)[-1], "."
    elif ref.field_of or ref.spelled or ref.text.strip("`").split(".", 1)[0] != ref.target.split(".", 1)[0]:
        return False  # (`obj.n` read as a `GenerateReqInput` by a later `obj = GenerateReqInput(...)`: the rebinding may not hold there)
    else:
        root, dot, _ = ref.target.partition(".")
    if not dot or not CLASSNAME_RE.fullmatch(root) or root.isupper():
        return False
    projects = {p.project for p in pins if ref.framework in {AMBIGUOUS, p.project}}
    # (A top-level alias too: `Device`, a `Literal` of device names now, once V0's enum.)
    return any(e.kind == "class" or _module_level(e, p) for p in pins if p.project in projects for e in p.find_symbol(root)) or any(
        n.kind == "class" for project in projects for n in past_names(root, project, lineages)
    )


def _reordered_on_named_classes(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    """`self.scheduler_config.chunked_prefill_enabled` broken with no home: the member of the class
    the object is named after (`SchedulerConfig`) whose words are the name's in another order."""
    by_pin = {p.pin: p for p in pins}
    for f in findings:
        if f.status == BROKEN and not f.suggestions and f.ref.kind == SYMBOL and (pin := by_pin.get(f.pin or "")) is not None:
            home = reordered_on_the_named_class(f.ref, f.ref.target.rsplit(".", 1)[-1], pin)
            f.suggestions = [home] if home is not None else []
    return findings


def _module_level(entry: SymbolEntry, pin: PinView) -> bool:
    return any(m.kind == "module" for m in pin.table.named(entry.parent))


def _past_definitions(ref: Reference, pins: Sequence[PinView], lineages: Mapping[str, Lineage]) -> dict[str, list[PastName]]:
    """Project -> where its past releases defined the reference's name, for the projects the
    reference may be checked against (for a file named in prose, the past modules kept in a file
    of that name); {} when no lineage is given or the name is not code-shaped."""
    projects = {p.project for p in pins if ref.framework in {AMBIGUOUS, p.project}}
    if lineages and ref.kind == PATH and ref.past:
        return _past_files(ref.target, projects, lineages)  # `nixl_connector.py` in prose
    if not lineages or ref.kind != SYMBOL:
        return {}
    # `self._run_workers(...)` in a snippet's class: the member is the name; the snippet's class
    # (`LLMEngine`) may not be the one that defined it.
    name = ref.target.rsplit(".", 1)[-1] if ref.scope and ref.text.startswith("self.") else ref.target
    found = {project: past_names(name, project, lineages) for project in sorted(projects)}
    if name != ref.target and ref.scope:
        # ... unless the snippet's class is the author's own: no pin and no past release has a
        # class of that name (`CustomEnginePublisher` in a page on Dynamo), so its `self.block_size`
        # is the author's attribute, whichever class of the project once had one.
        owner = ref.scope.rsplit(".", 1)[-1]
        if not any(e.kind == "class" for p in pins for e in p.find_symbol(owner)) and not any(
            n.kind == "class" for project in projects for n in past_names(owner, project, lineages)
        ):
            return {}
    if name != ref.target and ref.scope and not any(e.kind == "class" for p in pins if p.project in projects for e in p.find_symbol(ref.scope.rsplit(".", 1)[-1])):
        # `self.model_runner` in a copy of a class no pin has (`GPUWorker`): the class is what
        # is gone, and a past module `...gpu.model_runner` is no evidence about its members.
        found = {project: [n for n in names if n.kind != "module"] for project, names in found.items()}
    if ref.past_kinds:
        # `def swap_out(...)`: a past function vouches for it, not a past module of that name.
        found = {project: [n for n in names if n.kind in ref.past_kinds] for project, names in found.items()}
    if (ref.past or ref.quiet) and _CLASS_WORDS_RE.fullmatch(ref.target):
        # Out of code font, `MetaData` names a kind the pin has several classes of (`...MetaData`):
        # a term of the prose, unless the past class gave its module its name (V0's `ModelRunner`
        # in `model_runner.py`): a principal class, which a reader of the old code means.
        found = {
            project: [n for n in names if _eponymous(n)] if any(_kinds_of(ref.target, p) for p in pins if p.project == project) else names
            for project, names in found.items()
        }
    return {project: names for project, names in found.items() if names}


_STAND_IN_KINDS = 2  # classes of the pin named `<something><Word>` that make `Word` a category


def _kinds_of(word: str, pin: PinView) -> bool:
    return len(set(pin.defined_names().ending_with(word.lower()))) >= _STAND_IN_KINDS


def _eponymous(name: PastName) -> bool:
    """A past class kept in a module named after it (`vllm/worker/model_runner.py` `ModelRunner`)."""
    return name.kind == "class" and name.path.rsplit("/", 1)[-1] == f"{snake(name.full.rsplit('.', 1)[-1])}.py"


def _foreign_lines(ref: Reference, pins: Sequence[PinView], lineages: Mapping[str, Lineage]) -> list[Finding]:
    """`self.gpus_per_replica_node = ...` under `# replica.py:119-129`, a file no pin of the
    project has and, with past releases given, none of them had: another program's lines (a
    framework that drives the project), whose members say nothing about the project's classes."""
    file = (ref.quoted_file or "").rsplit("/", 1)[-1]
    own = [p for p in pins if p.project == ref.framework]
    if not own or not lineages.get(ref.framework) or any(p.files_named(file) for p in own) or _past_files(file, [ref.framework], lineages):
        return []
    note = f"lines of `{file}`, a file no release of {ref.framework} has had (another program's code); not judged"
    return [Finding(ref, p.pin, NOT_CHECKABLE, note=note) for p in own]


def _past_files(path: str, projects: Iterable[str], lineages: Mapping[str, Lineage]) -> dict[str, list[PastName]]:
    """Project -> its past releases' modules kept in a file of that name (`nixl_connector.py`)."""
    base = path.rsplit("/", 1)[-1]
    return {
        project: names
        for project in sorted(projects)
        if (names := [n for n in past_names(base.removesuffix(".py"), project, lineages) if n.kind == "module" and n.path.endswith(f"/{base}")])
    }


def _past_evidence(
    f: Finding, vouched: dict[str, list[PastName]], by_pin: dict[str, PinView], histories: dict[str, History], successors: Mapping[str, Successors]
) -> Finding:
    """A finding the pins do not resolve whose name a past release defined: broken, with that
    definition as the evidence and, where the checker found no home, the homes it suggests for the
    past qualified name (a class's member gone from the class keeps none)."""
    pin = by_pin.get(f.pin or "")
    past = vouched.get(pin.project, []) if pin is not None else []
    if pin is None or not past or f.status == OK:
        return f
    # (`RayDistributedExecutor.execute_model` is unjudged for its class, `_another_programs_class`.)
    undefined = {f.ref.target, f.ref.target.split(".", 1)[0]}
    if f.status == NOT_CHECKABLE and not any(f.note.startswith(f"`{name}` is defined nowhere in") for name in undefined):
        return f  # unjudged for a reason of its own (another program's name, a wheel's missing sources)
    if f.status == NOT_CHECKABLE and _SPELLED_ONLY in f.note and all(p.kind == "module" for p in past):
        # `deepseek_v3` in a table of reasoning parsers: a past model module's name that the pin's
        # sources still spell (a registry key), which the text more likely means than the module.
        return f
    evidence = past[0].evidence
    f.note = f"{f.note}; {evidence}" if f.status == BROKEN and f.note else f"`{f.ref.target}` is defined nowhere in {f.pin}; {evidence}"
    f.status, f.past = BROKEN, evidence
    if not f.suggestions:
        f.suggestions = suggest(replace(f.ref, target=lineage_short_name(past[0])), pin, histories.get(pin.pin))
    if past[0].kind == "class":
        f = _upstream_home(f, next(iter(versioned_home(past[0].full.rsplit(".", 1)[-1], past[0].path, pin)), None))
    return _upstream_home(f, successor_home(past, successors.get(pin.project, {}), pin, written_owner(f.ref.text)))


def _deprecated_for(f: Finding, by_pin: dict[str, PinView], successors: Mapping[str, Successors]) -> Finding:
    """A broken flag or field whose replacement a past release's deprecation message names."""
    pin = by_pin.get(f.pin or "")
    if pin is None or f.status != BROKEN:
        return f
    home = deprecated_home(f.ref.target, written_owner(f.ref.text), f.ref.kind == FLAG, successors.get(pin.project, {}), pin)
    return _upstream_home(f, home)


def _upstream_home(f: Finding, home: Suggestion | None) -> Finding:
    """What upstream's own code says became of the name wins over a weaker guess; the note says
    which release and which evidence."""
    if home is not None and (not f.suggestions or f.suggestions[0].confidence < home.confidence):
        f.note = f"{f.note}; {home.reason}" if f.note else home.reason
        f.suggestions = [home, *(s for s in f.suggestions if s.replacement != home.replacement)][:5]
    return f


def _check_reference(
    ref: Reference, pins: Sequence[PinView], histories: dict[str, History] | None = None, *, vouched: bool = False, lineages: Mapping[str, Lineage] | None = None
) -> list[Finding]:
    histories = histories or {}
    if ref.framework == AMBIGUOUS:
        candidates = list(pins)
    else:
        candidates = [p for p in pins if p.project == ref.framework]
    if not candidates:
        return [Finding(ref, None, NOT_CHECKABLE, note=f"no pin for {ref.framework}", framework=ref.framework)]
    if ref.kind == SYMBOL and ref.command is not None and ref.target == ref.command:
        return [f for pin in candidates if (f := _subcommand(ref, pin)) is not None]
    if ref.quiet and not vouched and not any(find_symbol(ref.target, pin)[0] for pin in candidates):
        return []
    if ref.held_by and any(find_symbol(ref.held_by, pin)[0] for pin in candidates):
        return check_reference(_pin_s_object(ref), pins, histories)
    if ref.bare_call and any(_module_function(ref.text, pin) for pin in candidates):
        return []  # `init_cublas()` without `self`: the class's member or the module's function
    if ref.receiver:
        return _receiver_findings(ref, candidates, histories)
    if ref.named_object or ref.free_receiver:
        named = _named_object_findings(ref, candidates, histories)
        if named is not None or ref.only_named:
            return named or []
    if ref.kind == ENV and ref.doc_defined:
        # `export VLLM_IMAGE=...` read back as `"$VLLM_IMAGE"`: the document's own variable, unless
        # a pin reads it (`SGLANG_HICACHE_MOONCAKE_CONFIG_PATH`, set for SGLang and used by the script too).
        found = [resolve(ref, pin) for pin in candidates]
        if any(f.status == OK for f in found):
            return found
        note = f"the document's own shell variable: it assigns `{ref.target}` and reads it back as `${ref.target}`"
        return [Finding(ref, f.pin, NOT_CHECKABLE, note=note) for f in found]
    if ref.doc_defined or ref.scope:
        # Named by the document's own snippet: a citation only if the snippet mirrors the
        # project's code (the project defines the name too); else the author's invention.
        probe = ref.target.split(".", 1)[0] if ref.doc_defined else ref.scope
        if not vouched and not any(find_symbol(probe or "", pin)[0] for pin in candidates):
            return []
    if ref.kind == PATH and ref.diagram and not ref.under:
        return []  # a tree's folder entry whose folder the tree does not say: a name, not a path
    if ref.config_flag:
        return [f for pin in candidates if (f := _config_key(ref, pin)) is not None]
    if ref.field_of and ref.field_of == ref.fragment_of and ref.callee is None:
        # (A keyword the quoted method passes to a call has the callee's place, not the method's.)
        return [f for pin in candidates if (f := _fragment_parameter(ref, pin)) is not None]
    if ref.field_of:
        if ref.framework == AMBIGUOUS:
            return []  # whose field it is depends on a server the text does not name
        # Not the closest name anywhere in the project (not a field's new name): only a member
        # of an object the place now holds (`field_homes`).
        found = [f for pin in candidates if (f := _field(ref, pin)) is not None]
        by_name = {p.pin: p for p in candidates}
        for f in found:
            if f.status == BROKEN:
                f.suggestions = field_homes(ref, by_name[f.pin or ""])
        return found
    if ref.spelled:
        if ref.framework == AMBIGUOUS and not (ref.callee or ref.fragment_of or ref.scope):
            return []  # a loose `self.x` in a text that names no project: whose sources spell it is moot
        return [f for pin in candidates if (f := _spelled(ref, pin)) is not None]
    if ref.fragment_of:
        findings = [f for pin in candidates if (f := _fragment_member(ref, pin)) is not None]
        if findings or not vouched:
            return [_with_suggestions(f, next(p for p in candidates if p.pin == f.pin), (histories or {}).get(f.pin or "")) for f in findings]
        # A quoted method the pins know nowhere, that a past release defined: judged as its name.
    if ref.owner:
        findings = [resolve_member(ref, pin) for pin in candidates]
    else:
        findings = [resolve(ref, pin) for pin in candidates]
        qual = qualifier(ref.text, ref.paragraph) if ref.kind == SYMBOL and ref.origin == "inline" and "." not in ref.target else None
        if qual is not None:
            by = {p.pin: p for p in candidates}
            defined = any(f.status == OK for f in findings)
            findings = [resolve_qualified(f, qual, by[f.pin or ""]) if f.status == OK else f for f in findings]
            if defined and ref.tentative and not any(f.status == OK for f in findings):
                return findings  # defined, though not where the text places it: not a name defined nowhere
    if ref.writes:
        by_name = {p.pin: p for p in candidates}
        findings = [f for f in findings if not _new_file(f, by_name[f.pin or ""], lineages or {})]
    if ref.tentative and not ref.owner and not any(f.status == OK for f in findings):
        if ref.origin == "inline" and ref.target.isupper():
            # A word in capitals no pin knows: kept aside, judged by its siblings (see below).
            for f in findings:
                f.status, f.note = NOT_CHECKABLE, _CAPS_PENDING
            return findings
        return _undefined(ref, findings, by_pin={p.pin: p for p in candidates}, vouched=vouched)
    if ref.kind == SYMBOL and ref.origin == "inline" and findings and all(f.status == BROKEN for f in findings):
        findings = _another_programs_class(ref, findings, {p.pin: p for p in candidates})
        findings = _beside_repository_files(ref, findings, {p.pin: p for p in candidates})
    if ref.framework == AMBIGUOUS:
        # The text named no single project: the pins that know the reference decide.
        oks = [f for f in findings if f.status == OK]
        if oks:
            projects = {p.project for p in candidates if p.pin in {f.pin for f in oks}}
            for f in oks:
                f.framework = next(p.project for p in candidates if p.pin == f.pin)
                where = " and ".join(sorted(projects))
                f.note = "; ".join(x for x in (f.note, f"framework ambiguous in the text ({ref.framework_reason}); resolves in {where}") if x)
            return oks
        for f in findings:
            f.framework = next(p.project for p in candidates if p.pin == f.pin)
            f.note = "; ".join(x for x in (f.note, f"framework ambiguous in the text ({ref.framework_reason})") if x)
        unsure = [f for f in findings if f.status == NOT_CHECKABLE]
        if unsure and len(unsure) < len(findings):
            return unsure  # one project cannot tell: not called broken on the other's word alone
    by_pin = {p.pin: p for p in candidates}
    out = [_with_suggestions(f, by_pin[f.pin or ""], histories.get(f.pin or "")) for f in findings]
    if ref.framework == AMBIGUOUS and len(out) > 1 and all(f.status == BROKEN for f in out):
        # Defined in neither project: one broken reference, reported once, against the pin
        # with the most confident suggestion.
        best = max(out, key=lambda f: f.best.confidence if f.best else -1.0)
        best.note = "; ".join(x for x in (best.note, "defined in neither project") if x)
        return [_to_its_subject(best)]
    return out


def _to_its_subject(f: Finding) -> Finding:
    """A name defined in neither project, in a text that says whose it is (the document is about
    Dynamo, its list is another program's): that program's, not checkable, rather than broken."""
    if f.ref.subject:
        f.status, f.note, f.suggestions = NOT_CHECKABLE, f"{f.note}; {f.ref.subject}", []
    return f


def _listed(names: Iterable[str]) -> str:
    """`A`, `B`, `C`: the first three distinct names, for a note."""
    return ", ".join(f"`{n}`" for n in list(dict.fromkeys(names))[:3])


def _receiver_findings(ref: Reference, candidates: Sequence[PinView], histories: dict[str, History]) -> list[Finding]:
    """A declared variable's attribute (`Reference.receiver`) at each pin that has the class. In a
    text that names no project, only the pins that know the class judge it, and a member one of
    them defines is not called broken on the other's word."""
    found = [(f, pin) for pin in candidates if (f := _receiver_member(ref, pin)) is not None]
    if ref.framework == AMBIGUOUS:
        if any(f.status == OK for f, _ in found):
            found = [(f, pin) for f, pin in found if f.status == OK]
        for f, pin in found:
            f.framework = pin.project
    return [f if f.suggestions else _with_suggestions(f, pin, histories.get(pin.pin)) for f, pin in found]


def _subcommand(ref: Reference, pin: PinView) -> Finding | None:
    """`vllm infer` run in a shell block: a subcommand the pin's CLI dispatches (its console
    script's, the server's, a group such as `vllm bench`), or broken, with the closest one it has
    (`vllm benchmark` -> `vllm bench`). None for the other project's command."""
    command = ref.command or ""
    program, _, word = command.partition(" ")
    if program != pin.project:
        return None
    known = set(subcommands(pin)) | {c for c, owner in SERVER_COMMANDS.items() if owner == pin.project and " " in c}
    known |= {" ".join(c.split()[:2]) for c in known if c.count(" ") >= 2}
    if command in known:
        return Finding(ref, pin.pin, OK, note=f"a subcommand of `{program}` at {pin.pin}")
    if len(known) < 2:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"the subcommands of `{program}` are not indexed for {pin.pin}")
    words = sorted({c.split()[1] for c in known})
    word = word.split(" ", 1)[0]
    f = Finding(ref, pin.pin, BROKEN, note=f"`{program}` has no subcommand `{word}` at {pin.pin} (it has {', '.join(words)})")
    close = difflib.get_close_matches(word, words, n=1, cutoff=0.6)
    f.suggestions = [Suggestion(f"{program} {close[0]}", 0.6, "the subcommand spelled most like it")] if close else []
    return f


def _named_object_findings(ref: Reference, candidates: Sequence[PinView], histories: dict[str, History]) -> list[Finding] | None:
    """`server_args.tp_size` on an object nothing binds, named like the project's instances
    (`named_objects.py`; in the prose, `Reference.free_receiver`): a member of the class of
    exactly that name (`ServerArgs`), judged as a declared variable's is. None where no pin has
    such a class: the name says nothing then."""
    written = ref.text.strip("`").split("(", 1)[0].strip()
    obj = ref.named_object or written.split(".", 1)[0]
    one_word = "_" not in obj.strip("_")
    if one_word and (ref.one_word_unheld or not single_word_object(obj)):
        return None
    if not ref.named_object and written.count(".") != 1:
        return None
    member = written.rsplit(".", 1)[-1]
    if one_word and any(pin.quotes(written) for pin in candidates):
        return None  # `scheduler.recv_requests`, a string the sources write whole (an NVTX range's name)
    cls = next((c for pin in candidates for c in classes_named_like(obj, pin)), None)
    if cls is None:
        return None
    by_pin = {p.pin: p for p in candidates}
    findings = _receiver_findings(replace(ref, receiver=cls, target=f"{cls}.{member}"), candidates, histories)
    for f in findings:
        if f.status == BROKEN and (why := held_otherwise(obj, member, cls, by_pin[f.pin or ""])) is not None:
            f.status, f.note, f.suggestions = OK, why, []
    return findings


def _gone_namesake(ref: Reference, candidates: Sequence[PinView], lineages: Mapping[str, Lineage]) -> list[Finding] | None:
    """`input_metadata.forward_mode` in old code, where no pin has a class named like the object
    and a past release had one (`InputMetadata`, renamed `ForwardBatch` since), and the pin's
    code never reads that member on an object of that name: the member of a class the pin no
    longer has. None otherwise."""
    written = ref.text.strip("`").split("(", 1)[0].strip()
    obj = ref.named_object or written.split(".", 1)[0]
    words = [w for w in obj.split("_") if w]
    if len(words) < 2 or "." not in written or not candidates:
        return None
    camel = "".join(w[:1].upper() + w[1:] for w in words)
    gone = {n.full: n for n in past_names(camel, candidates[0].project, lineages) if n.kind == "class"}
    if not gone:
        return None
    past = max(gone.values(), key=lambda n: version_key(n.release))
    member = written.rsplit(".", 1)[-1]
    if any(pin.reads_member(obj, member) is not False for pin in candidates):
        return None  # the pin's code still reads `model_runner.add_lora`: the name outlived the class
    note = f"`{obj}` is named after `{camel}`, a class the pin no longer has ({past.evidence}): `{member}` is a member of a gone class"
    return [Finding(ref, pin.pin, BROKEN, note=note) for pin in candidates]


def _receiver_member(ref: Reference, pin: PinView) -> Finding | None:
    """`req.fill_ids` where the snippet declares `req: Req`: judged against the pin's classes named
    `Req`, as a quoted method's `self.x` is (`_not_the_quoted_class_s`). Ok when one of them or a
    base defines the member (a field, a method, a property, a `self.x` the index knows), a dataclass
    or namedtuple generates it, or `self.x` is written in its body or a base's; not checkable when
    its members are built at import time; broken when every class of the name lacks it. None where
    the pin has no class of the name: the annotation's own reference carries that."""
    assert ref.receiver is not None
    member = ref.target.rsplit(".", 1)[-1]
    classes = [e for e in pin.find_symbol(ref.receiver) if e.kind == "class"]
    if not classes:
        return None
    for cls in classes:
        hits, how = find_symbol(f"{cls.full}.{member}", pin)
        if hits:
            return Finding(ref, pin.pin, OK, resolved_at=hits[0].location, note=how or f"a member of `{cls.last}`")
        if _writes_self_member(cls, member, pin):
            return Finding(ref, pin.pin, OK, resolved_at=cls.location, note=f"`self.{member}` is written in `{cls.last}` or a base")
    built = next((why for cls in classes if (why := open_members(cls.full, pin))), None)
    if built is not None:
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=built)
    names = _listed(c.last for c in classes)
    obj = ref.named_object
    if obj and ref.text.strip("`").startswith("self.") and pin.reads_member(obj, member):
        # `self.forward_metadata.decode_wrappers`: a quoted class's own field, whose name says less
        # than the pin's code, which has that member on a field of that name (FlashInfer's
        # `DecodeMetadata`, not the `ForwardMetadata` of another backend). Not a parameter's
        # (`forward_batch.token_to_kv_pool`, written onto a `ForwardBatch` by one worker, is gone
        # from the class the reader is shown).
        return Finding(ref, pin.pin, OK, note=f"{pin.pin}'s code reads `{obj}.{member}`, on an object named like it ({names} lacks it)")
    how = "is named after" if ref.named_object or ref.free_receiver else "is declared with"
    f = Finding(ref, pin.pin, BROKEN, note=f"`{member}` is not a member of {names} (the class `{ref.named_object or ref.text.split('.', 1)[0]}` {how}) in {pin.pin}, nor written as `self.{member}` in it or its bases")
    home = _through_a_field(classes, member, pin)
    f.suggestions = [home] if home is not None else []
    return f


def _through_a_field(classes: list[SymbolEntry], member: str, pin: PinView) -> Suggestion | None:
    """`Req.req_pool_idx` gone, where `Req.kv` is declared a `ReqKvInfo` that has `req_pool_idx`: the
    member moved into the object one field holds (`req.kv.req_pool_idx`). Only when exactly one field
    of the classes leads to it."""
    found: list[tuple[SymbolEntry, SymbolEntry, SymbolEntry]] = []
    for cls in classes:
        for field in (e for e in pin.symbols_under(cls.full) if e.kind == "attribute"):
            kind = field_type(field, pin)
            if kind is None or foreign_type(kind):
                continue
            for holder in [c for c in pin.find_symbol(kind.rsplit(".", 1)[-1]) if c.kind == "class"][:1]:
                hits, _ = find_symbol(f"{holder.full}.{member}", pin)
                if hits:
                    found.append((field, holder, hits[0]))
    if len({(h.full, f.last) for f, h, _ in found}) != 1:
        return None
    field, holder, hit = found[0]
    var = field.parent.rsplit(".", 1)[-1].lower()
    why = f"`{field.parent.rsplit('.', 1)[-1]}.{field.last}` holds a `{holder.last}`, which has `{member}`: `{var}.{field.last}.{member}`"
    return Suggestion(f"{holder.last}.{member}", 0.85, why, hit.location)


def _module_function(name: str, pin: PinView) -> bool:
    """Whether the pin defines a function `name` at a module's top level."""
    return any(e.kind == "function" and _module_level(e, pin) for e in pin.table.ending_with(name))


def _pin_s_object(ref: Reference) -> Reference:
    """`output_processor.process_outputs` where the pin's copied class still holds
    `output_processor` (`Reference.held_by`): the pin's object is meant, whose class the copy's
    stale constructor does not say; judged by the member's name and the classes named like the
    object (`resolve.through_instance`), as a method on an object the project names."""
    member = ref.text.split(".", 1)[1]
    return replace(ref, target=member, tentative=True, diagram=True, held_by=None, doc_defined=False)


_CAPS_PENDING = "a word in capitals no pin defines"
# A class name of two words or more (`P2pNcclConnector`), not a single capitalised word.
_CLASS_WORDS_RE = re.compile(r"_*(?=[A-Z][A-Za-z0-9]*[a-z])[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*")
# How a C++/CUDA name is written: a kernel, a launcher, a preprocessor macro, a template.
_NATIVE_NAME_RE = re.compile(r"(?:_kernels?|_launcher)$|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
# `x_t`, `h_0`, `W_q`: a formula's variable.
_MATH_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]?_[A-Za-z0-9]{1,2}$")


_FLAG_SPAN_RE = re.compile(r"`(--[A-Za-z0-9][\w-]*)")
_ENV_SPAN_RE = re.compile(r"`((?:VLLM|SGLANG|SGL)_[A-Z0-9_]+)(?:=[^`]*)?`")
# What introduces another program as a comparison, right before its name (a backtick allowed).
_COMPARED_RE = re.compile(
    r"(?:\b(?:like|unlike|similar(?:ly)? to|akin to|analogous to|as in|same as|compared (?:to|with)|modell?ed (?:on|after))|类似于?|如同|就像)\s*`?$",
    re.IGNORECASE,
)
_SENTENCE_END_RE = re.compile(r"[.;!?](?=\s|$)|[。；！？]")


# A dotted name quoted in code font (`ServerArgs.enable_trace`).
_QUOTED_MEMBER_RE = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?`")


def _other_system(ref: Reference, pin: PinView | None = None) -> str | None:
    """Another program the name belongs to, by the text's own evidence: the sentence speaks of
    it (and of vLLM or SGLang only farther from the name), the name is called after it
    (`mooncake_master`), or the whole document is about it (its title names it). With `pin`,
    the pin's own code the sentence quotes speaks of the project too ("OpenTelemetry traces:
    `ServerArgs.enable_trace` + `oltp_traces_endpoint`": the name sits beside a ServerArgs field)."""
    first = ref.target.split("_")
    for words in (first[:1], first[:2]):
        prefix = OTHER_SYSTEMS_RE.fullmatch("-".join(words))
        if prefix and len(first) > len(words):
            return f"named after {prefix.group(1)}, another program"
    if ref.subject:
        return ref.subject
    if ref.origin != "inline" or not ref.paragraph:
        return None
    quoted = ref.sentence(_SENTENCE_END_RE)
    if quoted is None:
        return None
    sentence, at = quoted
    # "..., just like `torch.distributed`": a comparison says the name is not that program's.
    others = [(abs(m.start() - at), m.group(1)) for m in OTHER_SYSTEMS_RE.finditer(sentence) if not _COMPARED_RE.search(sentence[: m.start()])]
    projects = [abs(m.start() - at) for m in PROJECT_RE.finditer(sentence)]
    if pin is not None:
        projects += [abs(m.start() - at) for m in _QUOTED_MEMBER_RE.finditer(sentence) if find_symbol(m.group(1), pin)[0]]
    if others and min(others)[0] < min(projects, default=len(sentence) + 1):
        return f"its sentence speaks of {min(others)[1]}, whose name it may be"
    return None


def _another_programs_class(ref: Reference, findings: list[Finding], by_pin: dict[str, PinView]) -> list[Finding]:
    """`MooncakeDistributedStore.setup()` in a sentence on Mooncake: a class no pin defines and
    whose name the sources never spell, where the text says whose it is (as for a bare name in
    `_undefined`), is that program's: not-checkable with the reason, not broken."""
    root = ref.target.split(".", 1)[0]
    if not _CLASS_WORDS_RE.fullmatch(root):
        return findings  # a function's name (`flashinfer_x()` may be the project's wrapper): as before
    other = _other_system(ref)
    if other is None:
        return findings
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is not None and pin.mentions(root) is False:
            f.status = NOT_CHECKABLE
            f.note = f"`{root}` is defined nowhere in {f.pin}; {other}"
    return findings


def _listed_value(ref: Reference) -> str | None:
    """`parallel`, `live_parallel`, and `irrelevance` in a paragraph that cites a flag, or `kunlun`,
    `demo_cuda` in one on an env var (`SGLANG_PLATFORM`): values the setting takes (its choices,
    a dataset's categories, example plugin names), not the project's names."""
    if ref.origin != "inline":
        return None
    setting = _FLAG_SPAN_RE.search(ref.paragraph) or _ENV_SPAN_RE.search(ref.paragraph)
    if setting is None:
        return None
    name = re.escape(ref.text)
    if re.search(rf"`[^`]+`\s*(?:,|,?\s+(?:and|or))\s*`{name}`|`{name}`\s*(?:,|,?\s+(?:and|or))\s*`[^`]+`", ref.paragraph):
        return f"listed with other values in a paragraph on `{setting.group(1)}`"
    return None


_BESIDE_REPOSITORY_FILES = "named beside repository files (native sources, the build)"


def _not_in_a_wheel(name: str, what: str, pin: str | None) -> str:
    return f"`{name}` is {what}; the wheel {pin} holds no such sources (a git pin does)"


def _beside_repository_files(ref: Reference, findings: list[Finding], by_pin: dict[str, PinView]) -> list[Finding]:
    """A name written among repository files (`kernels in `sgl-kernel/`:` over a list of kernels)
    that a wheel's sources never spell: the wheel cannot hold it, so not broken on its word."""
    if not ref.repo_context:
        return findings
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if f.status == BROKEN and pin is not None and pin.kind == "release" and pin.mentions(ref.target) is False:
            f.status, f.note, f.suggestions = NOT_CHECKABLE, _not_in_a_wheel(ref.target, _BESIDE_REPOSITORY_FILES, f.pin), []
    return findings


def _undefined(ref: Reference, findings: list[Finding], by_pin: dict[str, PinView], *, vouched: bool = False) -> list[Finding]:
    """A name no pin defines, written the way code is written (a bare `snake_case` name in code
    font, a call or a name in a diagram). A careful editor calls it broken when the project's
    sources never spell it at all; it stays unjudged (not-checkable, with the reason) when they
    use it without defining it (a keyword, a config key, a dependency's function) or when the
    pin cannot hold it (a kernel, a build helper, in a wheel). An object's member no pin knows
    (`future_map.resolve_future`) is judged only where a past release defined it (`vouched`)."""
    written = ref.text.split("(", 1)[0].split("=", 1)[0].strip()
    bare = ref.origin == "inline" and ref.kind == SYMBOL and (ref.target == written or ref.target in alternatives(written))
    member = vouched and ref.free_receiver and written.endswith(f".{ref.target}")
    bare = bare or member
    judged = ref.kind == SYMBOL and (bare or (ref.diagram and ref.framework != AMBIGUOUS))
    if not judged or _MATH_NAME_RE.match(ref.target):
        return []  # ordinary code, another program's flag, an object's member no pin knows, a formula
    # Only names shaped like code are judged: `snake_case`, a macro, a class a Python error names.
    # A capitalised term the prose also uses as a word (`ModelServing`) stays unjudged.
    # A class name counts too where its siblings vouch for it (`_mirrors`: a list of the
    # project's classes, a diagram of its calls).
    code_shaped = "_" in ref.target.strip("_") or ref.in_error or bool(ref.mirror and ref.diagram and _CLASS_WORDS_RE.fullmatch(ref.target))
    other = _other_system(ref) or _listed_value(ref) or (formula(ref.text) if ref.origin == "inline" else None)
    said = {f.pin: by_pin[f.pin].mentions(ref.target) if f.pin in by_pin else None for f in findings}
    if ref.framework == AMBIGUOUS and any(said.values()):
        said = dict.fromkeys(said, True)  # the text named no project, and one of them uses the name
    out: list[Finding] = []
    for f in findings:
        pin = by_pin.get(f.pin or "")
        mentioned = said[f.pin]
        native = _NATIVE_NAME_RE.search(ref.target) is not None or "<" in ref.text
        if mentioned is False and not code_shaped:
            mentioned = None  # judged as before: a term, or a removed name
        if mentioned is False and other and pin is not None and other.startswith("its sentence") and _other_system(ref, pin) is None:
            other_here = None  # the sentence quotes the pin's own code nearer to the name
        else:
            other_here = other
        if mentioned is False and other_here:
            f.status = NOT_CHECKABLE
            f.note = f"`{ref.target}` is defined nowhere in {f.pin}; {other_here}"
        elif mentioned is False and pin is not None and pin.kind == "release" and (native or (ref.repo_context and not ref.mirror)):
            # (A name its siblings vouch for, `mirror`, is in the package as they are.)
            f.status = NOT_CHECKABLE
            f.note = _not_in_a_wheel(ref.target, "a C++/CUDA name" if native else _BESIDE_REPOSITORY_FILES, f.pin)
        elif mentioned is False and pin is not None and is_unshipped_test(ref.target, pin):
            f.status = NOT_CHECKABLE
            f.note = _not_in_a_wheel(ref.target, "a test's name", f.pin)
        elif mentioned is False and pin is not None and (metric := metric_ending(ref.target, pin)) is not None:
            # A metrics page's short name: the sources spell the metric in full only.
            f.status = OK
            f.note = f"the end of the metric `{metric}`, which {f.pin}'s sources name in full"
        elif mentioned is False:
            f.status = BROKEN
            f.note = f"`{ref.target}` is neither defined nor used anywhere in {f.pin}'s sources: removed, or never there"
            # Only the one lead such a name has: a member of the class its sentence quotes.
            f.suggestions = [*member_of_a_quoted_class(ref, pin), *spelled_like(ref.target, pin), *privacy_changed(ref.target, pin), *style_changed(ref.target, pin)] if pin is not None else []
        elif not mentioned and pin is not None and (variant := case_variant(ref.target, pin)):
            # Not a term nor a removed name: the class is there, its name miswritten.
            f.status = BROKEN
            f.note = f"`{ref.target}` is not defined in {f.pin}; `{variant[0].replacement}` is, spelled in another case"
            f.suggestions = variant
        elif not mentioned and pin is not None and (longer := _one_longer_class(ref.target, pin)) is not None:
            # `BatchResultProcessor` where the pin's one class so ending is `SchedulerBatchResultProcessor`.
            f.status = BROKEN
            f.note = f"`{ref.target}` is not defined in {f.pin}; `{longer}` is, named with more words"
            f.suggestions = [Suggestion(longer, _LONGER_CLASS_CONFIDENCE, "the pin's one class whose name ends with these words")]
        elif not bare and not vouched:
            continue  # a name in a diagram the sources use: nothing to say
        elif not bare:
            # `Optional[ExecuteModelRequest]` in a copy of old code: the sources still spell it
            # (a comment, a string), but a past release defined it (`_past_evidence` judges).
            f.status = NOT_CHECKABLE
            f.note = f"`{ref.target}` is defined nowhere in {f.pin}: {_SPELLED_ONLY}"
        else:
            f.status = NOT_CHECKABLE
            how = f"{_SPELLED_ONLY} (a keyword, a config key, a dependency's name)" if mentioned else "a variable's name, or a removed one"
            f.note = f"`{ref.target}` is defined nowhere in {f.pin}: {how}"
        out.append(f)
    if ref.framework == AMBIGUOUS and len(out) > 1 and all(f.status == BROKEN for f in out):
        out[0].note += " (in neither project)"
        return [_to_its_subject(out[0])]  # one broken reference, reported once
    return out


_LONGER_CLASS_CONFIDENCE = 0.6
_LONGER_CLASS_WORDS = 3  # `ResultProcessor` (two words) may be any of several kinds; three say which


def _one_longer_class(name: str, pin: PinView) -> str | None:
    """The pin's one class whose name is `name` with more CamelCase words before it
    (`BatchResultProcessor` -> `SchedulerBatchResultProcessor`); None for none or several, or for
    a name of fewer than three words."""
    if not _CLASS_WORDS_RE.fullmatch(name) or len(snake(name).split("_")) < _LONGER_CLASS_WORDS:
        return None
    longer = {n for n in pin.defined_names().ending_with(name.lower()) if n.endswith(name) and n[: -len(name)][-1:].isalnum()}
    classes = [n for n in sorted(longer) if any(e.kind == "class" for e in pin.find_symbol(n))]
    return classes[0] if len(classes) == 1 else None


# A name the pin's sources spell without defining it (`_undefined`).
_SPELLED_ONLY = "used in the sources but defined nowhere"


# How far apart, in lines, names in capitals listed in items of their own are still siblings:
# items on consecutive lines (a paragraph apart, a blank line between, is another passage).
_SIBLING_LINES = 1


def _enum_siblings(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    """`WAITING`, `RUNNING` or `SWAPPED`: when the other names of the enumeration are members
    of one class, a name missing from that class is broken; alone, a word in capitals is prose."""
    by_pin = {p.pin: p for p in pins}
    classes: dict[tuple[str, str, str], set[str]] = {}  # (file, paragraph, pin) -> owner classes
    heads: dict[tuple[str, str, str], set[str]] = {}  # first words of those that are env vars (`MOONCAKE`)
    # (file, pin) -> (line, table column, owner classes)
    lines: dict[tuple[str, str], list[tuple[int, str | None, set[str]]]] = {}
    for f in findings:
        if f.status == OK and f.ref.origin == "inline" and f.ref.target.isupper() and f.pin in by_pin:
            owners = {e.parent for e in by_pin[f.pin].find_symbol(f.ref.target) if e.kind == "attribute"}
            key = (f.ref.file, f.ref.paragraph, f.pin)
            classes[key] = classes[key] & owners if key in classes else owners  # the class they all belong to
            lines.setdefault((f.ref.file, f.pin), []).append((f.ref.line, f.ref.column, owners))
            if f.ref.target in by_pin[f.pin].env_map:
                heads.setdefault(key, set()).add(f.ref.target.split("_", 1)[0])
    out = []
    for f in findings:
        if f.note != _CAPS_PENDING:
            out.append(f)
            continue
        key = (f.ref.file, f.ref.paragraph, f.pin or "")
        if key in classes:
            owners = classes[key]
        else:
            # Listed in items of their own (`1. 若状态是 WAITING_FOR_REMOTE_KVS ...`, `2. 若状态是
            # WAITING_FOR_FSM ...`): the names on the lines right next to it are its siblings.
            # In a table, the rows' cells of one column only (`MEAN` in a row's description is no
            # sibling of the next row's `API_KEY`).
            near = [o for at, column, o in lines.get((f.ref.file, f.pin or ""), []) if 0 < abs(at - f.ref.line) <= _SIBLING_LINES and column == f.ref.column]
            owners = set.intersection(*near) if near else set()
            # Members of an enumeration, a class (a module's constants, `TP_SIZE`, are no family).
            pin = by_pin.get(f.pin or "")
            owners = {o for o in owners if pin is not None and any(k.kind == "class" for k in pin.table.named(o))}
        # Listed env vars of the pin that all begin with one word (`MOONCAKE_MASTER`, `MOONCAKE_DEVICE`)
        # are a family; a name without that word (`MC_MS_AUTO_DISC`, `LOCAL_HOSTNAME`, `O_DIRECT`) is
        # another program's variable or constant, not a missing member of the pin's env registry.
        family = heads.get(key, set())
        outside = len(family) == 1 and "_" in f.ref.target and f.ref.target.split("_", 1)[0] not in family
        # A name the sources write as a string (`"FP8_PB_WO"` in a list of algorithms) is one of
        # the values the text lists, not a missing member: said nothing about.
        value = (pin := by_pin.get(f.pin or "")) is not None and f.ref.target in pin.values
        if len(owners) == 1 and f.ref.paragraph and not outside and not value:
            owner = next(iter(owners))
            f.status = BROKEN
            f.note = f"not a member of `{owner.rsplit('.', 1)[-1]}`, unlike the other names listed with it"
            out.append(f)
    return out


def check_references(
    refs: Iterable[Reference],
    pins: Sequence[PinView],
    histories: dict[str, History] | None = None,
    lineages: Mapping[str, Lineage] | None = None,
    successors: Mapping[str, Successors] | None = None,
) -> list[Finding]:
    """`lineages`: past releases of each project (`lineage.py`, `--past`), evidence that a name
    the pins no longer define was the project's; `successors`: where upstream moved such names
    between those releases (`successors.py`)."""
    refs = _held_one_word_objects(list(refs), pins, histories or {})
    checked = [(ref, check_reference(ref, pins, histories, lineages, successors)) for ref in refs]
    checked = settle_by_document(checked, lambda ref: check_reference(ref, pins, histories, lineages, successors))
    checked = weak_mentions(checked, lambda ref: check_reference(ref, pins, histories, lineages, successors))
    findings = [f for _, found in checked for f in found]
    findings = _numbered_series(_setting_rows(_table_columns(_same_name_in_class_context(_enum_siblings(_mirrors(findings, pins, lineages or {}), pins)))))
    findings = _objects_named_like_a_class(findings, pins, histories or {})
    findings = neighbour_homes(_file_of_the_named_symbol(findings, pins, histories or {}), pins)
    findings = in_the_passage_s_class(findings, pins, lambda r, p: suggest(r, p, (histories or {}).get(p.pin)))
    findings = not_project(unjudged(findings, pins, histories, lineages), pins, histories)
    findings = readers_modules(findings, written_modules(checked, {pkg for p in pins for pkg in p.packages}))
    findings = imported_from_gone_modules(_passed_through(findings), pins)
    findings = kernel_package_names(_scripts_flags(moved_within_the_documents_folder(findings, pins, lineages or {}), pins), pins)
    # Last: it reads the final verdicts (members of a gone class are settled by the passes above).
    keywords: dict[str, set[str]] = {}
    for ref, _ in checked:
        if ref.spelled and ref.callee:
            keywords.setdefault(ref.callee, set()).add(ref.target)
    findings = renamed_siblings(renamed_classes(said_required(said_gone(mirrored_envs(findings, pins))), pins), pins, keywords)
    findings = homes_from_copied_bases(findings, pins)
    findings = _reordered_on_named_classes(_members_of_a_gone_design(findings, pins, lineages or {}), pins)
    return _once(_said_by_the_typed_self(_chain_heads(_past_in_another_case(findings, pins, lineages or {}, successors or {}))))


def _scripts_flags(findings: list[Finding], pins: Sequence[PinView]) -> list[Finding]:
    """`--file`, `--xaxis` in a table under "The `compare-json-results.py` helps to compare ...":
    a flag written with no command, in a section that names scripts the package does not hold
    (the repository's helpers, the reader's), may be any of theirs; the pin's parsers cannot say,
    so it is not-checkable, not broken. A section that names a script the package holds says
    nothing (its options are judged as before)."""
    by_pin = {p.pin: p for p in pins}
    for f in findings:
        ref, pin = f.ref, by_pin.get(f.pin or "")
        if pin is None or f.status != BROKEN or ref.kind != FLAG or ref.command or not ref.section_scripts:
            continue
        if not any(pin.files_named(s) for s in ref.section_scripts):
            f.status, f.suggestions = NOT_CHECKABLE, []
            f.note += f"; its section is about {', '.join(ref.section_scripts[:2])}, which {pin.pin} does not hold: the flag may be that script's"
    return findings


def _said_by_the_typed_self(findings: list[Finding]) -> list[Finding]:
    """`def loop(self: Scheduler)` quoted on its own: its `self.recv_requests()` is judged once, as
    the typed receiver's member; the quoted method's own reading of the same call (`recv_requests`
    on the mixin that defines the method now) is not said again. (Both are read: the method's
    calls still vote on whether the snippet mirrors the project, `_mirrors`.)"""
    typed = {(f.ref.file, f.ref.line, f.pin, f.ref.text.removeprefix("self.")) for f in findings if f.ref.receiver and f.ref.text.startswith("self.")}
    return [f for f in findings if not (f.ref.fragment_of and (f.ref.file, f.ref.line, f.pin, f.ref.text.split("(", 1)[0]) in typed)]


def _chain_heads(findings: list[Finding]) -> list[Finding]:
    """`self.runner` broken where `self.runner.capture_num_tokens` on the same line is broken too:
    one breakage per use, reported on the chain as the line writes it in full (which says why the
    head is broken too, where its own note does not)."""
    chains: dict[tuple[str, int, str | None, str], list[Finding]] = {}
    for f in findings:
        if f.status == BROKEN and f.ref.text.count(".") >= 2:
            for n in range(1, f.ref.text.count(".")):
                chains.setdefault((f.ref.file, f.ref.line, f.pin, f.ref.text.rsplit(".", n)[0]), []).append(f)
    out = []
    for f in findings:
        longer = chains.get((f.ref.file, f.ref.line, f.pin, f.ref.text)) if f.status == BROKEN else None
        if not longer:
            out.append(f)
            continue
        for chain in longer:
            if f.note and f.note not in chain.note:
                chain.note = f"{chain.note}; {f.note}"
    return out


def _once(findings: list[Finding]) -> list[Finding]:
    """One finding per written name, place, pin and verdict: a pasted snippet read both as prose
    and as code (`outline`) names `SharedStorageConnector` once."""
    seen: set[tuple[str, int, int, str, str | None, str]] = set()
    out = []
    for f in findings:
        key = (f.ref.file, f.ref.line, f.ref.col, f.ref.text, f.pin, f.status)
        if f.ref.col < 0 or key not in seen:
            out.append(f)
        seen.add(key)
    return out


_CONFIDENT_HOME = 0.3  # a best home below this is a guess by spelling alone


# So many other gone names of one past class the document cites: it writes about that class.
_GONE_SIBLINGS = 2
# At most so many classes of the pin define the name (`swap_in`: two, neither the text's).
_UNRELATED_HOLDERS = 2


def _members_of_a_gone_design(findings: list[Finding], pins: Sequence[PinView], lineages: Mapping[str, Lineage]) -> list[Finding]:
    """`swap_in` in a note on V0's `BlockSpaceManager` whose `can_swap_in`, `swap_out` and
    `can_swap_out` are broken (past releases defined them there): resolved only because some
    unrelated class of the pin has a `swap_in` (a sparse-attention cache handle), it is the gone
    class's member the text means. Broken, with the past definition as the evidence, where two or
    more of the document's other broken names were members of a past class that defined it too,
    that class is gone from the pin (no versioned successor holds the name), and the name is a
    method of at most two classes of the pin, none of which the text names."""
    by_pin = {p.pin: p for p in pins}

    def past_owners(name: str, pin: PinView) -> dict[str, PastName]:
        found = past_names(name, pin.project, lineages)
        return {n.full.rsplit(".", 1)[0].rsplit(".", 1)[-1]: n for n in found if n.kind == "function" and n.full.rsplit(".", 2)[-2][:1].isupper()}

    cited: dict[tuple[str, str], dict[str, set[str]]] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is None or f.status != BROKEN or f.past is None or f.ref.kind != SYMBOL or "." in f.ref.target:
            continue
        for cls in past_owners(f.ref.target, pin):
            cited.setdefault((f.ref.file, pin.pin), {}).setdefault(cls, set()).add(f.ref.target)
    if not cited:
        return findings
    # The classes a document names: a pin's class among them that defines the name is the one meant
    # (`open_session` in a table of `Scheduler`'s handlers), whatever was gone beside it.
    named: dict[str, set[str]] = {}
    for f in findings:
        named.setdefault(f.ref.file, set()).update(w for w in re.split(r"\W+", f"{f.ref.text} {f.ref.target}") if w[:1].isupper())
    for f in findings:
        ref, pin = f.ref, by_pin.get(f.pin or "")
        if pin is None or f.status != OK or ref.kind != SYMBOL or "." in ref.target or ref.origin == "link":
            continue
        if ref.owner or ref.receiver or ref.scope or ref.fragment_of or ref.field_of or ref.callee or ref.named_object:
            continue
        siblings = cited.get((ref.file, pin.pin))
        if not siblings or "." in ref.text.strip("`").split("(", 1)[0]:
            continue
        # Only a method one or two unrelated classes define now: a field (`prompt_token_ids`) or a
        # method of a family of classes (`match_prefix`) is as likely the pin's own that is meant.
        defined = pin.find_symbol(ref.target)
        holders = {e.parent.rsplit(".", 1)[-1] for e in defined}
        if not defined or any(e.kind != "function" for e in defined) or len(holders) > _UNRELATED_HOLDERS:
            continue
        # (Named as a class, or in words: `radix_cache.py`, "radix cache", for `RadixCache`.)
        if any(h in named[ref.file] or h.lower() in ref.context or set(snake(h).split("_")) <= ref.context for h in holders):
            continue
        for cls, past in past_owners(ref.target, pin).items():
            others = siblings.get(cls, set()) - {ref.target}
            if any(cls in h for h in holders):
                break  # `EAGLEWorkerV2.forward_batch_generation`: the gone class's successor has it
            # (The class itself gone from the pin: a family that merely lost a method, `cache_finished_req`
            # of every radix cache at sglang 0.5.23, says nothing of its other members.)
            if len(others) >= _GONE_SIBLINGS and not any(e.kind == "class" for e in pin.find_symbol(cls)):
                f.status, f.past = BROKEN, past.evidence
                f.note = f"`{ref.target}` is named beside `{cls}`'s other gone members ({', '.join(sorted(others)[:3])}); {past.evidence}"
                f.suggestions = []
                break
    return findings


def _past_in_another_case(
    findings: list[Finding], pins: Sequence[PinView], lineages: Mapping[str, Lineage], successors: Mapping[str, Successors]
) -> list[Finding]:
    """`EagleWorker`, broken with no good home, where a past release defined the one class
    `EAGLEWorker`: the author's casing of that class, so its homes are that class's (its versioned
    file's class, where upstream took it). Only homes change; the verdict was made without it."""
    by_pin = {p.pin: p for p in pins}
    folded: dict[str, dict[str, list[str]]] = {}
    for f in findings:
        pin = by_pin.get(f.pin or "")
        target = f.ref.target
        if pin is None or f.status != BROKEN or f.ref.kind != SYMBOL or f.past or "." in target or not _CLASS_WORDS_RE.fullmatch(target):
            continue
        if f.best is not None and f.best.confidence >= _CONFIDENT_HOME:
            continue
        lineage = lineages.get(pin.project)
        if not lineage:
            continue
        if pin.project not in folded:
            index: dict[str, list[str]] = {}
            for name in lineage:
                index.setdefault(name.lower(), []).append(name)
            folded[pin.project] = index
        names = [n for n in folded[pin.project].get(target.lower(), []) if n != target]
        past = [p for n in names for p in lineage[n] if p.kind == "class"] if len(names) == 1 else []
        if not past:
            continue
        # (`_upstream_home` sets the finding's homes in place.)
        _upstream_home(f, next(iter(versioned_home(names[0], past[0].path, pin)), None))
        _upstream_home(f, successor_home(past, successors.get(pin.project, {}), pin, None))
    return findings


def _passed_through(findings: list[Finding]) -> list[Finding]:
    """`disable_log_requests=engine_args.disable_log_requests`: a setting passed through under its own
    name. Where the keyword's reference is broken at the pin, the line is one fix, said once (by
    the keyword, with its new name); the declared variable's attribute is reported on its own only
    where the keyword is not broken."""
    keywords: set[tuple[str, int, str | None, str]] = set()
    for f in findings:
        if f.status == BROKEN and f.ref.callee and not f.ref.receiver:
            keywords.add((f.ref.file, f.ref.line, f.pin, f.ref.text))
    return [
        f
        for f in findings
        if not (f.ref.receiver and f.status == BROKEN and (f.ref.file, f.ref.line, f.pin, f.ref.target.rsplit(".", 1)[-1]) in keywords)
    ]


def _objects_named_like_a_class(findings: list[Finding], pins: Sequence[PinView], histories: dict[str, History]) -> list[Finding]:
    """`model_executor.initialize_cache()` found only on unrelated classes: broken (see
    `through_instance`). After the block votes (`_mirrors`): that the project defines the method
    somewhere still says the block quotes the project's code."""
    by_pin = {p.pin: p for p in pins}
    out = []
    for f in findings:
        pin = by_pin.get(f.pin or "")
        if pin is not None and f.ref.kind == SYMBOL and f.status == OK:
            f = _with_suggestions(through_instance(f, pin), pin, histories.get(pin.pin))
        out.append(f)
    return out


def _one_word_object(ref: Reference) -> str | None:
    """`req` of `req.fill_ids`: an object named by one word, read as an object of its namesake class."""
    if not (ref.named_object or ref.free_receiver) or ref.receiver is not None:
        return None
    obj = ref.named_object or ref.text.strip("`").split(".", 1)[0]
    return obj if "_" not in obj.strip("_") and single_word_object(obj) else None


def _held_one_word_objects(refs: list[Reference], pins: Sequence[PinView], histories: dict[str, History]) -> list[Reference]:
    """`req.fill_ids` is judged as a member of `Req` only where the document's objects of that
    name hold at least one member of the class at some pin (`req.origin_input_ids`): one word says
    too little alone (`state.obj`, `event.set()` are members of other classes than `State`,
    `Event`). The others are read as before the word was taken for a class (`one_word_unheld`)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, ref in enumerate(refs):
        if (obj := _one_word_object(ref)) is not None:
            groups.setdefault((ref.file, obj), []).append(i)
    for indices in groups.values():
        held = False
        for i in indices:
            ref = refs[i]
            candidates = [p for p in pins if ref.framework in (AMBIGUOUS, p.project)]
            if any(f.status == OK for f in _named_object_findings(ref, candidates, histories) or []):
                held = True
                break
        if not held:
            for i in indices:
                refs[i] = replace(refs[i], one_word_unheld=True)
    return refs


_CLASS_OR_FUNCTION_RE = re.compile(r"^_*[A-Za-z]\w*$")


def _file_of_the_named_symbol(findings: list[Finding], pins: Sequence[PinView], histories: dict[str, History]) -> list[Finding]:
    """`vllm/model_executor/layers/attention.py: Attention.forward()`: a gone file followed on its
    line by a name that still resolves. The reader's file is where that name lives now (inside
    the package the module became, when it became one), as for a link whose text names a symbol.
    Only a line with one path, and a name written after it."""
    by_pin = {p.pin: p for p in pins}
    lines: dict[tuple[str, int, str | None], list[Finding]] = {}
    for f in findings:
        lines.setdefault((f.ref.file, f.ref.line, f.pin), []).append(f)
    for group in lines.values():
        paths = [f for f in group if f.ref.kind == PATH]
        if len(paths) != 1 or paths[0].status != BROKEN or paths[0].ref.origin == "link" or paths[0].ref.link_symbol:
            continue
        path = paths[0]
        named = [
            f for f in group
            if f.ref.kind == SYMBOL and f.status == OK and f.ref.col > path.ref.col >= 0 and "/" not in f.ref.target
        ]
        if not named or path.pin not in by_pin:
            continue
        symbol = named[0].ref.target.split(".")[0]
        if not _CLASS_OR_FUNCTION_RE.match(symbol) or symbol in by_pin[path.pin].packages:
            continue
        path.suggestions = suggest(path.ref, by_pin[path.pin], histories.get(path.pin or ""), line_symbol=symbol)
    return findings


def _same_name_in_class_context(findings: list[Finding]) -> list[Finding]:
    """A gone method named bare in the prose (`self_check_during_idle()`) that the same document
    also quotes inside a class's method (`self.self_check_during_idle()` in a quoted
    `event_loop_normal`): the reader means the same thing, so it gets the suggestion the class
    context gave there (the prose alone names no class to look in)."""
    placed: dict[tuple[str, str | None, str], Suggestion] = {}
    for f in findings:
        if f.status == BROKEN and f.ref.kind == SYMBOL and (f.ref.fragment_of or f.ref.owner) and f.best is not None:
            key = (f.ref.file, f.pin, f.ref.target.rsplit(".", 1)[-1])
            if key not in placed or placed[key].confidence < f.best.confidence:
                placed[key] = f.best
    if not placed:
        return findings
    for f in findings:
        ref = f.ref
        if f.status != BROKEN or ref.kind != SYMBOL or ref.fragment_of or ref.owner or "." in ref.target or ref.origin == "link":
            continue
        there = placed.get((ref.file, f.pin, ref.target))
        if there is not None and (f.best is None or f.best.confidence < there.confidence):
            f.suggestions = [replace(there, reason=f"{there.reason}; as where the document quotes it in its class's code"), *f.suggestions]
    return findings


_NEVER_SPELLED = "is neither defined nor used anywhere"
# A column of a table needs this many judged names, none the project's, to be another program's.
_FOREIGN_COLUMN = 3


def _table_columns(findings: list[Finding]) -> list[Finding]:
    """A name no pin spells, in a table column where no name is the project's (`dram_size`,
    `hbm_size`, `ha_enable`: the settings of a storage backend a page documents): the column is
    another program's, so the name is unjudged (not-checkable, with the reason), not broken."""
    columns: dict[tuple[str, str | None], list[Finding]] = {}
    for f in findings:
        if f.ref.column and f.ref.kind == SYMBOL:
            columns.setdefault((f.ref.column, f.pin), []).append(f)
    for group in columns.values():
        if len(group) < _FOREIGN_COLUMN or any(f.status == OK for f in group):
            continue
        for f in group:
            if f.status == BROKEN and _NEVER_SPELLED in f.note:
                f.status = NOT_CHECKABLE
                f.note += f"; no name in its table column is {f.pin}'s (another program's table?)"
    return findings


# `tok_1a`, `submod_0`, `node_X`: a stem, an underscore, a number (and a letter) or one letter.
_NUMBERED_RE = re.compile(r"(?P<stem>[A-Za-z]\w*?_)(?:\d+[a-z]?|[A-Za-z])")


def _numbered_series(findings: list[Finding]) -> list[Finding]:
    """`tok_1a`, `tok_2a`, `tok_1c`; `submod_0`, `submod_1`; `node_X`, `node_Y`; `seq_a`, `seq_b`:
    two names or more of one numbered or lettered series that no pin spells (nor any past release,
    where known) are the author's placeholders for the items of a drawing, not stale names:
    unjudged (not-checkable, with the reason). One such name alone is judged as any other."""
    series: dict[tuple[str, str | None, str], set[str]] = {}
    for f in findings:
        m = _NUMBERED_RE.fullmatch(f.ref.target) if f.ref.kind == SYMBOL else None
        # (A sibling the sources use but never define, `seq_a` beside `seq_b`, counts too.)
        if m is not None and ((f.status == BROKEN and _NEVER_SPELLED in f.note) or (f.status == NOT_CHECKABLE and "defined nowhere" in f.note)) and not f.past:
            series.setdefault((f.ref.file, f.pin, m.group("stem")), set()).add(f.ref.target)
    for f in findings:
        m = _NUMBERED_RE.fullmatch(f.ref.target) if f.ref.kind == SYMBOL and f.status == BROKEN else None
        names = series.get((f.ref.file, f.pin, m.group("stem")), set()) if m is not None else set()
        if len(names) > 1 and f.ref.target in names and _a_series(names):
            f.status = NOT_CHECKABLE
            f.note += f"; one of a series ({_listed(sorted(names))}): the author's placeholders"
    return findings


def _a_series(names: set[str]) -> bool:
    """Numbers, or letters that follow each other (`seq_a`, `seq_b`; `node_X`, `node_Y`): not the
    words' own letters of two real names (`apply_top_k`, `apply_top_p`)."""
    ends = sorted({n.rsplit("_", 1)[-1] for n in names})
    if not all(len(e) == 1 and e.isalpha() for e in ends):
        return True
    codes = sorted(ord(e.lower()) for e in ends)
    return codes == list(range(codes[0], codes[0] + len(codes)))


def _setting_rows(findings: list[Finding]) -> list[Finding]:
    """| `SGLANG_PLATFORM` | Select the plugin by name (e.g. `kunlun`, `demo_cuda`). |: a name no pin
    spells, listed with other values in the row of a table whose first cell is an env var or a
    flag, is a value that setting takes (as in a paragraph on it, `_listed_value`), not broken."""
    settings: dict[tuple[str, int, str], str] = {}  # (file, line, table) -> the setting of the row
    for f in findings:
        column = f.ref.column or ""
        if column.endswith(":1") and f.ref.kind in {ENV, FLAG}:
            settings[(f.ref.file, f.ref.line, column.rsplit(":", 1)[0])] = f.ref.target
    if not settings:
        return findings
    for f in findings:
        column = f.ref.column or ""
        if f.status != BROKEN or f.ref.kind != SYMBOL or _NEVER_SPELLED not in f.note or column.endswith(":1"):
            continue
        setting = settings.get((f.ref.file, f.ref.line, column.rsplit(":", 1)[0]))
        name = re.escape(f.ref.text)
        if setting and re.search(rf"`[^`]+`\s*(?:,|,?\s+(?:and|or))\s*`{name}`|`{name}`\s*(?:,|,?\s+(?:and|or))\s*`[^`]+`", f.ref.paragraph):
            f.status = NOT_CHECKABLE
            f.note += f"; listed with other values in the row of `{setting}` (a value it takes)"
    return findings


def _new_file(finding: Finding, pin: PinView, lineages: Mapping[str, Lineage]) -> bool:
    """A missing file named above a snippet whose code the pin does not have, in a folder the pin
    has (`# models/dits/my_model.py` over `class MyModelTransformer`): the file a guide shows the
    reader how to write. A file whose folder is gone too is a moved or removed one, and so is a
    module a past release had (`# sglang/srt/managers/scheduler_metrics_mixin.py`)."""
    ref = finding.ref
    if finding.status != BROKEN or ref.writes is None or ref.located or find_symbol(ref.writes, pin)[0]:
        return False  # (a copy's header, `copies.headed`: the file the quoted code lives in)
    if _past_module(ref.target, pin, lineages):
        return False
    if ref.text.rstrip().endswith("/"):
        return False  # a folder (`# under vllm/attention/`) is where new code goes, not the new file
    folder, _, name = ref.target.strip("/").rpartition("/")
    if "." not in name:
        return False  # `# under vllm/attention/ create ...`: a folder the reader writes into, not a file
    if name != "__init__.py" and pin.files_named(name):
        # `# vllm/model_executor/layers/sampler.py` over a helper: a file the pin holds under
        # another folder (vllm/v1/sample/sampler.py) moved there; a reader's new file has a new name.
        return False
    return any(pin.has_path(f"{prefix}{folder}".removeprefix(pin.layout_prefix)) for prefix in ("", pin.layout_prefix))


def _past_module(path: str, pin: PinView, lineages: Mapping[str, Lineage]) -> PastName | None:
    """The past module at a repository or package path (`python/sglang/srt/managers/x.py`)."""
    parts = path.strip("/").removesuffix(".py").removesuffix("/__init__").split("/")
    for start in range(len(parts)):
        dotted = ".".join(parts[start:])
        found = [n for n in lineages.get(pin.project, {}).get(parts[-1], ()) if n.kind == "module" and n.full == dotted]
        if found:
            return found[0]
    return None


def _spelled(ref: Reference, pin: PinView) -> Finding | None:
    """An attribute or keyword of quoted code (see `Reference.spelled`): broken when the pin's
    sources never spell one of its names and the code is the project's (the quoted method is a
    method of the project's class, the keyword's callable resolves); else nothing to say."""
    if not _quotes_project(ref, pin):
        return None
    parts = ref.text.split(".")[1:] if "." in ref.text else [ref.target]
    if ref.scope and ref.text.startswith("self.") and len(parts) > 1:
        parts = parts[1:]  # `self.x.pop` in a class copy: `self.x` is its own reference (`copies.self_members`)
    missing = [p for p in parts if not p.startswith("__") and pin.mentions(p) is False]
    if not missing:
        return _not_the_quoted_class_s(ref, pin)
    where = f"keyword of `{ref.callee}`" if ref.callee else f"in the quoted `{ref.fragment_of}`" if ref.fragment_of else f"in a copy of `{ref.scope}`" if ref.scope else "a member of `self`"
    return Finding(ref, pin.pin, BROKEN, note=f"`{missing[0]}` ({where}) is neither defined nor used anywhere in {pin.pin}'s sources: removed, or never there")


def _writes_self_member(cls: SymbolEntry, member: str, pin: PinView) -> bool:
    """Whether `self.<member>` is written anywhere in the class's body or in the bodies of the
    classes its bases name (a mixin may set or read what the class itself never defines)."""
    said = re.compile(rf"\bself\.{re.escape(member)}\b")
    classes = [cls, *(b for base in cls.bases for b in pin.find_symbol(base) if b.kind == "class")]
    for e in classes:
        lines = pin.read_lines(e.path)
        if lines is None or any(said.search(line) for line in lines[e.line - 1 : e.end_line]):
            return True  # an unreadable body is no evidence that the member is gone
    return False


def _not_the_quoted_class_s(ref: Reference, pin: PinView) -> Finding | None:
    """`self.cur_batch` in a quoted method (`def event_loop_normal(self)`, see `_fragment_member`)
    whose name the pin spells elsewhere: the quoted method says whose attribute it is. Broken when
    every project class that defines the method lacks the member: not defined on it or its bases,
    members not built at import time, and `self.cur_batch` written nowhere in their bodies."""
    # (`self.graph_runner.replay` reads the quoted class's `graph_runner` first.)
    m = re.fullmatch(r"self\.([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*", ref.text.strip("`"))
    if ref.callee is not None or m is None:
        return None
    if ref.fragment_of is not None:
        classes = [e for c in _fragment_classes(ref.fragment_of, pin, ref.quoted_file) for e in pin.table.named(c) if e.kind == "class"]
    elif ref.scope is None and ref.quoted_file is not None:
        classes = _file_class(ref.quoted_file, pin)  # `self.tp_size = ...` lines of a named file
    elif ref.scope is None and ref.self_siblings:
        classes = _siblings_class(ref.self_siblings, pin)
    else:
        return None
    member = m.group(1)
    if not classes or any(
        find_symbol(f"{c.full}.{member}", pin)[0] or open_members(c.full, pin) or _writes_self_member(c, member, pin) or on_a_subclass(f"{c.full}.{member}", pin)
        for c in classes
    ):
        return None  # (a mixin's `self` is the class that mixes it in: `SchedulerPPMixin` -> `Scheduler`)
    names = _listed(c.last for c in classes)
    if ref.fragment_of:
        whose = f"the class that defines the quoted `{ref.fragment_of}`"
    elif ref.quoted_file:
        whose = f"the class of `{ref.quoted_file}`, where the text says the lines are from"
    else:
        whose = "the one class that has the members the snippet's other `self.` lines use"
    f = Finding(ref, pin.pin, BROKEN, note=f"`{member}` is not a member of {names} ({whose}) in {pin.pin}, nor written as `self.{member}` in it or its bases")
    f.suggestions = suggest(replace(ref, target=f"{classes[0].last}.{member}"), pin, None)
    # (Every class that defines the quoted method, not the first alone: `open_session` is `Engine`'s too.)
    f.suggestions += [s for s in member_of_a_held_part(member, classes, pin) if s.replacement not in {x.replacement for x in f.suggestions}]
    return f


# A class must hold this many of a snippet's loose `self.x` names to be taken as theirs.
_SIBLINGS_HELD = 3


def _siblings_class(names: Sequence[str], pin: PinView) -> list[SymbolEntry]:
    """The class a snippet's loose `self.x` lines are about (`Reference.self_siblings`): the one
    class that alone defines one of the names (`self._request_dispatcher`: `Scheduler`'s), where
    it, its bases or subclasses hold most of them; none where two classes are each alone in
    defining one, or the class holds too few. Where no class is alone in defining one: the class
    that defines the most (`_most_siblings_class`)."""
    alone: set[str] = set()
    owners_of: dict[str, set[str]] = {}
    for name in names:
        owners = {e.parent for e in pin.find_symbol(name) if e.parent and any(k.kind == "class" for k in pin.table.named(e.parent))}
        owners_of[name] = owners
        if len(owners) == 1:
            alone |= owners
    if len(alone) > 1:
        return []
    if not alone:
        return _most_siblings_class(names, owners_of, pin)
    classes = [k for k in pin.table.named(alone.pop()) if k.kind == "class"][:1]
    held = sum(
        1 for c in classes for n in names if find_symbol(f"{c.full}.{n}", pin)[0] or _writes_self_member(c, n, pin) or on_a_subclass(f"{c.full}.{n}", pin)
    )
    return classes if held >= _SIBLINGS_HELD and held * 2 > len(names) else []


# Where no name is one class's alone, the class must define at least this many (and more than any other).
_SIBLINGS_LEAD = 4


def _most_siblings_class(names: Sequence[str], owners_of: dict[str, set[str]], pin: PinView) -> list[SymbolEntry]:
    """The class defining the most of a snippet's loose `self.x` names (`forward_ct`,
    `server_args`, `tree_cache`, `token_to_kv_pool_allocator`: `Scheduler`), where it defines
    at least four, more than half, and more than any other class does; else none."""
    count: dict[str, int] = {}
    for owners in owners_of.values():
        for owner in owners:
            count[owner] = count.get(owner, 0) + 1
    ranked = sorted(count.items(), key=lambda kv: -kv[1])
    if not ranked or ranked[0][1] < _SIBLINGS_LEAD or ranked[0][1] * 2 <= len(names) or (len(ranked) > 1 and ranked[1][1] >= ranked[0][1]):
        return []
    return [k for k in pin.table.named(ranked[0][0]) if k.kind == "class"][:1]


def _config_key(ref: Reference, pin: PinView) -> Finding | None:
    """A key of `--speculative-config '{...}'`: a field of the one class named after the flag's
    destination (`speculative_config` -> `SpeculativeConfig`); nothing where the pin lacks the
    flag (its own finding says so) or no single class is named so."""
    flag = next((e for e in pin.flags if ref.config_flag in (e.flag, *e.aliases)), None)
    if flag is None:
        return None
    dest = flag.dest or flag.flag.lstrip("-").replace("-", "_")
    classes = classes_named_like(dest, pin)
    # (In the engine's configuration modules: `QuantizationConfig`, the quantization methods'
    # base class, is not what `--quantization-config` fills.)
    entries = [e for name in classes for e in pin.find_symbol(name) if e.kind == "class" and "config" in e.full.split(".")[1:-1]]
    if len(entries) != 1:
        return None
    keyed = replace(ref, field_of=entries[0].full, callee=entries[0].full)
    found = _field(keyed, pin)
    if found is not None and found.status == BROKEN:
        found.suggestions = field_homes(keyed, pin)
    return found


def _field(ref: Reference, pin: PinView) -> Finding | None:
    """A name in a field's place, judged against what that place takes (`fields.judge_field`);
    a quoted keyword the signature cannot settle (opaque `**kwargs`) is judged by spelling."""
    ref = _nearest_callee(ref, pin)
    found = judge_field(ref, pin)
    if found is None and ref.spelled:
        found = _spelled(ref, pin)
        if found is None and ref.flag_value:
            # Taken through `**kwargs` (`sgl.Engine(load_format=...)`): only its value can be wrong.
            judged = engine_keyword_value(Finding(ref, pin.pin, OK), pin)
            return judged if judged.status == BROKEN else None
        return found
    return found if found is None else engine_keyword_value(found, pin)


def _nearest_callee(ref: Reference, pin: PinView) -> Reference:
    """`Req(input_text=...)` in a quoted `Scheduler` method, where the pin has two classes `Req`
    (the scheduler's and `multimodal_gen`'s): the one whose module shares the most of its package
    with the class that defines the quoted method is the one called."""
    if ref.callee is None or ref.field_of != ref.callee or "." in ref.callee or ref.fragment_of is None:
        return ref
    candidates = [e for e in pin.find_symbol(ref.callee) if e.kind == "class" and e.last == ref.callee]
    homes = _fragment_classes(ref.fragment_of, pin, ref.quoted_file)
    if len(candidates) < 2 or not homes:
        return ref

    def shared(full: str) -> int:
        return max(_shared_parts(full, home) for home in homes)

    best = max(shared(e.full) for e in candidates)
    nearest = [e for e in candidates if shared(e.full) == best]
    if len(nearest) != 1:
        return ref
    return replace(ref, callee=nearest[0].full, field_of=nearest[0].full)


def _shared_parts(a: str, b: str) -> int:
    """How many leading dotted parts two full names share."""
    n = 0
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x != y:
            break
        n += 1
    return n


def _quotes_project(ref: Reference, pin: PinView) -> bool:
    """Whether the code holding a `spelled` name is the pin's: its callable resolves, its quoted
    method is a method of one of the pin's classes."""
    if ref.callee is not None and not find_symbol(ref.callee, pin)[0]:
        return False
    return ref.fragment_of is None or bool(_fragment_classes(ref.fragment_of, pin, ref.quoted_file))


def _fragment_classes(method: str, pin: PinView, file: str | None = None) -> list[str]:
    """The project's classes that define a method a snippet quotes on its own; only those in the
    file the text names (`Reference.quoted_file`), where that file has one."""
    classes = sorted({e.parent for e in pin.find_symbol(method) if e.kind == "function" and e.parent and "." in e.parent})
    classes = [c for c in classes if any(k.kind == "class" for k in pin.table.named(c))]
    for written in _written_files(file):
        filed = [c for c in classes if any(k.kind == "class" and _in_file(k.path, written) for k in pin.table.named(c))]
        if filed:
            return filed
    return classes


def _file_class(file: str, pin: PinView) -> list[SymbolEntry]:
    """The class a file of that name is about: the one named after it (`model_runner.py`,
    `ModelRunner`), else its only class; none where that is not one class's file."""
    stem = file.rsplit("/", 1)[-1].removesuffix(".py")
    same_name = pin.files_named(f"{stem}.py")
    paths = next(([p for p in same_name if _in_file(p, w)] for w in _written_files(file) if any(_in_file(p, w) for p in same_name)), [])
    # Top-level classes only: a nested class's parent is a class, not the file's module.
    classes = [e for p in paths for e in pin.table.definitions_in(p) if e.kind == "class" and e.parent == module_name(e.path)]
    named = [e for e in classes if snake(e.last) == stem]
    return named or (classes if len(classes) == 1 else [])


def _in_file(path: str, file: str) -> bool:
    return path == file or path.endswith("/" + file)


def _written_files(file: str | None) -> list[str]:
    """The file a text names, as written (`vllm/config/scheduler.py`, less a repository's
    `python/`), then by its name alone (a file that moved keeps its name)."""
    if not file:
        return []
    base = file.rsplit("/", 1)[-1]
    return [file.removeprefix("python/"), base] if base != file else [file]


def _filed_copy(ref: Reference, pin: PinView | None) -> bool:
    """Quoted code whose file the text names (`Reference.quoted_file`), where the pin's class it
    quotes is in a file of that name (the class defining the quoted method, or the copy's class):
    that class's code, whatever its block's vote (as a located copy is)."""
    file = ref.quoted_file
    if pin is None or file is None:
        return False
    if ref.fragment_of is not None:
        classes = [k for c in _fragment_classes(ref.fragment_of, pin) for k in pin.table.named(c)]
    elif ref.scope is not None:
        classes = pin.find_symbol(ref.scope)
    else:
        return False
    return any(k.kind == "class" and _in_file(k.path, w) for w in _written_files(file) for k in classes)


def _fragment_member(ref: Reference, pin: PinView) -> Finding | None:
    """A quoted method, or a method it calls on `self`, on the project's classes that define the
    quoted method; None when none does (the author's own code)."""
    assert ref.fragment_of is not None
    classes = _fragment_classes(ref.fragment_of, pin, ref.quoted_file)
    if not classes:
        return None
    for cls in classes:
        short = cls.rsplit(".", 1)[-1]
        found, how = find_symbol(f"{short}.{ref.target}", pin)
        if found:
            return Finding(ref, pin.pin, OK, resolved_at=found[0].location, note=how or f"member of `{short}`")
    for cls in classes:
        if on_a_subclass(f"{cls}.{ref.target}", pin):
            # A mixin's method runs on the class that mixes it in (`SchedulerPPMixin.event_loop_pp`
            # calls `self.get_next_batch_to_run()`, a method of `Scheduler`).
            return Finding(ref, pin.pin, OK, note=f"a member of a class deriving from `{cls.rsplit('.', 1)[-1]}`")
    for entry in (e for cls in classes for e in pin.table.named(cls) if e.kind == "class" and "." not in ref.target):
        if _writes_self_member(entry, ref.target, pin):
            # `self.expert_distribution_communicator(req)`: an attribute the class's code sets and reads.
            return Finding(ref, pin.pin, OK, resolved_at=entry.location, note=f"`self.{ref.target}` is written in `{entry.last}` or a base")
    names = _listed(c.rsplit(".", 1)[-1] for c in classes)
    return Finding(ref, pin.pin, BROKEN, note=f"`{ref.target}` is not a member of {names} (the class that defines `{ref.fragment_of}`) in {pin.pin}")


def _fragment_parameter(ref: Reference, pin: PinView) -> Finding | None:
    """A parameter of a method quoted without its class, against that method on the project's
    classes that define it (`_fragment_classes`): taken by one of them, or by none (broken, with
    the homes a gone parameter has, `field_homes`); None where no class defines the method or no
    signature can tell (opaque `**kwargs`)."""
    assert ref.fragment_of is not None
    judged = []
    for cls in _fragment_classes(ref.fragment_of, pin, ref.quoted_file):
        placed = replace(ref, field_of=f"{cls}.{ref.fragment_of}")
        found = judge_field(placed, pin)
        if found is None:
            return None  # one signature that cannot tell settles nothing
        if found.status == OK:
            return found
        judged.append((placed, found))
    if not judged:
        return None
    # A file named in the text that is not the class's own (`allocator.py`, now another module's
    # `BuddyAllocator`, not a `radix_cache.py`'s `RadixCache`) may be the wrong one: a class
    # elsewhere whose method takes the parameter leaves the verdict open.
    stem = (ref.quoted_file or "").rsplit("/", 1)[-1].removesuffix(".py")
    tried = {p.field_of for p, _ in judged}
    if not all(snake((p.field_of or "").rsplit(".", 2)[-2]) == stem for p, _ in judged):
        for cls in _fragment_classes(ref.fragment_of, pin):
            if f"{cls}.{ref.fragment_of}" not in tried and accepts(f"{cls}.{ref.fragment_of}", ref.target, pin):
                return None
    placed, found = judged[0]
    if len(judged) == 1:
        found.suggestions = field_homes(placed, pin)
    found.ref = ref
    return found


# So many of a copy's `self.x` that the pin's class of its name has: the copy is of that class,
# however many others it sets (an older version of it: V0's `Scheduler.__init__` beside V1's).
_MEMBERS_THAT_MIRROR = 5


def _mirrors(findings: list[Finding], pins: Sequence[PinView] = (), lineages: Mapping[str, Lineage] | None = None) -> list[Finding]:
    """Methods of a snippet's class: when most of them (and at least two) exist on the project's
    class of that name, the snippet quotes it and a missing one is broken; otherwise the class is
    the author's own (a toy `Scheduler`) and its methods are not citations, unless the snippet is
    a method of a class only past releases had (`_gone_fragment_members`)."""
    by_pin = {p.pin: p for p in pins}
    groups: dict[tuple[str, str | None], list[Finding]] = {}
    for f in findings:
        if f.ref.mirror:
            groups.setdefault((f.ref.mirror, f.pin), []).append(f)
    drop: set[int] = set()
    for (_, at), group in groups.items():
        # Attributes and keywords judged by spelling (`Reference.spelled`) do not vote: the
        # snippet's own methods and `self.x()` calls say whether it quotes the project's class.
        # Nor do the calls on `self` in a snippet class's methods (`scope`): the vote judges them.
        voters = [f for f in group if not f.ref.spelled and not f.ref.field_of and not (f.ref.scope and f.ref.text.startswith("self."))]
        if not voters:
            # A copy of the class's constructor alone (`class RadixCache:` and its `__init__`): the
            # attributes it sets on `self` say whether it is the project's class.
            voters = [f for f in group if not f.ref.spelled and not f.ref.field_of and f.ref.text.startswith("self.")]
        # A member the pin keeps on a subclass of the class (`KVCacheSpec.num_kv_heads`, on
        # `AttentionSpec`) is the project's code too: it votes for the copy, and stays as judged.
        pin = by_pin.get(at or "")
        ok = sum(f.status == OK or (f.status == BROKEN and pin is not None and on_a_subclass(f.ref.target, pin)) for f in voters)
        # A copied signature the pin's method takes whole (`__init__(self, server_args,
        # task_pipes_to_slaves, result_pipes_from_slaves)`, two parameters or more) is one vote more.
        taken = [f for f in group if f.ref.field_of and f.ref.scope and not f.ref.callee and f.ref.field_of.startswith(f"{f.ref.scope}.")]
        ok += len(taken) >= 2 and all(f.status == OK for f in taken)
        # So is a copy whose `self.x` are mostly the class's (three at least): `DPBudget`'s
        # `total_requests`, `total_tokens`, `last_timestamp` beside a renamed `dp_size`.
        members = {f.ref.target: f.status for f in group if f.ref.scope and f.ref.text.startswith("self.") and not f.ref.spelled}
        held = sum(status == OK for status in members.values())
        ok += held >= 3 and held * 2 > len(members)
        if any(f.ref.located or _filed_copy(f.ref, pin) for f in group):
            continue  # the text says where in the project the copied class lives (`copies.located`)
        if _distinctive_fragment(group, pin):
            continue
        if held >= _MEMBERS_THAT_MIRROR:
            continue  # five of the class's own members (`self.scheduler_config`, `self.waiting`, ...): an older copy of it
        if ok < 2 or ok * 2 < len(voters):
            kept = _gone_fragment_members(group, pin, lineages or {})
            # A name a past release of the project defined is its code whatever the class (`--past`).
            # An object named like the project's class (`self.scheduler_config.x`) is judged
            # against that class whoever wrote the code around it (`_named_object_findings`).
            # A keyword of a call to the project's class or function is judged against its
            # signature whoever wrote the code around the call (`ReqToTokenPool(pre_alloc_size=...)`).
            drop.update(
                id(f) for f in group
                if f.status != OK and f.past is None and not (f.ref.named_object and f.ref.receiver) and not (f.ref.callee and f.ref.field_of == f.ref.callee)
                and id(f) not in kept
            )
    return [f for f in findings if id(f) not in drop]


def _gone_fragment_members(group: list[Finding], pin: PinView | None, lineages: Mapping[str, Lineage]) -> set[int]:
    """A quoted method that failed the vote, where it is the method of a class only past releases
    had (`gone_fragments.py`: V0's `Scheduler.schedule`, calling that class's `_schedule` and
    `_allow_async_output_proc`): its broken `self` members are that class's, gone with it, and
    stay broken with the past class as the evidence. The ids of the findings kept."""
    method = next((f.ref.fragment_of for f in group if f.ref.fragment_of), None)
    if pin is None or method is None:
        return set()
    members = {f.ref.target for f in group if _on_self(f.ref)}
    gone = gone_class_of_fragment(method, members, pin, lineages)
    if gone is None:
        return set()
    kept: set[int] = set()
    for f in group:
        if f.status != BROKEN or not _on_self(f.ref):
            continue
        f.past = gone.method.evidence
        f.note = f"`{f.ref.target}` is not a member of the pin's classes; the quoted `{method}` is the gone `{gone.name}`'s ({gone.method.evidence}), as its {_listed(sorted(gone.held))} say"
        kept.add(id(f))
    return kept


def _on_self(ref: Reference) -> bool:
    """`self.cache_id`, `self.next_cache_id`, or a method the quoted method calls on `self`, which
    the snippet records by its name alone (`_schedule`): a member of `self` itself, not of an
    object it holds (`self.block_manager.get_block_table`)."""
    head = ref.text.strip("`").split("(", 1)[0].strip()
    return "." not in ref.target and head in (ref.target, f"self.{ref.target}")


def _distinctive_fragment(group: list[Finding], pin: PinView | None) -> bool:
    """`def process_batch_result(self, batch, result)` quoted without its class: a method name of
    two words or more that one to three of the pin's classes define is the project's method
    whoever rewrote its body, which is then judged member by member (as a located copy is)."""
    method = next((f.ref.fragment_of for f in group if f.ref.fragment_of), None)
    if pin is None or method is None or len([w for w in method.split("_") if w]) < 2:
        return False
    quoted_file = next((f.ref.quoted_file for f in group if f.ref.quoted_file), None)
    return 1 <= len(_fragment_classes(method, pin, quoted_file)) <= 3


def check_upgrade(refs: Iterable[Reference], old: PinView, new: PinView, history: History) -> list[Finding]:
    """Every reference to `old`'s project, resolved against both pins; findings are against
    `new`, with `previous_status` saying how it stood at `old`."""
    findings: list[Finding] = []
    for ref in refs:
        if ref.framework not in {old.project, AMBIGUOUS}:
            continue
        if ref.held_by and find_symbol(ref.held_by, old)[0]:
            ref = _pin_s_object(ref)
        if ref.bare_call and (_module_function(ref.text, old) or _module_function(ref.text, new)):
            continue
        if (ref.doc_defined or ref.scope) and not find_symbol((ref.target.split(".", 1)[0] if ref.doc_defined else ref.scope) or "", old)[0]:
            continue  # the author's own code
        if ref.field_of and ref.framework != AMBIGUOUS and (was := judge_field(ref, old)) is not None:
            # A field's name: broke when the old pin's place took it and the new one's does not.
            now = _field(ref, new) if was.status == OK else None
            if now is None or now.status != BROKEN:
                continue
            now.previous_status, now.framework = OK, new.project
            now.note = f"ok at {old.pin} ({was.resolved_at}); {now.note}"
            findings.append(now)
            continue
        if ref.field_of and not ref.spelled:
            continue  # an `extra_body` key the old pin cannot judge
        if ref.spelled:
            # Quoted code's attribute or keyword: broke when the new sources stopped spelling it.
            if not _quotes_project(ref, old) or _spelled(ref, old) is not None:
                continue
            after = _spelled(ref, new)
            if after is None:
                continue
            after.previous_status, after.framework = OK, new.project
            after.note = f"spelled in {old.pin}'s sources; {after.note}"
            findings.append(after)
            continue
        if ref.receiver:
            # A declared variable's attribute: on the class it is declared with.
            was = _receiver_member(ref, old)
            if was is None or was.status != OK:
                continue  # not the old pin's class, or not its member either
            before = was
            after = _receiver_member(ref, new) or Finding(ref, new.pin, BROKEN, note=f"`{ref.receiver}` is not defined in {new.pin}")
        elif ref.fragment_of:
            # A quoted method and what it calls on `self`: on the class that defines it.
            was = _fragment_member(ref, old)
            if was is None or was.status != OK:
                continue  # the author's own method, or not the old pin's either
            before = was
            after = _fragment_member(ref, new) or Finding(ref, new.pin, BROKEN, note=f"no class defines `{ref.fragment_of}` in {new.pin}")
        else:
            resolve_fn = resolve_member if ref.owner else resolve
            before = resolve_fn(ref, old)
            if (ref.framework == AMBIGUOUS or ref.tentative or ref.mirror) and before.status != OK:
                continue  # not this project's name as far as the old pin can tell (or a toy class's method)
            after = resolve_fn(ref, new)
        after.previous_status = before.status
        after.framework = new.project
        if after.status in {BROKEN, WARNING}:
            after.suggestions = suggest(ref, new, history)
            if before.status == OK:
                after.note = "; ".join(x for x in (f"ok at {old.pin} ({before.resolved_at})", after.note) if x)
        findings.append(after)
    return findings


def pick_fixes(findings: Iterable[Finding], threshold: float) -> list[Finding]:
    """One broken (or stale-anchor) finding per source position whose best suggestion clears `threshold`."""
    best: dict[tuple[str, int, int], Finding] = {}
    for f in findings:
        s = f.best
        if f.status not in {BROKEN, WARNING} or s is None or s.confidence < threshold or f.ref.col < 0:
            continue
        key = (f.ref.file, f.ref.line, f.ref.col)
        current = best.get(key)
        if current is None or (current.best and current.best.confidence < s.confidence):
            best[key] = f
    return list(best.values())
