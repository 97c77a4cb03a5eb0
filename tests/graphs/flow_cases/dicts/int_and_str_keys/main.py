# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# 2 and "2" are different keys of a dict.
def by_number():
    pass

def by_text():
    pass

codes = {2: by_number, "2": by_text}
codes["2"]()
