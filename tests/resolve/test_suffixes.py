"""The names a computed getattr can spell (analyzer/resolve/suffixes.py): the
membership guard and its alias, and what stops them."""

from __future__ import annotations

import ast
import textwrap

from analyzer.resolve.suffixes import guarded_values, split_fstring, type_suffix

_PARSER = '''
def parse(self):
    token = self.stream.current
    if token.kind != "name":
        self.fail("x")
    self.stack.append(token.value)
    {between}
    if token.value in KEYWORDS:
        f = getattr(self, f"parse_{{self.stream.current.value}}")
        return f()
'''


def _values(between: str, never_returns: bool = True) -> frozenset[str] | None:
    source = textwrap.dedent(_PARSER.format(between=between or "pass"))
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "getattr" in text)
    call = ast.parse(source.splitlines()[line - 1].strip()).body[0].value  # type: ignore[attr-defined]
    prefix, part, tail = split_fstring(call.args[1])  # type: ignore[misc]
    assert (prefix, tail) == ("parse_", "")
    return guarded_values(
        source, 1, line, part,
        constant=lambda name: frozenset({"for", "if"}) if name == "KEYWORDS" else None,
        no_return=lambda method: never_returns and method == "fail",
    )


def test_guard_through_an_alias_bounds_the_names() -> None:
    assert _values("") == {"for", "if"}


def test_anything_that_may_move_the_chain_drops_the_guard() -> None:
    assert _values("self.stream.skip()") is None  # a call on the chain's object
    assert _values("self.stream = other") is None  # a store to a prefix
    assert _values("self.refill()") is None  # a method of self that may return
    assert _values("helper(self.stream)") is None  # the object handed on
    assert _values("", never_returns=False) is None  # `self.fail` could return


def test_a_loop_around_the_guard_but_not_the_binding_drops_it() -> None:
    source = textwrap.dedent('''
    def parse(self):
        token = self.stream.current
        while True:
            if token.value in ("for", "if"):
                f = getattr(self, f"parse_{self.stream.current.value}")
                f()
    ''')
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "getattr" in text)
    part = ast.parse("self.stream.current.value", mode="eval").body
    assert guarded_values(source, 1, line, part, lambda n: None, lambda m: True) is None


def test_a_direct_guard_and_the_fstring_shapes() -> None:
    source = textwrap.dedent('''
    def visit(self, kind):
        if kind == "name":
            return getattr(self, "visit_" + kind)()
        return getattr(self, f"visit_{kind}")()
    ''')
    lines = [i for i, text in enumerate(source.splitlines(), 1) if "getattr" in text]
    kind = ast.parse("kind", mode="eval").body
    assert guarded_values(source, 1, lines[0], kind, lambda n: None, lambda m: True) == {"name"}
    assert guarded_values(source, 1, lines[1], kind, lambda n: None, lambda m: True) is None  # not under the guard
    node = ast.parse('f"visit_{type(node).__name__}_end"', mode="eval").body
    prefix, part, tail = split_fstring(node)  # type: ignore[misc]
    assert (prefix, tail) == ("visit_", "_end")
    assert ast.unparse(type_suffix(part)) == "node"  # type: ignore[arg-type]
    assert split_fstring(ast.parse('f"{a}_{b}"', mode="eval").body) is None


def test_an_exit_guard_before_the_getattr() -> None:
    source = textwrap.dedent('''
    def run(self, kind):
        if kind not in ("add", "sub") or kind == "":
            raise ValueError(kind)
        return getattr(self, "op_" + kind)()

    def other(self, kind):
        if kind not in ("add", "sub"):
            log(kind)
        return getattr(self, "op_" + kind)()
    ''')
    lines = [i for i, text in enumerate(source.splitlines(), 1) if "getattr" in text]
    kind = ast.parse("kind", mode="eval").body
    assert guarded_values(source, 1, lines[0], kind, lambda n: None, lambda m: True) == {"add", "sub"}
    # a guard whose body does not leave bounds nothing (the second function is not the first one)
    other = "\n".join(source.splitlines()[lines[0] + 1 :])
    assert guarded_values(other, lines[0] + 2, lines[1], kind, lambda n: None, lambda m: True) is None


def test_format_and_percent_spell_the_same_fstring() -> None:
    from analyzer.resolve.suffixes import as_fstring

    def spelt(code: str) -> tuple[str, str, str] | None:
        parts = split_fstring(as_fstring(ast.parse(code, mode="eval").body))
        return None if parts is None else (parts[0], ast.unparse(parts[1]), parts[2])

    assert spelt('"_process_{cls}".format(cls=type(t).__name__)') == ("_process_", "type(t).__name__", "")
    assert spelt('"visit_{}_end".format(kind)') == ("visit_", "kind", "_end")
    assert spelt('"visit_{0}".format(kind)') == ("visit_", "kind", "")
    assert spelt('"parse_%s" % name') == ("parse_", "name", "")
    assert spelt('"parse_%s" % (name,)') == ("parse_", "name", "")
    # a conversion, a format spec, a missing or starred argument, two directives: not a dispatch name
    for code in ('"v_{!r}".format(k)', '"v_{:>3}".format(k)', '"v_{x}".format(k)', '"v_{}".format(*ks)', '"v_%s_%d" % (a, b)', '"v_%s" % (a, b)'):
        assert spelt(code) is None, code
