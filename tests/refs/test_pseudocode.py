"""Hand-typed copies of a class whose indentation slipped (`pseudocode.reindent`, used by
`document.parse_snippet`): read as the structure the author means, line for line."""

from __future__ import annotations

import ast

from analyzer.refs.document import flattened_code, parse_snippet
from analyzer.refs.pseudocode import is_flattened, reindent, unflatten

# A body shifted by a column, a `def` left inside the method before it, a tab among spaces.
_SLIPPED = """class Pool:
  def __init__(self, size):
    self.slots = list(range(size))

  def take(self, n):
    picked = self.slots[:n]
        self.slots = self.slots[n:]
        return picked

    def give(self, items):
      self.slots.extend(items)
\tdef size(self):
        return len(self.slots)
"""


def _methods(tree: ast.Module) -> dict[str, list[str]]:
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef)
    return {f.name: [a.arg for a in f.args.args] for f in cls.body if isinstance(f, ast.FunctionDef)}


def test_a_def_inside_a_class_is_a_method_however_deep_it_is_written() -> None:
    lines = reindent(_SLIPPED.splitlines())
    assert len(lines) == len(_SLIPPED.splitlines())  # line numbers stay the document's
    tree = ast.parse("\n".join(lines))
    assert _methods(tree) == {"__init__": ["self", "size"], "take": ["self", "n"], "give": ["self", "items"], "size": ["self"]}
    take = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "take")
    assert [type(s).__name__ for s in take.body] == ["Assign", "Assign", "Return"]


def test_parse_snippet_reads_slipped_pseudocode_whole() -> None:
    [(_, tree)] = parse_snippet(_SLIPPED)
    assert set(_methods(tree)) == {"__init__", "take", "give", "size"}
    # A body a blanked line leaves empty (`list(range(n)` never closed) is still a method.
    [(_, tree)] = parse_snippet("class Pool:\n  def reset(self):\n    self.slots = list(range(n)\n  def size(self):\n    return 1\n")
    assert set(_methods(tree)) == {"reset", "size"}


def test_well_indented_code_keeps_its_structure() -> None:
    code = "def f(x):\n    if x:\n        return [\n            1,\n        ]\n    return 0\n"
    assert ast.dump(ast.parse("\n".join(reindent(code.splitlines())))) == ast.dump(ast.parse(code))


def test_a_quoted_signature_and_a_cut_short_call_parse() -> None:
    # `....` among the parameters, `...` among a call's arguments after keywords, a `try:` with
    # its handler left out.
    code = (
        "class W:\n"
        "    def __init__(self, config, ....):\n"
        "        w = Wrapper(config=config, ...)\n"
        "    def loop(self):\n"
        "        try:\n"
        "            self.run()\n"
        "    def stop(self):\n"
        "        pass\n"
    )
    [(_, tree)] = parse_snippet(code)
    assert set(_methods(tree)) == {"__init__", "loop", "stop"}


def test_a_hand_typed_signature_with_notes_and_a_missing_comma() -> None:
    code = "class Pool:\n  def __init__(size [total slots], dtype, block_size device):\n    clear()\n\n  def clear():\n    pass\n"
    [(_, tree)] = parse_snippet(code)
    assert _methods(tree) == {"__init__": ["size", "dtype", "block_size", "device"], "clear": []}
    init = tree.body[0].body[0]
    assert isinstance(init, ast.FunctionDef) and init.args.args[3].col_offset == code.splitlines()[1].index("device")  # columns stay


def test_the_rest_of_a_signature_written_twice_or_as_a_cjk_ellipsis() -> None:
    # `... ...` and `……` for "and the other parameters": the method and its body are still code.
    for rest in ("... ...", "……"):
        code = f"class Engine:\n    def __init__(self, config, {rest}):\n        self._start(config)\n    def stop(self):\n        pass\n"
        [(_, tree)] = parse_snippet(code)
        assert _methods(tree) == {"__init__": ["self", "config"], "stop": ["self"]}
        init = tree.body[0].body[0]
        assert isinstance(init, ast.FunctionDef) and isinstance(init.body[0], ast.Expr)  # the body is kept


def test_a_flattened_line_is_cut_where_its_line_breaks_were() -> None:
    # A re-post dropped each line break and kept the next line's indentation; statements at the
    # left margin are glued to the one before, a comment runs on into the code after it.
    flat = "if self.ready:    pool = Pool()# 省略self.pool = poolelse:    self.pool = None(x)t.start()"
    assert is_flattened(flat)
    lines, origin = unflatten([flat])
    assert lines == ["if self.ready:", "    pool = Pool()# 省略", "self.pool = pool", "else:", "    self.pool = None(x)", "t.start()"]
    assert all(flat[col:].startswith(text) for (_, col), text in zip(origin, lines, strict=True))
    # Code as written, and a comment aligned after a statement, are not flattened.
    assert not is_flattened("x = compute(a, b)    # aligned note")
    assert not is_flattened("class Pool:")
    assert unflatten(["a = 1", "b = 2"]) == (["a = 1", "b = 2"], [(0, 0), (1, 0)])


def test_parse_snippet_reads_a_flattened_line_as_its_lines_at_the_document_s_places() -> None:
    # `a = bself.c = d` even parses as one chained assignment: it is still read as two lines.
    flat = "self.size = sizeself.slots = []# set up    self.extra = 1"
    [(_, tree)] = parse_snippet(flat + "\n")
    targets = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in {"size", "slots"}]
    assert {(n.lineno, n.col_offset) for n in targets} == {(1, 0), (1, flat.index("self.slots"))}


def test_an_untyped_fence_is_read_as_flattened_python_only_when_it_is_python() -> None:
    assert flattened_code("", "if self.ready:    self.pool = Pool()else:    self.pool = None\n")
    # A log's or a table's columns are cut at gaps too, but they are no Python.
    assert not flattened_code("", "INFO:    Started    server\nName:    pool    size\n" * 3)
    assert not flattened_code("mermaid", "if self.ready:    self.pool = Pool()else:    self.pool = None\n")


def test_a_snippet_that_opens_with_a_cut_branch_parses_as_its_own_if() -> None:
    # Held-out 23's "In `scheduler.py`:" over `elif self.is_hybrid_gdn:` (its `if` left out): the
    # branch is still code; read as an `if`, in place, so columns stay the document's.
    snippet = "elif self.is_hybrid_gdn:\n    self.tree_cache = MambaRadixCache(params)\nelse:\n    self.tree_cache = None\n"
    ((_, tree),) = parse_snippet(snippet)
    test = tree.body[0]
    assert isinstance(test, ast.If) and ast.unparse(test.test) == "self.is_hybrid_gdn"
    assert test.test.col_offset == 5  # `self` where the document writes it (after `elif `)
    ((_, other),) = parse_snippet("else:\n    self.ready = True\n")
    assert isinstance(other.body[0], ast.If)
