# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Reading an inner container out of its slot hands out that container: a store
# through the name it was read into changes the slot the call looks up.
def first():
    pass

def second():
    pass


def run(flag):
    table = {"group": {"k": first}}
    inner = table["group"]
    if flag:
        inner["k"] = second
    table["group"]["k"]()


run(True)
run(False)
