# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# One list holds functions of different arities (as one field of one class
# holds every parser's rules); a call with four arguments can only reach the
# functions that accept four.
def block(state, start, end, silent):
    return silent


def inline(state, silent):
    return silent


def core(state):
    return state


RULES = [block, inline, core]


def run_block():
    for rule in RULES:
        if rule.__code__.co_argcount == 4:
            rule(1, 0, 3, False)


def run_inline():
    for rule in RULES:
        if rule.__code__.co_argcount == 2:
            rule(1, silent=False)


run_block()
run_inline()
