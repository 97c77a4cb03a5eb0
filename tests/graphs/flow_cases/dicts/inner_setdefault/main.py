# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A method called on the inner container in place (`setdefault`, `pop`) may
# change the slot the call looks up: the literal alone does not say what is there.
def first():
    pass

def second():
    pass


def run(flag):
    table = {"group": {"k": first}}
    if flag:
        table["group"].pop("k")
        table["group"].setdefault("k", second)
    table["group"]["k"]()


run(True)
run(False)
