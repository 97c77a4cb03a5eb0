# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A container another name can reach is not strongly updated: a store through
# the alias may change the slot, so the call may reach both values.
def first():
    pass

def second():
    pass


def run(flag):
    slots = {"k": first}
    alias = slots
    if flag:
        alias["k"] = second
    slots["k"]()


run(True)
run(False)
