"""Reaching bindings of a local name at each call of it (analyzer/resolve/reaching.py)."""

from __future__ import annotations

import ast
import textwrap

from analyzer.resolve.reaching import (
    OTHER,
    passed_reaching_bindings,
    reaching_bindings,
    return_site,
)


def sites(src: str, name: str = "x", params: frozenset[str] = frozenset()) -> dict[int, set[int]] | None:
    found = reaching_bindings(textwrap.dedent(src).strip("\n"), 1, name, set(params))
    return None if found is None else {line: lines for (line, _col), lines in found.items()}


def test_straight_line_each_call_sees_the_last_binding() -> None:
    assert sites("""
        def f():
            x = a
            x()
            x = b
            x()
            x = c
        """) == {3: {2}, 5: {4}}


def test_branches_join_and_loops_see_the_previous_iteration() -> None:
    assert sites("""
        def f(flag):
            x = a
            if flag:
                x = b
            else:
                pass
            x()
            for i in r:
                x()
                x = c
            x()
        """) == {7: {2, 4}, 9: {2, 4, 10}, 11: {2, 4, 10}}


def test_while_try_and_with() -> None:
    assert sites("""
        def f():
            x = a
            while cond():
                x()
                x = b
            try:
                x = c
                g()
            except E:
                x()
            with ctx() as x:
                x()
        """) == {4: {2, 5}, 10: {2, 5, 7}, 12: {OTHER}}


def test_parameters_and_other_bindings_are_other() -> None:
    assert sites("""
        def f(x):
            x()
            x = a
            x()
            x, y = pair
            x()
            x += 1
            x()
        """, params=frozenset({"x"})) == {2: {OTHER}, 4: {3}, 6: {OTHER}, 8: {OTHER}}


def test_nonlocal_and_walrus_are_not_analysed() -> None:
    assert sites("""
        def f():
            nonlocal x
            x = a
            x()
        """) is None
    assert sites("""
        def f():
            x = a
            if (x := b):
                x()
        """) is None


def test_slot_stores_replace_and_aliases_give_up() -> None:
    from analyzer.resolve.reaching import slot_path, slot_reaching

    src = "def f():\n    d = {'k': a}\n    d['k']()\n    d['k'] = b\n    d['k']()\n    d.update({'k': c})\n    d['k']()\n"
    node = ast.parse("d['k']", mode="eval").body
    found = slot_path(node)
    assert found is not None
    sites = slot_reaching(src, 1, *found)
    assert sites is not None
    values = {line: {ast.unparse(s.value) for s in defs} for (line, _), defs in sites.items()}
    assert values == {3: {"{'k': a}"}, 5: {"b"}, 7: {"c"}}
    aliased = src.replace("    d['k']()\n    d['k'] = b", "    e = d\n    d['k'] = b", 1)
    assert slot_reaching(aliased, 1, *found) is None
    branch = "def f(x):\n    d = {'k': a}\n    if x:\n        d['k'] = b\n    d['k']()\n"
    sites = slot_reaching(branch, 1, *found)
    assert sites is not None and {ast.unparse(s.value) for s in sites[(5, 4)]} == {"{'k': a}", "b"}


def test_inner_container_handed_out_gives_up() -> None:
    """`d["g"]["k"]()`: a read that hands out the container holding the slot (under
    another name, or through a method returning elements) lets a store elsewhere change it."""
    from analyzer.resolve.reaching import slot_path, slot_reaching

    found = slot_path(ast.parse("d['g']['k']", mode="eval").body)
    assert found is not None
    head = "def f():\n    d = {'g': {'k': a}}\n"
    assert slot_reaching(head + "    d['g']['k']()\n", 1, *found) is not None
    for leak in ("e = d['g']", "e = d.get('g')", "e = list(d.values())", "e = d.copy()", "e = d.items()"):
        assert slot_reaching(head + f"    {leak}\n    d['g']['k']()\n", 1, *found) is None, leak
    # reads that hand out only the slot's own value, or a copy of the inner container, are fine
    for read in ("e = d['g']['k']", "e = d['g'].get('k')", "e = d['g'].copy()", "n = len(d['g']['k'].x)"):
        assert slot_reaching(head + f"    {read}\n    d['g']['k']()\n", 1, *found) is not None, read
    # a method that may change the inner container in place
    for change in ("d['g'].setdefault('k', b)", "d['g'].pop('k')", "d['g'].clear()"):
        assert slot_reaching(head + f"    {change}\n    d['g']['k']()\n", 1, *found) is None, change


def test_an_import_is_a_binding_of_its_own() -> None:
    from analyzer.resolve.reaching import import_binding, import_line

    assert sites("""
        def f():
            x = a
            from m import x
            x()
        """) == {4: {import_binding(3)}}
    assert import_line(import_binding(3)) == 3 and import_line(OTHER) is None and import_line(2) is None


def test_an_alias_records_what_reaches_it() -> None:
    from analyzer.resolve.reaching import alias_site

    found = reaching_bindings(textwrap.dedent("""
        def f():
            x = a
            y = x
            x = b
            y()
        """).strip("\n"), 1, "x", set())
    assert found is not None and found[alias_site(3)] == {2}


def test_unpacking_literal_tuples_binds_each_name_plainly() -> None:
    from analyzer.resolve.reaching import alias_site

    found = reaching_bindings(textwrap.dedent("""
        def f():
            x, y = a, b
            x, y = y, x
            x()
            p, *q = a, b
            x, q = q
            x()
        """).strip("\n"), 1, "x", set())
    assert found is not None
    assert found[(4, 4)] == {3} and found[alias_site(3)] == {2} and found[(7, 4)] == {OTHER}


def test_what_follows_a_loop_is_its_else_or_the_state_at_a_break() -> None:
    assert sites("""
        def f(items):
            x = a
            for i in items:
                if i:
                    x = b
                    break
                    x = c
            else:
                x = d
            x()
            while items:
                x = e
            else:
                x = g
            x()
        """) == {10: {5, 9}, 15: {14}}


def test_a_methods_calls_are_keyed_by_the_files_columns() -> None:
    # A method's text is indented; the call sites the resolver asks about carry the file's
    # columns, so the dedented parse's columns are shifted back.
    method = "    def run(self):\n        x = a\n        x()\n        return x.go()\n"
    found = reaching_bindings(method, 10, "x", set())
    assert found == {(12, 8): {11}, (13, 15): {11}}


def passed(src: str, name: str = "x", params: frozenset[str] = frozenset()) -> dict[tuple[int, int], set[int]] | None:
    return passed_reaching_bindings(textwrap.dedent(src).strip("\n"), 1, name, set(params))


def test_a_local_handed_on_sees_the_bindings_that_reach_each_call_and_return() -> None:
    found = passed("""
        def f(x, flag):
            x = a(x)
            if flag:
                x = b(x)
            g(k=x)
            h(lambda x: x(1))
            return x
        """, params=frozenset({"x", "flag"}))
    assert found == {(2, 8): {OTHER}, (4, 12): {2}, (5, 4): {2, 4}, return_site(7): {2, 4}}


def test_a_local_a_nested_function_rebinds_is_not_analysed() -> None:
    assert passed("""
        def f():
            x = a
            def inner():
                nonlocal x
                x = b
            inner()
            g(x)
        """) is None
