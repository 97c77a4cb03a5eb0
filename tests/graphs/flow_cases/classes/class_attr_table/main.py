# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def a():
    pass

def b():
    pass

class Router:
    routes = {"a": a, "b": b}

    def go(self, k):
        self.routes[k]()

Router().go("a")
