# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Registry:
    def register(self, name):
        return name

    def lookup(self, name):
        return name


REGISTRY = Registry()
