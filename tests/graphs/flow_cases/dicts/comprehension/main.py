# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A dict comprehension is a new dict: its values are what the value expression
# may be (a table re-keyed from another, handlers picked from a list by name);
# `renamed("save")` would reach `save`, so it is expected though this run takes `load`.
def load():
    pass


def save():
    pass


def close():
    pass


HANDLERS = {"load": load, "save": save}


def renamed(action):
    table = {"do_" + name: fn for name, fn in HANDLERS.items()}
    table["do_" + action]()


def by_name(funcs):
    table = {fn.__name__: fn for fn in funcs}
    return table["close"]


renamed("load")
by_name([close])()
