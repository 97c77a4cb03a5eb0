# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class CoreState:
    pass


class InlineState:
    pass


class Registry:
    def __init__(self):
        self.fns = []

    def add(self, fn):
        self.fns.append(fn)

    def all(self):
        return self.fns


def core_rule(state: CoreState):
    pass


def inline_rule(state: InlineState):
    pass


core = Registry()
core.add(core_rule)
inline = Registry()
inline.add(inline_rule)


def run_core(state: CoreState):
    for fn in core.all():
        fn(state)


def run_inline(state: InlineState):
    for fn in inline.all():
        fn(state)


run_core(CoreState())
run_inline(InlineState())
