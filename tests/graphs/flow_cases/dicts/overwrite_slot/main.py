# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A store to a constant key replaces that slot's value: a call after it reaches
# only the new value (each call its own), in a function as at the top level,
# through `update` and through a nested container.
def legacy():
    pass

def modern():
    pass

def fallback():
    pass

def html():
    pass

def text():
    pass


def route():
    table = {"get": legacy, "post": fallback}
    table["get"]()
    table["get"] = modern
    table["get"]()
    table.update({"post": html})
    table["post"]()


formats = {"out": {"page": html}}
formats["out"]["page"] = text
formats["out"]["page"]()
route()
