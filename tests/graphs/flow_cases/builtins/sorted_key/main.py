# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def by_len(s):
    return len(s)

sorted(["aa", "b"], key=by_len)
