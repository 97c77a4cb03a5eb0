"""Where a broken reference went: suggestions with a confidence.

Evidence, strongest first: git rename detection between two snapshots of the
project, the same name in another module, a flag with the same destination or
a boolean spelling change, SGLang's `deprecated_name`, then the closest names.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from analyzer.refs.fuzzy import closest
from analyzer.refs.models import ENV, FLAG, PATH, SYMBOL, Reference, Suggestion
from analyzer.refs.pinview import PinView
from analyzer.refs.resolve import find_symbol, package_path, short_name


@dataclass(slots=True)
class History:
    """An older pin of the same project where the reference may have been valid, and
    the file renames git found between that pin and the one checked."""

    old: PinView
    renames: dict[str, tuple[str, float]] = field(default_factory=dict)  # old package path -> (new, similarity)


def suggest(ref: Reference, pin: PinView, history: History | None = None) -> list[Suggestion]:
    if ref.kind == PATH:
        found = _paths(ref, pin, history)
    elif ref.kind == SYMBOL:
        found = _symbols(ref, pin, history)
    elif ref.kind == FLAG:
        found = _flags(ref, pin, history)
    elif ref.kind == ENV:
        found = _envs(ref, pin, history)
    else:
        found = []
    best: dict[str, Suggestion] = {}
    for s in found:
        if s.replacement != ref.target and (s.replacement not in best or best[s.replacement].confidence < s.confidence):
            best[s.replacement] = s
    return sorted(best.values(), key=lambda s: -s.confidence)[:5]


# ----- paths -------------------------------------------------------------------
def _write_path(ref: Reference, new_package_path: str, pin: PinView, anchor: str = "") -> str:
    """Spell a new package path the way the reference spelled the old one."""
    if ref.origin == "link":
        base = ref.text.split("#", 1)[0]
        if not base.endswith(ref.target):
            return ref.text
        head = base[: len(base) - len(ref.target)]
        if ref.commit:
            # New lines belong to the pin: point the link at the pin's revision too.
            head = head.replace(f"/{ref.commit}/", f"/{_revision(ref.commit, pin)}/", 1)
        return head + pin.layout_prefix + new_package_path + anchor
    if ref.repo_layout or (pin.layout_prefix and ref.target.startswith(pin.layout_prefix)):
        return pin.layout_prefix + new_package_path
    return new_package_path


def _revision(commit: str, pin: PinView) -> str:
    """The pin's spelling of a link's revision: its release tag for a tag, its commit for a SHA."""
    version = pin.pin.partition("@")[2]
    if re.fullmatch(r"v?\d+(\.\d+)*", commit):
        return f"v{version}" if commit.startswith("v") else version
    if re.fullmatch(r"[0-9a-f]{7,40}", commit) and pin.upstream_commit:
        return pin.upstream_commit[: len(commit)]
    return commit  # a branch name (`main`): keep it


def _old_package_path(ref: Reference, pin: PinView) -> str:
    path = ref.target.strip("/")
    return path[len(pin.layout_prefix):] if pin.layout_prefix and path.startswith(pin.layout_prefix) else path


def _paths(ref: Reference, pin: PinView, history: History | None) -> list[Suggestion]:
    old_path = _old_package_path(ref, pin)
    out: list[Suggestion] = []
    if ref.origin == "link" and package_path(ref.target, pin) is not None and ref.link_symbol:
        # The file is still there; the anchor moved with the code.
        path = package_path(ref.target, pin)
        assert path is not None
        suffix = "." + ref.link_symbol
        for entry in pin.definitions_in(path):
            if entry.full.endswith(suffix):
                anchor = f"#L{entry.line}-L{entry.end_line}"
                out.append(Suggestion(_write_path(ref, path, pin, anchor), 0.9, f"`{ref.link_symbol}` now spans these lines", entry.location))
                break
        return out
    if history is not None:
        renamed = history.renames.get(old_path)
        if renamed is not None:
            new, similarity = renamed
            out.append(Suggestion(_write_path(ref, new, pin), max(0.85, min(0.98, similarity)), f"git detects a rename ({similarity:.0%} similar)", new))
        elif old_path.endswith(".py"):
            # Where did the old file's definitions go?
            moved = Counter(
                hits[0].path
                for entry in history.old.definitions_in(old_path)
                if "." not in short_name(entry, history.old)
                for hits in [pin.find_symbol(short_name(entry, history.old))]
                if hits
            )
            total = len([e for e in history.old.definitions_in(old_path) if "." not in short_name(e, history.old)])
            if moved and total:
                new, count = moved.most_common(1)[0]
                share = count / total
                out.append(Suggestion(_write_path(ref, new, pin), round(0.5 + 0.45 * share, 2), f"{count} of {total} top-level definitions moved there", new))
    basename = old_path.rsplit("/", 1)[-1]
    same_name = pin.files_named(basename)
    if len(same_name) == 1:
        out.append(Suggestion(_write_path(ref, same_name[0], pin), 0.75, "only file with this name", same_name[0]))
    pool = same_name or pin.path_pool()
    for name, ratio in closest(old_path, pool, n=3, cutoff=0.6):
        out.append(Suggestion(_write_path(ref, name, pin), round(ratio * 0.7, 2), "closest path", name))
    return out


# ----- symbols -----------------------------------------------------------------
def _symbols(ref: Reference, pin: PinView, history: History | None) -> list[Suggestion]:
    target = ref.target
    parts = target.split(".")
    out: list[Suggestion] = []
    root_dotted = parts[0] in pin.packages
    if root_dotted:
        # `vllm.a.b.Foo` gone: is `Foo` defined in another module?
        for tail_len in (1, 2):
            if len(parts) <= tail_len:
                break
            tail = ".".join(parts[-tail_len:])
            hits = [e for e in pin.find_symbol(tail) if e.kind in {"class", "function", "module"}]
            if hits:
                confidence = 0.9 if len(hits) == 1 else 0.6
                for e in hits[:3]:
                    out.append(Suggestion(e.full, confidence, "same name in another module", e.location))
                break
    else:
        last = parts[-1]
        if len(parts) >= 2:
            owner = ".".join(parts[:-1])
            owners = [e for e in pin.find_symbol(owner) if e.kind == "class"]
            # The member under another name in the same class.
            for cls in owners[:2]:
                members = [e.full.rsplit(".", 1)[-1] for e in pin.symbols_under(cls.full)]
                for name, ratio in closest(last, members, n=2, cutoff=0.6):
                    out.append(Suggestion(f"{owner}.{name}", round(ratio * 0.8, 2), f"closest member of `{owner}`", None))
            # The member moved to another class.
            movers = [e for e in pin.find_symbol(last) if e.kind == "function" and "." in short_name(e, pin)]
            for e in movers[:3]:
                confidence = 0.7 if len(movers) == 1 else 0.45
                out.append(Suggestion(short_name(e, pin), confidence, "same method on another class", e.location))
            if not owners and history is not None:
                out.extend(_renamed_class(owner, pin, history, member=last))
        elif history is not None:
            out.extend(_renamed_class(target, pin, history))
        names = pin.defined_names() if len(parts) == 1 else []
        for name, ratio in closest(last, names, n=3, cutoff=0.7):
            out.append(Suggestion(name, round(ratio * 0.7, 2), "closest name", None))
    if history is not None and not out:
        old_hits, _ = find_symbol(target, history.old)
        if old_hits:
            out.append(Suggestion(target, 0.0, f"was at {old_hits[0].location} in {history.old.pin}; removed", None))
    return [s for s in out if s.confidence > 0 or s.reason.endswith("removed")]


def _renamed_class(old_name: str, pin: PinView, history: History, member: str | None = None) -> list[Suggestion]:
    """A class gone from a file: the class now defined at the same place (same file, after renames)."""
    out: list[Suggestion] = []
    for old in [e for e in history.old.find_symbol(old_name) if e.kind == "class"][:1]:
        new_path = history.renames.get(old.path, (old.path, 1.0))[0]
        old_members = {e.full.rsplit(".", 1)[-1] for e in history.old.symbols_under(old.full)}
        for cand in pin.definitions_in(new_path):
            if cand.kind != "class" or "." in short_name(cand, pin):
                continue
            members = {e.full.rsplit(".", 1)[-1] for e in pin.symbols_under(cand.full)}
            overlap = len(old_members & members) / max(1, len(old_members))
            if overlap >= 0.5 and (member is None or member in members):
                name = short_name(cand, pin) + (f".{member}" if member else "")
                out.append(Suggestion(name, round(0.5 + 0.45 * overlap, 2), f"class in {new_path} shares {overlap:.0%} of its members", cand.location))
    return out


# ----- flags -------------------------------------------------------------------
_BOOL_PREFIXES = ("--enable-", "--disable-", "--no-", "--")


def _flag_variants(flag: str) -> list[tuple[str, str]]:
    """(spelling, why) pairs for boolean flag spelling changes that keep the meaning."""
    stem = flag
    for prefix in _BOOL_PREFIXES:
        if flag.startswith(prefix):
            stem = flag[len(prefix):]
            kind = prefix
            break
    else:
        return []
    if kind == "--disable-":
        return [(f"--no-enable-{stem}", "`--disable-x` became `--no-enable-x`"), (f"--no-{stem}", "`--disable-x` became `--no-x`")]
    if kind == "--enable-":
        return [(f"--{stem}", "`--enable-` prefix dropped")]
    if kind == "--no-":
        return [(f"--disable-{stem}", "`--no-x` is spelled `--disable-x`")]
    return [(f"--enable-{stem}", "gained an `--enable-` prefix")]


def _flags(ref: Reference, pin: PinView, history: History | None) -> list[Suggestion]:
    flag = ref.target
    out: list[Suggestion] = []
    if "_" in flag and flag.replace("_", "-") in pin.flag_map:
        out.append(Suggestion(flag.replace("_", "-"), 0.9, "dashes, not underscores", pin.flag_map[flag.replace("_", "-")].defined_at))
    for spelling, why in _flag_variants(flag):
        base = spelling.replace("--no-", "--", 1) if spelling.startswith("--no-") else spelling
        if base in pin.flag_map:
            out.append(Suggestion(spelling, 0.85, why, pin.flag_map[base].defined_at))
    if history is not None:
        old = history.old.flag_map.get(flag)
        if old is not None and old.dest:
            for entry in pin.flags:
                if entry.dest == old.dest:
                    out.append(Suggestion(entry.flag, 0.9, f"same destination `{old.dest}`", entry.defined_at))
    for name, ratio in closest(flag, pin.flag_map.keys(), n=3, cutoff=0.7):
        out.append(Suggestion(name, round(ratio * 0.75, 2), "closest flag", pin.flag_map[name].defined_at))
    return out


# ----- env vars ----------------------------------------------------------------
_ENV_PREFIX_SWAPS = (("SGL_", "SGLANG_"), ("SGLANG_", "SGL_"))


def _envs(ref: Reference, pin: PinView, _history: History | None) -> list[Suggestion]:
    name = ref.target
    out: list[Suggestion] = []
    for old, new in _ENV_PREFIX_SWAPS:
        if name.startswith(old) and (swapped := new + name[len(old):]) in pin.env_map:
            out.append(Suggestion(swapped, 0.85, f"prefix `{old}` became `{new}`", pin.env_map[swapped].defined_at))
    for cand, ratio in closest(name, pin.env_map.keys(), n=3, cutoff=0.7):
        out.append(Suggestion(cand, round(ratio * 0.75, 2), "closest env var", pin.env_map[cand].defined_at))
    return out
