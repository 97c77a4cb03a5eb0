"""A class and the module named after it, as Python projects name them (`gpu_worker.py` holds the
GPU `Worker`, `serving_chat.py` held `OpenAIServingChat`): when one of the pair is gone, the
other still says where it went. Read from the pin's index only.

- A class of two words or more gone (`GPUWorker`): the module named after it (`gpu_worker.py`)
  and, in it, the class whose name is the old one less words at either end or with words added
  (`Worker`, `DraftModel` -> `DraftModelProposer`); of several related ones, the one the others
  derive from.
- An abstract base gone (`ExecutorBase`): the abstract class named without the base's affix
  (`Executor`, an `ABC`) took its place, and the module named after it (`executor_base.py`) went
  where that class lives.
- A file gone (`openai/serving_chat.py`): the class named after it with words added in front
  (`OpenAIServingChat`), inside the folder the file was in, is where its code lives now.
- A class whose file is gone beside a versioned file of that name (`ray_executor.py` ->
  `ray_executor_v2.py`): the class named after the versioned file (`RayExecutorV2`) took over.
"""

from __future__ import annotations

import re

from analyzer.index.extract import module_name
from analyzer.refs.pinview import PinView, SymbolEntry

_HUMP_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """`GPUWorker` -> `gpu_worker`, `OpenAIServingChat` -> `open_ai_serving_chat`."""
    return _HUMP_RE.sub("_", name.strip("_")).lower()


def related(old: str, new: str) -> bool:
    """Whether two snake names are one less words at either end of the other."""
    if old == new:
        return True
    return any(a.endswith("_" + b) or a.startswith(b + "_") for a, b in ((old, new), (new, old)))


def _top_level_classes(pin: PinView, path: str) -> list[SymbolEntry]:
    module = module_name(path)
    return [e for e in pin.definitions_in(path) if e.kind == "class" and e.parent == module]


def class_in_its_module(name: str, pin: PinView) -> tuple[SymbolEntry, str] | None:
    """The class that replaced the gone class `name` in the module named after it, and why."""
    key = snake(name)
    if "_" not in key:
        return None  # one word (`Backend`, `Worker`): too common to say which module it was
    stem = f"{key}.py"
    found: list[SymbolEntry] = []
    for path in pin.files_named(stem):
        if path.startswith(("tests/", "test/")):
            continue
        found += [e for e in _top_level_classes(pin, path) if e.last != name and related(key, snake(e.last))]
    if len({e.path for e in found}) != 1:
        return None
    if len(found) > 1:
        # Variants of one class (`IncrementalDetokenizer` and its Fast/Slow subclasses): the one
        # none of the others is a base of is the general one.
        names = {e.last for e in found}
        roots = [e for e in found if not {b.split("[", 1)[0].rsplit(".", 1)[-1] for b in e.bases} & names]
        if len(roots) != 1:
            return None
        return roots[0], f"the class of {stem} the others derive from, named like `{name}`"
    return found[0], f"the class of {stem}, the module named after `{name}`"


# `ExecutorBase`, `BaseExecutor`, `AbstractExecutor`, `ExecutorInterface`: an abstract base's affixes.
_BASE_AFFIX_RE = re.compile(r"(?:Base|Abstract)(?P<head>[A-Z]\w+)|(?P<tail>[A-Z]\w*?)(?:Base|Interface)")
_ABSTRACT_BASES = {"ABC", "ABCMeta", "Protocol"}


def base_class_successor(name: str, pin: PinView) -> SymbolEntry | None:
    """The abstract class that took the gone abstract base `name`'s place: the one top-level class
    named as `name` less its base affix (`ExecutorBase` -> `Executor`) that is itself abstract
    (derives from `ABC` or `Protocol`); None when there is none or several."""
    m = _BASE_AFFIX_RE.fullmatch(name.lstrip("_"))
    if m is None:
        return None
    core = m.group("head") or m.group("tail")
    hits = [
        e for e in pin.table.ending_with(core)
        if e.kind == "class" and e.last == core and e.parent == module_name(e.path)
        and not e.path.startswith(("tests/", "test/")) and {b.split("[", 1)[0].rsplit(".", 1)[-1] for b in e.bases} & _ABSTRACT_BASES
    ]
    return hits[0] if len(hits) == 1 else None


def module_of_its_class(old_path: str, folders: list[str], pin: PinView) -> tuple[SymbolEntry, str] | None:
    """The class named after the gone file `old_path` with words added in front
    (`serving_chat.py` -> `OpenAIServingChat`), defined inside one of `folders` (where the file
    was), and why; None when there is no such class or several."""
    stem = old_path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".py")
    if "_" not in stem:
        return None  # one word (`utils`, `base`): too common to name a class after the file
    tail = "_" + stem
    names = [n for n in _by_last_word(pin).get(stem.rsplit("_", 1)[-1], ()) if snake(n).endswith(tail)]
    hits = [
        e for n in names for e in pin.table.ending_with(n)
        if e.kind == "class" and e.path.endswith(".py") and e.parent == module_name(e.path)
        and any(e.path.startswith(f + "/") for f in folders)
    ]
    if len({e.path for e in hits}) != 1:
        return None
    return hits[0], f"where `{hits[0].last}`, the class named after {stem}.py, lives"


def file_with_words_dropped(old_path: str, folders: list[str], pin: PinView) -> str | None:
    """The one module under `folders` (where the gone file was) named as the old file less its
    last words, the role a name ends with (`kv_offload/lru_manager.py` ->
    `kv_offload/cpu/policies/lru.py`, `v1/engine/async_llm_engine.py` -> `v1/engine/async_llm.py`);
    the distinctive head is kept (`manager.py` is not `lru_manager.py`). None when there is none
    or several."""
    stem = old_path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".py")
    if "_" not in stem:
        return None
    words = stem.split("_")
    heads = ["_".join(words[:k]) + ".py" for k in range(1, len(words))]
    hits = [f for head in heads for f in pin.files_named(head) if f in pin.files and any(f.startswith(d + "/") for d in folders)]
    return hits[0] if len(hits) == 1 else None


def _by_last_word(pin: PinView) -> dict[str, list[str]]:
    """The pin's defined names by the last word of their snake spelling (`OpenAIServingChat` under
    `chat`), built once per pin: a file is matched against the few names ending like it."""
    cache = pin.memo
    if "namesakes: by last word" not in cache:
        index: dict[str, list[str]] = {}
        for name in pin.table.defined_names():
            if name[:1].isupper():
                index.setdefault(snake(name).rsplit("_", 1)[-1], []).append(name)
        cache["namesakes: by last word"] = index
    index_: dict[str, list[str]] = cache["namesakes: by last word"]
    return index_


# The second and later versions a project writes beside a file it then drops (`x_v2.py`).
_LATER_VERSIONS = range(2, 5)


def versioned_file(old_path: str, pin: PinView) -> str | None:
    """`ray_executor.py` gone, `ray_executor_v2.py` in the same folder: the one versioned file of
    that name that replaced it (package-relative). A bare file name (no folder): the one such file
    anywhere, where no file of the old name is left. None when the file is still there, or for
    no or several versioned files."""
    folder, _, name = old_path.rpartition("/")
    if not name.endswith(".py") or name == "__init__.py" or pin.has_path(old_path) or (not folder and pin.files_named(name)):
        return None
    stem = name.removesuffix(".py")
    if folder:
        found = [p for n in _LATER_VERSIONS if pin.has_path(p := f"{folder}/{stem}_v{n}.py")]
    else:
        found = [p for n in _LATER_VERSIONS for p in pin.files_named(f"{stem}_v{n}.py") if not p.startswith(("tests/", "test/"))]
    return found[0] if len(found) == 1 else None


def versioned_successor(old_path: str, pin: PinView) -> SymbolEntry | None:
    """A class of `old_path` (package-relative), a file replaced by a versioned one
    (`versioned_file`): that file's top-level class named after it (`RayExecutorV2` of
    `ray_executor_v2.py`, `EAGLEWorkerV2` of `eagle_worker_v2.py`), compared without case or
    underscores; None when there is no such class."""
    path = versioned_file(old_path, pin)
    if path is None or "/" not in old_path:
        return None
    key = path.rsplit("/", 1)[-1].removesuffix(".py").replace("_", "")
    found = [e for e in _top_level_classes(pin, path) if e.last.replace("_", "").lower() == key]
    return found[0] if len(found) == 1 else None
