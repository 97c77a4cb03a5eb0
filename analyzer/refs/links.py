"""Links into a project's repository written the way real documents write them, with no
`<!-- atlas: ... -->` comment to say where the document lives.

A careful editor reads a link by what it spells and by what the document shows about itself:

- `gh-file:` / `gh-dir:` (vLLM's mkdocs macros) give a path from the repository's root; the
  project is the path's (`vllm/...`, `python/sglang/...`, `sgl-kernel/...`), else the document's,
  else vLLM's (whose docs define the macros).
- A relative link whose target, leading `../` stripped, starts at a project's package
  (`python/sglang/srt/x.py#L899`, `../../../vllm/config/x.py`) is that project's file: no other
  repository holds `python/sglang/` or a `vllm/` folder of `.py` files next to the document.
- A link into the repository's other folders (`../../examples/x.py`, `../../tests/...`) or to a
  sibling page (`../features/x.md`, `x.md`) is the project's only when the document shows it sits
  in the project's repository: it uses the project's docs macros or autorefs, or another of its
  relative links climbs into the project's package. A third-party note's `examples/my_demo.py`
  or `next-chapter.md` is the author's own file and is not extracted.
- A page of the docs is looked up under the pin's `docs/` by its trailing path (where the
  document sits is unknown); a wheel holds no docs, so there it is not checkable.
- `#L12-L20` anchors: when the link's sentence names code before the link
  (``Builds `GenerateReqInput` ([engine.py#L193](...))``), the anchored lines should still
  spell that name; when they do not, the link is a warning carrying where the name is now.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import replace

from analyzer.refs.classify import (
    BUILTINS,
    REPO_ONLY_DIRS,
    REPO_ROOT_FILES,
    Classified,
    from_package_root,
    path_framework,
)
from analyzer.refs.models import (
    BROKEN,
    NOT_CHECKABLE,
    OK,
    PATH,
    WARNING,
    Finding,
    Reference,
    Suggestion,
)
from analyzer.refs.pinview import PinView

REPO_PROJECTS = {"vllm-project/vllm": "vllm", "sgl-project/sglang": "sglang"}
_ANCHOR_RE = re.compile(r"#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")
_MACRO_RE = re.compile(r"\]\((?:gh-file|gh-dir|gh-pr|gh-issue|gh-project|gh-discussion):")
_AUTOREF_RE = re.compile(r"\]\[(?:vllm|sglang)(?:\.[A-Za-z_]\w*)+\]")
# A relative link that climbs (`../`) into a project's package: the document sits in its repository.
_CLIMB_RE = re.compile(r"\]\((?:\./)?(?:\.\./)+(?P<path>(?:python/)?(?:vllm|sglang)/[^)\s#]*)")
# Top-level folders only one project's repository has: a link into them needs no other evidence.
_OWN_DIRS = {"sgl-kernel": "sglang", "sgl-router": "sglang", "sgl-model-gateway": "sglang"}
# Files a link may point at inside a package: sources, not a reader's notes or pictures.
_CODE_SUFFIXES = (".py", ".pyi", ".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".rs", ".proto", ".jinja")
# Pages and assets of a docs site, looked up under `docs/`.
_PAGE_SUFFIXES = (".md", ".ipynb", ".rst", ".png", ".jpg", ".jpeg", ".svg", ".gif")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SENTENCE_END_RE = re.compile(r"[.;!?](?:\s|$)|[。；！？]|\n\s*\n")
# An import line, or a name listed inside an import's parentheses: where a name comes in, not its use.
_IMPORT_RE = re.compile(r"\s*(?:from\s|import\s|[A-Za-z_]\w*(?:\s+as\s+\w+)?,?\s*$)")
# Lines of slack around an anchor: a decorator, a signature split over lines.
_SLACK = 3


def repository_of(source: str, atlas_repo_project: str | None) -> str | None:
    """The project whose repository the document shows it sits in: its atlas comment's, else
    vLLM's when it uses vLLM's docs macros or autorefs, else the project whose package one of its
    relative links climbs into. None when it shows nothing (a third-party note)."""
    if atlas_repo_project is not None:
        return atlas_repo_project
    if _MACRO_RE.search(source) or re.search(r"\]\[vllm(?:\.[A-Za-z_]\w*)+\]", source):
        return "vllm"
    if re.search(r"\]\[sglang(?:\.[A-Za-z_]\w*)+\]", source):
        return "sglang"
    climbed = {path_framework(m.group("path"))[0] for m in _CLIMB_RE.finditer(source)} - {None}
    return climbed.pop() if len(climbed) == 1 else None


def _anchor(href: str) -> tuple[str, tuple[int, int] | None]:
    """(`path`, line range) of `path#L10-L20`; other fragments are dropped."""
    path, _, fragment = href.partition("#")
    m = _ANCHOR_RE.match("#" + fragment) if fragment else None
    if m is None:
        return path, None
    start = int(m.group("start"))
    return path, (start, int(m.group("end") or start))


def _top_project(path: str) -> str | None:
    """The project a repository path's first folders name on their own."""
    framework, _ = path_framework(path)
    return framework or _OWN_DIRS.get(path.split("/", 1)[0])


def macro_link(href: str, document_project: str | None) -> Classified | None:
    """`gh-file:vllm/x.py`, `gh-dir:examples/offline_inference`: a path from the root of the
    project's repository (never a docs page)."""
    if not href.startswith(("gh-file:", "gh-dir:")):
        return None
    path, lines = _anchor(href.split(":", 1)[1])
    path = path.strip().strip("/")
    if not path:
        return None
    project = _top_project(path)
    reason = "gh-file link"
    if project is None:
        project = document_project or "vllm"
        reason = "gh-file link; " + ("the document's project" if document_project else "vLLM's docs macro")
    return Classified(PATH, path, project, reason, lines, repo_layout=True)


def local_checkout_link(href: str) -> Classified | None:
    """`file://.../vllm/vllm/attention/ops/x.py#L223-L401`, a link into the author's own checkout
    (or an installed copy) of a project -> `vllm/attention/ops/x.py`, lines 223-401; None for any
    other link."""
    if not href.startswith("file://"):
        return None
    raw, lines = _anchor(href.removeprefix("file://"))
    path = from_package_root(raw.split("?", 1)[0])
    if path is None:
        return None
    path = path.rstrip("/")
    framework, repo_layout = path_framework(path)
    if framework is None:
        return None
    return Classified(PATH, path, framework, "a link into a local checkout", lines, repo_layout=repo_layout)


def relative_link(href: str, repository: str | None) -> Classified | None:
    """A relative link of a document whose place in its repository is unknown (see the module's
    rules). `repository`: the project whose repository the document sits in, if it shows one."""
    if not href or href.startswith(("/", "#", "<")) or re.match(r"^[A-Za-z][\w+.-]*:", href) or "//" in href:
        return None
    raw, lines = _anchor(href)
    raw = raw.strip()
    climbs = 0
    while raw.startswith(("./", "../")):
        climbs += raw.startswith("../")
        raw = raw.split("/", 1)[1]
    path = raw.rstrip("/")
    if not path or path.startswith(".") or " " in path:
        return None
    last = path.rsplit("/", 1)[-1]
    project = _top_project(path)
    if project is not None and (path_framework(path)[0] is None or "." not in last or last.endswith(_CODE_SUFFIXES)):
        return Classified(PATH, path, project, "relative link into the project's package", lines, repo_layout=True)
    if repository is None:
        return None  # a third-party document's own files and pages
    first = path.split("/", 1)[0]
    if climbs and (first in REPO_ONLY_DIRS.get(repository, ()) or path in REPO_ROOT_FILES):
        return Classified(PATH, path, repository, "relative link into the project's repository", lines, repo_layout=True)
    if last.endswith(_PAGE_SUFFIXES) or first in REPO_ONLY_DIRS.get(repository, ()):
        # A page (or asset) of the docs, relative to a page whose folder is unknown.
        return Classified(PATH, path, repository, "relative link to a page of the project's docs", lines, docs_page=True)
    return None


def resolve_docs_page(ref: Reference, pin: PinView) -> Finding:
    """A docs page looked up by its trailing path under `docs/` (or, written from the root of the
    repository, as that path)."""
    if pin.kind == "release" or not pin.has_path("docs"):
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"a page of the project's docs/; {pin.pin} holds no docs (a wheel snapshot)")
    tail = ref.target.strip("/")
    pages = sorted(p for p in (*pin.files, *pin.dirs) if p.startswith("docs/") and (p == f"docs/{tail}" or p.endswith(f"/{tail}")))
    if not pages and pin.has_path(tail):
        pages = [tail]
    if not pages and "." not in tail.rsplit("/", 1)[-1]:
        pages = sorted(p for p in pin.files if p.startswith("docs/") and p.endswith(f"/{tail}.md"))
    if pages:
        note = f"{len(pages)} pages end with {tail}" if len(pages) > 1 else ""
        return Finding(ref, pin.pin, OK, resolved_at=pages[0], note=note)
    if generates_pages(pin):
        return Finding(ref, pin.pin, NOT_CHECKABLE, note=f"no page {tail} under docs/ in {pin.pin}, but its docs build generates pages (mkdocs gen-files), which may make it")
    return Finding(ref, pin.pin, BROKEN, note=f"no page {tail} under docs/ in {pin.pin}")


def generates_pages(pin: PinView) -> bool:
    """Whether the repository's docs build writes pages of its own (mkdocs' `gen-files` plugin: vLLM
    generates its CLI, examples and API pages), so that a page missing from `docs/` may still exist."""
    for name in ("mkdocs.yaml", "mkdocs.yml", "docs/mkdocs.yaml", "docs/mkdocs.yml"):
        if name in pin.files:
            return any("gen-files" in line for line in pin.read_lines(name) or [])
    return False


def sentence_names(before: str, codes: list[str]) -> tuple[str, ...]:
    """The names of code in a link's sentence before it: `before` is the sentence's plain text up
    to the link, `codes` the paragraph's code spans so far. The last span the sentence holds that
    spells a name gives them (`TM.generate_request(...)` -> `generate_request`, `TM`)."""
    start = max((m.end() for m in _SENTENCE_END_RE.finditer(before)), default=0)
    sentence = before[start:]
    for code in reversed(codes):
        if code not in sentence:
            continue
        # A call names its callee first, most specific part first (`generate_request` of
        # `TM.generate_request(...)`), then the names in its arguments.
        callee, paren, args = code.partition("(")
        names = [w for w in (*reversed(_IDENT_RE.findall(callee)), *_IDENT_RE.findall(args if paren else "")) if _is_name(w)]
        if names:
            return tuple(dict.fromkeys(names))
    return ()


def _is_name(word: str) -> bool:
    return len(word) >= 3 and not keyword.iskeyword(word) and word not in BUILTINS and word != "self"


def _spells(line: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", line) is not None


def check_anchor_names(finding: Finding, path: str, pin: PinView) -> None:
    """The anchored lines of an existing file against the code the link's sentence names: still
    there, ok; elsewhere in the file, a warning with the new lines; nowhere in it, a warning."""
    ref = finding.ref
    if ref.line_range is None or not ref.anchor_names:
        return
    lines = pin.read_lines(path)
    if lines is None:
        return
    start, end = ref.line_range
    window = lines[max(0, start - 1 - _SLACK) : min(len(lines), end + _SLACK)]
    if any(_spells(line, name) for line in window for name in ref.anchor_names):
        finding.resolved_at = f"{path}:{start}"
        return
    shown = ", ".join(f"`{n}`" for n in ref.anchor_names[:2])
    new = new_lines(ref, path, pin)
    if new is None:
        # The file never spells what the sentence cites: the sentence may speak of another of
        # its links' files (or the code went elsewhere); nothing here says the anchor is stale.
        finding.note = "; ".join(x for x in (finding.note, f"{path} does not spell {shown}, which the sentence cites") if x)
        return
    finding.status = WARNING  # the file is there; the lines moved with the code
    finding.resolved_at = f"{path}:{new[0]}"
    finding.note = f"L{start}-L{end} no longer spell {shown}; {new[2]} L{new[0]}" + (f"-L{new[1]}" if new[1] != new[0] else "")


def new_lines(ref: Reference, path: str, pin: PinView) -> tuple[int, int, str] | None:
    """Where the file now has the first name the sentence gives: its definition there, else the
    line spelling it nearest the old anchor. (start, end, what)."""
    old = ref.line_range[0] if ref.line_range else 0
    for i, name in enumerate(ref.anchor_names):
        defs = [e for e in pin.definitions_in(path) if e.full.rsplit(".", 1)[-1] == name]
        # `Engine.generate`: the owner the sentence writes picks among methods of one name.
        owned = [e for e in defs if i + 1 < len(ref.anchor_names) and e.full.endswith(f".{ref.anchor_names[i + 1]}.{name}")]
        defs = owned or defs
        if defs:
            return defs[0].line, defs[0].end_line, f"`{name}` is defined at"
        lines = pin.read_lines(path) or []
        hits = [i + 1 for i, line in enumerate(lines) if _spells(line, name) and not _IMPORT_RE.match(line)]
        if hits:
            near = min(hits, key=lambda n: abs(n - old))
            return near, near, f"`{name}` is spelt at" + (f" (nearest of {len(hits)})" if len(hits) > 1 else "")
    return None


def anchor_suggestions(ref: Reference, path: str, pin: PinView) -> list[Suggestion]:
    """The link with its anchor moved to the new lines (`new_lines`)."""
    new = new_lines(ref, path, pin)
    if new is None or not _ANCHOR_RE.search(ref.text):
        return []
    anchor = f"#L{new[0]}" + (f"-L{new[1]}" if new[1] != new[0] else "")
    unique = "nearest of" not in new[2]
    return [Suggestion(_ANCHOR_RE.sub(anchor, ref.text), 0.85 if unique else 0.3, new[2].removesuffix(" at").replace(" is ", " is now "), f"{path}:{new[0]}")]


def with_anchor_names(found: Classified, names: tuple[str, ...]) -> Classified:
    return replace(found, anchor_names=names) if names and found.line_range is not None else found


# ----- a linked file that is gone ----------------------------------------------------------------
# More files than this under the nearest surviving folder: too wide a net to read them all.
_MAX_CANDIDATES = 400
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def moved_link_homes(ref: Reference, old_path: str, pin: PinView) -> list[tuple[str, float, str]]:
    """Where a gone linked file went, as (package path, confidence, why), best first: the file
    that now holds the code the link's sentence cites (`cited_code_home`), or a repository file
    named as the old one plus a word (`save_x.py` -> `save_x_offline.py`)."""
    out: list[tuple[str, float, str]] = []
    home = cited_code_home(ref, old_path, pin)
    if home is not None:
        out.append(home)
    extended = name_extended(old_path, pin)
    if extended is not None:
        out.append(extended)
    return out


def _nearest_folder(old_path: str, pin: PinView) -> str | None:
    parts = old_path.strip("/").split("/")[:-1]
    for k in range(len(parts), 0, -1):
        folder = "/".join(parts[:k])
        if folder in pin.dirs:
            return folder
    return None


def cited_code_home(ref: Reference, old_path: str, pin: PinView) -> tuple[str, float, str] | None:
    """The file under the old file's nearest surviving folder that spells most of the names the
    link's sentence cites, the most of the project's names first, then the rarest among those files (a name every
    file spells says less): `send_to_detokenizer.send_pyobj(BatchTokenIDOutput(...))` at a
    gone mixin's line -> the module that now builds and sends `BatchTokenIDOutput`. Needs two
    names at least in the winner, and one winner."""
    names = [n for n in ref.anchor_names if n]
    if ref.link_symbol:
        names = [*dict.fromkeys([*ref.link_symbol.split(".")[::-1], *names])]
    # Only the project's own names: a dependency's method (`send_pyobj`) says nothing of where
    # the project's code went.
    names = [n for n in names if any(e.kind != "import" for e in pin.table.ending_with(n))]
    folder = _nearest_folder(old_path, pin)
    if len(names) < 2 or folder is None:
        return None
    suffix = old_path.rsplit(".", 1)[-1] if "." in old_path.rsplit("/", 1)[-1] else "py"
    candidates = sorted(f for f in pin.files | pin.outside_files if f.startswith(folder + "/") and f.endswith("." + suffix))
    if not candidates or len(candidates) > _MAX_CANDIDATES:
        return None
    spelt: dict[str, set[str]] = {}
    for path in candidates:
        words = set(_WORD_RE.findall("\n".join(pin.read_lines(path) or [])))
        hit = {n for n in names if n in words}
        if hit:
            spelt[path] = hit
    if not spelt:
        return None
    df = {n: sum(n in hit for hit in spelt.values()) for n in names}
    # The most names first; among files spelling as many, the rarer names.
    scores = sorted(((len(hit), sum(1 / df[n] for n in hit)), path) for path, hit in spelt.items())[::-1]
    best, path = scores[0]
    if len(spelt[path]) < 2 or (len(scores) > 1 and scores[1][0] >= best):
        return None
    shown = ", ".join(f"`{n}`" for n in names if n in spelt[path])
    return path, 0.7, f"the file under {folder}/ that spells what the link's sentence cites ({shown}), the rarest names weighing most"


def name_extended(old_path: str, pin: PinView) -> tuple[str, float, str] | None:
    """`examples/offline_inference/save_sharded_state.py` gone, one file under `examples/` named
    `save_sharded_state_<word>[_<word>].py`: that file (a renamed example keeps its name's start)."""
    top, _, rest = old_path.strip("/").partition("/")
    name = old_path.rsplit("/", 1)[-1]
    stem, dot, ext = name.partition(".")
    if not rest or not dot or "." in ext or pin.files_named(name):
        return None
    pattern = re.compile(rf"{re.escape(stem)}(?:_[a-z0-9]+){{1,2}}\.{re.escape(ext)}")
    hits = [f for f in pin.files if f.startswith(top + "/") and pattern.fullmatch(f.rsplit("/", 1)[-1])]
    if len(hits) != 1:
        return None
    return hits[0], 0.7, f"the one file under {top}/ named as the old one plus a word"
