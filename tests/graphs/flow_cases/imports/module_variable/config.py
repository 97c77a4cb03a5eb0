# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def real_hook():
    pass

HOOK = real_hook
